"""Planted faults: one kind of deliberate error per os verifier, put into a copy of a real observation.

Each :class:`awctl.domain.Fault` returns the corrupted observation for a turn, or ``None`` where its kind
cannot occur there (no second window to mark active, no typing, no closing shortcut...). Conditions are
read from the trajectory, never by running the verifier. Corrupted trees are written back in OSWorld's
layout through the codec.
"""

from __future__ import annotations

import copy
import random

from awctl.domain import Fault, TurnContext
from awctl.errors import CodecError

from .a11y import NAMESPACES, A11yObservation, linearize, parse_observation, render_observation
from .verifiers import (
    _active,
    _closes,
    _node_at,
    _squash,
    action,
    initial,
    previous,
    screen_size,
    top_windows,
    typing_target,
)


def _obs(ctx: TurnContext) -> A11yObservation | None:
    try:
        return parse_observation(ctx.observation)
    except CodecError:
        return None


def _xml(ctx: TurnContext) -> A11yObservation | None:
    obs = _obs(ctx)
    return obs if obs is not None and obs.kind == "xml" and obs.tree is not None else None


def _rendered(obs: A11yObservation) -> str:
    return render_observation(A11yObservation(obs.kind, obs.preamble, obs.epilogue, obs.tree, None, obs.header,
                                              obs.rows))


def foreign_namespace(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _xml(ctx)
    if obs is None:
        return None
    st = NAMESPACES[obs.platform]["st"]
    if st not in ctx.observation:
        return None
    return ctx.observation.replace(st, "https://accessibility.example.com/ns/state")


def broken_cell(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _obs(ctx)
    if obs is None or obs.kind != "table":
        return None
    empties = [i for i, r in enumerate(obs.rows) if r.text == '""']
    if empties:
        obs.rows[rng.choice(empties)].text = ""
    else:
        obs.header = obs.header.replace("position (top-left x&y)", "position")
    return _rendered(obs)


def switched_representation(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _obs(ctx)
    if obs is None or initial(ctx) is None:
        return None
    if obs.kind == "xml" and obs.tree is not None:
        return render_observation(A11yObservation("table", rows=linearize(obs.tree)))
    st = NAMESPACES["ubuntu"]["st"]
    return f'<desktop-frame xmlns:st="{st}"/>'


def window_off_screen(ctx: TurnContext, rng: random.Random) -> str | None:
    screen = screen_size(ctx.system)
    obs = _obs(ctx)
    if screen is None or obs is None:
        return None
    if obs.kind == "table":
        rows = [r for r in obs.rows if r.xy is not None]
        if not rows:
            return None
        row = rng.choice(rows)
        row.position = f"({screen[0] + 40}, {int(row.xy[1])})"  # type: ignore[index]
        return _rendered(obs)
    cp = NAMESPACES[obs.platform]["cp"]
    windows = [w for _, w in top_windows(obs) if w.position(cp) and w.size(cp) and w.size(cp)[0] > 0]
    if not windows:
        return None
    for node in rng.choice(windows).iter():
        pos = node.position(cp)
        if pos is not None:
            node.attrib[f"{{{cp}}}screencoord"] = f"({int(pos[0]) + screen[0] + 100}, {int(pos[1])})"
    return _rendered(obs)


def second_active_window(ctx: TurnContext, rng: random.Random) -> str | None:
    start, obs = initial(ctx), _xml(ctx)
    if obs is None or start is None or not _active(start):
        return None
    st = NAMESPACES[obs.platform]["st"]
    inactive = [w for _, w in top_windows(obs) if not w.state("active", st)]
    if not inactive or not _active(obs):
        return None
    rng.choice(inactive).attrib[f"{{{st}}}active"] = "true"
    return _rendered(obs)


def typed_text_lost(ctx: TurnContext, rng: random.Random) -> str | None:
    act, prev, obs = action(ctx), previous(ctx), _xml(ctx)
    if act is None or prev is None or prev.tree is None or obs is None or obs.tree is None:
        return None
    typed = act.typed_text()
    target = typing_target(act, prev)
    if not typed or not _squash(typed) or target is None:
        return None
    path, before = target
    after = _node_at(obs.tree, path)
    if after is None or after.tag != before.tag or _squash(typed) in _squash(before.text or ""):
        return None
    after.text = before.text
    return _rendered(obs)


def closed_window_kept(ctx: TurnContext, rng: random.Random) -> str | None:
    act, prev = action(ctx), previous(ctx)
    if act is None or prev is None or prev.tree is None or _closes(act) is None or len(_active(prev)) != 1:
        return None
    kept = copy.deepcopy(prev)
    return _rendered(kept)


FAULTS: tuple[Fault, ...] = (
    Fault("foreign_namespace", "xml_namespaces", "the state namespace becomes a URI OSWorld never uses",
          foreign_namespace),
    Fault("broken_cell", "table_columns", "a text cell loses its quotes (or the header a column title)", broken_cell),
    Fault("switched_representation", "representation_kept",
          "the tree comes back in the other representation (XML as a table, a table as XML)", switched_representation),
    Fault("window_off_screen", "elements_on_screen", "a window and its contents move beyond the screen's right edge",
          window_off_screen),
    Fault("second_active_window", "one_active_window", "a second window is marked active", second_active_window),
    Fault("typed_text_lost", "typed_text_in_focus", "the focused field keeps its old text after typing",
          typed_text_lost),
    Fault("closed_window_kept", "closed_window_gone", "the window closed with Alt+F4/Ctrl+Q is still there, unchanged",
          closed_window_kept),
)
