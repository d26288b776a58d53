"""Deterministic checks of desktop observations (accessibility trees).

Every expectation comes from the trajectory itself: the screen size from the system prompt ("1920x1080
screen", "screen resolution 1280 x 800"...), the representation, namespaces and active window from the
initial state's tree (the first accessibility tree in the system prompt), the focused field and the active
window from the previous observation, the typed text and the closing shortcut from the action. A check
that lacks what it needs returns ``None`` (abstains). An observation that is no accessibility tree at all
(random text, prose) where the previous observation or the initial state is one fails every check that
applies to the turn, naming the form it expected. Failures name the element (its path of tags and names) or
the table line, and what was expected.

* ``xml_namespaces`` — an XML observation parses and uses only OSWorld's accessibility namespaces, of the
  same platform as the initial state.
* ``table_columns`` — a table observation has OSWorld's header and rows of seven cells, with
  ``(x, y)``/``(w, h)`` position and size cells and OSWorld's quoting of texts.
* ``representation_kept`` — the observation uses the initial state's representation (XML with the same
  root, or the table), after the same preamble heading.
* ``elements_on_screen`` — no showing element lies entirely off the screen unless a container clips it
  (scrolled out of view); table rows have non-negative positions inside the screen width.
* ``one_active_window`` — at most one top-level window is active, and exactly one while windows are open
  when the initial state marks one active.
* ``typed_text_in_focus`` — text the action types shows up in the text element that had the focus.
* ``closed_window_gone`` — after Alt+F4 (or Ctrl+Q) the window that was active is gone, or its
  application asks in a dialog that is now active.
"""

from __future__ import annotations

import re
from typing import Any

from awctl.domain import TurnContext, VerifyResult, verifier
from awctl.errors import CodecError
from awctl.trajectory import SystemPrompt

from .a11y import (
    NAMESPACES,
    TABLE_COLUMNS,
    TABLE_HEADER,
    A11yObservation,
    Node,
    known_namespace,
    parse_observation,
    parse_pair,
)
from .actions import OsAction, parse_action

# ── what the trajectory says ─────────────────────────────────────────────────────────────────────────

_SCREEN_PATTERNS = (
    re.compile(r"(?i)\b(\d{3,5})\s*[x×]\s*(\d{3,5})\b[^\n.]{0,30}?\b(?:screen|display|resolution|desktop)"),
    re.compile(r"(?i)\b(?:screen|display|resolution)[^\n\d]{0,40}?\b(\d{3,5})\s*[x×,*]\s*(\d{3,5})\b"),
    re.compile(r"(?i)screen[ _]?size[^\n\d]{0,20}\(\s*(\d{3,5})\s*,\s*(\d{3,5})\s*\)"),
)
_FENCE = re.compile(r"```[a-z]*\n(.*?)\n?```", re.S)
# The root element: self-closing, or up to its closing tag (a child's "/>" does not end it).
_XML_TREE = re.compile(r"<(desktop-frame|desktop)\b(?:[^<>]*/>|.*?</\1>)", re.S)


def system_text(system: SystemPrompt) -> str:
    return system.raw if system.raw is not None else system.render()


def screen_size(system: SystemPrompt) -> tuple[int, int] | None:
    """The screen size the system prompt states, or None."""
    text = system_text(system)
    for pattern in _SCREEN_PATTERNS:
        m = pattern.search(text)
        if m:
            w, h = int(m.group(1)), int(m.group(2))
            if 200 <= w <= 20000 and 200 <= h <= 20000:
                return w, h
    return None


def initial_observation(system: SystemPrompt) -> A11yObservation | None:
    """The first accessibility tree (XML or table) the system prompt shows, or None."""
    text = system.initial_state if system.raw is None and system.initial_state else system_text(system)
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    m = _XML_TREE.search(text)
    if m:
        candidates.append(m.group(0))
    header = text.find(TABLE_HEADER)
    if header >= 0:
        candidates.append(text[header:].split("\n\n")[0].split("```")[0])
    for candidate in candidates:
        try:
            obs = parse_observation(candidate)
        except CodecError:
            continue
        return obs
    return None


def _cached(ctx: TurnContext, key: str, make: Any) -> Any:
    if key not in ctx.state:
        ctx.state[key] = make()
    return ctx.state[key]


