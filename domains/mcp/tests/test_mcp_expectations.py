"""The verifiers take every expectation from the trajectory (tools in the system prompt, the form of the other
turns, the tool's other results) and abstain where it does not say enough."""

from __future__ import annotations

import json
from typing import Any

import pytest
from awctl_domains.mcp.codec import tools_from_text, tools_from_trajectory
from awctl_domains.mcp.domain import McpDomain

from awctl.domain import run_verifiers
from awctl.trajectory import SystemPrompt, Trajectory, Turn

DOMAIN = McpDomain()
LOG_TOOL = {
    "name": "git_log",
    "inputSchema": {
        "type": "object",
        "properties": {"repo_path": {"type": "string"}, "max_count": {"type": "integer", "default": 10}},
        "required": ["repo_path"],
    },
}
READ_TOOL = {
    "name": "read_text_file",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "outputSchema": {
        "type": "object",
        "properties": {"content": {"type": "string"}},
        "required": ["content"],
    },
}
LIST_TOOL = {**READ_TOOL, "name": "list_directory"}


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def result(text: str, error: bool = False, **extra: Any) -> str:
    return json.dumps({"content": [{"type": "text", "text": text}], "isError": error, **extra})


def trajectory(turns: list[tuple[str, str]], tools: list[dict[str, Any]] | None = None) -> Trajectory:
    raw = "# Role\n\nYou stand in for an MCP server.\n"
    if tools is not None:
        raw += "\n# Available Tools\n\n```json\n" + json.dumps(tools) + "\n```\n"
    return Trajectory(
        id="t",
        domain="mcp",
        system=SystemPrompt(raw=raw),
        turns=[Turn(action=a, observation=o) for a, o in turns],
    )


def verdicts(traj: Trajectory, index: int, observation: str | None = None) -> dict[str, Any]:
    return {r.check: r for r in run_verifiers(DOMAIN, traj, index, observation)}


LOG = [
    (call("git_log", repo_path="/r", max_count=1), result("Commit history:\nCommit: 1f0e")),
    (call("git_log", repo_path="/r"), result("Commit history:\nCommit: 1f0e\nCommit: 9ab2")),
    (call("git_log", repo_path="/r", max_count=2), result("Commit history:\nCommit: 1f0e\nCommit: 9ab2")),
]


def test_the_form_comes_from_the_other_turns() -> None:
    traj = trajectory(LOG, [LOG_TOOL])
    assert all(r.ok for i in range(3) for r in run_verifiers(DOMAIN, traj, i))
    envelope = json.dumps({"jsonrpc": "2.0", "id": 1, "result": json.loads(LOG[1][1])})
    got = verdicts(traj, 1, envelope)["mcp.envelope"]
    assert not got.ok and "JSON-RPC response where the other observations" in got.message
    cut = LOG[1][1][:40]
    got = verdicts(traj, 1, cut)["mcp.envelope"]
    assert not got.ok and got.message.startswith("line 1 column 39: not valid JSON (Unterminated string")
    # plain text beside dumped results (a harness printing an exception) is not held to the JSON form
    assert "mcp.envelope" not in verdicts(traj, 1, "Error: connection reset")


def test_plain_text_that_starts_with_a_bracket_is_not_broken_json() -> None:
    traj = trajectory(LOG, [LOG_TOOL])
    for text in ("[FILE] a.txt\n[DIR] docs", "[1] first hit", "{not json at all}"):
        got = verdicts(traj, 1, text)["mcp.envelope"]
        # plain text where results are dumped: the wrong form, not a result whose JSON broke
        assert not got.ok and "plain text" in got.message and "not valid JSON" not in got.message


@pytest.mark.parametrize(
    "text", ["Error: connection reset", "McpError: Connection closed", "MCP error -32001: Request timed out",
             "Traceback (most recent call last):\n  File ...", "ValueError: bad path"],
)  # fmt: skip
def test_an_exception_message_beside_dumped_results_is_no_form_failure(text: str) -> None:
    traj = trajectory(LOG, [LOG_TOOL])
    assert not any(not r.ok for r in run_verifiers(DOMAIN, traj, 1, text)), text


