import json
from dataclasses import replace

import pytest
from awctl_domains.swe.codec import (
    BashCall,
    EditorCall,
    SubmitCall,
    SweActionCodec,
    SweObservationCodec,
    parse_bash,
    render_bash,
)
from awctl_domains.swe.domain import SweDomain

from awctl.errors import CodecError

codec = SweActionCodec()


def test_canonical_render_round_trips_every_command():
    actions = [
        EditorCall("view", "/testbed/a.py"),
        EditorCall("view", "/testbed/a.py", view_range=(3, -1)),
        EditorCall("create", "/testbed/n.py", file_text="x = 1\n"),
        EditorCall("str_replace", "/testbed/a.py", old_str="a", new_str="b"),
        EditorCall("str_replace", "/testbed/a.py", old_str="a"),
        EditorCall("insert", "/testbed/a.py", insert_line=0, new_str="# top"),
        EditorCall("undo_edit", "/testbed/a.py"),
        BashCall("cd /testbed && ls"),
        SubmitCall(),
    ]
    for action in actions:
        text = codec.render(action)
        assert "\n" not in text
        assert codec.parse(text) == action
    assert json.loads(codec.render(actions[1])) == {
        "tool": "str_replace_editor", "command": "view", "path": "/testbed/a.py", "view_range": [3, -1]}


def test_accepts_function_call_shapes_fences_and_cli():
    want = EditorCall("view", "/testbed/a.py", view_range=(1, 20))
    args = {"command": "view", "path": "/testbed/a.py", "view_range": [1, 20]}
    shapes = [
        json.dumps({"name": "str_replace_editor", "arguments": args}),
        json.dumps({"name": "str_replace_editor", "arguments": json.dumps(args)}),
        json.dumps({"type": "function", "function": {"name": "str_replace_editor", "arguments": json.dumps(args)}}),
        json.dumps({"type": "tool_use", "name": "str_replace_based_edit_tool", "input": args}),
        json.dumps([{"name": "str_replace_editor", "arguments": args}]),
        "```json\n" + json.dumps({"tool": "str_replace_editor", **args}) + "\n```",
        "str_replace_editor view /testbed/a.py --view_range 1 20",
    ]
    for text in shapes:
        assert codec.parse(text) == want, text
    assert codec.parse(json.dumps({"name": "execute_bash", "arguments": {"command": "ls"}})) == BashCall("ls")
    assert codec.parse("submit") == SubmitCall()
    cli = "str_replace_editor str_replace /testbed/a.py --old_str 'a b' --new_str 'it'\"'\"'s'"
    assert codec.parse(cli) == EditorCall("str_replace", "/testbed/a.py", old_str="a b", new_str="it's")


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ('{"tool": "str_replace_editor", "command": "view", "path": "a.py"}', "action.path", "absolute"),
        ('{"tool": "str_replace_editor", "command": "create", "path": "/testbed/a.py"}', "action.file_text", "needs"),
        ('{"tool": "str_replace_editor", "command": "view"}', "action.path", "missing"),
        ('{"tool": "str_replace_editor", "command": "delete", "path": "/a"}', "action.command", "one of"),
        ('{"tool": "str_replace_editor", "command": "view", "path": "/a", "view_range": [1]}', "action.view_range", "two"),
        ('{"tool": "str_replace_editor", "command": "view", "path": "/a", "old_str": "x"}', "action.old_str", "does not take"),
        ('{"tool": "python", "code": "1"}', "action.tool", "unknown tool"),
        ('{"tool": "bash"}', "action.command", "non-empty"),
        ('{"tool": "bash", "command": ', "action", "invalid JSON"),
        ("ls -la", "action", "not a tool call"),
        ("[]", "action", "exactly one"),
    ],
)
def test_errors_say_what_and_where(text, where, words):
    with pytest.raises(CodecError) as caught:
        codec.parse(text)
    assert caught.value.where == where
    assert words in caught.value.message