def _parse_or_none(text: str) -> A11yObservation | None:
    try:
        return parse_observation(text)
    except CodecError:
        return None


def current(ctx: TurnContext) -> A11yObservation | None:
    return _cached(ctx, "os.current", lambda: _parse_or_none(ctx.observation))


def previous(ctx: TurnContext) -> A11yObservation | None:
    if ctx.index == 0:
        return initial(ctx)
    return _cached(ctx, "os.previous", lambda: _parse_or_none(ctx.history[-1].observation))


def initial(ctx: TurnContext) -> A11yObservation | None:
    return _cached(ctx, "os.initial", lambda: initial_observation(ctx.system))


_FORMS = {"xml": "OSWorld's XML accessibility tree (<desktop-frame ...>)",
          "table": f"OSWorld's linearized accessibility table (header {TABLE_HEADER!r})"}


def shown_form(ctx: TurnContext) -> str | None:
    """The representation (``xml`` or ``table``) the trajectory shows before this turn: the previous
    observation's, else the initial state's; None when neither is an accessibility tree."""
    for obs in (previous(ctx), initial(ctx)):
        if obs is not None:
            return obs.kind
    return None


def not_a_tree(ctx: TurnContext, name: str, form: str | None = None) -> VerifyResult | None:
    """A failure of ``name`` when this observation is no accessibility tree at all (random text, prose) while
    the trajectory shows trees (of ``form`` when given); None when it is one or nothing was established."""
    if current(ctx) is not None:
        return None
    want = shown_form(ctx)
    if want is None or (form is not None and want != form):
        return None
    try:
        parse_observation(ctx.observation)
        reason = ""
    except CodecError as exc:
        reason = f": {exc.message}"
    return VerifyResult(name, False, f"expected {_FORMS[want]} as the earlier observations show; got none{reason}")


def action(ctx: TurnContext) -> OsAction | None:
    def make() -> OsAction | None:
        try:
            return parse_action(ctx.action)
        except CodecError:
            return None

    return _cached(ctx, "os.action", make)


# ── tree helpers ─────────────────────────────────────────────────────────────────────────────────────


def _st(obs: A11yObservation) -> str:
    return NAMESPACES[obs.platform]["st"]


def _cp(obs: A11yObservation) -> str:
    return NAMESPACES[obs.platform]["cp"]


def top_windows(obs: A11yObservation) -> list[tuple[Node, Node]]:
    """``(application, window)`` for every showing top-level window."""
    if obs.tree is None:
        return []
    st = _st(obs)
    return [(app, w) for app in obs.tree.children for w in app.children if w.state("showing", st)]


def describe(path: list[Node]) -> str:
    return " > ".join(f"{n.tag}" + (f" {n.name!r}" if n.name else "") for n in path[1:]) or path[0].tag


def _box(node: Node, cp: str) -> tuple[float, float, float, float] | None:
    pos, size = node.position(cp), node.size(cp)
    if pos is None or size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return pos[0], pos[1], pos[0] + size[0], pos[1] + size[1]


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# ── the verifiers ────────────────────────────────────────────────────────────────────────────────────


@verifier("xml_namespaces", "XML trees parse and use only OSWorld's accessibility namespaces of the initial platform")
def xml_namespaces(ctx: TurnContext) -> VerifyResult | None:
    text = ctx.observation
    if "<" not in text:
        return not_a_tree(ctx, "xml_namespaces", "xml")
    try:
        obs = parse_observation(text)
    except CodecError as exc:
        if text.lstrip().startswith("<") or "<desktop" in text:
            return VerifyResult("xml_namespaces", False, f"the XML tree does not parse: {exc.message}")
        return not_a_tree(ctx, "xml_namespaces", "xml")
    if obs.kind != "xml" or obs.tree is None:
        return None
    for path_node in obs.tree.iter():
        for prefix, uri in path_node.nsdecl:
            if not known_namespace(uri):
                return VerifyResult("xml_namespaces", False,
                                    f"<{path_node.tag}> declares xmlns:{prefix}={uri!r}, not an OSWorld namespace")
        for key in path_node.attrib:
            if key.startswith("{") and not known_namespace(key[1:].partition("}")[0]):
                return VerifyResult("xml_namespaces", False,
                                    f"<{path_node.tag}> has attribute {key} in an unknown namespace")
    start = initial(ctx)
    if start is not None and start.kind == "xml" and start.platform != obs.platform:
        return VerifyResult("xml_namespaces", False,
                            f"the tree uses {obs.platform} namespaces, the initial state {start.platform}")
    return VerifyResult("xml_namespaces", True)


