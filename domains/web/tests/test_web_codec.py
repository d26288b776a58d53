"""Web codecs: BrowserGym actions and accessibility-tree observations round-trip byte for byte, read the
layouts other programs write, and raise only CodecError on bad input (hypothesis-fuzzed)."""

from __future__ import annotations

import string

import pytest
from awctl_domains.web.codec import (
    ACTIONS,
    FLAG,
    AXNode,
    Tab,
    WebAction,
    WebActionCodec,
    WebObservationCodec,
    render_node,
    render_observation,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.errors import CodecError

ACT = WebActionCodec()
OBS = WebObservationCodec()

# BrowserGym's flatten_axtree_to_str layout, as a WebArena-style shop page would print (written for this test).
BROWSERGYM_TREE = """\
RootWebArea 'Orders / Sales / Magento Admin', focused, url='http://127.0.0.1:7780/admin/sales/order/'
\t[a118] link 'Magento Admin Panel', url='http://127.0.0.1:7780/admin/'
\t\t[a119] image 'Magento Admin Panel'
\t[a121] navigation ''
\t\t[a122] menubar '', orientation='horizontal'
\t\t\t[a124] link '\\ue604 DASHBOARD', url='http://127.0.0.1:7780/admin/dashboard/'
\t\t\t[a127] menuitem '\\ue60b SALES', hasPopup='menu', expanded=False
\tgeneric, live='polite', atomic, relevant='additions text'
\t[a201] heading 'Orders'
\t[a207] searchbox 'Search by keyword' value='', required
\t[a208] button 'Search'
\t[a215] checkbox "Select all of Bob's orders", checked='false'
\t[a230] combobox 'Per page' value='20', hasPopup='menu', expanded=False
\t\t[a231] option '20', selected=True
\t[a240] spinbutton 'Qty' value=2, valuemin=0, valuemax=100, valuetext='2'
\t[a250] gridcell '$25.00'
\t\tStaticText '$25.00 (incl. tax)'
\tLabelText ''
\t\tStaticText 'Page 1 of 3'"""

AWCTL_PAGE = """\
# Open tabs
Tab 0:
    Title: Issues · Bugsy
    URL: http://tracker.test/
Tab 1 (active tab):
    Title: Cart - Acme Shop
    URL: http://shop.test/cart

# Last action error
no element with bid '99' on the page

# Accessibility tree
RootWebArea 'Cart - Acme Shop', focused, url='http://shop.test/cart'
\t[6] banner ''
\t\t[7] navigation 'Main'
\t[15] main ''
\t\t[21] spinbutton 'Quantity of Ceramic mug' value=2, valuemin=0, valuemax=0, valuetext='2'
\t\t\tStaticText '2'
\t\t[22] button 'Remove Ceramic mug'"""

FIELDS_PAGE = """\
URL: http://127.0.0.1:8023/projects
Title: Projects · GitLab

## AXTree:
RootWebArea 'Projects · GitLab', focused
\t[1304] link 'Skip to content', url='http://127.0.0.1:8023/projects#content-body'
\t[1306] textbox 'Search GitLab', required
"""

HTML_PAGE = """\
URL: http://127.0.0.1:9999/

<html><body bid="1"><h1 bid="2">Welcome</h1>

<form bid="3"><input bid="4" name="q"></form></body></html>
"""

MARKDOWN_PAGE = "# Welcome to the forum\n\n* [Hot](/hot)\n* [New](/new)\n\n\n\nLast post 3 minutes ago\n\n"

EXTRA_ATTRIBUTES_TREE = """\
RootWebArea 'Login', focused
\t[12] textbox 'Username', clickable, visible, box="(10,20,300,44)"
\t[13] button "Sign in", som, center="(155,80)\""""


@pytest.mark.parametrize("text", [BROWSERGYM_TREE, AWCTL_PAGE, FIELDS_PAGE, HTML_PAGE, MARKDOWN_PAGE,
                                  EXTRA_ATTRIBUTES_TREE, "", "\n\n", "RootWebArea '', focused"],
                         ids=["browsergym", "awctl", "fields", "html", "markdown", "extra-attributes", "empty",
                              "blank", "blank-page"])
def test_observations_render_back_byte_for_byte(text: str) -> None:
    assert OBS.render(OBS.parse(text)) == text


def test_browsergym_tree_parses_into_nodes_with_bids_values_and_properties() -> None:
    obs = OBS.parse(BROWSERGYM_TREE)
    assert obs.representation == "axtree" and obs.tabs is None
    assert obs.title == "Orders / Sales / Magento Admin"  # from the root, without a header
    box = obs.by_bid()["a207"]
    assert (box.role, box.name, box.value, box.prop("required")) == ("searchbox", "Search by keyword", "", True)
    assert obs.by_bid()["a215"].name == "Select all of Bob's orders"
    assert obs.by_bid()["a240"].value == 2 and obs.by_bid()["a240"].prop("valuemax") == 100
    assert obs.by_bid()["a127"].prop("expanded") is False
    live = next(n for n in obs.nodes if n.role == "generic")
    assert live.name is None and live.bid is None and live.props[1] == ("atomic", FLAG)
    assert [n.depth for n in obs.nodes[:5]] == [0, 1, 2, 1, 2]
    assert [n.role for n in obs.subtree("a250")] == ["gridcell", "StaticText"]


def test_awctl_layout_gives_tabs_active_url_title_and_error() -> None:
    obs = OBS.parse(AWCTL_PAGE)
    assert [(t.index, t.active) for t in obs.tabs] == [(0, False), (1, True)]
    assert (obs.url, obs.title) == ("http://shop.test/cart", "Cart - Acme Shop")
    assert obs.error == "no element with bid '99' on the page"
    assert obs.bid_of("button", "Remove Ceramic mug") == "22"


def test_header_fields_heading_and_other_representations() -> None:
    fields = OBS.parse(FIELDS_PAGE)
    assert (fields.url, fields.title, fields.representation) == (
        "http://127.0.0.1:8023/projects", "Projects · GitLab", "axtree")
    assert fields.tree.heading == "## AXTree:"
    assert OBS.parse(HTML_PAGE).representation == "html"
    assert OBS.parse(MARKDOWN_PAGE).representation == "text"


def test_non_canonical_quoting_is_kept_verbatim() -> None:
    obs = OBS.parse(EXTRA_ATTRIBUTES_TREE)
    box = obs.by_bid()["12"]
    assert box.prop("box") == "(10,20,300,44)" and box.prop("visible") is True
    assert box.raw is not None and obs.by_bid()["13"].name == "Sign in"


@pytest.mark.parametrize("text, where", [
    ("# Accessibility tree\nRootWebArea 'Shop'\n\t[3] link Home", "line 3"),
    ("# Open tabs\nTab 0 (active tab):\n    Title: A\n    URL: http://a/\n\n## AXTree:\nRootWebArea 'A'\n"
     "\t[3] button 'x' oops", "line 8"),
    ("# Accessibility tree\nRootWebArea 'Shop'\n\t[3] link 'Home', url='http://x", "line 3"),
    ("# Accessibility tree\nRootWebArea 'Shop'\n  [3] link 'Home'", "line 3"),
])
def test_a_broken_line_of_a_declared_tree_is_a_codec_error_naming_the_line(text: str, where: str) -> None:
    with pytest.raises(CodecError) as err:
        OBS.parse(text)
    assert err.value.where == where


@pytest.mark.parametrize("text, problem", [
    ("RootWebArea 'Shop - Cart'\n\tlink [12] 'Home'\n\tbutton [42] 'Checkout' focused: True", "line 2"),
    ("URL: http://a/\n\nRootWebArea 'Shop'\n\t[3] link Home", "line 4"),
])
def test_a_block_that_only_starts_like_a_tree_is_kept_as_text_with_its_problem(text: str, problem: str) -> None:
    obs = OBS.parse(text)
    assert obs.representation == "text" and obs.problems[0].startswith(problem + ": not an accessibility-tree node")
    assert OBS.render(obs) == text


def test_environment_layout_parses_to_what_was_rendered() -> None:
    nodes = [AXNode(0, "RootWebArea", "Shop", props=[("focused", FLAG), ("url", "http://shop.test/")]),
             AXNode(1, "link", "Cart (2)", bid="12", props=[("url", "http://shop.test/cart")]),
             AXNode(1, "textbox", "Name", bid="13", value="Ann", has_value=True, props=[("required", FLAG)])]
    text = render_observation([Tab(0, "Shop", "http://shop.test/", True)], nodes, "TimeoutError: slow")
    obs = OBS.parse(text)
    assert [(n.depth, n.bid, n.role, n.name, n.value, n.props) for n in obs.nodes] == [
        (n.depth, n.bid, n.role, n.name, n.value, n.props) for n in nodes]
    assert obs.error == "TimeoutError: slow" and OBS.render(obs) == text


# ── actions ──────────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("text, canonical", [
    ("click('a51')", "click('a51')"),
    ('click("b22", button="right")', "click('b22', button='right')"),
    ("click('48', 'middle', ['Shift'])", "click('48', button='middle', modifiers=['Shift'])"),
    ("fill('45', \"multi-line\\nexample\")", "fill('45', 'multi-line\\nexample')"),
    ("fill(bid='12', value='it\\'s')", "fill('12', \"it's\")"),
    ("select_option('c48', ['red', 'green'])", "select_option('c48', ['red', 'green'])"),
    ("noop()", "noop()"), ("noop(500)", "noop(wait_ms=500)"), ("noop(wait_ms=1000)", "noop()"),
    ("scroll(-50.2, -100.5)", "scroll(-50.2, -100.5)"),
    ("mouse_up(47, 252, 'right')", "mouse_up(47, 252, button='right')"),
    ("keyboard_press('ControlOrMeta+a')", "keyboard_press('ControlOrMeta+a')"),
    ("tab_focus(2)", "tab_focus(2)"), ("go_back()", "go_back()"),
    ("send_msg_to_user('The total is $42.')", "send_msg_to_user('The total is $42.')"),
    ("fill('12', 'blue mug')\nclick('13')", "fill('12', 'blue mug')\nclick('13')"),
    ("fill('12', 'x'); click('13')  # then submit", "fill('12', 'x')\nclick('13')"),
])
def test_actions_parse_to_their_canonical_text_and_render_back_as_written(text: str, canonical: str) -> None:
    parsed = ACT.parse(text)
    assert ACT.canonical(parsed) == canonical
    assert ACT.render(parsed) == text  # lossless: the text as read
    assert ACT.parse(canonical) == parsed


