"""Deterministic checks of Android screens, usable on recorded turns and on a simulator's predictions.

Every expectation comes from the trajectory: the screen before a turn is the previous turn's
observation, or for the first turn the screen embedded in the initial state (``metadata["initial_screen"]``,
else the first element list or dump found in the system prompt); the screen size is
``metadata["screen_size"]``, else a ``WxH`` size the initial state states, else the root node's bounds of
an earlier dump. A verifier that lacks what it needs (no earlier screen, no size, an action of another
kind) returns ``None``; a prose or unparsable observation where the screen before it is structured fails
every check that applies to the turn, naming the form it expected; a failure names the element or line and
what was expected.

* ``schema_stable`` — the observation parses and keeps the initial state's representation: the same kind
  (element list or dump), the same header keys, and per element the fields (per node the attributes)
  earlier screens established, in their order.
* ``bounds_in_screen`` — bounds lie inside the screen: every node of a dump (uiautomator clips to the
  display), every visible listed element at least overlapping it with a non-empty box (AndroidWorld's
  own filter for the elements it lists).
* ``flags_boolean`` — ``is_*`` fields are True/False/None, boolean attributes are ``true``/``false``.
* ``target_index_exists`` — the element the next action targets by index is on this screen; an action
  whose index was not on the screen before it does nothing.
* ``typed_text_lands`` — after ``input_text`` the target field (by index, by point, or the focused
  editable element) holds the typed text.
* ``disabled_tap_noop`` — a tap on a disabled element with no enabled interactive element under the
  point leaves the app's elements unchanged.
* ``noop_actions_keep_screen`` — ``status``, ``answer`` and ``unknown`` send nothing to the device, so the
  app's elements stay as they were.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.errors import CodecError

from . import actions as A
from .screens import (
    BoundingBox,
    Screen,
    UIElement,
    element_nodes,
    parse_screen,
    render_element,
)
from .uixml import BOOLEAN_ATTRIBUTES, XmlNode, parse_bounds

SYSTEM_UI = "com.android.systemui"
_SIZE = re.compile(r"(?i)\bscreen(?:\s+size)?\b[^0-9\n]{0,24}(\d{3,5})\s*[x\u00d7]\s*(\d{3,5})")
_FENCE = re.compile(r"```[a-z]*\n(.*?)\n?```", re.S)
_DUMP = re.compile(r"(?:<\?xml[^>]*\?>)?<hierarchy\b.*?</hierarchy>", re.S)
_ELEMENT_BLOCK = re.compile(r"(?:^UI element \d+: UIElement\(.*\)$\n?)+", re.M)


# ── reading the trajectory ────────────────────────────────────────────────────────────────────────


@lru_cache(maxsize=512)
def screen_of(text: str) -> Screen | None:
    """A structured screen, or None for prose and unparseable text. Cached (every turn's verifiers read the
    earlier screens again): callers must not change the screen they get."""
    try:
        screen = parse_screen(text)
    except CodecError:
        return None
    return screen if screen.structured else None


def _system_texts(ctx: TurnContext) -> list[str]:
    system = ctx.trajectory.system
    return [t for t in (system.initial_state, system.raw or "") if t]


def initial_screen(ctx: TurnContext) -> Screen | None:
    """The screen the first action acted on (see the module docstring)."""
    key = "android.initial_screen"
    if key in ctx.state:
        return ctx.state[key]
    found: Screen | None = None
    meta = ctx.trajectory.metadata.get("initial_screen")
    if isinstance(meta, str):
        found = screen_of(meta)
    for text in _system_texts(ctx) if found is None else []:
        candidates = [m.group(1) for m in _FENCE.finditer(text)]
        candidates += [m.group(0) for m in _DUMP.finditer(text)]
        candidates += [m.group(0).rstrip("\n") for m in _ELEMENT_BLOCK.finditer(text)]
        found = next((s for s in map(screen_of, candidates) if s is not None), None)
        if found is not None:
            break
    ctx.state[key] = found
    return found


def screen_before(ctx: TurnContext, index: int | None = None) -> Screen | None:
    i = ctx.index if index is None else index
    if i > 0:
        return screen_of(ctx.trajectory.turns[i - 1].observation)
    return initial_screen(ctx)


def earlier_screens(ctx: TurnContext) -> list[Screen]:
    """The initial screen and every earlier structured observation, oldest first."""
    key = "android.earlier"
    if key not in ctx.state:
        found = [initial_screen(ctx)] + [screen_of(t.observation) for t in ctx.trajectory.turns[: ctx.index]]
        ctx.state[key] = [s for s in found if s is not None]
    return ctx.state[key]


def _root_box(screen: Screen) -> tuple[int, int, int, int] | None:
    if screen.kind != "xml" or screen.document is None or not screen.document.nodes():
        return None
    return parse_bounds(screen.document.nodes()[0].get("bounds") or "")


def screen_size(ctx: TurnContext, screen: Screen | None = None) -> tuple[int, int] | None:
    """``(width, height)`` of the screen ``screen`` shows (see the module docstring), rotation-aware."""
    size: tuple[int, int] | None = None
    rotation = 0
    meta = ctx.trajectory.metadata.get("screen_size")
    if isinstance(meta, (list, tuple)) and len(meta) == 2 and all(isinstance(v, int) and v > 0 for v in meta):
        size = (meta[0], meta[1])
    elif isinstance(meta, str) and re.fullmatch(r"\d+x\d+", meta):
        w, h = meta.split("x")
        size = (int(w), int(h))
    if size is None:
        for text in _system_texts(ctx):
            m = _SIZE.search(text)
            if m:
                size = (int(m.group(1)), int(m.group(2)))
                break
    if size is not None:
        first = initial_screen(ctx)
        rotation = (first.document.rotation or 0) if first is not None and first.document is not None else 0
    else:
        for earlier in earlier_screens(ctx):
            box = _root_box(earlier)
            if box and box[0] == 0 and box[1] == 0 and box[2] > 0 and box[3] > 0:
                size = (box[2], box[3])
                rotation = (earlier.document.rotation or 0) if earlier.document else 0
                break
    if size is None:
        return None
    now = screen.document.rotation if screen is not None and screen.document is not None else None
    if now is not None and (now - rotation) % 2:
        size = (size[1], size[0])
    return size


def _where(screen: Screen, index: int, element: UIElement) -> str:
    if screen.kind == "elements":
        line = screen.lines_before_body + [i for i, _ in screen.elements].index(index) + 1
        return f"line {line} (UI element {index}, {element.label()})"
    return f"UI element {index} ({element.label()})"


def _node_name(node: XmlNode, position: int) -> str:
    label = node.get("text") or node.get("content-desc") or node.get("resource-id") or node.get("class") or "node"
    return f"node {position} ({label[:40]!r})"


def _app_key(screen: Screen) -> list[str]:
    """What a no-op must leave unchanged: header and the elements of apps (the status bar clock may tick)."""
    lines = [f"{k}: {v}" for k, v in screen.header]
    lines += [render_element(i, e) for i, e in screen.ui_elements() if e.get("package_name") != SYSTEM_UI]
    return lines


def _first_difference(before: list[str], after: list[str]) -> str:
    for a, b in zip(before, after, strict=False):
        if a != b:
            return f"expected {a[:90]!r}, got {b[:90]!r}"
    if len(before) != len(after):
        return f"expected {len(before)} lines of header and elements, got {len(after)}"
    return "no difference"


def _action(text: str) -> A.AndroidAction | None:
    try:
        return A.parse_action(text)
    except CodecError:
        return None


def _name(check: str, ok: bool, message: str = "") -> VerifyResult:
    return VerifyResult(check, ok, message)


def not_a_screen(ctx: TurnContext, check: str) -> VerifyResult | None:
    """A failure of ``check`` when this observation is no structured screen (prose, random text, a dump
    that does not parse) while the screen before it is one; None when it is one or nothing was established."""
    if screen_of(ctx.observation) is not None:
        return None
    before = screen_before(ctx)
    if before is None:
        return None
    try:
        parse_screen(ctx.observation)
        got = "a prose description"
    except CodecError as exc:
        got = f"text that does not parse ({exc.message})"
    return _name(check, False, f"expected {_KINDS[before.kind]} as on the screen before, got {got[:160]}")


# ── schema ────────────────────────────────────────────────────────────────────────────────────────


def _field_lists(screen: Screen) -> list[tuple[str, tuple[str, ...]]]:
    """``(where, names)`` for each element (element lists) or node (dumps)."""
    if screen.kind == "elements":
        return [(_where(screen, i, e), tuple(e.fields)) for i, e in screen.elements]
    assert screen.document is not None
    return [(_node_name(n, p), tuple(k for k, _ in n.attrs)) for p, n in enumerate(screen.document.nodes())]


@verifier("schema_stable", "The screen parses and keeps the initial state's representation, header keys and "
                           "per-element fields.")
def schema_stable(ctx: TurnContext) -> VerifyResult | None:
    check = "schema_stable"
    try:
        screen = parse_screen(ctx.observation)
    except CodecError as exc:
        return _name(check, False, f"the observation does not parse: {exc.message}")
    earlier = earlier_screens(ctx)
    if not earlier:
        return None
    reference = initial_screen(ctx) or earlier[0]
    if screen.kind != reference.kind:
        return _name(check, False, f"the observation is {_KINDS[screen.kind]}, but the initial state uses "
                                   f"{_KINDS[reference.kind]}")
    if [k for k, _ in screen.header] != [k for k, _ in reference.header]:
        return _name(check, False, f"header keys {[k for k, _ in screen.header]} differ from the initial state's "
                                   f"{[k for k, _ in reference.header]}")
    seen = [names for s in earlier if s.kind == screen.kind for _, names in _field_lists(s)]
    if not seen:
        return None
    core = set(seen[0]).intersection(*map(set, seen[1:]))
    known = set().union(*map(set, seen))
    order = {name: i for names in seen for i, name in enumerate(names)}
    for where, names in _field_lists(screen):
        missing = sorted(core - set(names))
        extra = sorted(set(names) - known)
        if missing or extra:
            parts = [f"lacks {missing}" if missing else "", f"has fields no earlier screen has: {extra}" if extra else ""]
            return _name(check, False, f"{where} " + " and ".join(p for p in parts if p))
        ranks = [order[n] for n in names]
        if ranks != sorted(ranks):
            return _name(check, False, f"{where}: fields in the order {list(names)}, earlier screens order them "
                                       f"{sorted(names, key=order.__getitem__)}")
    return _name(check, True)


_KINDS = {"elements": "a UI element list", "xml": "a uiautomator dump", "text": "a prose description"}


# ── geometry and flags ────────────────────────────────────────────────────────────────────────────


def _box_problem(box: BoundingBox, size: tuple[int, int], contained: bool) -> str | None:
    w, h = size
    if box.x_min > box.x_max or box.y_min > box.y_max:
        return "is inverted"
    if contained:
        if box.x_min < 0 or box.y_min < 0 or box.x_max > w or box.y_max > h:
            return f"reaches outside the {w}x{h} screen"
        return None
    if box.x_min >= box.x_max or box.y_min >= box.y_max:
        return "is empty"
    if box.x_min >= w or box.x_max <= 0 or box.y_min >= h or box.y_max <= 0:
        return f"lies entirely outside the {w}x{h} screen"
    return None


def _fmt(box: BoundingBox) -> str:
    return f"[{box.x_min},{box.y_min}][{box.x_max},{box.y_max}]"


@verifier("bounds_in_screen", "Element bounds lie inside the screen size the trajectory establishes.")
def bounds_in_screen(ctx: TurnContext) -> VerifyResult | None:
    check = "bounds_in_screen"
    screen = screen_of(ctx.observation)
    if screen is None:
        return not_a_screen(ctx, check) if screen_size(ctx) is not None else None
    size = screen_size(ctx, screen)
    if size is None:
        return None
    checked = 0
    if screen.kind == "xml":
        assert screen.document is not None
        for p, node in enumerate(screen.document.nodes()):
            box = parse_bounds(node.get("bounds") or "")
            if box is None or node.get("visible-to-user") == "false":
                continue
            checked += 1
            bb = BoundingBox(box[0], box[2], box[1], box[3])
            problem = _box_problem(bb, size, contained=True)
            if problem:
                return _name(check, False, f"{_node_name(node, p)}: bounds {_fmt(bb)} {problem}")
    else:
        for i, element in screen.elements:
            box = element.bbox_pixels
            if box is None or element.get("is_visible") is False:
                continue
            checked += 1
            problem = _box_problem(box, size, contained=False)
            if problem:
                return _name(check, False, f"{_where(screen, i, element)}: bbox_pixels {_fmt(box)} {problem}")
    return _name(check, True) if checked else None


@verifier("flags_boolean", "Element flags are booleans: is_* fields True/False/None, dump attributes true/false.")
def flags_boolean(ctx: TurnContext) -> VerifyResult | None:
    check = "flags_boolean"
    screen = screen_of(ctx.observation)
    if screen is None:
        return not_a_screen(ctx, check)
    checked = 0
    if screen.kind == "xml":
        assert screen.document is not None
        for p, node in enumerate(screen.document.nodes()):
            for name, value in node.attrs:
                if name in BOOLEAN_ATTRIBUTES:
                    checked += 1
                    if value not in ("true", "false"):
                        return _name(check, False, f"{_node_name(node, p)}: {name}={value!r}, expected true or false")
    else:
        for i, element in screen.elements:
            for name, value in element.fields.items():
                if name.startswith("is_"):
                    checked += 1
                    if value is not None and not isinstance(value, bool):
                        return _name(check, False, f"{_where(screen, i, element)}: {name}={value!r}, expected "
                                                   "True, False or None")
    return _name(check, True) if checked else None


# ── actions against the screens ───────────────────────────────────────────────────────────────────


@verifier("target_index_exists", "The element an action targets by index is on the screen it acts on; an index "
                                 "that was not there does nothing.")
def target_index_exists(ctx: TurnContext) -> VerifyResult | None:
    check = "target_index_exists"
    screen = screen_of(ctx.observation)
    turns = ctx.trajectory.turns
    if screen is None:
        nxt = _action(turns[ctx.index + 1].action) if ctx.index + 1 < len(turns) else None
        this = _action(ctx.action)
        if (nxt is not None and nxt.index is not None) or (this is not None and this.index is not None):
            return not_a_screen(ctx, check)
        return None
    verdict: VerifyResult | None = None
    # The next action was chosen on the recorded version of this screen: an element it targets that was
    # there must be on this one too (an index the agent got wrong on the real screen proves nothing).
    if screen is not None and ctx.index + 1 < len(turns):
        nxt = _action(turns[ctx.index + 1].action)
        recorded = screen_of(turns[ctx.index].observation)
        if nxt is not None and nxt.index is not None and recorded is not None \
                and nxt.index in [i for i, _ in recorded.ui_elements()]:
            listed = [i for i, _ in screen.ui_elements()]
            if nxt.index not in listed:
                return _name(check, False, f"the next action targets element {nxt.index}, which is not on this "
                                           f"screen (indices {_span(listed)})")
            verdict = _name(check, True)
    # This action's index: when it was not on the screen before, nothing can have happened.
    action = _action(ctx.action)
    before = screen_before(ctx)
    if action is not None and action.index is not None and before is not None and screen is not None:
        listed = [i for i, _ in before.ui_elements()]
        if action.index not in listed and _app_key(before) != _app_key(screen):
            return _name(check, False, f"element {action.index} was not on the previous screen (indices "
                                           f"{_span(listed)}), so the action does nothing, but the screen "
                                           f"changed: {_first_difference(_app_key(before), _app_key(screen))}")
        verdict = _name(check, True)
    return verdict


def _span(indices: list[int]) -> str:
    return f"{min(indices)}-{max(indices)}" if indices else "none"


def _target(before: Screen, action: A.AndroidAction) -> tuple[int, UIElement] | None:
    """The element an action acts on: by index, the smallest element under x/y, else None."""
    listed = before.ui_elements()
    if action.index is not None:
        return next(((i, e) for i, e in listed if i == action.index), None)
    if action.x is None or action.y is None:
        return None
    under = [(i, e) for i, e in listed if e.bbox_pixels and e.bbox_pixels.contains(action.x, action.y)]
    return min(under, key=lambda ie: _area(ie[1].bbox_pixels), default=None)  # type: ignore[arg-type]


def _area(box: BoundingBox) -> float:
    return (box.x_max - box.x_min) * (box.y_max - box.y_min)


def _password(screen: Screen, index: int) -> bool:
    if screen.kind == "xml" and screen.document is not None:
        nodes = element_nodes(screen.document)
        return 0 <= index < len(nodes) and nodes[index].get("password") == "true"
    return False


def _same_element(screen: Screen, target: UIElement) -> tuple[int, UIElement] | None:
    """The ``(index, element)`` of ``screen`` that is ``target``: the one element with its resource name
    (with its bounds too when the name repeats), or, for an element without a resource name, the one with its
    bounds and class."""
    rid = target.get("resource_name")
    candidates = screen.ui_elements()
    if rid:
        same = [(i, e) for i, e in candidates if e.get("resource_name") == rid]
        if len(same) > 1:
            same = [(i, e) for i, e in same if e.bbox_pixels == target.bbox_pixels]
        return same[0] if len(same) == 1 else None
    same = [(i, e) for i, e in candidates
            if e.bbox_pixels == target.bbox_pixels and e.get("class_name") == target.get("class_name")]
    return same[0] if len(same) == 1 else None


@verifier("typed_text_lands", "After input_text the target field (by index, point or focus) holds the text.")
def typed_text_lands(ctx: TurnContext) -> VerifyResult | None:
    check = "typed_text_lands"
    action = _action(ctx.action)
    if action is None or action.action_type != A.INPUT_TEXT or not action.text:
        return None
    before, screen = screen_before(ctx), screen_of(ctx.observation)
    if before is None:
        return None
    if action.target == "none":
        target = next(((i, e) for i, e in before.ui_elements() if e.flag("is_focused") and e.flag("is_editable")), None)
    else:
        target = _target(before, action)
    if target is None or not target[1].flag("is_editable") or _password(before, target[0]):
        return None
    if screen is None:
        return not_a_screen(ctx, check)
    if before.kind != screen.kind:
        return None
    found = _same_element(screen, target[1])
    if found is None:
        return None  # the field is gone (the app moved on after Enter): nothing to compare
    index, now = found
    text = now.text or ""
    if action.text not in text:
        return _name(check, False, f"{_where(screen, index, now)} should hold the typed text {action.text!r}, "
                                   f"but its text is {text[:80]!r}")
    return _name(check, True)


def _interactive(value: Any) -> bool:
    return value is True


_REACTS = ("is_clickable", "is_long_clickable", "is_checkable", "is_editable", "is_scrollable")


def _covering_enabled(before: Screen, x: float, y: float) -> str | None:
    """An enabled element or node under (x, y) that reacts to touch (clickable, long-clickable, checkable,
    editable or scrollable), named, or None."""
    if before.kind == "xml" and before.document is not None:
        for p, node in enumerate(before.document.nodes()):
            box = parse_bounds(node.get("bounds") or "")
            if not box or not (box[0] <= x <= box[2] and box[1] <= y <= box[3]):
                continue
            reacts = any(node.get(a) == "true" for a in ("clickable", "long-clickable", "checkable", "scrollable"))
            if node.get("enabled") != "false" and (reacts or "EditText" in (node.get("class") or "")):
                return _node_name(node, p)
        return None
    for i, e in before.ui_elements():
        if (e.bbox_pixels and e.bbox_pixels.contains(x, y) and e.get("is_enabled") is not False
                and any(_interactive(e.get(f)) for f in _REACTS)):
            return f"UI element {i}"
    return None


@verifier("disabled_tap_noop", "A tap on a disabled element, with nothing enabled under the point, changes "
                               "nothing.")
def disabled_tap_noop(ctx: TurnContext) -> VerifyResult | None:
    check = "disabled_tap_noop"
    action = _action(ctx.action)
    if action is None or action.action_type not in A.POINT_ACTIONS:
        return None
    before, screen = screen_before(ctx), screen_of(ctx.observation)
    if before is None:
        return None
    target = _target(before, action)
    if target is None or target[1].get("is_enabled") is not False or target[1].bbox_pixels is None:
        return None
    x, y = (action.x, action.y) if action.index is None else target[1].bbox_pixels.center
    assert x is not None and y is not None
    if _covering_enabled(before, x, y) is not None:
        return None
    if screen is None:
        return not_a_screen(ctx, check)
    if before.kind != screen.kind:
        return None
    old, new = _app_key(before), _app_key(screen)
    if old != new:
        return _name(check, False, f"{_where(before, target[0], target[1])} is disabled and nothing enabled lies "
                                   f"under ({x}, {y}), so the tap must change nothing; "
                                   f"{_first_difference(old, new)}")
    return _name(check, True)


@verifier("noop_actions_keep_screen", "status, answer and unknown send nothing to the device: the app's "
                                      "elements stay unchanged.")
def noop_actions_keep_screen(ctx: TurnContext) -> VerifyResult | None:
    check = "noop_actions_keep_screen"
    action = _action(ctx.action)
    if action is None or action.action_type not in (A.STATUS, A.ANSWER, A.UNKNOWN):
        return None
    before, screen = screen_before(ctx), screen_of(ctx.observation)
    if before is None:
        return None
    if screen is None:
        return not_a_screen(ctx, check)
    if before.kind != screen.kind:
        return None
    old, new = _app_key(before), _app_key(screen)
    if old != new:
        return _name(check, False, f"a {action.action_type} action does not touch the device, yet the screen "
                                   f"changed: {_first_difference(old, new)}")
    return _name(check, True)


VERIFIERS: tuple[Verifier, ...] = (
    schema_stable, bounds_in_screen, flags_boolean, target_index_exists, typed_text_lands, disabled_tap_noop,
    noop_actions_keep_screen,
)
