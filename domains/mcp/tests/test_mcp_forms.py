"""Every observation and action form a real MCP source writes is read, and written back byte for byte."""

from __future__ import annotations

import json

import pytest
from awctl_domains.mcp.codec import (
    McpActionCodec,
    McpObservation,
    McpObservationCodec,
    ToolCall,
    form_of,
    is_error,
    result_of,
    split_frame,
    text_of,
)
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError

actions = McpActionCodec()
observations = McpObservationCodec()

RESULT_2X = {
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-git", "version": "2026.10.19"}},
    "content": [{"type": "text", "text": "Repository status:\nOn branch main"}],
    "isError": False,
    "resultType": "complete",
}

FORMS = [
    # (text, form, is_error, texts)
    (
        json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "ok"}]}}),
        "envelope",
        False,
        ["ok"],
    ),
    (
        '{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Unknown tool: x"}}',
        "envelope",
        True,
        ["Unknown tool: x"],
    ),
    (json.dumps(RESULT_2X), "result", False, ["Repository status:\nOn branch main"]),
    (json.dumps(RESULT_2X, indent=2), "result", False, ["Repository status:\nOn branch main"]),
    # a full pydantic dump: nulls everywhere
    (
        '{\n  "_meta": null,\n  "content": [\n    {\n      "type": "text",\n      "text": "x",\n'
        '      "annotations": null,\n      "_meta": null\n    }\n  ],\n  "structuredContent": null,\n'
        '  "isError": true,\n  "resultType": "complete"\n}',
        "result",
        True,
        ["x"],
    ),
    (
        '{"code": -32602, "message": "Unknown tool: get_time", "data": null}',
        "error",
        True,
        ["Unknown tool: get_time"],
    ),
    (
        '[{"type": "text", "text": "Echo: hi"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]',
        "blocks",
        None,
        ["Echo: hi"],
    ),
    ("[]", "text", None, ["[]"]),  # an empty block list or a tool's empty JSON list: nothing says which
    ('[{"name": "data.csv", "type": "file"}]', "text", None, None),  # a tool's JSON, not content blocks
    ("Repository status:\nOn branch main\n", "text", None, ["Repository status:\nOn branch main\n"]),
    ('{\n  "timezone": "UTC",\n  "is_dst": false\n}', "text", None, None),  # a tool's own JSON output
    ('{"content": [{"type": "text", "text": "cut off', "text", None, None),  # unparseable: text for the codec
    ('```json\n{"content": [], "isError": false}\n```', "result", False, []),
    ("  \n", "text", None, None),
]


@pytest.mark.parametrize(("text", "form", "error", "texts"), FORMS)
def test_every_form_is_read_and_rendered_back_byte_for_byte(text: str, form: str, error, texts) -> None:
    obs = observations.parse(text)
    assert obs.form == form == form_of(text)
    assert observations.render(obs) == text
    assert obs.is_error is error
    if texts is not None:
        assert obs.texts == texts


def test_extra_result_keys_survive_and_are_reachable() -> None:
    value = {**RESULT_2X, "structuredContent": {"n": 1}, "x-vendor": {"trace": [1, 2]}}
    text = json.dumps(value, separators=(",", ":"))
    obs = observations.parse(text)
    assert obs.result == value and obs["x-vendor"] == {"trace": [1, 2]} and "resultType" in obs
    assert observations.render(obs) == text


def test_an_edited_value_keeps_the_source_style() -> None:
    for text in (
        json.dumps(RESULT_2X, indent=2),
        json.dumps(RESULT_2X, separators=(",", ":")),
        "```json\n" + json.dumps(RESULT_2X) + "\n```",
        json.dumps({**RESULT_2X, "content": [{"type": "text", "text": "héllo"}]}, ensure_ascii=True),
    ):
        obs = observations.parse(text)
        edited = json.loads(json.dumps(obs.value))
        edited["isError"] = True
        out = observations.render(McpObservation(obs.form, edited, text))
        assert out != text and json.loads(split_frame(out)[1]) == edited
        # only the flag changed: same lines, same separators, same fence
        assert (
            out.replace('"isError": true', '"isError": false').replace('"isError":true', '"isError":false')
            == text
        )


