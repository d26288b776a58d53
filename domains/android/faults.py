"""Planted faults: one kind of wrong screen per verifier, planted into a copy of a real turn's observation.

Each ``plant(ctx, rng)`` returns the corrupted observation, or ``None`` when the turn cannot carry that
fault (a prose observation, no ``input_text``, no tap on a disabled element...). The corruption is what a
simulator gets wrong in practice: a dropped field, an element drawn off screen, a flag written as text, a
list cut short before the element the agent taps next, typed text that never arrives, a screen that
changes after a tap on a disabled button or after an ``answer``.
"""

from __future__ import annotations

import random

from awctl.domain import Fault, TurnContext

from . import actions as A
from . import verifiers as V
from .screens import Screen, canonical_screen, element_nodes, parse_screen
from .uixml import BOOLEAN_ATTRIBUTES, parse_bounds

#: Element-list field name -> uiautomator attribute name.
ATTRIBUTE_OF = {
    "text": "text", "content_description": "content-desc", "class_name": "class", "package_name": "package",
    "resource_name": "resource-id", "is_checked": "checked", "is_checkable": "checkable",
    "is_clickable": "clickable", "is_enabled": "enabled", "is_focusable": "focusable", "is_focused": "focused",
    "is_scrollable": "scrollable", "is_long_clickable": "long-clickable", "is_selected": "selected",
}


def _parsed(ctx: TurnContext) -> Screen | None:
    screen = V.screen_of(ctx.observation)
    return None if screen is None else parse_screen(ctx.observation)  # a private copy to edit


def _set_text(screen: Screen, index: int, text: str) -> None:
    if screen.kind == "elements":
        dict(screen.elements)[index].fields["text"] = text
    else:
        assert screen.document is not None
        element_nodes(screen.document)[index].set("text", text)


def _app_text_element(screen: Screen, rng: random.Random) -> int | None:
    choices = [i for i, e in screen.ui_elements() if e.text and e.get("package_name") != V.SYSTEM_UI]
    return rng.choice(choices) if choices else None


def drop_field(ctx: TurnContext, rng: random.Random) -> str | None:
    """One element loses a field (one node an attribute) every earlier screen had."""
    screen = _parsed(ctx)
    earlier = V.earlier_screens(ctx)
    if screen is None or not any(s.kind == screen.kind for s in earlier):
        return None
    if screen.kind == "elements":
        if not screen.elements:
            return None
        _, element = rng.choice(screen.elements)
        name = rng.choice([n for n in element.fields if n != "text"] or list(element.fields))
        del element.fields[name]
    else:
        assert screen.document is not None
        nodes = [n for n in screen.document.nodes() if len(n.attrs) > 1]
        if not nodes:
            return None
        node = rng.choice(nodes)
        node.attrs.pop(rng.randrange(len(node.attrs)))
    return canonical_screen(screen)


def bounds_off_screen(ctx: TurnContext, rng: random.Random) -> str | None:
    """One visible element is placed beyond the screen's right edge."""
    screen = _parsed(ctx)
    size = V.screen_size(ctx, screen) if screen is not None else None
    if screen is None or size is None:
        return None
    w = size[0]
    if screen.kind == "elements":
        boxed = [e for _, e in screen.elements if e.bbox_pixels and e.get("is_visible") is not False]
        if not boxed:
            return None
        element = rng.choice(boxed)
        box = element.bbox_pixels
        assert box is not None
        element.fields["bbox_pixels"] = type(box)(w + 40, w + 240, box.y_min, box.y_max)
    else:
        assert screen.document is not None
        nodes = [n for n in screen.document.nodes() if n.get("bounds")]
        if not nodes:
            return None
        node = rng.choice(nodes)
        box = parse_bounds(node.get("bounds") or "")
        if box is None:
            return None
        node.set("bounds", f"[{w + 40},{box[1]}][{w + 240},{box[3]}]")
    return canonical_screen(screen)


def flag_as_text(ctx: TurnContext, rng: random.Random) -> str | None:
    """One boolean flag is written as something else than a boolean."""
    screen = _parsed(ctx)
    if screen is None:
        return None
    if screen.kind == "elements":
        flagged = [e for _, e in screen.elements if any(n.startswith("is_") for n in e.fields)]
        if not flagged:
            return None
        element = rng.choice(flagged)
        name = rng.choice([n for n in element.fields if n.startswith("is_")])
        element.fields[name] = rng.choice(["true", "yes", 1])
    else:
        assert screen.document is not None
        nodes = [n for n in screen.document.nodes() if any(k in BOOLEAN_ATTRIBUTES for k, _ in n.attrs)]
        if not nodes:
            return None
        node = rng.choice(nodes)
        name = rng.choice([k for k, _ in node.attrs if k in BOOLEAN_ATTRIBUTES])
        node.set(name, rng.choice(["yes", "1", "True"]))
    return canonical_screen(screen)


