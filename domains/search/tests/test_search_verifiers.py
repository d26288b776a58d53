"""Verifiers: silent on real recorded episodes, and each one flags the corruption it targets."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.importers import load_openai_chat
from awctl_domains.search.tasks import PY, extract, memory, search, tasks_for

from awctl.domain import run_verifiers
from awctl.trajectory import Trajectory

DOMAIN = SearchDomain()
FIXTURE = Path(__file__).parent / "fixtures" / "agent_logs.search-chat.jsonl"
TASK = tasks_for("facts")[0]

# An exploratory episode touching every tool and every observation kind, recorded from the real env.
EXPLORE = [
    search("assert statement", "zlib crc32", "qqqzzz"),
    extract(f"{PY}/topics/assert"),
    extract(f"{PY}/library/zlib.html", goal="crc32 checksum"),
    search("assert statement"),
    memory("set", "answer", "AssertionError"),
    memory("set", "answer", "AssertionError\nconfirmed"),
    memory("get", "answer"),
    memory("set", "tmp", "1"),
    memory("list"),
    memory("delete", "tmp"),
    memory("delete", "tmp"),
    memory("get", "tmp"),
    extract("https://example.org/gone"),
    '{"name": "nope"}',
]


def _recorded() -> list[Trajectory]:
    trajs = [DOMAIN.record(t) for t in tasks_for("all")]
    trajs.append(DOMAIN.record(TASK, EXPLORE))
    trajs.extend(load_openai_chat(FIXTURE))
    return trajs


def test_no_verifier_fails_on_real_recorded_trajectories() -> None:
    seen = set()
    for traj in _recorded():
        for i in range(len(traj.turns)):
            results = run_verifiers(DOMAIN, traj, i)
            failed = [(r.check, r.message) for r in results if not r.ok]
            assert not failed, (traj.id, i, failed)
            seen |= {r.check for r in results}
    assert seen == {v.name for v in DOMAIN.verifiers()}  # every verifier was exercised


def _explore() -> Trajectory:
    return DOMAIN.record(TASK, EXPLORE)


def _flags(traj: Trajectory, index: int, observation: str) -> set[str]:
    return {r.check for r in run_verifiers(DOMAIN, traj, index, observation) if not r.ok}


def _sub(pattern: str, repl: str, count: int = 1) -> Callable[[str], str]:
    def corrupt(text: str) -> str:
        out = re.sub(pattern, repl, text, count=count, flags=re.M)
        assert out != text, f"corruption {pattern!r} did not apply"
        return out

    return corrupt


def _add_sixth_result(text: str) -> str:
    first_block = text.split("\n\nQuery 2:")[0]
    last = first_block.split("\n\n")[-1]
    extra = re.sub(r"^\[5\]", "[6]", last)
    return text.replace(first_block, first_block.replace("Results: 5", "Results: 6") + "\n\n" + extra, 1)


CORRUPTIONS: list[tuple[str, int, Callable[[str], str]]] = [
    ("observation_parses", 0, lambda t: "Here are some results:\n" + t),
    ("observation_parses", 0, _sub(r"^Snippet: .*\n", "")),
    ("observation_parses", 4, lambda t: "Query 1: x\nResults: 0"),
    ("search_numbering", 0, _sub(r"^\[2\] ", "[3] ")),
    ("search_numbering", 0, _sub(r"^Query 2: ", "Query 3: ")),
    ("search_result_count", 0, _sub(r"^Results: 5", "Results: 4")),
    ("search_result_count", 0, _add_sixth_result),
    ("search_result_count", 0, _sub(r"^Query 1: assert statement", "Query 1: assert statements")),
    ("search_fields_present", 0, _sub(r"^Title: .*", "Title:")),
    ("search_fields_present", 0, _sub(r"^Snippet: .*", "Snippet: ")),
    ("urls_valid", 0, _sub(r"^\[1\] https://", "[1] ")),
    ("urls_valid", 1, _sub(r"^URL: https://", "URL: ftp://")),
    ("dates_valid", 0, _sub(r"^Date: (\d{4})-0?(\d+)-(\d+)", r"Date: \2/\3/\1")),
    ("dates_valid", 1, _sub(r"^Date: .*", "Date: 2026-02-30")),
    ("extract_matches_action", 1, _sub(r"^URL: .*", f"URL: {PY}/topics/pass")),
    ("extract_matches_action", 2, _sub(r"^Goal: .*", "Goal: something else")),
    ("extract_consistent_with_search", 1, _sub(r"^Title: .*", 'Title: The "assert" keyword')),
    ("extract_consistent_with_search", 1, _sub(r"convenient way to insert debugging", "handy way to add")),
    ("extract_consistent_with_search", 1, _sub(r"^Date: .*", "Date: 2020-01-01")),
    ("search_results_consistent", 3, _sub(r"^Title: .*", "Title: Assertions in Python")),
    ("search_results_consistent", 3, _sub(r"^Date: .*", "Date: 2019-12-31")),
    ("memory_replay", 5, _sub(r"updated", "stored")),
    ("memory_replay", 6, _sub(r"confirmed", "unconfirmed")),
    ("memory_replay", 8, _sub(r'2 keys: "answer", "tmp"', '1 key: "answer"')),
    ("memory_replay", 10, _sub(r"no key", "deleted")),
    ("memory_replay", 11, _sub(r'^Memory: no key "tmp".', 'Memory: value of "tmp":\n1')),
]


@pytest.mark.parametrize(("check", "index", "corrupt"), CORRUPTIONS)
def test_each_verifier_flags_the_corruption_it_targets(
    check: str, index: int, corrupt: Callable[[str], str]
) -> None:
    traj = _explore()
    real = traj.turns[index].observation
    assert check not in _flags(traj, index, real)
    assert check in _flags(traj, index, corrupt(real))


def test_every_verifier_has_a_corruption_test() -> None:
    assert {c for c, _, _ in CORRUPTIONS} == {v.name for v in DOMAIN.verifiers()}


def test_errors_are_accepted_for_any_tool_and_skip_the_content_checks() -> None:
    traj = _explore()
    for index in (0, 1, 6):
        assert not _flags(
            traj, index, "Error: 429 Too Many Requests: rate limit exceeded, retry after 30 seconds"
        )


def test_invalid_action_must_get_an_error() -> None:
    traj = _explore()
    assert _flags(traj, len(EXPLORE) - 1, "Memory: 0 keys.") == {"observation_parses"}
