"""Deterministic checks of web observations, usable on recorded turns and on a simulator's predictions.

Every expectation comes from the trajectory: the page before a turn is the previous turn's observation, or
for the first turn the observation in the system prompt's initial state; the representation (accessibility
tree, HTML, text) is the one the initial state uses. A verifier returns ``None`` (abstains) when the turn
does not establish what it needs — no tree before, an action of another kind (or in WebArena's syntax), an
error shown for the action, several calls in one action where the check needs one. Where the initial state
or the previous page is a BrowserGym tree, an observation with no tree at all (random text, prose, HTML; not
an error-only page) fails every check that applies to the turn, naming the layout it expected, so text the
verifiers cannot read earns no credit.

* ``lines_parse`` — every line of a tree is a node line: in a block declared a tree (the codec raises), and
  in a block that starts like one where the initial state or the previous page shows BrowserGym trees.
* ``indent_step`` — the tree starts at depth 0 and each line is at most one tab deeper than the line before.
* ``unique_bids`` — no bid appears on two lines.
* ``target_exists`` — the element an action names existed in the previous observation (else the page must
  be unchanged or show an error), and after a local edit it is still there.
* ``fill_shows_value`` — after ``fill``/``clear``/``select_option`` the field shows the new value.
* ``navigation_changes_page`` — ``goto`` to another URL, ``go_back`` after a navigation, and a left click on
  a link to another page change the active tab's URL or title (or open a tab).
* ``local_edit_scope`` — ``fill``/``select_option``/``hover``/``focus``/``clear`` keep the URL, and every
  element outside the acted-on one keeps its role, name and (for text fields) value.
* ``tabs_consistent`` — tabs are numbered 0..n-1 with one active; ``new_tab``/``tab_close``/``tab_focus``
  change the count and the active tab as they must; other actions leave background tabs' URLs alone.
* ``focus_consistent`` — at most one element (besides the page root) is focused, and after
  ``focus``/``fill``/``clear`` it is the acted-on one.
* ``header_matches_tree`` — the active tab's title and URL are the tree root's name and ``url``.
* ``representation_kept`` — the page is shown in the representation the initial state uses.
* ``message_no_effect`` — ``send_msg_to_user`` and ``report_infeasible`` leave URL, title and tabs as they were.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.errors import CodecError

from .codec import LOCAL_EDITS, AXNode, WebAction, WebActionCodec, WebObservation, WebObservationCodec

CODEC = WebObservationCodec()
ACTIONS = WebActionCodec()
TEXT_ROLES = frozenset({"textbox", "searchbox", "combobox"})
NUMBER_ROLES = frozenset({"spinbutton", "slider"})
# Links to files the browser downloads instead of showing.
_DOWNLOADS = (".pdf", ".zip", ".gz", ".tar", ".csv", ".xlsx", ".docx", ".png", ".jpg", ".mp4")


# ── reading the turn ─────────────────────────────────────────────────────────────────────────────────


def _parse(text: str) -> WebObservation | None:
    try:
        return CODEC.parse(text)
    except CodecError:
        return None


def find_observation(text: str) -> WebObservation | None:
    """The observation inside ``text`` (a system prompt's initial state): the whole text when it carries a
    tree, else the text from its first tabs heading or tree root line on. ``None`` when there is none."""
    whole = _parse(text)
    if whole is not None and whole.tree is not None:
        return whole
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if (line.startswith("#") and "tab" in line.lower()) or line.startswith("RootWebArea "):
            found = _parse_prefix(lines[i:])
            if found is not None and found.tree is not None:
                return found
    return whole if whole is not None and whole.representation != "text" else None


def _parse_prefix(lines: list[str]) -> WebObservation | None:
    """The observation made of ``lines`` up to the first line that is not part of it (a closing code fence,
    the next prompt section), found by cutting before each line the codec rejects."""
    for _ in range(8):
        try:
            obs = CODEC.parse("\n".join(lines))
        except CodecError as exc:
            where = exc.where or ""
        else:
            if not obs.problems:
                return obs
            where = obs.problems[0]
        m = re.match(r"line (\d+)", where)
        if not m or int(m.group(1)) <= 1:
            return None
        lines = lines[: int(m.group(1)) - 1]
    return None


def current(ctx: TurnContext) -> WebObservation | None:
    if "web_cur" not in ctx.state:
        ctx.state["web_cur"] = _parse(ctx.observation)
    return ctx.state["web_cur"]


def observation_at(ctx: TurnContext, index: int) -> WebObservation | None:
    """The observation after turn ``index`` (``-1``: the initial state's)."""
    key = f"web_obs_{index}"
    if key not in ctx.state:
        if index >= 0:
            ctx.state[key] = _parse(ctx.trajectory.turns[index].observation)
        else:
            ctx.state[key] = find_observation(ctx.trajectory.system.initial_state or ctx.trajectory.system.render())
    return ctx.state[key]


def previous(ctx: TurnContext) -> WebObservation | None:
    return observation_at(ctx, ctx.index - 1)


def calls(ctx: TurnContext) -> list[WebAction] | None:
    """The turn's BrowserGym calls (``None`` when the action does not parse or is in another dialect)."""
    if "web_calls" not in ctx.state:
        try:
            found = ACTIONS.parse(ctx.action)
        except CodecError:
            found = None
        ctx.state["web_calls"] = found if found and all(c.dialect == "browsergym" for c in found) else None
    return ctx.state["web_calls"]


def single_call(ctx: TurnContext) -> WebAction | None:
    found = calls(ctx)
    return found[0] if found and len(found) == 1 else None


def _fail(name: str, message: str) -> VerifyResult:
    return VerifyResult(name, False, message)


def _ok(name: str) -> VerifyResult:
    return VerifyResult(name, True)


def tree_expected(ctx: TurnContext) -> bool:
    """The trajectory shows BrowserGym accessibility trees: the initial state's page or the previous one is
    one."""
    return any(o is not None and o.tree is not None for o in (observation_at(ctx, -1), previous(ctx)))


def missing_tree(ctx: TurnContext, name: str) -> VerifyResult | None:
    """A failure of ``name`` when the trajectory shows accessibility trees and this observation carries none
    (random text, prose, a page in another form); ``None`` when it has one, shows only an error, or the
    trajectory never showed a tree (nothing to expect)."""
    try:
        cur = CODEC.parse(ctx.observation)
    except CodecError as exc:
        if not tree_expected(ctx):
            return None
        return _fail(name, f"{exc.where + ': ' if exc.where else ''}{exc.message} (the earlier pages are "
                           "BrowserGym accessibility trees)")
    if cur.tree is not None or not tree_expected(ctx):
        return None
    if cur.error is not None and not any(b.kind == "text" for b in cur.blocks):
        return None  # only an error (and headers) shown: nothing of the page to check
    first = next((b.text.split("\n", 1)[0] for b in cur.blocks if b.kind == "text"), "")
    return _fail(name, "expected a BrowserGym accessibility tree (RootWebArea 'title', then one tab-indented "
                       "[bid] role 'name' node per line) as on the earlier pages; got no tree"
                       + (f", starting {first[:60]!r}" if first else ""))


def _where(node: AXNode) -> str:
    return f"line {node.line}"


def _strip_fragment(url: str) -> str:
    return url.split("#", 1)[0]


# ── the checks ───────────────────────────────────────────────────────────────────────────────────────


@verifier("lines_parse", "every line of the accessibility tree is a node: [bid] role 'name' value=… , props")
def lines_parse(ctx: TurnContext) -> VerifyResult | None:
    try:
        obs = CODEC.parse(ctx.observation)
    except CodecError as exc:
        return _fail("lines_parse", f"{exc.where + ': ' if exc.where else ''}{exc.message}")
    if obs.tree is not None and not obs.problems:
        return _ok("lines_parse")
    if not obs.problems:  # no tree at all: wrong where the trajectory shows trees, else nothing to check
        return missing_tree(ctx, "lines_parse")
    # A block that starts like a tree but is not one: wrong only where the trajectory shows real trees.
    earlier = [observation_at(ctx, -1), previous(ctx)]
    if any(o is not None and o.tree is not None for o in earlier):
        return _fail("lines_parse", f"{obs.problems[0]} (the earlier pages are BrowserGym accessibility trees)")
    return None


@verifier("indent_step", "the tree starts at depth 0 and grows by at most one tab per line")
def indent_step(ctx: TurnContext) -> VerifyResult | None:
    obs = current(ctx)
    if obs is None or not obs.nodes:
        return missing_tree(ctx, "indent_step")
    nodes = obs.nodes
    if nodes[0].depth != 0:
        return _fail("indent_step", f"{_where(nodes[0])}: the tree's first line is indented {nodes[0].depth} tab(s), "
                                    "expected none")
    for before, node in zip(nodes, nodes[1:], strict=False):
        if node.depth > before.depth + 1:
            return _fail("indent_step", f"{_where(node)}: depth {node.depth} after a line at depth {before.depth}; "
                                        f"expected at most {before.depth + 1}")
    return _ok("indent_step")


@verifier("unique_bids", "no bid appears on two lines of the tree")
def unique_bids(ctx: TurnContext) -> VerifyResult | None:
    obs = current(ctx)
    if obs is None or not obs.nodes:
        return missing_tree(ctx, "unique_bids")
    seen: dict[str, AXNode] = {}
    for node in obs.nodes:
        if node.bid is None:
            continue
        if node.bid in seen:
            return _fail("unique_bids", f"{_where(node)}: bid [{node.bid}] already used on {_where(seen[node.bid])}")
        seen[node.bid] = node
    return _ok("unique_bids")


@verifier("target_exists", "the acted-on bid existed in the previous observation (and survives a local edit)")
def target_exists(ctx: TurnContext) -> VerifyResult | None:
    found = calls(ctx)
    prev, cur = previous(ctx), current(ctx)
    if not found or not found[0].bids or prev is None or prev.tree is None:
        return None
    if cur is None or cur.tree is None:
        return missing_tree(ctx, "target_exists")
    call = found[0]
    known = prev.by_bid()
    missing = [b for b in call.bids if b not in known]
    if missing:
        if cur.error is not None:
            return _ok("target_exists")
        if [n.signature() for n in cur.nodes] == [n.signature() for n in prev.nodes] and cur.url == prev.url:
            return _ok("target_exists")
        return _fail("target_exists", f"{call.name} acts on [{missing[0]}], which the previous observation does not "
                                      "show, yet the page changed instead of reporting an error")
    if (len(found) == 1 and call.name in LOCAL_EDITS and cur.error is None and cur.url == prev.url
            and call.bids[0] not in cur.by_bid()):
        return _fail("target_exists", f"[{call.bids[0]}] ({known[call.bids[0]].role} {known[call.bids[0]].name!r}) "
                                      f"is gone after {call.name}, which only edits it in place")
    return _ok("target_exists")


def _value_text(node: AXNode) -> str | None:
    return None if not node.has_value else str(node.value)


@verifier("fill_shows_value", "after fill/clear/select_option the field shows the value that was set")
def fill_shows_value(ctx: TurnContext) -> VerifyResult | None:
    call = single_call(ctx)
    prev, cur = previous(ctx), current(ctx)
    if call is None or call.name not in ("fill", "clear", "select_option"):
        return None
    if cur is None or cur.tree is None:
        return missing_tree(ctx, "fill_shows_value") if prev is not None and call.get("bid") in prev.by_bid() else None
    if cur.error is not None:
        return None
    bid = call.get("bid")
    node = cur.by_bid().get(bid)
    if node is None or prev is None or bid not in prev.by_bid():
        return None
    shown = _value_text(node)
    if call.name == "select_option":
        option = call.get("options")
        labels = {n.name for n in prev.subtree(bid) if n.role == "option"}
        if node.role != "combobox" or not isinstance(option, str) or option not in labels:
            return None  # a value attribute, a multi-select or a list: what is shown is not determined here
        expected = option
    else:
        expected = "" if call.name == "clear" else call.get("value")
        if node.role in NUMBER_ROLES:
            try:
                if shown is not None and float(shown) == float(expected):
                    return _ok("fill_shows_value")
            except ValueError:
                return None  # a text the number field does not accept
            if shown is None and expected == "":
                return _ok("fill_shows_value")
            return _fail("fill_shows_value", f"{_where(node)}: [{bid}] shows value {shown!r} after {call.name}, "
                                             f"expected {expected!r}")
        if node.role not in TEXT_ROLES:
            return None
        if shown is not None and shown and set(shown) <= {"•", "*", "●"} and len(shown) == len(expected):
            return _ok("fill_shows_value")  # a password field shows its value masked
    if (shown or "") != expected:
        return _fail("fill_shows_value", f"{_where(node)}: [{bid}] shows value {shown!r} after {call.name}, "
                                         f"expected {expected!r}")
    return _ok("fill_shows_value")


def _went_somewhere(prev: WebObservation, cur: WebObservation) -> bool:
    return (cur.url != prev.url or cur.title != prev.title
            or (cur.tabs is not None and prev.tabs is not None and len(cur.tabs) != len(prev.tabs)))


@verifier("navigation_changes_page", "goto to another URL, go_back after a navigation and clicking a link change "
                                     "the URL or title")
def navigation_changes_page(ctx: TurnContext) -> VerifyResult | None:
    call = single_call(ctx)
    prev, cur = previous(ctx), current(ctx)
    if call is None or prev is None or prev.url is None or (cur is not None and cur.error is not None):
        return None
    what = ""
    if call.name == "goto":
        url = call.get("url")
        if _strip_fragment(url) == _strip_fragment(prev.url) or urlsplit(url).scheme not in ("http", "https"):
            return None
        what = f"goto({url!r})"
    elif call.name == "go_back":
        before = observation_at(ctx, ctx.index - 2) if ctx.index >= 1 else None
        action_before = ctx.trajectory.turns[ctx.index - 1].action if ctx.index >= 1 else ""
        try:
            earlier = ACTIONS.parse(action_before) if action_before else []
        except CodecError:
            earlier = []
        if (before is None or before.url is None or before.url == prev.url or len(earlier) != 1
                or earlier[0].name in ("new_tab", "tab_close", "tab_focus", "go_back", "go_forward")):
            return None  # the history before this step is not known from the trajectory
        what = "go_back() after a navigation"
    elif call.name == "click" and call.get("button") == "left" and not call.get("modifiers"):
        node = prev.by_bid().get(call.get("bid"))
        href = node.prop("url") if node is not None and node.role == "link" else None
        if not isinstance(href, str) or urlsplit(href).scheme not in ("http", "https"):
            return None
        if _strip_fragment(href) == _strip_fragment(prev.url) or urlsplit(href).path.lower().endswith(_DOWNLOADS):
            return None
        what = f"a click on link [{node.bid}] to {href}"  # type: ignore[union-attr]
    else:
        return None
    unreadable = missing_tree(ctx, "navigation_changes_page")
    if unreadable is not None or cur is None:
        return unreadable
    if not _went_somewhere(prev, cur):
        return _fail("navigation_changes_page", f"after {what} the page still shows URL {cur.url!r} and title "
                                                f"{cur.title!r}, as before")
    return _ok("navigation_changes_page")


@verifier("local_edit_scope", "fill/select/hover/focus/clear change only the acted-on element")
def local_edit_scope(ctx: TurnContext) -> VerifyResult | None:
    call = single_call(ctx)
    prev, cur = previous(ctx), current(ctx)
    if call is None or call.name not in LOCAL_EDITS or prev is None or prev.tree is None:
        return None
    if cur is None or cur.tree is None:
        return missing_tree(ctx, "local_edit_scope") if prev.subtree(call.get("bid")) else None
    if cur.error is not None:
        return None
    bid = call.get("bid")
    target = {n.bid for n in prev.subtree(bid) if n.bid is not None}
    if not target:
        return None
    if cur.url != prev.url:
        if call.name == "select_option":
            return None  # a select may submit its form on change
        return _fail("local_edit_scope", f"{call.name} on [{bid}] changed the URL from {prev.url!r} to {cur.url!r}")
    before = prev.by_bid()
    for node in cur.nodes:
        old = before.get(node.bid) if node.bid is not None else None
        if old is None or node.bid in target:
            continue
        if (old.role, old.name) != (node.role, node.name):
            return _fail("local_edit_scope", f"{_where(node)}: [{node.bid}] was {old.role} {old.name!r} and is now "
                                             f"{node.role} {node.name!r}, though {call.name} acted on [{bid}]")
        if node.role in ("textbox", "searchbox") and _value_text(old) != _value_text(node):
            return _fail("local_edit_scope", f"{_where(node)}: the value of [{node.bid}] changed from "
                                             f"{_value_text(old)!r} to {_value_text(node)!r}, though {call.name} "
                                             f"acted on [{bid}]")
    return _ok("local_edit_scope")


@verifier("tabs_consistent", "tabs are numbered from 0 with one active; tab actions change them as they must")
def tabs_consistent(ctx: TurnContext) -> VerifyResult | None:
    cur = current(ctx)
    if cur is None or cur.tabs is None:
        return missing_tree(ctx, "tabs_consistent")
    tabs = cur.tabs
    if [t.index for t in tabs] != list(range(len(tabs))):
        return _fail("tabs_consistent", f"tabs are numbered {[t.index for t in tabs]}, expected 0..{len(tabs) - 1}")
    active = [t.index for t in tabs if t.active]
    if len(active) != 1:
        return _fail("tabs_consistent", f"{len(active)} tabs are marked active, expected exactly one")
    prev = previous(ctx)
    call = single_call(ctx)
    if prev is None or prev.tabs is None or call is None or cur.error is not None:
        return _ok("tabs_consistent")
    before, now, was = len(prev.tabs), len(tabs), prev.active_tab
    name = call.name
    if name == "new_tab":
        if now != before + 1 or active[0] != now - 1:
            return _fail("tabs_consistent", f"after new_tab() there are {now} tabs with tab {active[0]} active; "
                                            f"expected {before + 1} with the new last tab {before} active")
    elif name == "tab_close":
        if now != max(before - 1, 1):
            return _fail("tabs_consistent", f"after tab_close() there are {now} tabs, expected {max(before - 1, 1)}")
    elif name == "tab_focus":
        index = call.get("index")
        if not 0 <= index < before:
            return None
        if now != before or active[0] != index:
            return _fail("tabs_consistent", f"after tab_focus({index}) tab {active[0]} of {now} is active; expected "
                                            f"tab {index} of {before}")
    elif was is not None and now == before:
        if active[0] != was.index:
            return _fail("tabs_consistent", f"{name} switched the active tab from {was.index} to {active[0]}")
        for old, new in zip(prev.tabs, tabs, strict=False):
            if not old.active and old.url != new.url:
                return _fail("tabs_consistent", f"background tab {old.index} changed its URL from {old.url!r} to "
                                                f"{new.url!r} during {name}")
    elif now < before or now > before + 1:
        return _fail("tabs_consistent", f"{name} changed the number of tabs from {before} to {now}")
    return _ok("tabs_consistent")


def _focused(obs: WebObservation) -> list[AXNode]:
    return [n for n in obs.nodes if n.focused and n.role != "RootWebArea"]


@verifier("focus_consistent", "at most one element is focused, and focus/fill/clear focus the acted-on one")
def focus_consistent(ctx: TurnContext) -> VerifyResult | None:
    cur = current(ctx)
    if cur is None or not cur.nodes:
        return missing_tree(ctx, "focus_consistent")
    if any(n.role == "Iframe" for n in cur.nodes):
        return None  # frames have focus of their own
    focused = _focused(cur)
    if len(focused) > 1:
        return _fail("focus_consistent", f"{len(focused)} elements are focused ({', '.join(_where(n) for n in focused)})"
                                         ", expected at most one")
    call = single_call(ctx)
    prev = previous(ctx)
    if (call is None or call.name not in ("focus", "fill", "clear") or cur.error is not None or not focused
            or prev is None or call.get("bid") not in prev.by_bid()):
        return _ok("focus_consistent")
    if focused[0].bid != call.get("bid"):
        return _fail("focus_consistent", f"{_where(focused[0])}: [{focused[0].bid}] is focused after {call.name} on "
                                         f"[{call.get('bid')}]")
    return _ok("focus_consistent")


@verifier("header_matches_tree", "the active tab's title and URL are the tree root's name and url")
def header_matches_tree(ctx: TurnContext) -> VerifyResult | None:
    cur = current(ctx)
    if cur is None or cur.root is None:
        return missing_tree(ctx, "header_matches_tree")
    tab = cur.active_tab
    title = tab.title if tab else cur.field_value("title", "page title")
    url = tab.url if tab else cur.url
    root = cur.root
    results = []
    if title is not None and root.name is not None:
        results.append(title.strip() == root.name.strip() or
                       _fail("header_matches_tree", f"the active tab's title is {title!r} but the tree root is "
                                                    f"named {root.name!r}"))
    root_url = root.prop("url")
    if url is not None and isinstance(root_url, str):
        results.append(url == root_url or _fail("header_matches_tree", f"the active tab's URL is {url!r} but the tree "
                                                                       f"root's url is {root_url!r}"))
    if not results:
        return None
    for r in results:
        if isinstance(r, VerifyResult):
            return r
    return _ok("header_matches_tree")


@verifier("representation_kept", "the page is shown the way the initial state shows it (tree, HTML or text)")
def representation_kept(ctx: TurnContext) -> VerifyResult | None:
    first = observation_at(ctx, -1)
    cur = current(ctx)
    if first is None or cur is None or first.representation == "text":
        return None
    if cur.representation == "text" and cur.error is not None and cur.tree is None:
        return None  # an error page with nothing else shown
    if cur.representation != first.representation:
        return _fail("representation_kept", f"the initial state shows the page as {first.representation}, this "
                                            f"observation as {cur.representation}")
    return _ok("representation_kept")


@verifier("message_no_effect", "send_msg_to_user and report_infeasible leave the page and tabs as they were")
def message_no_effect(ctx: TurnContext) -> VerifyResult | None:
    call = single_call(ctx)
    prev, cur = previous(ctx), current(ctx)
    if call is None or call.name not in ("send_msg_to_user", "report_infeasible") or prev is None or cur is None:
        return None
    before: Any = (prev.url, prev.title, [(t.url, t.active) for t in prev.tabs or []])
    after: Any = (cur.url, cur.title, [(t.url, t.active) for t in cur.tabs or []])
    if before != after:
        return _fail("message_no_effect", f"{call.name} changed the page: URL/title/tabs were {before}, now {after}")
    return _ok("message_no_effect")


VERIFIERS: tuple[Verifier, ...] = (
    lines_parse, indent_step, unique_bids, target_exists, fill_shows_value, navigation_changes_page,
    local_edit_scope, tabs_consistent, focus_consistent, header_matches_tree, representation_kept,
    message_no_effect,
)
