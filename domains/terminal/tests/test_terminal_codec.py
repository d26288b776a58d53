"""Codecs, AgentWorldBench hooks, prompts, perturbations and registration of the terminal domain (fast)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from awctl_domains.terminal.codec import (
    Keystroke,
    TerminalActionCodec,
    TerminalObservationCodec,
    command_name,
)
from awctl_domains.terminal.domain import TerminalDomain
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import AwctlError, CodecError

codec = TerminalActionCodec()
domain = TerminalDomain()


def test_parse_accepts_terminus_lists_and_canonical_is_compact():
    text = '[{"keystrokes": "ls -la\\n", "duration": 0.5}, {"keystrokes": "C-c"}]'
    action = codec.parse(text)
    assert action == (Keystroke("ls -la\n", 0.5), Keystroke("C-c", 1.0))
    compact = '[{"keystrokes": "ls -la\\n", "duration": 0.5}, {"keystrokes": "C-c", "duration": 1.0}]'
    assert codec.canonical(text) == compact
    assert codec.render(tuple(action)) == compact  # an action built by a caller renders canonically
    terminus2 = {"analysis": "", "commands": [{"keystrokes": "pwd\n", "duration": 1}], "task_complete": False}
    assert codec.parse(json.dumps(terminus2)) == (Keystroke("pwd\n", 1.0),)


@pytest.mark.parametrize("text", [
    '[{"keystrokes": "cd\\n", "duration":\n 1.0}]',
    ' [ {"keystrokes":"ls\\n"} ]\n',
    '{"analysis": "", "commands": [{"keystrokes": "pwd\\n", "duration": 1}], "task_complete": false}',
])
def test_render_gives_back_the_text_an_unchanged_action_was_read_from(text):
    action = codec.parse(text)
    assert codec.render(action) == text
    edited = (*action, Keystroke("C-c", 0.1))  # an edited action renders in the canonical layout
    assert codec.render(edited) == json.dumps([{"keystrokes": k.keystrokes, "duration": k.duration} for k in edited])


@given(st.lists(st.tuples(st.text(max_size=20), st.floats(0, 100, allow_nan=False)), min_size=1, max_size=4))
def test_render_then_parse_round_trips(items):
    action = tuple(Keystroke(k, d) for k, d in items)
    assert codec.parse(codec.render(action)) == action


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("[{]", "line 1, column 3", "not valid JSON"),
        ('{"keystrokes": "ls"}', "action", "expected a JSON list"),
        ("[]", "action", "empty"),
        ('[{"keystrokes": "ls\\n"}, {"duration": 1}]', "item 2", 'missing "keystrokes"'),
        ('[{"keystrokes": 5}]', "item 1", "must be a string"),
        ('[{"keystrokes": "x", "duration": -1}]', "item 1", ">= 0"),
        ('[{"keystrokes": "x", "duration": "1s"}]', "item 1", "number of seconds"),
        ('[{"keystrokes": "x", "wait": 1}]', "item 1", "unknown field"),
        ('["ls"]', "item 1", "expected an object"),
    ],
)
def test_parse_errors_say_what_and_where(text, where, what):
    with pytest.raises(CodecError) as info:
        codec.parse(text)
    assert info.value.where == where and what in info.value.message


@pytest.mark.parametrize(
    ("keys", "family"),
    [
        ("ls -la\n", "ls"),
        ("FOO=1 sudo /usr/bin/grep -r x .\n", "grep"),
        ("C-c", "control"),
        ("Enter", "keys"),
        ("ls -la", "keys"),
        ("", "wait"),
    ],
)
def test_family_is_the_command_name_or_kind_of_key(keys, family):
    assert codec.family(json.dumps([{"keystrokes": keys, "duration": 0.1}])) == family
    assert codec.family("not json") == "invalid"


def test_command_name_skips_prefixes():
    assert command_name("env A=1 time python3 x.py") == "python3"
    assert command_name("") == ""


def test_observation_codec_checks_geometry():
    obs = TerminalObservationCodec(rows=3, cols=10)
    assert obs.parse("a  \nb\n\n").lines == ("a", "b")
    with pytest.raises(CodecError, match="line 4"):
        obs.parse("1\n2\n3\n4")
    with pytest.raises(CodecError, match="line 2: 11 columns"):
        obs.parse("ok\n" + "x" * 11)
    with pytest.raises(CodecError, match="tab or escape"):
        obs.parse("a\tb")
    assert obs.render(obs.parse("x\ny")) == "x\ny"
    assert obs.normalize("a  \r\nb\n\n") == "a\nb"


@pytest.mark.parametrize("text", ["\n  x\n$ ", "\n\nroot@h:~# ls\na  b\nroot@h:~# ", "  two\npart two\n$ "])
def test_normalize_is_blind_to_what_the_judge_strips(text):
    obs = TerminalObservationCodec(None, None)
    assert obs.normalize(text) == obs.normalize(text.strip())


def test_agentworldbench_bodies_round_trip():
    action = '[{"keystrokes": "ls\\n", "duration": 1.0}]'
    assert domain.from_awb_action(domain.to_awb_action(action)) == action
    assert domain.from_awb_action('  [{"keystrokes": "ls\\n", "duration": 1}]  ') == action
    screen = "root@sandbox:/workspace# ls\na.txt\nroot@sandbox:/workspace#"
    assert domain.from_awb_observation(domain.to_awb_observation(screen)) == screen
    with pytest.raises(CodecError):
        domain.from_awb_action("```json\n{oops\n```")


def test_prompts_have_ten_terminal_variants_and_the_five_sections():
    assert domain.prompt_variants == 10
    task = domain.tasks("basic")[1]
    sections = domain.sections_for(task, "root@sandbox:/workspace# ")
    assert sections.task_description == task.instruction
    assert '"keystrokes"' in sections.action_space
    assert "```\nroot@sandbox:/workspace#\n```" in sections.initial_state and "data.txt" in sections.initial_state
    prompts = {domain.system_prompt(sections, v) for v in range(10)}
    assert len(prompts) == 10 and all("terminal" in p.lower() for p in prompts)


def test_suite_perturbations_and_describe():
    tasks = domain.tasks("basic")
    assert len(tasks) >= 20 and len({t.id for t in tasks}) == len(tasks)
    assert all(t.solution and t.domain == "terminal" for t in tasks)
    assert domain.tasks("nope") == []
    names = {p.name for p in domain.perturbations()}
    assert {"permission_denied", "command_not_found", "timeout_hang", "disk_full", "slow_output"} <= names
    denied = next(p for p in domain.perturbations() if p.name == "permission_denied")
    assert "cat: /data: Permission denied" in denied.render(path="/data")
    assert all(p.render() for p in domain.perturbations())  # every template fills from its defaults
    with pytest.raises(AwctlError, match="needs parameter 'missing'"):
        type(denied)("x", "", "{missing}").render()
    info = domain.describe()
    assert info["suites"] == {"basic": len(tasks), "drill": 120, "readback": 120} and len(info["verifiers"]) >= 6


def test_plugin_registers_without_heavy_imports():
    code = (
        "import sys\n"
        "from awctl.plugins import get_registry\n"
        "d = get_registry().domains['terminal']\n"
        "d.verifiers(); d.tasks('basic'); d.importers(); d.real_env_status()\n"
        "heavy = [m for m in ('torch', 'transformers', 'docker', 'mcp', 'pyte') if m in sys.modules]\n"
        "print(type(d).__name__, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "TerminalDomain []"