def drop_next_target(ctx: TurnContext, rng: random.Random) -> str | None:
    """The list is cut before the element the next action taps (as a simulator that forgot the rest)."""
    turns = ctx.trajectory.turns
    if ctx.index + 1 >= len(turns):
        return None
    nxt = V._action(turns[ctx.index + 1].action)
    screen = _parsed(ctx)
    if nxt is None or nxt.index is None or screen is None:
        return None
    if nxt.index not in [i for i, _ in screen.ui_elements()]:
        return None
    if screen.kind == "elements":
        screen.elements = [(i, e) for i, e in screen.elements if i < nxt.index]
    else:
        assert screen.document is not None
        # Removing nodes can turn their parent into a leaf (a new element): cut until the index is gone.
        while len(element_nodes(screen.document)) > nxt.index:
            doomed = set(map(id, element_nodes(screen.document)[nxt.index:]))
            for node in screen.document.root.walk():
                node.children = [c for c in node.children if id(c) not in doomed]
                if not node.children and node is not screen.document.root:
                    node.self_closing, node.close_space = True, " "
    return canonical_screen(screen)


def typed_text_lost(ctx: TurnContext, rng: random.Random) -> str | None:
    """The field the agent typed into shows the text without its last character."""
    action = V._action(ctx.action)
    if action is None or action.action_type != A.INPUT_TEXT or not action.text:
        return None
    if V.typed_text_lands(ctx) is None:
        return None  # the verifier cannot see this turn's field, so nothing to plant
    screen = _parsed(ctx)
    assert screen is not None
    before = V.screen_before(ctx)
    assert before is not None
    target = (next((e for _, e in before.ui_elements() if e.flag("is_focused") and e.flag("is_editable")), None)
              if action.target == "none" else V._target(before, action)[1])  # type: ignore[index]
    assert target is not None
    found = V._same_element(screen, target)
    assert found is not None  # typed_text_lands found it
    index, now = found
    _set_text(screen, index, (now.text or "").replace(action.text, action.text[:-1]))
    return canonical_screen(screen)


def _changed_app_text(ctx: TurnContext, rng: random.Random) -> str | None:
    screen = _parsed(ctx)
    if screen is None:
        return None
    index = _app_text_element(screen, rng)
    if index is None:
        return None
    element = dict(screen.ui_elements())[index]
    _set_text(screen, index, (element.text or "") + " (updated)")
    return canonical_screen(screen)


def disabled_tap_changes(ctx: TurnContext, rng: random.Random) -> str | None:
    """After a tap on a disabled element the screen changes anyway."""
    if V.disabled_tap_noop(ctx) is None:
        return None
    return _changed_app_text(ctx, rng)


def noop_changes_screen(ctx: TurnContext, rng: random.Random) -> str | None:
    """After ``status``/``answer``/``unknown`` the screen changes anyway."""
    if V.noop_actions_keep_screen(ctx) is None:
        return None
    return _changed_app_text(ctx, rng)


FAULTS: tuple[Fault, ...] = (
    Fault("drop_field", "schema_stable", "an element loses a field (a node an attribute) earlier screens had",
          drop_field),
    Fault("bounds_off_screen", "bounds_in_screen", "an element is drawn beyond the screen's right edge",
          bounds_off_screen),
    Fault("flag_as_text", "flags_boolean", "a boolean flag holds 'true'/'yes'/1 instead of a boolean", flag_as_text),
    Fault("drop_next_target", "target_index_exists", "the element list stops before the element the next "
          "action targets", drop_next_target),
    Fault("typed_text_lost", "typed_text_lands", "the typed text arrives without its last character",
          typed_text_lost),
    Fault("disabled_tap_changes", "disabled_tap_noop", "a tap on a disabled element changes an element's text",
          disabled_tap_changes),
    Fault("noop_changes_screen", "noop_actions_keep_screen", "a status/answer/unknown action changes the screen",
          noop_changes_screen),
)