@pytest.mark.parametrize("text", ["fill('21',  'x')", "scroll(0, 00)", "click(U'37')", "click('1')\n",
                                  "scroll  [down]", "click('1') ;click('2')"])
def test_accepted_action_text_renders_back_byte_for_byte(text: str) -> None:
    assert ACT.render(ACT.parse(text)) == text


def test_an_edited_parse_result_renders_canonically() -> None:
    calls = ACT.parse("fill('21',  'x')")
    calls[0] = WebAction("fill", (("bid", "21"), ("value", "y")))
    assert ACT.render(calls) == "fill('21', 'y')"
    assert ACT.render(list(ACT.parse("fill('21',  'x')"))) == "fill('21', 'x')"


@pytest.mark.parametrize("text, canonical", [
    ("click [42]", "click [42]"), ("type [57] [ada@example.org] [1]", "type [57] [ada@example.org] [1]"),
    ("scroll  [down]", "scroll [down]"), ("go_back", "go_back"), ("new_tab", "new_tab"),
    ("goto [http://localhost:7770/search?q=tent]", "goto [http://localhost:7770/search?q=tent]"),
    ("stop [N/A]", "stop [N/A]"), ("press [Meta+Shift+t]", "press [Meta+Shift+t]"),
])
def test_webarena_action_syntax_is_read_and_written_back_in_its_own_dialect(text: str, canonical: str) -> None:
    (call,) = ACT.parse(text)
    assert call.dialect == "webarena" and call.bids == ()
    assert ACT.render([call]) == canonical and ACT.parse(canonical) == [call]