def test_json_equality_is_strict_when_deciding_a_value_changed() -> None:
    text = '{"content": [], "isError": true}'
    obs = observations.parse(text)
    # 1 == True in Python, but not in JSON: the edit must show
    assert observations.render(McpObservation("result", {"content": [], "isError": 1}, text)) == (
        '{"content": [], "isError": 1}'
    )
    assert observations.render(obs) == text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"jsonrpc": "2.0", "id": 1, "result": {"content": [', "observation line 1"),
        ('{"jsonrpc": "2.0", "id": 1}', "observation"),
        ('{"jsonrpc": "2.0", "result": {}}', "observation.id"),
    ],
)
def test_only_a_malformed_json_rpc_message_is_rejected(text: str, where: str) -> None:
    with pytest.raises(CodecError) as err:
        observations.parse(text)
    assert err.value.where.startswith(where)


def test_helpers_read_every_form() -> None:
    assert is_error(observations.parse('{"code": -32602, "message": "Unknown tool: x"}'))
    assert not is_error(observations.parse(json.dumps(RESULT_2X)))
    assert result_of(observations.parse(json.dumps(RESULT_2X))) == RESULT_2X
    assert (
        text_of(observations.parse('[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]'))
        == "a\nb"
    )
    # older callers pass plain envelope dicts
    assert text_of({"result": {"content": [{"type": "text", "text": "x"}]}}) == "x"


def test_normalize_drops_meta_and_null_optional_fields_across_dump_styles() -> None:
    wire = '{"content": [{"type": "text", "text": "x"}], "isError": false}'
    full = (
        '{"_meta": {"a": 1}, "content": [{"type": "text", "text": "x", "annotations": null, "_meta": null}], '
        '"structuredContent": null, "isError": false}'
    )
    assert observations.normalize(wire) == observations.normalize(full)
    assert observations.normalize("plain  \ntext") == "plain\ntext"


# ── actions ──────────────────────────────────────────────────────────────────────────────────────────

ACTION_FORMS = [
    ('{"name": "git_status", "arguments": {"repo_path": "/r"}}', "call", False),
    ('```json\n{"name": "git_status", "arguments": {"repo_path": "/r"}}\n```', "call", False),
    # the SDK's request as captured on the wire: its own key order
    (
        '{"method":"tools/call","params":{"name":"git_status","arguments":{"repo_path":"/r"}},"jsonrpc":"2.0","id":3}',
        "request",
        True,
    ),
    (
        '{"type": "function", "function": {"name": "git_status", '
        '"arguments": "{\\"repo_path\\": \\"/r\\"}"}}',
        "openai",
        False,
    ),
]


@pytest.mark.parametrize(("text", "form", "id_given"), ACTION_FORMS)
def test_every_action_form_round_trips_and_says_what_it_carried(text: str, form: str, id_given: bool) -> None:
    call = actions.parse(text)
    assert (call.name, call.arguments, call.form, call.id_given) == (
        "git_status",
        {"repo_path": "/r"},
        form,
        id_given,
    )
    assert actions.render(call) == text


def test_an_edited_call_is_rendered_in_its_form() -> None:
    from dataclasses import replace

    call = actions.parse('{"name": "git_status", "arguments": {"repo_path": "/r"}}')
    edited = replace(call, arguments={"repo_path": "/s"})
    assert actions.render(edited) == '{"name": "git_status", "arguments": {"repo_path": "/s"}}'
    assert actions.render(replace(call, arguments={"repo_path": True})) != actions.render(call)


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@given(
    extra=st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k != "jsonrpc"), json_value, max_size=3
    ),
    blocks=st.lists(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)}), max_size=3
    ),
    indent=st.sampled_from([None, 1, 2, 4]),
    ascii_=st.booleans(),
)
def test_any_call_tool_result_round_trips(extra: dict, blocks: list, indent, ascii_: bool) -> None:
    value = {**extra, "content": blocks, "isError": False}
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_)
    obs = observations.parse(text)
    assert obs.form in ("result", "envelope") and observations.render(obs) == text
    rendered = observations.render(McpObservation(obs.form, obs.value, None))
    assert json.loads(rendered) == value


def test_a_call_built_in_code_renders_as_a_json_rpc_request() -> None:
    assert actions.render(ToolCall("t", {"a": 1}, 5)) == (
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {"a": 1}}}'
    )
