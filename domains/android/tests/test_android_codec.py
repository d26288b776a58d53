"""The android codecs on real-format samples: AndroidWorld actions, uiautomator dumps, UI element lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.android.actions import (
    ACTION_TYPES,
    AndroidAction,
    canonical_action,
    extract_action_json,
    parse_action,
    render_action,
)
from awctl_domains.android.codec import AndroidActionCodec, AndroidObservationCodec
from awctl_domains.android.screens import BoundingBox, canonical_screen, render_screen
from awctl_domains.android.uixml import parse_xml, render_xml

from awctl.errors import CodecError

FIXTURES = Path(__file__).parent / "fixtures"
SCREENS = Path(__file__).parents[1] / "fixtures" / "screens"
ACTIONS = AndroidActionCodec()
SCREEN = AndroidObservationCodec()


def _actions() -> list[str]:
    return (FIXTURES / "androidworld_actions.txt").read_text().splitlines()


def test_androidworld_actions_round_trip_byte_for_byte() -> None:
    lines = _actions()
    assert len(lines) >= 20
    for line in lines:
        assert ACTIONS.render(ACTIONS.parse(line)) == line


def test_every_action_type_appears_and_parses_to_its_fields() -> None:
    parsed = [parse_action(line) for line in _actions()]
    assert {a.action_type for a in parsed} == set(ACTION_TYPES) and len(ACTION_TYPES) == 14
    assert parse_action('{"action_type":"double_tap","index":"7"}').index == 7  # AndroidWorld: int(index)
    assert parse_action('{"action_type": "click", "index": 12, "x": null, "y": null}') == AndroidAction("click", index=12)
    typed = parse_action('{"action_type":"input_text","index":2,"text":"Caf\\u00e9 au lait","clear_text":true}')
    assert typed.text == "Café au lait" and typed.clear_text is True and typed.target == "index"


def test_canonical_action_text_is_json_dumps_in_androidworld_key_order() -> None:
    action = parse_action('{"index":3,"text":"hi","action_type":"input_text"}')
    assert canonical_action(action) == '{"action_type": "input_text", "index": 3, "text": "hi"}'
    edited = AndroidAction("input_text", index=4, text="hi")
    assert render_action(edited) == '{"action_type": "input_text", "index": 4, "text": "hi"}'
    assert ACTIONS.family('{"action_type":"scroll","direction":"up"}') == "scroll"
    assert ACTIONS.family("not json") == "invalid"


@pytest.mark.parametrize(("text", "fragment"), [
    ('{"action_type": "click", "index": 3, "x": 5, "y": 6}', "never both"),
    ('{"action_type": "scroll", "direction": "sideways"}', "'direction'"),
    ('{"action_type": "keyboard_enter", "keycode": "ENTER"}', "KEYCODE_"),
    ('{"action_type": "status", "goal_status": "done"}', "'goal_status'"),
    ('{"action_type": "tap", "index": 1}', "'action_type'"),
    ('{"action_type": "click", "element": 1}', "unknown key 'element'"),
    ('{"action_type": "click"}', '"index" or "x"/"y"'),
    ('{"action_type": "click", "x": 5}', "'y' is missing"),
    ('{"action_type": "input_text", "index": 1}', '"text"'),
    ('{"action_type": "open_app"}', '"app_name"'),
    ('{"action_type": "input_text", "text": "a", "clear_text": "yes"}', "'clear_text'"),
    ('{"action_type": "click", "index": -1}', "negative"),
    ('{"action_type": "click", "index": true}', "integer"),
    ('[{"action_type": "wait"}]', "JSON object"),
    ('{"action_type": "wait"', "invalid JSON"),
    ("", "empty"),
])
def test_action_rules_are_codec_errors_naming_the_key(text: str, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        parse_action(text)
    assert fragment in str(info.value)


def test_agent_outputs_and_fences_yield_the_action_json() -> None:
    t3a = 'Reason: the switch is on, so "Action: none" is wrong.\nAction: {"action_type": "click", "index": 5}\n'
    assert parse_action(extract_action_json(t3a)) == AndroidAction("click", index=5)
    fenced = '```json\n{"action_type": "navigate_back"}\n```'
    assert extract_action_json(fenced) == '{"action_type": "navigate_back"}'
    assert extract_action_json('{"action_type": "wait"}') == '{"action_type": "wait"}'


def test_a_handwritten_uiautomator_dump_parses_and_renders_byte_for_byte() -> None:
    text = (FIXTURES / "clock_alarms.xml").read_text()
    screen = SCREEN.parse(text)
    assert screen.kind == "xml" and screen.document is not None
    # The renderer itself spells the dump as uiautomator does (no copy of the source is involved).
    assert canonical_screen(screen) == text and render_xml(screen.document) == text
    nodes = screen.document.nodes()
    assert len(nodes) == 24 and nodes[0].get("bounds") == "[0,0][1080,2400]"
    label = next(n for n in nodes if (n.get("text") or "").startswith("Say"))
    assert label.get("text") == 'Say "hi" to Ada\nthen leave <early>'  # &quot; &#10; &lt; &gt; decoded
    assert next(n for n in nodes if n.get("text") == "Work & gym")


def test_dump_elements_follow_androidworlds_rule_leaves_descriptions_scrollables() -> None:
    screen = SCREEN.parse((FIXTURES / "clock_alarms.xml").read_text())
    elements = screen.ui_elements()
    assert [i for i, _ in elements] == list(range(17))
    recycler = elements[2][1]
    assert recycler.get("is_scrollable") is True and recycler.get("class_name").endswith("RecyclerView")
    switch = next(e for _, e in elements if e.get("content_description") == "7:30 AM alarm")
    assert switch.get("is_checked") is True and switch.bbox_pixels == BoundingBox(880, 1006, 338, 422)
    assert switch.bbox_pixels.center == (943, 380)
    bedtime = elements[16][1]
    assert bedtime.text == "Bedtime" and bedtime.get("is_enabled") is False


def test_a_pretty_printed_dump_keeps_its_whitespace_and_declaration() -> None:
    text = (FIXTURES / "contacts_search.pretty.xml").read_text()
    screen = SCREEN.parse(text)
    assert render_screen(screen) == text and canonical_screen(screen) == text
    assert screen.document is not None and screen.document.declaration.startswith('<?xml version="1.0"')
    assert [e.text for _, e in screen.ui_elements()][1] == "Gra"


def test_every_transcript_screen_round_trips() -> None:
    files = sorted(SCREENS.glob("*.xml"))
    assert len(files) >= 25
    for path in files:
        text = path.read_text()
        doc = parse_xml(text)
        assert render_xml(doc) == text, path.name


def test_an_androidworld_element_list_round_trips_byte_for_byte() -> None:
    text = (FIXTURES / "element_list.txt").read_text()
    screen = SCREEN.parse(text)
    assert screen.kind == "elements" and render_screen(screen) == text
    # Python's repr is the canonical spelling, so the renderer reproduces AndroidWorld's text exactly.
    assert canonical_screen(screen) == text.rstrip("\n")
    assert screen.foreground_package == "com.google.android.deskclock"
    indices = [i for i, _ in screen.elements]
    assert indices == [0, 1, 2, 3, 5, 6, 7, 9]  # the text agent's filter skips elements, indices stay
    by_index = dict(screen.elements)
    assert by_index[3].text == "7:30\u202fAM" and by_index[6].text == 'Ada\'s "gym" alarm'
    assert by_index[2].get("bbox") == BoundingBox(0.0, 1.0, 0.11458333333333333, 0.8458333333333333)
    assert by_index[9].get("is_enabled") is False


def test_unusual_spellings_round_trip_and_normalize_to_the_canonical_form() -> None:
    line = ('UI element 0: UIElement(text="Wi-Fi", content_description=None, is_checked=True, '
            "bbox_pixels=BoundingBox(x_min=0, x_max=1.50, y_min=0, y_max=1))")
    text = f"Foreground app: com.android.settings\n\n{line}\n\n"
    screen = SCREEN.parse(text)
    assert render_screen(screen) == text
    assert SCREEN.normalize(text) == ("Foreground app: com.android.settings\n" + line.replace('"Wi-Fi"', "'Wi-Fi'")
                                      .replace("1.50", "1.5"))
    spaced = '<?xml version="1.0"?><hierarchy rotation="0"><node  text = \'a\'  bounds="[0,0][1,1]"/></hierarchy>'
    assert render_screen(SCREEN.parse(spaced)) == spaced
    assert SCREEN.normalize(spaced) == ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                                        '<hierarchy rotation="0"><node text="a" bounds="[0,0][1,1]" /></hierarchy>')


def test_an_edited_screen_renders_canonically_not_from_the_stale_source() -> None:
    text = (FIXTURES / "element_list.txt").read_text()
    screen = SCREEN.parse(text)
    dict(screen.elements)[5].fields["is_checked"] = False
    out = render_screen(screen)
    assert out != text and "is_checked=False, is_checkable=True" in out.splitlines()[6]


def test_prose_descriptions_are_kept_verbatim_as_text_screens() -> None:
    for prose in ("The Settings app opened. Screen shows: Network & internet, Battery.",
                  "Result: the toggle is now off.", ""):
        screen = SCREEN.parse(prose)
        assert screen.kind == "text" and render_screen(screen) == prose and not screen.ui_elements()


@pytest.mark.parametrize(("text", "fragment"), [
    ("<hierarchy rotation=\"0\"><node bounds=\"[0,0][1,1]\">", "never closed"),
    ("<hierarchy><node text=\"a & b\" /></hierarchy>", "bare '&'"),
    ("<hierarchy><node bounds=\"0,0,1,1\" /></hierarchy>", "bounds"),
    ("<hierarchy><view /></hierarchy>", "expected <node>"),
    ("<root />", "expected <hierarchy>"),
    ("<hierarchy><node a=\"1\" a=\"2\" /></hierarchy>", "given twice"),
    ("<hierarchy>text</hierarchy>", "outside a tag"),
    ("<hierarchy><node /></hierarchy><node />", "after the end"),
    ("<hierarchy><node text=\"&#0;\" /></hierarchy>", "not a character"),
    ("Foreground app: x\nUI element 0: UIElement(text='a'\n", "line 2"),
    ("UI element 0: UIElement(text='a')\nUI element 0: UIElement(text='b')", "does not follow"),
    ("UI element 0: UIElement(text='a', text='b')", "given twice"),
    ("UI element 0: UIElement(text=open('x'))", "cannot read a value"),
    ("Here is the screen:\nsomething\nUI element 0: UIElement(text='a')", "line 3"),
])
def test_malformed_screens_are_codec_errors_naming_where(text: str, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        SCREEN.parse(text)
    assert fragment in str(info.value)


def test_errors_in_a_dump_after_a_header_name_the_line_and_column() -> None:
    text = "Foreground app: com.x\nForeground activity: com.x/.A\n<hierarchy rotation=\"0\">\n<node text=\"&x;\"/>"
    with pytest.raises(CodecError) as info:
        SCREEN.parse(text)
    assert "line 4 column" in str(info.value)


def test_rendering_something_else_is_a_codec_error() -> None:
    with pytest.raises(CodecError):
        ACTIONS.render(json.loads('{"action_type": "wait"}'))
    with pytest.raises(CodecError):
        SCREEN.render("not a screen")  # type: ignore[arg-type]


def test_normalize_ignores_whitespace_between_a_dumps_tags() -> None:
    pretty = (FIXTURES / "contacts_search.pretty.xml").read_text()
    one_line = "".join(line.strip() for line in pretty.splitlines()[1:])
    one_line = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + one_line.replace('"/>', '" />')
    assert SCREEN.normalize(pretty) == SCREEN.normalize(one_line) == one_line
    assert SCREEN.normalize(pretty.replace("Gra", "Grace")) != SCREEN.normalize(pretty)