def test_text_without_the_established_form_fails_every_check_that_applies() -> None:
    traj = trajectory(LOG, [LOG_TOOL])
    got = verdicts(traj, 1, "commit history two commits 1f0e 9ab2")
    assert {"mcp.envelope", "mcp.content_blocks", "mcp.result_fits_tool", "mcp.error_explained"} <= set(got)
    for result in got.values():
        assert not result.ok and "expected a CallToolResult object" in result.message, result


def test_a_few_json_looking_outputs_do_not_turn_a_text_trajectory_into_results() -> None:
    # plain text outputs, one of which happens to be JSON with a "content" key (a tool's own output)
    turns = [(call("read", path=str(i)), f"line {i}\n") for i in range(4)]
    turns.append((call("read", path="x"), '{"content": "hello", "isError": "no"}'))
    traj = trajectory(turns)
    assert all(r.ok for i in range(5) for r in run_verifiers(DOMAIN, traj, i))
    assert not any(r.check == "mcp.content_blocks" for r in run_verifiers(DOMAIN, traj, 4))


def test_a_lone_turn_establishes_no_form() -> None:
    traj = trajectory(LOG[:1], [LOG_TOOL])
    assert "mcp.envelope" not in verdicts(traj, 0, LOG[0][1][:30])


def test_awctl_action_schema_establishes_json_rpc_for_a_lone_turn() -> None:
    from awctl_domains.mcp.codec import ACTION_SCHEMA

    traj = trajectory(LOG[:1], [LOG_TOOL])
    traj.system = SystemPrompt(action_space=ACTION_SCHEMA)
    got = verdicts(traj, 0, "Commit history:")["mcp.envelope"]
    assert not got.ok and "JSON-RPC responses" in got.message


def test_ids_are_compared_only_when_the_request_carried_one() -> None:
    response = json.dumps({"jsonrpc": "2.0", "id": 9, "result": {"content": []}})
    shorthand = trajectory([(call("git_log", repo_path="/r"), response)] * 2)
    assert verdicts(shorthand, 0)["mcp.envelope"].ok
    request = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "git_log", "arguments": {}}}
    )
    wire = trajectory([(request, response)] * 2)
    got = verdicts(wire, 0)["mcp.envelope"]
    assert not got.ok and got.message.startswith("id: the response's id 9 does not answer request id 3")


def test_a_lax_coercible_argument_is_judged_only_once_the_trajectory_shows_a_strict_server() -> None:
    accepted = (call("git_log", repo_path="/r", max_count="1"), result("Commit history:\nCommit: 1f0e"))
    lax = trajectory([*LOG, accepted], [LOG_TOOL])
    assert "mcp.arguments_schema" not in verdicts(lax, 3)  # pydantic servers accept "1" for an integer
    rejected = (
        call("git_log", repo_path="/r", max_count="2"),
        result("max_count: expected integer", error=True),
    )
    strict = trajectory([*LOG, rejected, accepted], [LOG_TOOL])
    got = verdicts(strict, 4)["mcp.arguments_schema"]
    assert not got.ok and got.message.startswith("arguments.max_count: '1' is not of type 'integer'")
    # a violation no validator forgives is judged at once
    missing = trajectory([*LOG, (call("git_log", max_count=1), result("Commit history:"))], [LOG_TOOL])
    assert not verdicts(missing, 3)["mcp.arguments_schema"].ok


def test_schema_checks_abstain_without_declared_tools_and_on_plain_text() -> None:
    bare = trajectory([*LOG, (call("nope"), result("done"))])
    assert not {"mcp.unknown_tool", "mcp.arguments_schema"} & set(verdicts(bare, 3))
    text = trajectory(
        [(a, json.loads(o)["content"][0]["text"]) for a, o in LOG] + [(call("nope"), "ok")], [LOG_TOOL]
    )
    checks = verdicts(text, 3)
    assert "mcp.unknown_tool" not in checks and "mcp.envelope" not in checks  # text carries no error flag