_TAG = re.compile(r"^[A-Za-z_][\w.-]*$")


@verifier("table_columns", "linearized tables have OSWorld's header, seven cells per row and well-formed cells")
def table_columns(ctx: TurnContext) -> VerifyResult | None:
    text = ctx.observation
    header_at = text.find("tag\tname\ttext\t")
    if header_at < 0:
        return not_a_tree(ctx, "table_columns", "table")
    lines = text[header_at:].split("\n")
    line0 = text.count("\n", 0, header_at) + 1
    if lines[0].rstrip("\r") != TABLE_HEADER:
        return VerifyResult("table_columns", False,
                            f"line {line0}: header {lines[0]!r}, expected {TABLE_HEADER!r}")
    try:
        obs = parse_observation(text)
    except CodecError as exc:
        return VerifyResult("table_columns", False, exc.message)
    first_line = line0 + 1
    for i, row in enumerate(obs.rows):
        where = f"row {i + 1} (from line {first_line})"
        first_line += row.text.count("\n") + row.name.count("\n") + 1
        if not _TAG.match(row.tag):
            return VerifyResult("table_columns", False, f"{where}: tag {row.tag!r} is not a role name")
        for cell, label in ((row.position, "position"), (row.size, "size")):
            if cell and parse_pair(cell) is None:
                return VerifyResult("table_columns", False, f"{where}: {label} {cell!r} is not '(a, b)'")
        t = row.text
        quoted = len(t) >= 2 and t[0] == '"' and t[-1] == '"'
        if quoted and t != '""' and '"' in t[1:-1].replace('""', ""):
            return VerifyResult("table_columns", False, f"{where}: text {t[:60]!r} has an undoubled quote")
        if not quoted and '"' in t:
            return VerifyResult("table_columns", False, f"{where}: text {t[:60]!r} holds a quote but is not quoted")
        if not t:
            return VerifyResult("table_columns", False, f"{where}: empty text cell (OSWorld writes \"\")")
    return VerifyResult("table_columns", True, f"{len(obs.rows)} rows of {TABLE_COLUMNS} cells")


def _heading(obs: A11yObservation) -> str:
    """The label of the preamble's first line (before a colon): a heading like ``Active window: X`` keeps its
    label while X changes from turn to turn."""
    first = obs.preamble.strip().split("\n")[0] if obs.preamble.strip() else ""
    return first.split(":", 1)[0].strip()[:60]


@verifier("representation_kept", "observations keep the initial state's representation (XML root or table, heading)")
def representation_kept(ctx: TurnContext) -> VerifyResult | None:
    start = initial(ctx)
    if start is None:
        return None
    obs = current(ctx)
    want = "OSWorld XML" if start.kind == "xml" else "the linearized table"
    if obs is None:
        return VerifyResult("representation_kept", False, f"not an accessibility tree; the initial state uses {want}")
    if obs.kind != start.kind:
        got = "OSWorld XML" if obs.kind == "xml" else "the linearized table"
        return VerifyResult("representation_kept", False, f"observation is {got}, the initial state uses {want}")
    if obs.kind == "xml" and obs.tree is not None and start.tree is not None and obs.tree.tag != start.tree.tag:
        return VerifyResult("representation_kept", False,
                            f"root element <{obs.tree.tag}>, the initial state's is <{start.tree.tag}>")
    if _heading(start) and _heading(obs) != _heading(start):
        return VerifyResult("representation_kept", False,
                            f"observation starts {_heading(obs)[:60]!r}, the initial state {_heading(start)[:60]!r}")
    return VerifyResult("representation_kept", True)


