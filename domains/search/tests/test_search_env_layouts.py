"""The real env serves every tool set: AgentWorldBench's (web_search, web_extractor, dict_memory) answered
from the shipped corpus, tasks run in each layout, and their recordings pass every verifier."""

from __future__ import annotations

import json

import pytest
from awctl_domains.search.codec import DictMemoryReply, ExtractedPages, SearchObservationCodec, SearchResults
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.env import READY_AWB, SearchEnv
from awctl_domains.search.tasks import PY, tasks_for

from awctl.domain import Task, run_verifiers
from awctl.errors import ConfigError

DOMAIN = SearchDomain()
OBS = SearchObservationCodec()


def call(name: str, **args: object) -> str:
    return json.dumps({"name": name, "arguments": args})


def test_an_awb_session_answers_its_three_tools_from_the_corpus() -> None:
    env = SearchEnv(layout="awb")
    assert env.reset() == READY_AWB
    found = env.step(call("web_search", queries=["zlib crc32", "qqqzzzx"])).observation
    results = OBS.parse(found)
    assert isinstance(results, SearchResults) and results.layout == "awb"
    assert found.startswith(f'Search results for "zlib crc32":\n\n[1] {PY}/library/zlib.html\nTitle: ')
    assert found.endswith('Search results for "qqqzzzx":\n\nNo results found.')
    assert all(r.date == "2026-05-09" for r in results.blocks[0].results)
    pages = env.step(
        call("web_extractor", urls=[f"{PY}/topics/assert", "https://x.org/gone"], goal="")
    ).observation
    parsed = OBS.parse(pages)
    assert isinstance(parsed, ExtractedPages)
    assert pages.startswith(f'## Page 1: {PY}/topics/assert\n\n# The "assert" statement\n\nAssert statements')
    assert parsed.pages[1].error == "404 Not Found"
    goal = OBS.parse(
        env.step(call("web_extractor", urls=[f"{PY}/topics/assert"], goal="AssertionError")).observation
    )
    assert goal.pages[0].goal == "AssertionError" and "AssertionError" in goal.pages[0].body
    replies = [
        env.step(call("dict_memory", action=a, **kw)).observation
        for a, kw in (("set", {"key": "b", "value": [1, {"x": None}]}), ("set", {"key": "a", "value": "1"}),
                      ("set", {"key": "b", "value": 2}), ("list", {}), ("delete", {"key": "a"}),
                      ("get", {"key": "a"}), ("get", {"key": "b"}))
    ]  # fmt: skip
    assert [json.loads(r) for r in replies] == [
        {"status": "ok", "action": "set", "key": "b", "previous": None},
        {"status": "ok", "action": "set", "key": "a", "previous": None},
        {"status": "ok", "action": "set", "key": "b", "previous": [1, {"x": None}]},
        {"status": "ok", "action": "list", "keys": ["b", "a"]},
        {"status": "ok", "action": "delete", "key": "a", "value": "1"},
        {"status": "error", "action": "get", "key": "a", "error": "key not found"},
        {"status": "ok", "action": "get", "key": "b", "value": 2},
    ]
    assert all(isinstance(OBS.parse(r), DictMemoryReply) for r in replies)
    for text in (found, pages, *replies):
        assert OBS.render(OBS.parse(text)) == text


def test_each_tool_set_refuses_the_other_memory_tool() -> None:
    awb, awctl = SearchEnv(layout="awb"), SearchEnv()
    awb.reset()
    awctl.reset()
    assert awb.step(call("memory", op="list")).observation.startswith("Error: unknown tool 'memory'")
    assert awctl.step(call("dict_memory", action="list")).observation.startswith(
        "Error: unknown tool 'dict_memory'"
    )


def test_a_tasks_tool_set_chooses_the_episodes_layout_and_a_bad_one_is_named() -> None:
    env = SearchEnv()  # default awctl layout: the task's setup wins for its episode
    task = tasks_for("awb")[0]
    assert env.reset(task) == READY_AWB and env.layout == "awb"
    env.reset()
    assert env.layout == "awctl"
    bad = Task("t/bad", "search", "s", "x", [], lambda e: None, setup={"layout": "xml"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as info:
        env.reset(bad)
    assert "t/bad" in info.value.message and "xml" in info.value.message


@pytest.mark.parametrize("suite", ["qwen", "awb"])
def test_every_task_passes_in_its_tool_set_and_recordings_pass_every_verifier(suite: str) -> None:
    tasks = tasks_for(suite)
    assert len(tasks) == len(tasks_for("all")) and all(t.setup["layout"] == suite for t in tasks)
    seen: set[str] = set()
    for task in tasks:
        env = SearchEnv()
        traj = DOMAIN.record(task, env=env)
        assert traj.metadata["layout"] == suite
        for turn in traj.turns:
            assert not turn.observation.startswith(("Error:", "[Visit]")), (task.id, turn.observation)
        assert task.check(env).ok, task.id
        for i in range(len(traj.turns)):
            results = run_verifiers(DOMAIN, traj, i)
            assert all(r.ok for r in results), (task.id, i, results)
            seen |= {r.check for r in results}
        env.reset(task)
        assert not task.check(env).ok
    expected = {v.name for v in DOMAIN.verifiers()} - (
        {"extract_consistent_with_search"} if suite == "qwen" else set()
    )
    assert expected - {"search_results_consistent"} <= seen


def test_the_layout_is_no_longer_in_awctl_toml() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[3] / "awctl.toml").read_text()
    assert "[domains.search]" not in text
