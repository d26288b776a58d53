"""Action/observation codecs and the embedded tool list."""

from __future__ import annotations

import json

import pytest
from awctl_domains.mcp.codec import (
    McpActionCodec,
    McpObservationCodec,
    ToolCall,
    render_tool_list,
    tools_from_text,
    tools_from_trajectory,
)
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError
from awctl.trajectory import SystemPrompt, Trajectory

actions = McpActionCodec()
observations = McpObservationCodec()
CANON = '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_note", "arguments": {"path": "a.md"}}}'


def test_canonical_request_round_trips() -> None:
    call = actions.parse(CANON)
    assert call == ToolCall("read_note", {"path": "a.md"}, 4)
    assert actions.render(call) == CANON
    assert actions.family(CANON) == "read_note"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "read_note", "arguments": {"path": "a.md"}, "id": 4}',
        '{"name": "read_note", "arguments": "{\\"path\\": \\"a.md\\"}", "id": 4}',
        '{"id": 4, "type": "function", "function": {"name": "read_note", "arguments": "{\\"path\\": \\"a.md\\"}"}}',
        '```json\n{"name": "read_note", "arguments": {"path": "a.md"}, "id": 4}\n```',
        "```\n" + CANON + "\n```",
    ],
)
def test_every_action_form_reads_as_one_call_and_renders_back_byte_for_byte(text: str) -> None:
    # Lossless (issue 10): a source's own form is kept; a call built in code renders canonically.
    call = actions.parse(text)
    assert call == actions.parse(CANON)
    assert actions.render(call) == text
    assert actions.render(ToolCall(call.name, call.arguments, call.id)) == CANON


def test_shorthand_without_id_gets_id_1_and_no_arguments_means_empty() -> None:
    assert actions.parse('{"name": "list_notes"}') == ToolCall("list_notes", {}, 1)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"name": "x",', "action line 1"),
        ("[1]", "action"),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', "action.method"),
        ('{"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {}}', "action.jsonrpc"),
        ('{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "a"}}', "action.id"),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/call", "params": {"name": "a"}}', "action.id"),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}',
            "action.params.name",
        ),
        ('{"name": "a", "arguments": [1]}', "action.arguments"),
        ('{"name": "a", "arguments": "{oops"}', "action.arguments"),
    ],
)
def test_bad_actions_name_the_place(text: str, where: str) -> None:
    with pytest.raises(CodecError) as err:
        actions.parse(text)
    assert err.value.where.startswith(where)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    name=st.text(min_size=1, max_size=20),
    arguments=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    rid=st.integers(-(2**31), 2**31) | st.text(max_size=10),
)
def test_parse_render_round_trip(name: str, arguments: dict, rid: int | str) -> None:
    call = ToolCall(name, arguments, rid)
    assert actions.parse(actions.render(call)) == call


def test_observation_parse_and_errors() -> None:
    ok = '{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": false}}'
    assert observations.parse(ok)["result"]["isError"] is False
    for bad, where in [
        ('{"jsonrpc": "2.0", "id": 1}', "observation"),
        ('{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}', "observation"),
        ('{"jsonrpc": "1.0", "id": 1, "result": {}}', "observation.jsonrpc"),
        ('{"jsonrpc": "2.0", "result": {}}', "observation.id"),
    ]:
        with pytest.raises(CodecError) as err:
            observations.parse(bad)
        assert err.value.where == where
    # Without "jsonrpc" a JSON object is no JSON-RPC message: a tool's own JSON output, read as text.
    assert observations.parse('{"id": 1, "result": {}}').form == "text"


def test_normalize_ignores_key_order_and_meta() -> None:
    a = '{"jsonrpc": "2.0", "id": 1, "result": {"isError": false, "content": [], "_meta": {"t": 1}}}'
    b = '{"result": {"content": [], "isError": false}, "id": 1, "jsonrpc": "2.0"}'
    assert observations.normalize(a) == observations.normalize(b)
    c = '{"result": {"content": [], "isError": true}, "id": 1, "jsonrpc": "2.0"}'
    assert observations.normalize(a) != observations.normalize(c)


def test_tool_list_embeds_and_extracts() -> None:
    tools = [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
    block = render_tool_list(tools)
    assert block.startswith("```json mcp-tools\n")
    assert tools_from_text("intro\n" + block + "\nmore") == tools
    assert tools_from_text("no block here") is None
    traj = Trajectory(id="x", domain="mcp", system=SystemPrompt(initial_state="Connected.\n" + block))
    assert tools_from_trajectory(traj) == {"t": tools[0]}
    with pytest.raises(CodecError, match="mcp-tools block"):
        tools_from_text('```json mcp-tools\n{"tools": [{"nom": 1}]}\n```')
    assert json.loads(block.split("\n", 1)[1].rsplit("\n", 1)[0]) == {"tools": tools}
