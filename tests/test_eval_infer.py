"""`awctl eval infer`/`run`: official message layout, concurrency through the real openai backend,
resume (skip done ids, redo failed ones), trajectory inputs, and the chained run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.eval.extract import inference_messages, row_view
from awctl.eval.replay_server import ReplayServer
from awctl.eval.rows import iter_input_rows, row_key
from awctl.plugins import get_registry

FIXTURES = Path(__file__).parent / "fixtures"
AWB = FIXTURES / "awb"


def official_messages(job: dict) -> list[dict]:
    """Test oracle: the official run_inference message layout, written from its documented behaviour."""
    prompts, responses = job.get("prompt", []), job.get("response", [])
    prompts = [prompts] if isinstance(prompts, str) else prompts
    responses = [responses] if isinstance(responses, str) else responses
    t = max(job.get("turn_idx", 1) - 1, 0)
    msgs = [{"role": "system", "content": job["system_str"]}] if job.get("system_str") else []
    for j in range(min(t, len(prompts), len(responses))):
        msgs += [{"role": "user", "content": prompts[j]}, {"role": "assistant", "content": responses[j]}]
    current = job.get("current_prompt", "")
    if not current and t < len(prompts):
        current = prompts[t]
    return [*msgs, {"role": "user", "content": current}]


def _all_rows() -> list[dict]:
    return list(iter_input_rows([AWB], get_registry().domains))


def _oracle(rows: list[dict]):
    """A responder that answers every known request with its row's ground truth (a perfect simulator)."""
    table = {json.dumps(official_messages(r)): row_view(r).ground_truth_raw for r in rows}

    def respond(messages: list[dict], body: dict) -> str:
        return f"<think>easy</think>\n<predicted_observation>\n{table[json.dumps(messages)]}\n</predicted_observation>"

    return respond


def test_inference_messages_follow_the_official_layout() -> None:
    rows = _all_rows()
    assert len(rows) >= 30
    for row in rows:
        assert inference_messages(row) == official_messages(row), row["id"]


def test_infer_generates_every_row_concurrently_and_resumes(tmp_path: Path) -> None:
    rows = _all_rows()
    out = tmp_path / "pred.jsonl"
    with ReplayServer(_oracle(rows), latency=0.05) as srv:
        args = ["eval", "infer", str(AWB), "-o", str(out), "--backend", "openai", "--base-url", srv.base_url,
                "--model", "replay", "--backend-opt", "concurrency=8", "--json"]
        first = CliRunner().invoke(cli, [*args, "--limit", "7"])
        assert first.exit_code == 0, first.output
        assert json.loads(first.output)["generated"] == 7
        second = CliRunner().invoke(cli, args)
        assert second.exit_code == 0, second.output
        summary = json.loads(second.output)
        assert summary["skipped"] == 7 and summary["generated"] == len(rows) - 7
        assert srv.requests == len(rows)  # nothing generated twice
        assert srv.max_in_flight > 1  # requests overlapped
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row_key(r) for r in got) == sorted(row_key(r) for r in rows)
    for row in got:
        assert row["gen"].startswith("<think>")
        original = next(r for r in rows if row_key(r) == row_key(row))
        assert {k: v for k, v in row.items() if k not in ("gen", "gen_provenance")} == original  # + gen


def test_resume_asks_again_a_row_whose_history_changed_under_the_same_id(tmp_path: Path) -> None:
    from awctl.backend import Completion
    from awctl.eval.infer import run_infer

    class Counting:
        def __init__(self) -> None:
            self.asked: list[list[dict]] = []

        def generate(self, requests: list) -> list[list[Completion]]:
            self.asked += [r.messages for r in requests]
            return [[Completion(text=f"answer {len(self.asked)}")] for _ in requests]

    rows = [r for r in _all_rows() if r["turn_idx"] > 1][:4]
    out = tmp_path / "pred.jsonl"
    run_infer(rows, Counting(), out, provenance="p")
    # The same ids again, one with a re-recorded earlier observation: only that one is asked again.
    changed = [dict(r) for r in rows]
    changed[1]["response"] = ["a re-recorded observation", *changed[1]["response"][1:]]
    backend = Counting()
    summary = run_infer(changed, backend, out, provenance="p")
    assert (summary.skipped, summary.generated) == (3, 1)
    assert backend.asked == [official_messages(changed[1])]
    got = {row_key(r): r for r in map(json.loads, out.read_text().splitlines())}
    assert len(got) == len(out.read_text().splitlines()) == 4
    assert got[row_key(changed[1])]["response"][0] == "a re-recorded observation"


