"""`awctl audit`: teacher-forced replay per action family, blind-spot ranking, report with plots and the
--fail-under gate, through the real openai backend against a local server that simulates with known
faults (and once with reference solutions run live in the real search environment)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.eval.corruptions import change_digits, drop_lines
from awctl.eval.replay_server import ReplayServer
from awctl.formats.view import messages_at, view_for
from awctl.plugins import get_registry
from awctl.trajectory import read_trajectories

RECORDED = Path(__file__).parent / "fixtures" / "eval" / "search_recorded.jsonl"


def _faulty_simulator():
    """Perfect on web_search, wrong numbers on web_extractor, half the lines missing on memory."""
    reg = get_registry()
    domain = reg.domain("search")
    table = {}
    for traj in read_trajectories(RECORDED):
        for t, turn in enumerate(traj.turns):
            family = domain.action_codec.family(turn.action)
            plain = view_for(traj, reg.domains).history_assistant(turn).body
            if family == "web_extractor":
                plain = change_digits(plain, 1.0)
            elif family == "memory":
                plain = drop_lines(plain, 0.5)
            table[json.dumps(messages_at(traj, t, reg.domains))] = plain

    def respond(messages: list[dict], body: dict) -> str:
        return f"<predicted_observation>\n{table[json.dumps(messages)]}\n</predicted_observation>"

    return respond


def _audit(srv: ReplayServer, out: Path, *extra: str):
    return CliRunner().invoke(cli, [
        "audit", "--domain", "search", "--sim-backend", "openai", "--sim-base-url", srv.base_url,
        "--sim-model", "replay", "-o", str(out), "--json", *extra])


def test_audit_ranks_the_faulty_families_first_and_writes_a_report(tmp_path: Path) -> None:
    with ReplayServer(_faulty_simulator()) as srv:
        result = _audit(srv, tmp_path / "a", "-t", str(RECORDED))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    fams = {f["family"]: f for f in summary["families"]}
    assert set(fams) == {"web_search", "web_extractor", "memory"}
    assert fams["web_search"]["exact_rate"] == 1.0 and fams["web_search"]["score"] == 100.0
    assert fams["web_search"]["verifier_rate"] == 1.0
    assert fams["web_extractor"]["exact_rate"] == 0.0 and fams["memory"]["exact_rate"] == 0.0
    ranked = [f["family"] for f in summary["families"]]
    assert ranked[-1] == "web_search"  # blind spots first, the faithful family last
    assert summary["overall"]["turns"] == 12
    report = (tmp_path / "a" / "report.md").read_text()
    assert "## Blind spots" in report and report.index(ranked[0]) < report.index("web_search")
    for name in ("score", "exact_rate", "verifier_rate"):
        png = tmp_path / "a" / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(plots/{name}.png)" in report
    assert len((tmp_path / "a" / "turns.jsonl").read_text().splitlines()) == 12


def test_fail_under_gates_on_the_overall_score(tmp_path: Path) -> None:
    with ReplayServer(_faulty_simulator()) as srv:
        low = _audit(srv, tmp_path / "b", "-t", str(RECORDED), "--fail-under", "99")
        high = _audit(srv, tmp_path / "c", "-t", str(RECORDED), "--fail-under", "10")
    assert low.exit_code == 1 and json.loads(low.output.split("\naudit score")[0])["passed"] is False
    assert high.exit_code == 0 and json.loads(high.output)["passed"] is True


def test_real_mode_runs_reference_solutions_live_first(tmp_path: Path) -> None:
    with ReplayServer(lambda m, b: "<predicted_observation>\nQuery 1: nothing\n</predicted_observation>") as srv:
        result = _audit(srv, tmp_path / "d", "--real", "--limit", "2", "--fail-under", "50")
    assert result.exit_code == 1  # a simulator that always answers the same is far below 50
    real = [json.loads(line) for line in (tmp_path / "d" / "real.jsonl").read_text().splitlines()]
    assert len(real) == 2 and all(t["metadata"]["check"]["ok"] for t in real)
    assert srv.requests == sum(len(t["turns"]) for t in real)


def test_audit_without_trajectories_says_what_to_pass(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "--domain", "search", "--sim-backend", "openai",
                                      "--sim-base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path)])
    assert result.exit_code != 0
    assert "--trajectories" in str(result.exception.hint if hasattr(result.exception, "hint") else result.output)


def test_audit_reports_progress_per_chunk_on_stderr_and_in_the_log(tmp_path: Path) -> None:
    with ReplayServer(_faulty_simulator()) as srv:
        result = CliRunner().invoke(cli, [
            "audit", "--domain", "search", "--sim-backend", "openai", "--sim-base-url", srv.base_url,
            "--sim-model", "replay", "-o", str(tmp_path / "p"), "-t", str(RECORDED), "--chunk-size", "5"])
    assert result.exit_code == 0, result.output
    # 12 turns in chunks of 5: one line per chunk, with the running count and the rate.
    lines = [line for line in result.stderr.splitlines() if " turns (" in line]
    assert [line.split("+", 1)[1].split(",")[0] for line in lines] == [
        "5 turns (5/12", "5 turns (10/12", "2 turns (12/12"]
    assert all("turns/s)" in line for line in lines)
    logged = [json.loads(x)["event"] for x in (tmp_path / "p" / "log.jsonl").read_text().splitlines()]
    assert sum(" turns (" in e for e in logged) == 3