def test_action_values_are_typed_and_defaults_filled() -> None:
    (call,) = ACT.parse("click('7')")
    assert call == WebAction("click", (("bid", "7"), ("button", "left"), ("modifiers", ())))
    assert call.bids == ("7",) and ACT.parse("drag_and_drop('1', '2')")[0].bids == ("1", "2")
    assert ACT.family("fill('1', 'a')") == "fill" and ACT.family("noop()\nnoop()") == "multi"
    assert ACT.family("rm -rf /") == "invalid"


@pytest.mark.parametrize("text, fragment", [
    ("click()", "missing argument 'bid'"), ("click(12)", "must be a string"), ("open('x')", "unknown action"),
    ("click('1'", "not a Python call"), ("x = 1", "expected an action call"), ("page.click('1')", "plain function"),
    ("click(*a)", "*args"), ("click(**a)", "**kwargs"), ("click('1', bid='2')", "given twice"),
    ("click('1', force=True)", "unknown argument"), ("noop(1e999)", "finite"), ("tab_focus(True)", "integer"),
    ("click('1', button='top')", "one of"), ("click('1', modifiers=['Hyper'])", "list of"),
    ("goto(url)", "literals"), ("", "empty"), ("# nothing", "only comments"), ("fill('1', 'a\0')\0", "Python"),
    ("clik [4]", "expected an action call"), ("click [1] [2]", "expected an action call"), ("go_back", None),
])
def test_bad_actions_are_codec_errors_that_say_what_is_wrong(text: str, fragment: str | None) -> None:
    if fragment is None:  # a bare name is WebArena's syntax, not an error
        assert ACT.parse(text)[0].dialect == "webarena"
        return
    with pytest.raises(CodecError) as err:
        ACT.parse(text)
    assert fragment in str(err.value)


