"""Expectations from earlier turns: a page read after a search does not contradict its snippet, and memory
reads return what earlier writes stored (abstaining on keys nothing established)."""

from __future__ import annotations

import json

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.snippets import snippet_contradiction

from awctl.domain import run_verifiers
from awctl.trajectory import SystemPrompt, Trajectory, Turn

DOMAIN = SearchDomain()
PAGE = (
    "# Kyiv\n\nKyiv is the capital of Ukraine. As of 2022 the city had a population of about 2.9 million "
    "people, making it the country's largest city.\n\n## History\n\nThe city was founded in the 5th century "
    "according to [legend](https://example.org/legend), and later became the centre of Kievan Rus."
)


@pytest.mark.parametrize(
    ("snippet", "said", "page_says"),
    [
        ("…As of 2022 the city had a population of about 3.4 million people, making it…", "3 4", "2 9"),
        ("Kyiv is the capital of Poland. As of 2022 the city had a population…", "poland", "ukraine"),
        ("The city was founded in the 7th century according to legend, and later became…", "7th", "5th"),
    ],
)
def test_a_changed_word_inside_a_quoted_passage_is_a_contradiction(
    snippet: str, said: str, page_says: str
) -> None:
    found = snippet_contradiction(snippet, PAGE)
    assert found is not None and (found.said, found.page_says) == (said, page_says)


@pytest.mark.parametrize(
    "snippet",
    [
        "…As of 2022 the city had a population of about 2.9 million people, making it…",
        "Kyiv is the capital of Ukraine. … The city was founded in the 5th century according to legend…",
        "The capital of Ukraine and its largest city, on the Dnieper.",  # an engine's own description
        "…making it the country's largest city. Kyiv hosts many universities and theatres of…",  # page cut short
        "Kyiv was founded in the 5th century…",  # too short to anchor
    ],
)
def test_quotes_descriptions_and_truncations_are_no_contradiction(snippet: str) -> None:
    assert snippet_contradiction(snippet, PAGE) is None


def _traj(system: str, calls: list[tuple[dict, str]]) -> Trajectory:
    turns = [Turn(action=json.dumps(a), observation=o) for a, o in calls]
    return Trajectory(id="m", domain="search", system=SystemPrompt(raw=system), turns=turns)


def dm(action: str, **kw: object) -> dict:
    return {"name": "dict_memory", "arguments": {"action": action, **kw}}


def reply(**payload: object) -> str:
    return json.dumps(payload)


TOOLS = json.dumps({"type": "function", "function": {"name": "dict_memory"}})


def _memory(traj: Trajectory, index: int, observation: str | None = None) -> object:
    results = [r for r in run_verifiers(DOMAIN, traj, index, observation) if r.check == "memory_replay"]
    return results[0] if results else None


def test_dict_memory_reads_return_what_earlier_writes_stored() -> None:
    # No prompt says the store starts empty: a first write's "previous" and an untouched key are unknown.
    traj = _traj(TOOLS, [
        (dm("set", key="a", value={"n": 1}), reply(status="ok", action="set", key="a", previous=None)),
        (dm("get", key="a"), reply(status="ok", action="get", key="a", value={"n": 1})),
        (dm("get", key="zz"), reply(status="ok", action="get", key="zz", value="from an earlier session")),
        (dm("get", key="zz"), reply(status="ok", action="get", key="zz", value="from an earlier session")),
        (dm("list"), reply(status="ok", action="list", keys=["zz", "a"])),
    ])  # fmt: skip
    assert [getattr(_memory(traj, i), "ok", None) for i in range(5)] == [None, True, None, True, None]
    wrong = _memory(traj, 1, reply(status="ok", action="get", key="a", value={"n": 2}))
    assert not wrong.ok and wrong.message.startswith(
        "line 1: get of 'a' returned {'n': 2}, expected {'n': 1}"
    )
    assert "as of turn 1" in wrong.message
    assert not _memory(traj, 3, reply(status="ok", action="get", key="zz", value="other")).ok


def test_a_store_that_starts_empty_is_held_to_it_for_every_key() -> None:
    traj = _traj(TOOLS + "\nThe dict_memory store is empty.", [
        (dm("get", key="zz"), reply(status="error", action="get", key="zz", error="key not found")),
        (dm("set", key="b", value=1), reply(status="ok", action="set", key="b", previous=None)),
        (dm("set", key="a", value=2), reply(status="ok", action="set", key="a", previous=None)),
        (dm("delete", key="b"), reply(status="ok", action="delete", key="b", value=1)),
        (dm("list"), reply(status="ok", action="list", keys=["a"])),
    ])  # fmt: skip
    assert all(_memory(traj, i).ok for i in range(5))
    bad = _memory(traj, 0, reply(status="ok", action="get", key="zz", value=1))
    assert not bad.ok and "memory starts empty" in bad.message
    bad = _memory(traj, 4, json.dumps({"status": "ok", "action": "list", "keys": ["b", "a"]}, indent=2))
    assert not bad.ok and bad.message.startswith("line 4: keys ['b', 'a'], expected ['a']")
    assert not _memory(traj, 2, reply(status="ok", action="set", key="a", previous=5)).ok


def test_awctl_memory_abstains_on_keys_nothing_established() -> None:
    mem = {"name": "memory", "arguments": {"op": "get", "key": "k"}}
    traj = _traj("no tool list", [(mem, 'Memory: value of "k":\nold')])
    assert _memory(traj, 0) is None
    traj = _traj("Memory is empty.", [(mem, 'Memory: value of "k":\nold')])
    result = _memory(traj, 0)
    assert not result.ok and result.message == "line 1: expected 'Memory: no key \"k\".'"
