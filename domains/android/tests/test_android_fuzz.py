"""Hypothesis fuzzing of the android codecs: bad input is a CodecError, never another exception, and any
text a codec accepts renders back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from awctl_domains.android.actions import ACTION_TYPES, DIRECTIONS, GOAL_STATUSES, KEYS, AndroidAction
from awctl_domains.android.codec import AndroidActionCodec, AndroidObservationCodec
from awctl_domains.android.screens import UI_ELEMENT_FIELDS, BoundingBox, Screen, UIElement, canonical_screen
from awctl_domains.android.uixml import XmlDocument, XmlNode, make_node, parse_xml, render_xml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.errors import CodecError

FIXTURES = Path(__file__).parent / "fixtures"
ACTIONS = AndroidActionCodec()
SCREEN = AndroidObservationCodec()
SAMPLES = [
    (FIXTURES / "clock_alarms.xml").read_text(),
    (FIXTURES / "contacts_search.pretty.xml").read_text(),
    (FIXTURES / "element_list.txt").read_text(),
    (Path(__file__).parents[1] / "fixtures" / "screens" / "notes_dialog_delete_ada.xml").read_text(),
]
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GENERATED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_NOISE = st.sampled_from(list("<>/=\"'&;#[](),: \n\tUIelmntxyz0123456789") + ["&amp;", "&#10;", "UI element 1: ",
                                                                             "UIElement(", "BoundingBox(", "None",
                                                                             "True", "</node>", "<node ", "/>"])


def _accepts_or_codec_error(codec: object, text: str) -> object | None:
    try:
        return codec.parse(text)  # type: ignore[attr-defined]
    except CodecError:
        return None


# ── actions ───────────────────────────────────────────────────────────────────────────────────────

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@FUZZ
@given(st.text(max_size=300))
def test_any_text_is_an_action_or_a_codec_error(text: str) -> None:
    action = _accepts_or_codec_error(ACTIONS, text)
    if action is not None:
        assert ACTIONS.render(action) == text


@FUZZ
@given(st.dictionaries(st.sampled_from([*KEYS, "Index", "element", ""]), json_values, max_size=6))
def test_any_json_object_is_an_action_or_a_codec_error(obj: dict) -> None:
    text = json.dumps(obj)
    action = _accepts_or_codec_error(ACTIONS, text)
    if action is not None:
        assert ACTIONS.render(action) == text and ACTIONS.parse(ACTIONS.render(action)) == action


@st.composite
def valid_actions(draw: st.DrawFn) -> AndroidAction:
    kind = draw(st.sampled_from(ACTION_TYPES))
    fields: dict = {}
    where = draw(st.sampled_from(["index", "xy", "none"]))
    if where == "index" or (where == "none" and kind in ("click", "double_tap", "long_press")):
        fields["index"] = draw(st.integers(0, 500))
    elif where == "xy":
        fields["x"] = draw(st.integers(0, 3000) | st.floats(0, 3000))
        fields["y"] = draw(st.integers(0, 3000))
    if kind in ("input_text", "answer") or draw(st.booleans()):
        fields["text"] = draw(st.text(max_size=40))
    if kind in ("scroll", "swipe") or draw(st.booleans()):
        fields["direction"] = draw(st.sampled_from(DIRECTIONS))
    if kind == "status" or draw(st.booleans()):
        fields["goal_status"] = draw(st.sampled_from(GOAL_STATUSES))
    if kind == "open_app" or draw(st.booleans()):
        fields["app_name"] = draw(st.text(min_size=1, max_size=20).filter(str.strip))
    if draw(st.booleans()):
        fields["keycode"] = "KEYCODE_" + draw(st.from_regex(r"[A-Z0-9_]{1,12}", fullmatch=True))
    if draw(st.booleans()):
        fields["clear_text"] = draw(st.booleans())
    return AndroidAction(kind, **fields)


@FUZZ
@given(valid_actions(), st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]), st.booleans(), st.booleans())
def test_valid_actions_survive_any_json_spelling(action: AndroidAction, separators, ascii_only, reverse) -> None:
    canonical = ACTIONS.render(action)
    assert ACTIONS.parse(canonical) == action
    obj = json.loads(canonical)
    items = list(obj.items())[::-1] if reverse else list(obj.items())
    spelled = json.dumps(dict(items), separators=separators, ensure_ascii=ascii_only)
    parsed = ACTIONS.parse(spelled)
    assert parsed == action and ACTIONS.render(parsed) == spelled


@FUZZ
@given(valid_actions(), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), _NOISE), min_size=1, max_size=3))
def test_mutated_actions_are_actions_or_codec_errors(action: AndroidAction, edits) -> None:
    text = _mutate(ACTIONS.render(action), edits)
    parsed = _accepts_or_codec_error(ACTIONS, text)
    if parsed is not None:
        assert ACTIONS.render(parsed) == text


# ── screens ───────────────────────────────────────────────────────────────────────────────────────


def _mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for pos, cut, noise in edits:
        at = pos % (len(text) + 1)
        text = text[:at] + noise + text[at + cut:]
    return text


@FUZZ
@given(st.text(max_size=400))
def test_any_text_is_a_screen_or_a_codec_error(text: str) -> None:
    screen = _accepts_or_codec_error(SCREEN, text)
    if screen is not None:
        assert SCREEN.render(screen) == text


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 10**5), st.integers(0, 12), _NOISE),
                                          min_size=1, max_size=4))
def test_mutated_real_screens_are_screens_or_codec_errors(sample: str, edits) -> None:
    text = _mutate(sample, edits)
    screen = _accepts_or_codec_error(SCREEN, text)
    if screen is not None:
        assert SCREEN.render(screen) == text
        SCREEN.normalize(text)
        screen.ui_elements()


_values = (st.none() | st.booleans() | st.integers(-5000, 5000) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=30)
           | st.builds(BoundingBox, st.integers(-10, 3000), st.integers(-10, 3000), st.integers(-10, 3000),
                       st.integers(-10, 3000)))
_field = st.sampled_from([*UI_ELEMENT_FIELDS, "extra", "is_new_flag"])


@st.composite
def element_screens(draw: st.DrawFn) -> Screen:
    indices = sorted(draw(st.sets(st.integers(0, 200), max_size=8)))
    elements = [(i, UIElement(draw(st.dictionaries(_field, _values, min_size=1, max_size=6)))) for i in indices]
    header = draw(st.lists(st.tuples(st.sampled_from(["Foreground app", "Foreground activity", "Screen size"]),
                                     st.text(max_size=20).filter(lambda s: "\n" not in s and "\r" not in s)),
                           max_size=3))
    return Screen("elements", header=header, elements=elements)


@GENERATED
@given(element_screens())
def test_generated_element_lists_round_trip(screen: Screen) -> None:
    text = canonical_screen(screen)
    parsed = _accepts_or_codec_error(SCREEN, text)
    if not screen.elements:
        return  # header lines alone are prose
    assert parsed is not None, text
    assert parsed.elements == screen.elements and parsed.header == screen.header
    assert canonical_screen(parsed) == text


# The characters a dump escapes or that break naive parsers, and some that are just text.
_attr_value = st.text(alphabet=st.sampled_from(list("aZ9 <>&\"'\n\r\t;#[],=/\u00e9\u2011\u202f")), max_size=16)
_attr_name = st.sampled_from(["index", "text", "resource-id", "class", "package", "content-desc", "checked",
                              "enabled", "bounds-x", "hint", "drawing-order"])


def _trees(depth: int) -> st.SearchStrategy[XmlNode]:
    attrs = st.dictionaries(_attr_name, _attr_value, max_size=5).map(lambda d: list(d.items()))
    if depth == 0:
        return attrs.map(make_node)
    return st.builds(make_node, attrs, st.lists(_trees(depth - 1), max_size=3))


@GENERATED
@given(st.lists(_trees(2), min_size=1, max_size=3), st.sampled_from(["0", "1", "3"]))
def test_generated_dumps_round_trip(children: list[XmlNode], rotation: str) -> None:
    doc = XmlDocument(XmlNode("hierarchy", [("rotation", rotation)], children, self_closing=False, close_space=""))
    text = render_xml(doc)
    assert render_xml(parse_xml(text)) == text
    screen = SCREEN.parse(text)
    assert screen.kind == "xml" and SCREEN.render(screen) == text