def test_family_is_editor_command_or_bash_program():
    assert codec.family(codec.render(EditorCall("str_replace", "/a", old_str="x", new_str="y"))) == "str_replace"
    assert codec.family(codec.render(BashCall("cd /testbed && python3 -m unittest"))) == "python3"
    assert codec.family(codec.render(BashCall("FOO=1 /usr/bin/git status"))) == "git"
    assert codec.family(codec.render(BashCall("cd /tmp"))) == "cd"
    assert codec.family(codec.render(SubmitCall())) == "submit"
    assert codec.family("garbage") == "invalid"


def test_bash_observation_format_round_trips():
    text = render_bash("hello\nworld\n", 3, "/testbed/pkg")
    assert text == "hello\nworld\n[exit_code: 3] [cwd: /testbed/pkg]"
    assert render_bash("", 0, "/testbed") == "[exit_code: 0] [cwd: /testbed]"
    assert render_bash("x", 124, "/testbed", timed_out=True).endswith("[exit_code: 124] [cwd: /testbed] [timed_out]")
    obs_codec = SweObservationCodec()
    parsed = obs_codec.parse(text)
    assert (parsed.kind, parsed.text, parsed.exit_code, parsed.cwd) == ("bash", "hello\nworld", 3, "/testbed/pkg")
    assert obs_codec.render(parsed) == text
    assert parse_bash("no trailer here") is None
    assert obs_codec.parse("File created successfully at: /a").kind == "text"


def test_agentworldbench_hooks_use_a_fenced_json_call():
    domain = SweDomain()
    action = codec.render(BashCall("ls"))
    body = domain.to_awb_action(action)
    assert body.startswith("```json\n") and body.endswith("\n```")
    assert domain.from_awb_action(body) == action
    assert domain.from_awb_action('{"name": "bash", "arguments": {"command": "ls"}}') == action
    assert domain.to_awb_observation("x\n[exit_code: 0] [cwd: /testbed]") == "x\n[exit_code: 0] [cwd: /testbed]"


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "bash",  "command": "ls"}',
        '{"tool": "str_replace_editor",\n "command": "view", "path": "/testbed/a.py"}',
        '```json\n{"tool": "submit"}\n```',
        "str_replace_editor view /testbed/a.py --view_range 1 20",
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}',
        "open tempconv/convert.py 60",
    ],
)
def test_render_gives_back_the_text_an_unchanged_action_was_read_from(text):
    action = codec.parse(text)
    assert codec.render(action) == text
    canonical = codec.canonical(text)
    assert "\n" not in canonical and codec.parse(canonical) == action and codec.render(codec.parse(canonical)) == canonical


def test_an_edited_action_renders_canonically():
    edited = replace(codec.parse('{"tool": "bash",  "command": "ls"}'), command="pwd")
    assert codec.render(edited) == '{"tool": "bash", "command": "pwd"}'


@pytest.mark.parametrize("text", ["x\n\n[exit_code: 0] [cwd: /t]", "[exit_code: 0] [cwd: /t]\n", "plain\n", ""])
def test_observation_render_gives_back_the_parsed_text(text):
    obs_codec = SweObservationCodec()
    assert obs_codec.render(obs_codec.parse(text)) == text


def test_an_edited_bash_observation_renders_in_the_trailer_layout():
    obs_codec = SweObservationCodec()
    edited = replace(obs_codec.parse("x\n\n[exit_code: 0] [cwd: /t]"), exit_code=1)
    assert obs_codec.render(edited) == "x\n[exit_code: 1] [cwd: /t]"


@pytest.mark.parametrize("text", ["\r\ndiff --git a/x b/x\r\n", " tempconv/convert.py | 6 ++++--\n 1 file changed",
                                  "     1\tx = 1\n     2\t"])
def test_normalize_is_blind_to_what_the_judge_strips(text):
    obs_codec = SweObservationCodec()
    assert obs_codec.normalize(text) == obs_codec.normalize(text.strip())