def test_schema_lists_every_action_with_its_signature() -> None:
    schema = ACT.schema()
    assert len(ACTIONS) == 32
    for spec in ACTIONS.values():
        assert spec.signature() in schema
        assert ACT.parse(spec.example)[0].name == spec.name  # every documented example parses


# ── fuzzing ──────────────────────────────────────────────────────────────────────────────────────────

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ident = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=6)
_prop_value = st.one_of(st.text(max_size=12), st.booleans(), st.integers(-5, 1000), st.just(FLAG))


@st.composite
def trees(draw: st.DrawFn) -> str:
    """Observation texts in the environment's layout with arbitrary names, values and properties."""
    n = draw(st.integers(1, 8))
    nodes, depth = [], 0
    for i in range(n):
        depth = 0 if i == 0 else draw(st.integers(1, depth + 1))
        role = "RootWebArea" if i == 0 else draw(st.sampled_from(["link", "button", "StaticText", "generic",
                                                                   "textbox", "combobox", "heading"]))
        name = draw(st.one_of(st.none(), st.text(max_size=15))) if role == "generic" else draw(st.text(max_size=15))
        has_value = draw(st.booleans()) and role != "generic"
        props = draw(st.lists(st.tuples(_ident.filter(lambda s: s[0].isalpha()), _prop_value), max_size=3))
        nodes.append(AXNode(depth, role, None if name is None else name.strip(), bid=draw(st.one_of(st.none(), _ident)),
                            value=draw(_prop_value.filter(lambda v: v is not FLAG)) if has_value else None,
                            has_value=has_value, props=props))
    tabs = [Tab(i, draw(st.text(st.characters(blacklist_characters="\n\r"), max_size=10)),
                f"http://shop.test/{i}", i == 0) for i in range(draw(st.integers(1, 3)))]
    return render_observation(tabs, nodes, draw(st.one_of(st.none(), st.text(string.ascii_letters, min_size=1))))


@FUZZ
@given(trees())
def test_fuzz_rendered_observations_parse_and_render_back(text: str) -> None:
    assert OBS.render(OBS.parse(text)) == text


@FUZZ
@given(st.one_of(st.text(), trees().map(lambda t: t.replace("'", "", 1)), trees().map(lambda t: t[: len(t) // 2]),
                 st.text(alphabet="\t\n []'\",=#:RootWebAra-0123456789").map(lambda s: "RootWebArea 'x'\n" + s)))
def test_fuzz_observation_parse_raises_only_codec_errors_and_is_lossless(text: str) -> None:
    try:
        obs = OBS.parse(text)
    except CodecError:
        return
    assert OBS.render(obs) == text


@st.composite
def actions(draw: st.DrawFn) -> WebAction:
    spec = draw(st.sampled_from(list(ACTIONS.values())))
    values = {"str": st.text(max_size=10), "num": st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6)),
              "int": st.integers(0, 20), "strs": st.one_of(st.text(max_size=5), st.lists(st.text(max_size=5)).map(tuple)),
              "button": st.sampled_from(["left", "middle", "right"]),
              "modifiers": st.lists(st.sampled_from(["Alt", "Shift", "Meta"]), max_size=2).map(tuple)}
    return WebAction(spec.name, tuple((p.name, draw(values[p.kind])) for p in spec.params))


@FUZZ
@given(st.lists(actions(), min_size=1, max_size=3))
def test_fuzz_every_action_renders_and_parses_back(calls: list[WebAction]) -> None:
    text = ACT.render(calls)
    assert ACT.parse(text) == calls
    assert ACT.render(ACT.parse(text)) == text


_CALLISH = st.text(alphabet="clickfilgotnopab_()'\",=[]0123456789 \n.*-#\\", max_size=40)


@FUZZ
@given(st.one_of(st.text(), _CALLISH, st.lists(actions(), min_size=1).map(ACT.render).map(lambda s: s[:-1])))
def test_fuzz_action_parse_raises_only_codec_errors(text: str) -> None:
    try:
        calls = ACT.parse(text)
    except CodecError:
        return
    assert ACT.parse(ACT.render(calls)) == calls


def test_render_node_is_browsergym_layout() -> None:
    node = AXNode(2, "link", "Bob's cart", bid="a1", props=[("focused", FLAG), ("url", "http://x/")])
    assert render_node(node) == "\t\t[a1] link \"Bob's cart\", focused, url='http://x/'"
    assert render_node(AXNode(1, "generic", None)) == "\tgeneric"