def test_failed_generations_are_recorded_empty_and_redone_on_resume(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (AWB / "mcp_test.jsonl").read_text().splitlines()]
    broken = {"on": True}
    target = rows[1]["current_prompt"]
    good = _oracle(rows)

    def respond(messages: list[dict], body: dict) -> str:
        if broken["on"] and messages[-1]["content"] == target:
            raise RuntimeError("backend exploded")
        return good(messages, body)

    out = tmp_path / "pred.jsonl"
    with ReplayServer(respond) as srv:
        args = ["eval", "infer", str(AWB / "mcp_test.jsonl"), "-o", str(out), "--backend", "openai",
                "--base-url", srv.base_url, "--model", "replay", "--backend-opt", "max_retries=0", "--json"]
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, (res.output, res.exception)
        first = json.loads(res.output)
        assert first["failed"] == sum(r["current_prompt"] == target for r in rows) >= 1
        failed_rows = [json.loads(line) for line in out.read_text().splitlines() if '"gen": ""' in line]
        assert failed_rows and "backend exploded" in failed_rows[0]["gen_error"]
        broken["on"] = False
        res2 = CliRunner().invoke(cli, args)
        second = json.loads(res2.output)
    assert second["generated"] == first["failed"] and second["failed"] == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == len(rows) and all(r["gen"] for r in got)


def test_trajectory_input_and_chained_run_score_a_perfect_simulator_100(tmp_path: Path) -> None:
    inputs = [AWB / "search_test.jsonl", AWB / "terminal_test.jsonl", FIXTURES / "eval" / "search_recorded.jsonl"]
    rows = list(iter_input_rows(inputs, get_registry().domains))
    assert any(r["id"].startswith("search-search/") for r in rows)  # trajectories became rows with ids
    with ReplayServer(_oracle(rows)) as srv:
        result = CliRunner().invoke(cli, [
            "eval", "run", *map(str, inputs), "--out-dir", str(tmp_path / "run"), "--backend", "openai",
            "--base-url", srv.base_url, "--model", "replay", "--judge", "deterministic", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["failed"] == 0 and scores["valid"] == len(rows)
    assert scores["overall"] == pytest.approx(100.0) and scores["overall_domain_mean"] == pytest.approx(100.0)
    assert json.loads((tmp_path / "run" / "scores.json").read_text()) == scores
    judged = [json.loads(line) for line in (tmp_path / "run" / "judged.jsonl").read_text().splitlines()]
    assert all(r["failed"] == 0.0 and r["extracted_output"] for r in judged)


def test_bad_input_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "mcp", "id": 1}\n{"id": 2}\n')
    result = CliRunner().invoke(cli, ["eval", "infer", str(bad), "-o", str(tmp_path / "o.jsonl"),
                                      "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert result.exit_code != 0
    assert f"{bad}:2" in str(result.exception)


def test_workers_keep_several_chunks_in_flight(tmp_path: Path) -> None:
    from awctl.backend import Backend, ChatRequest, Completion
    from awctl.eval.infer import run_infer

    class CountingBackend(Backend):
        name = "counting"

        def __init__(self) -> None:
            self.active = self.peak = 0
            self.lock = threading.Lock()
            self.release = threading.Event()

        def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
                if self.active >= 3:
                    self.release.set()
            self.release.wait(5)
            with self.lock:
                self.active -= 1
            return [[Completion(text="<predicted_observation>x</predicted_observation>")] for _ in requests]

    backend = CountingBackend()
    summary = run_infer(_all_rows(), backend, tmp_path / "o.jsonl", chunk_size=4, workers=3)
    assert summary.generated == len(_all_rows()) and backend.peak == 3