@verifier("elements_on_screen", "no element lies off the screen the prompt states unless a container clips it")
def elements_on_screen(ctx: TurnContext) -> VerifyResult | None:
    screen = screen_size(ctx.system)
    obs = current(ctx)
    if screen is None:
        return None
    if obs is None:
        return not_a_tree(ctx, "elements_on_screen")
    w, h = screen
    if obs.kind == "table":
        for i, row in enumerate(obs.rows):
            xy = row.xy
            if xy is not None and (xy[0] < 0 or xy[1] < 0 or xy[0] >= w):
                return VerifyResult("elements_on_screen", False,
                                    f"row {i + 1} ({row.tag} {row.name!r}) at {row.position} lies outside the "
                                    f"{w}x{h} screen")
        return VerifyResult("elements_on_screen", True)
    if obs.tree is None:
        return None
    st, cp = _st(obs), _cp(obs)
    screen_box = (0.0, 0.0, float(w), float(h))

    def walk(node: Node, path: list[Node], clips: list[tuple[float, float, float, float]]) -> VerifyResult | None:
        box = _box(node, cp) if node.state("showing", st) and node.state("visible", st) else None
        if box is not None and not _overlap(box, screen_box) and all(_overlap(box, c) for c in clips):
            return VerifyResult("elements_on_screen", False,
                                f"{describe([*path, node])} at {node.ns_get(cp, 'screencoord')} size "
                                f"{node.ns_get(cp, 'size')} lies outside the {w}x{h} screen")
        child_clips = [*clips, box] if box is not None else clips
        for child in node.children:
            found = walk(child, [*path, node], child_clips)
            if found is not None:
                return found
        return None

    return walk(obs.tree, [], []) or VerifyResult("elements_on_screen", True)


def _active(obs: A11yObservation) -> list[tuple[Node, Node]]:
    st = _st(obs)
    return [(app, win) for app, win in top_windows(obs) if win.state("active", st)]


@verifier("one_active_window", "at most one window is active, exactly one while windows are open")
def one_active_window(ctx: TurnContext) -> VerifyResult | None:
    obs, start = current(ctx), initial(ctx)
    if start is None or start.tree is None:
        return None
    start_active = len(_active(start))
    if start_active == 0:
        return None  # this desktop does not mark an active window: nothing to hold it to
    if obs is None:
        return not_a_tree(ctx, "one_active_window")
    if obs.tree is None:
        return None
    active = _active(obs)
    if len(active) > 1:
        names = ", ".join(f"{a.name}: {w.tag} {w.name!r}" for a, w in active)
        return VerifyResult("one_active_window", False, f"{len(active)} windows are active ({names}); expected one")
    if not active and top_windows(obs) and start_active == 1:
        return VerifyResult("one_active_window", False,
                            f"{len(top_windows(obs))} window(s) are open but none is active; expected one")
    return VerifyResult("one_active_window", True)


def _focused_editable(obs: A11yObservation) -> list[tuple[tuple[int, ...], Node]]:
    if obs.tree is None:
        return []
    st = _st(obs)
    return [(p, n) for p, n in obs.tree.walk() if n.state("focused", st) and n.state("editable", st)]


def typing_target(act: OsAction, prev: A11yObservation) -> tuple[tuple[int, ...], Node] | None:
    """The text element that receives what ``act`` types: the editable element under its click when it
    clicks first, else the one focused element; None when that is not clear."""
    if prev.tree is None:
        return None
    st, cp = _st(prev), _cp(prev)
    point = act.focus_point()
    if point is not None:
        under = [
            (p, n) for p, n in prev.tree.walk()
            if n.state("editable", st) and n.state("showing", st) and (box := _box(n, cp)) is not None
            and box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]
        ]
        # The deepest editable element under the pointer; several unrelated ones (overlapping windows): unclear.
        if not under or any(under[-1][0][: len(p)] != p for p, _ in under):
            return None
        return under[-1]
    for call in act.calls:
        if call.name in ("typewrite", "write", "press"):
            break
        if call.name in _POINTER_CLICKS:
            return None  # a click before typing whose target the code computes: the focus may move anywhere
    focused = _focused_editable(prev)
    return focused[0] if len(focused) == 1 else None


_POINTER_CLICKS = ("click", "leftClick", "doubleClick", "tripleClick")


def _node_at(root: Node, path: tuple[int, ...]) -> Node | None:
    node = root
    for i in path:
        if i >= len(node.children):
            return None
        node = node.children[i]
    return node