@pytest.mark.parametrize(
    "layout",
    [
        lambda tools: "```json\n" + json.dumps(tools, indent=1) + "\n```",
        lambda tools: "```json\n" + json.dumps({"tools": tools}) + "\n```",
        lambda tools: (
            "<tools>\n"
            + "\n".join(
                json.dumps(
                    {"type": "function", "function": {"name": t["name"], "parameters": t["inputSchema"]}}
                )
                for t in tools
            )
            + "\n</tools>"
        ),
        lambda tools: (
            "```\n"
            + json.dumps([{"name": t["name"], "input_schema": t["inputSchema"]} for t in tools])
            + "\n```"
        ),
    ],
)
def test_tool_lists_are_read_in_every_layout(layout) -> None:
    text = (
        "Example call:\n```json\n"
        + call("git_log", repo_path="/r")
        + "\n```\n"  # a demonstration, not a tool
        "```python\nprint('not json')\n```\n" + layout([LOG_TOOL, READ_TOOL])
    )
    tools = tools_from_text(text)
    assert tools is not None and [t["name"] for t in tools] == ["git_log", "read_text_file"]
    assert tools[0]["inputSchema"] == LOG_TOOL["inputSchema"]
    traj = trajectory([])
    traj.system = SystemPrompt(raw=text)
    assert set(tools_from_trajectory(traj) or {}) == {"git_log", "read_text_file"}


def fs(text: str, content: str | None = None) -> str:
    return json.dumps(
        {"content": [{"type": "text", "text": text}], "structuredContent": {"content": content or text}}
    )


def test_how_text_mirrors_structured_content_is_learned_from_the_other_results() -> None:
    turns = [
        (call("list_directory", path="/d"), fs("[FILE] a.txt")),
        (call("read_text_file", path="/d/a.txt"), fs("hello\n")),
    ]
    traj = trajectory(turns, [READ_TOOL, LIST_TOOL])
    assert all(r.ok for i in range(2) for r in run_verifiers(DOMAIN, traj, i))
    got = verdicts(traj, 1, fs("hello\n", "goodbye\n"))["mcp.structured_text_agrees"]
    assert not got.ok and "should equal structuredContent.content" in got.message
    alone = trajectory(turns[1:], [READ_TOOL])
    assert "mcp.structured_text_agrees" not in verdicts(alone, 0, fs("hello\n", "goodbye\n"))
    # a JSON text with the same keys as structuredContent needs no other result to be compared
    dual = json.dumps({"content": [{"type": "text", "text": '{"t": 1}'}], "structuredContent": {"t": 2}})
    got = verdicts(trajectory([(call("x"), dual)]), 0)["mcp.structured_text_agrees"]
    assert not got.ok and "/t: text says 1, structuredContent says 2" in got.message


def test_a_prose_summary_beside_tools_that_mirror_json_is_not_held_to_their_convention() -> None:
    weather = json.dumps({"t": 20, "sky": "clear"})
    mirrored = json.dumps(
        {"content": [{"type": "text", "text": weather}], "structuredContent": json.loads(weather)}
    )
    prose = json.dumps(
        {"content": [{"type": "text", "text": "The sum of 2 and 3 is 5."}], "structuredContent": {"sum": 5}}
    )
    traj = trajectory(
        [(call("weather", city="a"), mirrored), (call("weather", city="b"), mirrored), (call("sum"), prose)]
    )
    assert all(r.ok for i in range(3) for r in run_verifiers(DOMAIN, traj, i))
    assert "mcp.structured_text_agrees" not in verdicts(traj, 2)


def test_another_tools_result_is_told_apart_by_the_declared_output_schemas() -> None:
    tools = [LOG_TOOL, READ_TOOL]
    turns = [*LOG, (call("read_text_file", path="/d/a.txt"), fs("hello\n"))]
    traj = trajectory(turns, tools)
    got = verdicts(traj, 3, LOG[0][1])["mcp.result_fits_tool"]
    assert not got.ok and "declares an outputSchema but this result has no structuredContent" in got.message
    got = verdicts(traj, 0, fs("hello\n"))["mcp.result_fits_tool"]
    assert not got.ok and "none of git_log's 2 other results has one" in got.message
