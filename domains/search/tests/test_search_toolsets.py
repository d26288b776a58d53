"""The layout comes from each trajectory's tool list: declared, undeclared (observations name it), mixed or
unknown (verifiers abstain); never from a setting."""

from __future__ import annotations

import json

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.tasks import tasks_for
from awctl_domains.search.toolsets import memory_starts_empty, tool_set

from awctl.domain import run_verifiers
from awctl.trajectory import SystemPrompt, Trajectory, Turn

DOMAIN = SearchDomain()
CODEC = DOMAIN.action_codec


def fn(name: str, **props: dict) -> str:
    schema = {"type": "object", "properties": props, "required": list(props)}
    return json.dumps({"type": "function", "function": {"name": name, "parameters": schema}})


AWB_TOOLS = "\n".join(
    [fn("web_search", queries={}), fn("web_extractor", urls={}, goal={}), fn("dict_memory", action={})]
)


@pytest.mark.parametrize(
    ("text", "status", "layout"),
    [
        (AWB_TOOLS, "declared", "awb"),
        (fn("web_search", queries={}) + "\n" + fn("web_extractor", urls={}, goal={}), "declared", "awb"),
        (fn("dict_memory", action={}), "declared", "awb"),
        (CODEC.schema_for("awb"), "declared", "awb"),
        (CODEC.schema_for("awctl"), "declared", "awctl"),
        (CODEC.schema_for("qwen"), "declared", "qwen"),
        (fn("search", query={}) + fn("visit", url={}) + fn("PythonInterpreter") + fn("google_scholar"), "declared",
         "qwen"),
        (fn("visit", url={}) + fn("dict_memory", action={}), "mixed", None),
        (fn("memory", op={}) + fn("dict_memory", action={}), "mixed", None),
        (fn("bing_search", q={}) + fn("fetch_url", url={}), "unknown", None),
        (fn("web_search", queries={}), "undeclared", None),
        ("You are a web search engine and page extractor used by a research agent.", "undeclared", None),
    ],
)  # fmt: skip
def test_the_tool_list_decides_the_layout(text: str, status: str, layout: str | None) -> None:
    found = tool_set(SystemPrompt(raw=text))
    assert (found.status, found.layout) == (status, layout), found.detail


def test_memory_is_known_empty_only_where_the_prompt_says_so() -> None:
    assert memory_starts_empty(SystemPrompt(initial_state="Search session ready. Memory is empty."))
    assert memory_starts_empty(SystemPrompt(raw="# Initial State\n\nThe dict_memory store is empty."))
    assert not memory_starts_empty(SystemPrompt(raw=AWB_TOOLS))


def _awb_trajectory(system: SystemPrompt) -> Trajectory:
    task = tasks_for("awb")[0]
    traj = DOMAIN.record(task, env=SearchEnv())
    return traj.model_copy(update={"system": system})


def _failed(traj: Trajectory) -> list[tuple[int, str, str]]:
    return [
        (i, r.check, r.message)
        for i in range(len(traj.turns))
        for r in run_verifiers(DOMAIN, traj, i)
        if not r.ok
    ]


def test_an_observation_in_another_layout_than_the_tool_list_declares_fails_naming_the_line() -> None:
    traj = _awb_trajectory(SystemPrompt(raw=CODEC.schema_for("awctl") + "\nMemory is empty."))
    failed = _failed(traj)
    assert failed and {c for _, c, _ in failed} == {"observation_parses"}
    index, _, message = failed[0]
    assert index == 0 and message.startswith("line 1: expected awctl's layout")
    assert "the AgentWorldBench layout" in message and "declares memory" in message


@pytest.mark.parametrize(
    "text",
    [fn("visit", url={}) + fn("dict_memory", action={}), fn("bing_search", q={})],
    ids=["mixed", "unknown"],
)
def test_verifiers_abstain_on_mixed_or_unknown_tool_lists(text: str) -> None:
    traj = _awb_trajectory(SystemPrompt(raw=text))
    corrupted = traj.turns[0].observation.replace("[1] ", "[7] ", 1)
    for i in range(len(traj.turns)):
        assert run_verifiers(DOMAIN, traj, i) == []
    assert run_verifiers(DOMAIN, traj, 0, corrupted) == []


def test_without_a_tool_list_earlier_observations_set_the_layout() -> None:
    env = SearchEnv(layout="awb")
    env.reset()
    calls = [
        '{"name": "web_search", "arguments": {"queries": ["zlib crc32"]}}',
        '{"name": "web_search", "arguments": {"queries": ["shlex quote"]}}',
    ]
    turns = [Turn(action=a, observation=env.step(a).observation) for a in calls]
    traj = Trajectory(id="t", domain="search", system=SystemPrompt(raw="A search engine."), turns=turns)
    assert not _failed(traj)
    qwen = SearchEnv(layout="qwen")
    qwen.reset()
    switched = qwen.step(calls[1]).observation
    (result,) = [r for r in run_verifiers(DOMAIN, traj, 1, switched) if not r.ok]
    assert result.check == "observation_parses" and "turn 1's and earlier observations" in result.message
    assert not [
        r for r in run_verifiers(DOMAIN, traj, 0, switched.replace("shlex quote", "zlib crc32")) if not r.ok
    ]


def test_recorded_sessions_declare_their_tool_list_in_every_layout() -> None:
    for suite, layout in (("all", "awctl"), ("qwen", "qwen"), ("awb", "awb")):
        task = tasks_for(suite)[0]
        sections = DOMAIN.sections_for(task, "")
        assert tool_set(sections).layout == layout
        assert sections.simulation_instruction == DOMAIN.sections_for(task, "x").simulation_instruction


def _chat_log(tmp_path, turns: list[Turn], tools: list | None = None):  # type: ignore[no-untyped-def]
    from awctl_domains.search.importers import load_openai_chat

    messages: list[dict] = [{"role": "user", "content": "q"}]
    for i, turn in enumerate(turns):
        call = json.loads(turn.action)
        fn_call = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "function": fn_call}]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": turn.observation})
    line = {"messages": messages, **({"tools": tools} if tools is not None else {})}
    path = tmp_path / "log.search-chat.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (traj,) = load_openai_chat(path)
    return traj


def test_chat_imports_declare_the_logs_tools_or_the_layout_its_outputs_show(tmp_path) -> None:  # type: ignore[no-untyped-def]
    traj = DOMAIN.record(tasks_for("awb")[0], env=SearchEnv())
    inferred = _chat_log(tmp_path, traj.turns)
    assert tool_set(inferred.system).layout == "awb" and not _failed(inferred)
    tools = [json.loads(line) for line in AWB_TOOLS.splitlines()]
    declared = _chat_log(tmp_path, traj.turns, tools)
    assert declared.metadata["tool_list"] == "declared" and tool_set(declared.system).layout == "awb"
    assert not _failed(declared)
    wrong = _chat_log(tmp_path, traj.turns, [{"type": "function", "function": {"name": "memory"}}])
    assert {c for _, c, _ in _failed(wrong)} == {"observation_parses"}


def test_chat_imports_of_older_versions_declare_nothing() -> None:
    traj = DOMAIN.record(tasks_for("qwen")[0], env=SearchEnv())
    legacy = traj.model_copy(update={"source": "openai-chat", "metadata": {},
                                     "system": SystemPrompt(action_space=CODEC.schema())})  # fmt: skip
    assert tool_set(legacy.system).layout == "awctl" and not _failed(legacy)
