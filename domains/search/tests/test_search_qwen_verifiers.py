"""Verifiers on the Qwen layout: silent on real recordings and AgentWorldBench rows, flag each corruption."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.importers import load_openai_chat
from awctl_domains.search.tasks import PY, extract, memory, search, tasks_for
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.domain import run_verifiers
from awctl.formats.agentworldbench import read_rows
from awctl.trajectory import Trajectory

DOMAIN = SearchDomain()
AWB = Path(__file__).parents[3] / "tests" / "fixtures" / "awb" / "search_test.jsonl"
TASK = tasks_for("facts")[0]


def visit(urls: list[str] | str, goal: str) -> str:
    return json.dumps({"name": "visit", "arguments": {"url": urls, "goal": goal}})


# An exploratory episode in the Qwen layout touching every tool and observation kind.
EXPLORE = [
    search("assert statement", "zlib crc32", "qqqzzz"),
    visit(f"{PY}/topics/assert", "which exception is raised"),
    visit([f"{PY}/library/zlib.html", "https://example.org/gone"], "crc32 checksum"),
    search("assert statement"),
    memory("set", "answer", "AssertionError"),
    memory("set", "answer", "AssertionError\nconfirmed"),
    memory("get", "answer"),
    extract(f"{PY}/topics/assert"),
    '{"name": "nope"}',
]


def _qwen_env() -> SearchEnv:
    return SearchEnv(layout="qwen")


def _explore() -> Trajectory:
    return DOMAIN.record(TASK, EXPLORE, env=_qwen_env())


def _failures(traj: Trajectory) -> tuple[list, set[str]]:
    failed, seen = [], set()
    for i in range(len(traj.turns)):
        results = run_verifiers(DOMAIN, traj, i)
        failed += [(traj.id, i, r.check, r.message) for r in results if not r.ok]
        seen |= {r.check for r in results}
    return failed, seen


def test_no_verifier_fails_on_real_qwen_layout_recordings() -> None:
    trajs = [DOMAIN.record(t, env=_qwen_env()) for t in tasks_for("all")] + [_explore()]
    failed, seen = [], set()
    for traj in trajs:
        assert traj.metadata["layout"] == "qwen"
        f, s = _failures(traj)
        failed += f
        seen |= s
    assert not failed
    # A visit's LLM-written evidence has nothing exact to compare with a search snippet.
    assert seen == {v.name for v in DOMAIN.verifiers()} - {"extract_consistent_with_search"}


def test_agentworldbench_search_rows_pass_every_verifier() -> None:
    trajs = list(read_rows(AWB))
    assert [len(t.turns) for t in trajs] == [2, 2]
    failed, seen = [], set()
    for traj in trajs:
        f, s = _failures(traj)
        failed += f
        seen |= s
    assert not failed
    assert {"search_numbering", "search_result_count", "extract_matches_action", "urls_valid"} <= seen


def test_awctl_data_verify_passes_on_the_converted_rows(tmp_path: Path) -> None:
    out = tmp_path / "search.jsonl"
    runner = CliRunner()
    conv = runner.invoke(
        cli, ["data", "convert", "--from", "agentworldbench", "--to", "awctl", str(AWB), "-o", str(out)]
    )
    assert conv.exit_code == 0, conv.output
    result = runner.invoke(cli, ["data", "verify", str(out), "--json"])
    assert result.exit_code == 0, result.output
    back = tmp_path / "back.jsonl"
    conv = runner.invoke(
        cli, ["data", "convert", "--from", "awctl", "--to", "agentworldbench", str(out), "-o", str(back)]
    )
    assert conv.exit_code == 0 and back.read_bytes() == AWB.read_bytes()


def test_chat_logs_with_qwen_tool_outputs_import_and_verify(tmp_path: Path) -> None:
    traj = _explore()
    messages: list[dict] = [{"role": "user", "content": "Which exception does assert raise?"}]
    for i, turn in enumerate(traj.turns[:7]):  # the calls the agent could make (no invalid one)
        call = json.loads(turn.action)
        fn = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "function": fn}]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": turn.observation})
    path = tmp_path / "qwen.search-chat.jsonl"
    path.write_text(json.dumps({"id": "qwen", "messages": messages}) + "\n", encoding="utf-8")
    (imported,) = load_openai_chat(path)
    assert [t.observation for t in imported.turns] == [t.observation for t in traj.turns[:7]]
    failed, _ = _failures(imported)
    assert not failed


def _flags(traj: Trajectory, index: int, observation: str) -> set[str]:
    return {r.check for r in run_verifiers(DOMAIN, traj, index, observation) if not r.ok}


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    def corrupt(text: str) -> str:
        out = re.sub(pattern, repl, text, count=1, flags=re.M)
        assert out != text, f"corruption {pattern!r} did not apply"
        return out

    return corrupt


CORRUPTIONS: list[tuple[str, int, Callable[[str], str]]] = [
    ("observation_parses", 0, lambda t: "Here are the results:\n" + t),
    ("observation_parses", 0, _sub(r"^## Web Results\n", "")),
    ("observation_parses", 1, _sub(r"\n\nSummary: \n.*", "")),
    ("observation_parses", 6, lambda t: "No results found for 'answer'. Try with a more general query."),
    ("search_numbering", 0, _sub(r"^2\. \[", "3. [")),
    ("search_numbering", 0, _sub(r"^1\. \[", "0. [")),
    ("search_result_count", 0, _sub(r"found 5 results", "found 4 results")),
    ("search_result_count", 0, _sub(r"^A Google search for 'assert statement'", "A Google search for 'assert statements'")),
    ("search_result_count", 0, _sub(r"No results found for 'qqqzzz'", "No results found for 'qqq'")),
    ("search_result_count", 0, _sub(r"\n=======\nNo results found for 'qqqzzz'.*", "")),
    ("search_fields_present", 0, _sub(r"^1\. \[[^\n]*\]\(", "1. [](")),
    ("search_fields_present", 0, _sub(r"^Date published: .*", "Date published: ")),
    ("urls_valid", 0, _sub(r"\]\(https://", "](")),
    ("urls_valid", 1, _sub(r"^The useful information in https://", "The useful information in ftp://")),
    ("dates_valid", 0, _sub(r"^Date published: .*", "Date published: 2026-02-30")),
    ("dates_valid", 0, _sub(r"^Date published: .*", "Date published: sometime soon")),
    ("dates_valid", 0, _sub(r"^Date published: .*", "Date published: Feb 30, 2026")),
    ("extract_matches_action", 1, _sub(r"information in \S+", f"information in {PY}/topics/pass")),
    ("extract_matches_action", 1, _sub(r"for user goal which exception is raised", "for user goal something else")),
    ("extract_matches_action", 2, _sub(r"\n=======\n[\s\S]*", "")),
    ("search_results_consistent", 3, _sub(r'^1\. \[The "assert" statement\]', "1. [Assertions in Python]")),
    ("search_results_consistent", 3, _sub(r"^Date published: .*", "Date published: 2019-12-31")),
    ("memory_replay", 5, _sub(r"updated", "stored")),
    ("memory_replay", 6, _sub(r"confirmed", "unconfirmed")),
]  # fmt: skip


@pytest.mark.parametrize(("check", "index", "corrupt"), CORRUPTIONS)
def test_each_verifier_flags_the_qwen_layout_corruption_it_targets(
    check: str, index: int, corrupt: Callable[[str], str]
) -> None:
    traj = _explore()
    real = traj.turns[index].observation
    assert check not in _flags(traj, index, real)
    assert check in _flags(traj, index, corrupt(real))


def test_every_applicable_verifier_has_a_qwen_corruption_test() -> None:
    names = {v.name for v in DOMAIN.verifiers()} - {"extract_consistent_with_search"}
    assert {c for c, _, _ in CORRUPTIONS} == names


@pytest.mark.parametrize(
    "value",
    ["2024-03-05", "2024-03-05T10:00:00Z", "Mar 3, 2024", "March 3, 2024", "Sept 3, 2024", "3 Mar 2024",
     "Mar 2024", "Tue, 05 Mar 2024 10:00:00 GMT", "5 days ago", "an hour ago", "2024年3月5日"],
)  # fmt: skip
def test_dates_as_engines_write_them_are_accepted(value: str) -> None:
    traj = _explore()
    text = re.sub(r"^Date published: .*", f"Date published: {value}", traj.turns[0].observation, flags=re.M)
    assert "dates_valid" not in _flags(traj, 0, text)


@pytest.mark.parametrize(
    "error",
    ["Google search Timeout, return None, Please try again later.", "[visit] Failed to read page",
     "Error: 429 Too Many Requests: rate limit exceeded, retry after 30 seconds"],
)  # fmt: skip
def test_the_tools_failure_texts_are_accepted_and_skip_content_checks(error: str) -> None:
    traj = _explore()
    for index in (0, 1, 2):
        assert not _flags(traj, index, error)


def test_a_timeout_block_holds_its_querys_place() -> None:
    traj = _explore()
    text = re.sub(
        r"No results found for 'qqqzzz'.*",
        "Google search Timeout, return None, Please try again later.",
        traj.turns[0].observation,
    )
    assert not _flags(traj, 0, text)