def _squash(text: str) -> str:
    # Editors re-indent, wrap and trim: compare without white space.
    return re.sub(r"\s+", "", text)


@verifier("typed_text_in_focus", "text the action types appears in the text element that had the focus")
def typed_text_in_focus(ctx: TurnContext) -> VerifyResult | None:
    act, prev, obs = action(ctx), previous(ctx), current(ctx)
    if act is None or prev is None or prev.tree is None:
        return None
    typed = act.typed_text()
    if not typed or not _squash(typed) or any(c < " " and c != "\n" for c in typed):
        return None
    target = typing_target(act, prev)
    if target is None:
        return None
    path, before = target
    st = _st(prev)
    if "\n" in typed and not before.state("multi_line", st):
        return None  # Enter in a one-line field activates something instead of inserting a line
    if obs is None:
        return not_a_tree(ctx, "typed_text_in_focus")
    if obs.tree is None:
        return None
    after = _node_at(obs.tree, path)
    if after is None or after.tag != before.tag:
        return None  # the element went away (a window closed): nothing to compare
    if _squash(typed) in _squash(after.text or ""):
        return VerifyResult("typed_text_in_focus", True)
    elsewhere = [p for p, n in obs.tree.walk() if p != path and _squash(typed) in _squash(n.text or "")
                 and _squash(typed) not in _squash((_node_at(prev.tree, p) or Node("")).text or "")]
    where = describe([obs.tree, *(_ancestors(obs.tree, path))])
    more = f"; it appeared in {describe([obs.tree, *_ancestors(obs.tree, elsewhere[0])])} instead" if elsewhere else ""
    return VerifyResult("typed_text_in_focus", False,
                        f"typed {typed[:40]!r} but the focused {where} holds {(after.text or '')[:80]!r}{more}")


def _ancestors(root: Node, path: tuple[int, ...]) -> list[Node]:
    out, node = [], root
    for i in path:
        node = node.children[i]
        out.append(node)
    return out


def _closes(act: OsAction) -> str | None:
    """``window`` for Alt+F4, ``app`` for Ctrl+Q, when that shortcut is the action's last input."""
    if not act.calls:
        return None
    last = act.calls[-1]
    if last.name != "hotkey" and not (last.name == "press" and len(last.keys) == 1):
        return None
    keys = tuple(k.replace("left", "").replace("right", "") if k.startswith(("alt", "ctrl")) else k
                 for k in last.keys)
    if keys == ("alt", "f4"):
        return "window"
    if keys == ("ctrl", "q"):
        return "app"
    return None


@verifier("closed_window_gone", "after Alt+F4/Ctrl+Q the active window is gone or its application asks first")
def closed_window_gone(ctx: TurnContext) -> VerifyResult | None:
    act, prev, obs = action(ctx), previous(ctx), current(ctx)
    if act is None or prev is None or prev.tree is None:
        return None
    scope = _closes(act)
    if scope is None:
        return None
    active = _active(prev)
    if len(active) != 1:
        return None
    if obs is None:
        return not_a_tree(ctx, "closed_window_gone")
    if obs.tree is None:
        return None
    app, win = active[0]
    st = _st(obs)

    def same(a: Node, w: Node) -> bool:
        return a.name == app.name and w.tag == win.tag and w.name == win.name

    before = sum(1 for a, w in top_windows(prev) if same(a, w))
    after_windows = top_windows(obs)
    remaining = sum(1 for a, w in after_windows if same(a, w))
    gone = remaining < before if scope == "window" else not any(a.name == app.name for a, _ in after_windows)
    if gone:
        return VerifyResult("closed_window_gone", True)
    asking = [w for a, w in after_windows if a.name == app.name and w.state("active", st)
              and w.tag in ("alert", "dialog", "file-chooser") and not same(a, w)]
    if asking:
        return VerifyResult("closed_window_gone", True, f"{app.name} asks first ({asking[0].tag} {asking[0].name!r})")
    what = "window" if scope == "window" else "application"
    return VerifyResult("closed_window_gone", False,
                        f"the action closes the active {what} ({app.name}: {win.tag} {win.name!r}) but it is still "
                        "there and no dialog of it is active")


VERIFIERS = (xml_namespaces, table_columns, representation_kept, elements_on_screen, one_active_window,
             typed_text_in_focus, closed_window_gone)
