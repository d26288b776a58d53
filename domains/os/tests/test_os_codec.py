"""Codec round trips on samples in the official layouts, the action checks, and fuzzing (only CodecError)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.os.a11y import (
    TABLE_HEADER,
    A11yObservation,
    linearize,
    parse_observation,
    render_observation,
    render_xml,
    tree_from_atspi,
)
from awctl_domains.os.actions import ACTION_TYPES, action_python, computer13_text
from awctl_domains.os.codec import OsActionCodec, OsObservationCodec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.errors import CodecError

FIXTURES = Path(__file__).parent / "fixtures"
OBS = OsObservationCodec()
ACT = OsActionCodec()

# AgentWorldBench-style free-form code blocks and OSWorld pyautogui actions.
CODE_SAMPLES = [
    "```python\npyautogui.click(540, 312)\n```",
    "```python\nimport pyautogui\nimport time\npyautogui.hotkey('ctrl', 'alt', 't')\ntime.sleep(0.5)\n"
    "pyautogui.typewrite('ls -la\\n', interval=0.05)\n```",
    "```python\npyautogui.doubleClick(x=203, y=417)\npyautogui.press(['backspace', 'backspace'])\n"
    "pyautogui.write('2nd')\nDONE\n```",
    "import pyautogui as pg\npg.moveTo(100, 200, duration=0.3)\npg.dragTo(400, 200, button='left')",
    "from pyautogui import click, hotkey\nclick((960, 540))\nhotkey('ctrl', 's')",
    "```python\nx, y = 812, 46\npyautogui.click(x, y)\nfor _ in range(3):\n    pyautogui.scroll(-5)\n```",
    "```python\nimport subprocess\nsubprocess.run(['xdg-open', '/home/user/report.pdf'])\n```\n```python\nWAIT\n```",
    "```python\nBrowserTools.open_bookmarks()\n```",
    "pyautogui.rightClick(1020, 300); pyautogui.press('down', presses=2); pyautogui.press('enter')",
]
C13_SAMPLES = [
    '{"action_type": "MOVE_TO", "parameters": {"x": 10.5, "y": 20}}',
    '{"action_type": "CLICK", "parameters": {"button": "right", "x": 5, "y": 6, "num_clicks": 2}}',
    '{"action_type": "CLICK"}',
    '{"action_type": "MOUSE_DOWN", "parameters": {"button": "left"}}',
    '{"action_type": "MOUSE_UP", "parameters": {}}',
    '{"action_type": "RIGHT_CLICK", "parameters": {"x": 300, "y": 400}}',
    '{"action_type": "DOUBLE_CLICK", "x": 64, "y": 136}',
    '{"action_type": "DRAG_TO", "parameters": {"x": 900, "y": 100}}',
    '{"action_type": "SCROLL", "parameters": {"dx": 0, "dy": -3}}',
    '{"action_type": "TYPING", "parameters": {"text": "hello \\"world\\"\\n"}}',
    '{"action_type": "PRESS", "parameters": {"key": "Enter"}}',
    '{"action_type": "KEY_DOWN", "parameters": {"key": "shift"}}',
    '{"action_type": "KEY_UP", "parameters": {"key": "shift"}}',
    '{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "shift", "t"]}}',
    '{"action_type": "WAIT"}',
    '{"action_type": "FAIL"}',
    '```json\n{"action_type": "DONE"}\n```',
    '```json\n{"action_type": "TYPING", "text": "a"}\n```\n\n```json\n{"action_type": "PRESS", "key": "tab"}\n```',
]


@pytest.mark.parametrize("text", [*CODE_SAMPLES, *C13_SAMPLES, "WAIT", "DONE", "FAIL", " DONE\n"])
def test_actions_round_trip_byte_for_byte(text: str) -> None:
    action = ACT.parse(text)
    assert ACT.render(action) == text
    assert ACT.parse(ACT.render(action)) == action


def test_every_computer13_type_is_covered_by_a_sample() -> None:
    seen = {ACT.parse(s).commands[0].action_type for s in C13_SAMPLES}
    assert seen == set(ACTION_TYPES)


def test_pyautogui_calls_are_read_with_their_literal_arguments() -> None:
    action = ACT.parse(CODE_SAMPLES[2])
    assert [c.name for c in action.calls] == ["doubleClick", "press", "write"]
    assert action.calls[0].point == (203.0, 417.0) and action.calls[0].clicks == 2
    assert action.calls[1].keys == ("backspace", "backspace")
    assert action.calls[2].text == "2nd" and action.calls[2].line == 4
    assert action.special == "DONE"
    aliased = ACT.parse(CODE_SAMPLES[3])
    assert [c.name for c in aliased.calls] == ["moveTo", "dragTo"] and aliased.calls[1].point == (400.0, 200.0)
    imported = ACT.parse(CODE_SAMPLES[4])
    assert imported.calls[0].point == (960.0, 540.0) and imported.calls[1].keys == ("ctrl", "s")
    computed = ACT.parse(CODE_SAMPLES[5])
    assert computed.calls[0].point is None  # variables are not guessed
    other = ACT.parse(CODE_SAMPLES[7])
    assert other.calls == () and other.other_calls == ("BrowserTools.open_bookmarks",)


def test_computer13_becomes_the_code_osworld_runs() -> None:
    assert action_python(ACT.parse(C13_SAMPLES[1])) == "pyautogui.click(button='right', x=5, y=6, clicks=2)"
    assert action_python(ACT.parse(C13_SAMPLES[8])) == "pyautogui.hscroll(0)\npyautogui.vscroll(-3)"
    assert action_python(ACT.parse(C13_SAMPLES[13])) == "pyautogui.hotkey('ctrl', 'shift', 't')"
    typed = ACT.parse(C13_SAMPLES[9])
    assert typed.typed_text() == 'hello "world"\n'
    assert action_python(typed) == "pyautogui.typewrite('hello \"world\"\\n')"
    assert json.loads(computer13_text("PRESS", key="f4")) == {"action_type": "PRESS", "parameters": {"key": "f4"}}


@pytest.mark.parametrize(("text", "fragment"), [
    ("pyautogui.press('ctrlx')", "unknown key name 'ctrlx'"),
    ("pyautogui.hotkey('ctrl', 'sss')", "unknown key name 'sss'"),
    ("pyautogui.click(-5, 10)", "negative coordinate"),
    ("pyautogui.click(10, 20, button='side')", "unknown mouse button"),
    ("pyautogui.click(10,\n", "not valid Python"),
    ('{"action_type": "CLICK", "parameters": {"x": 1}}', "give x and y together"),
    ('{"action_type": "JUMP"}', "unknown action_type 'JUMP'"),
    ('{"action_type": {"keys": ["ctrl", "a"]}}', "unknown action_type {'keys'"),
    ('{"action_type": "PRESS", "parameters": {"key": "hyper"}}', "unknown key 'hyper'"),
    ('{"action_type": "HOTKEY", "parameters": {"keys": []}}', "non-empty list"),
    ('{"action_type": "SCROLL", "parameters": {"dx": 1.5, "dy": 0}}', "dx must be an integer"),
    ('{"action_type": "CLICK", "parameters": {"num_clicks": 4}}', "num_clicks"),
    ('{"action_type": "TYPING", "parameters": {"text": "a", "speed": 2}}', "unknown parameter 'speed'"),
    ('{"action_type": "DONE", "parameters": {"x": 1, "y": 1}}', "unknown parameter 'x'"),
    ("```python\npyautogui.click(1, 2)\n```\n```json\n{\"action_type\": \"DONE\"}\n```", "mixes"),
    ("", "empty action"),
])
def test_bad_actions_are_codec_errors_naming_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(CodecError, match=None) as info:
        ACT.parse(text)
    assert fragment in str(info.value)


def test_coordinates_are_checked_against_a_known_screen() -> None:
    bounded = OsActionCodec(screen=(1280, 800))
    bounded.parse("pyautogui.click(1279, 799)")
    with pytest.raises(CodecError, match=r"line 2: .*outside the 1280x800 screen"):
        bounded.parse("pyautogui.moveTo(5, 5)\npyautogui.click(1280, 10)")
    with pytest.raises(CodecError, match="outside the 1280x800 screen"):
        bounded.parse('{"action_type": "DRAG_TO", "parameters": {"x": 100, "y": 900}}')
    ACT.parse("pyautogui.click(5000, 5000)")  # no screen known: only negative coordinates are refused


@pytest.mark.parametrize("name", ["osworld_ubuntu.xml", "pretty_printed.xml", "osworld_windows.xml",
                                  "osworld_table.txt"])
def test_observation_samples_round_trip_byte_for_byte(name: str) -> None:
    text = (FIXTURES / name).read_text()
    obs = OBS.parse(text)
    assert OBS.render(obs) == text
    assert OBS.parse(OBS.render(obs)) == obs


def test_osworld_layout_is_structured_and_other_layouts_are_kept_verbatim() -> None:
    osworld = OBS.parse((FIXTURES / "osworld_ubuntu.xml").read_text())
    assert osworld.verbatim is None and osworld.platform == "ubuntu"
    text_node = next(n for n in osworld.tree.iter() if n.tag == "text")  # type: ignore[union-attr]
    assert text_node.text.startswith('Shopping list:\n- milk & eggs\n- "good"')  # type: ignore[union-attr]
    recent = next(n for n in osworld.tree.iter() if n.name == "Recent")  # type: ignore[union-attr]
    assert recent.attrib["{https://accessibility.ubuntu.example.org/ns/attributes}tip"] == "line one\nline two"
    pretty = OBS.parse((FIXTURES / "pretty_printed.xml").read_text())
    assert pretty.verbatim is not None and pretty.preamble == '<?xml version="1.0" encoding="UTF-8"?>\n'
    assert OBS.parse((FIXTURES / "osworld_windows.xml").read_text()).platform == "windows"


def test_table_rows_decode_quotes_and_span_lines() -> None:
    obs = OBS.parse((FIXTURES / "osworld_table.txt").read_text())
    assert obs.kind == "table" and obs.header == TABLE_HEADER and len(obs.rows) == 8
    shopping = obs.rows[3]
    assert shopping.value == 'Shopping list:\n- milk & eggs\n- "good" bread <2 loaves>\n\ttabbed line'
    assert shopping.xy == (70.0, 148.0) and shopping.wh == (1195.0, 680.0)
    assert obs.rows[6].value == 'He said "hi"'
    assert obs.rows[7].value.endswith("user@ubuntu:~$ ")


def test_linearize_follows_osworlds_filter_and_quoting() -> None:
    tree = OBS.parse((FIXTURES / "osworld_ubuntu.xml").read_text()).tree
    rows = linearize(tree)  # type: ignore[arg-type]
    names = [r.name for r in rows]
    # Not showing (the Recent menu), not named and textless (fillers), or not a kept role (frame): dropped.
    assert "Recent" not in names and "todo.txt" not in names and "*notes.txt (~/Documents) - gedit" not in names
    assert names[:3] == ["Activities", "Dec 1  12:00", "System"]
    text_row = next(r for r in rows if r.tag == "text")
    assert text_row.text.startswith('"Shopping list:') and '""good""' in text_row.text
    assert all(r.cls == "" and r.description == "" for r in rows)  # OSWorld reads them from the Windows namespace
    table = render_observation(A11yObservation("table", rows=rows))
    assert table.split("\n")[0] == TABLE_HEADER and OBS.render(OBS.parse(table)) == table


def test_preamble_and_epilogue_are_kept() -> None:
    xml = (FIXTURES / "osworld_ubuntu.xml").read_text()
    text = "Accessibility tree of the desktop:\n" + xml + "\n"
    obs = OBS.parse(text)
    assert obs.preamble == "Accessibility tree of the desktop:\n" and obs.epilogue == "\n"
    assert OBS.render(obs) == text


def test_tree_from_the_atspi_reader_uses_osworlds_attribute_order() -> None:
    app = {"role": "application", "name": "mousepad", "states": [], "attributes": {}, "extents": None,
           "text": None, "children": [
               {"role": "push button", "name": 'Say "hi"', "states": ["enabled", "showing", "visible"],
                "attributes": {"toolkit": "gtk"}, "extents": [10, 20, 30, 40], "text": "a\x01b",
                "image": False, "selection": False, "value": {"value": "1.0"},
                "actions": [["click", "Clicks the button", ""]], "children": []},
               {"role": "menu item", "name": "hidden", "states": ["enabled"], "children": []}]}
    xml = render_xml(tree_from_atspi([app], prune_hidden=True))
    assert xml.endswith(
        '<application name="mousepad"><push-button name="Say &quot;hi&quot;" st:enabled="true" st:showing="true" '
        'st:visible="true" attr:toolkit="gtk" cp:screencoord="(10, 20)" cp:size="(30, 40)" val:value="1.0" '
        'act:click_desc="Clicks the button" act:click_kb="">ab</push-button></application></desktop-frame>')
    assert "hidden" not in xml
    assert parse_observation(xml).verbatim is None


@pytest.mark.parametrize("text", ["", "hello", "<desktop-frame>", "<a><b></a>", "tag\tname\ttext\n",
                                  TABLE_HEADER + "\nbutton\tOK", '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>',
                                  "<x xmlns:st='u'><st:y/></x><junk>", "<x><p:y/></x>", "<" + "a>" * 300])
def test_bad_observations_are_codec_errors(text: str) -> None:
    with pytest.raises(CodecError):
        OBS.parse(text)


# ── fuzzing: whatever the input, the codecs raise CodecError or return a value that renders back ──

_SEEDS = [*CODE_SAMPLES, *C13_SAMPLES]
_OBS_SEEDS = [(FIXTURES / n).read_text() for n in ("osworld_ubuntu.xml", "osworld_table.txt", "pretty_printed.xml")]


def _mutate(seed: str, cut: int, insert: str) -> str:
    cut = cut % (len(seed) + 1)
    return seed[:cut] + insert + seed[cut + len(insert) // 2:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.builds(_mutate, st.sampled_from(_SEEDS), st.integers(0, 400),
                                                   st.text(max_size=12))))
def test_action_codec_fuzz_raises_only_codec_errors(text: str) -> None:
    try:
        action = ACT.parse(text)
    except CodecError:
        return
    assert ACT.render(action) == text


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 5000) | st.floats(allow_nan=True) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                     max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([*ACTION_TYPES, "", "click"]), st.dictionaries(
    st.sampled_from(["x", "y", "button", "num_clicks", "dx", "dy", "text", "key", "keys", "other"]), _JSON, max_size=4),
    st.booleans())
def test_computer13_fuzz_raises_only_codec_errors(action_type: str, params: dict, nested: bool) -> None:
    obj = {"action_type": action_type, "parameters": params} if nested else {"action_type": action_type, **params}
    text = json.dumps(obj)
    try:
        action = OsActionCodec(screen=(1920, 1080)).parse(text)
    except CodecError:
        return
    assert action.form in ("computer_13",) and action_python(action) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.builds(_mutate, st.sampled_from(_OBS_SEEDS), st.integers(0, 5000),
                                                   st.text(alphabet='<>&"\'\t\n x=/:;!?-[]', max_size=10))))
def test_observation_codec_fuzz_raises_only_codec_errors(text: str) -> None:
    try:
        obs = OBS.parse(text)
    except CodecError:
        return
    assert OBS.render(obs) == text
    obs.table_rows()  # linearizing any accepted tree works too
