"""Planted faults: one kind of deliberate error per verifier, planted into a copy of a real turn's observation.

Each ``plant(ctx, rng)`` returns the corrupted observation text, or ``None`` when the turn offers no place for
that kind of error (a fill fault needs a fill turn). The conformance tests plant every fault into recorded
browser sessions and check that the verifier it names fails the turn.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from awctl.domain import Fault, TurnContext

from .codec import FLAG, LOCAL_EDITS, AXNode, WebObservation, WebObservationCodec
from .verifiers import (
    NUMBER_ROLES,
    TEXT_ROLES,
    current,
    fill_shows_value,
    navigation_changes_page,
    previous,
    single_call,
)

CODEC = WebObservationCodec()
Plant = Callable[[TurnContext, random.Random], "str | None"]


def _obs(ctx: TurnContext) -> WebObservation | None:
    found = current(ctx)
    return copy.deepcopy(found) if found is not None and found.tree is not None else None


def _edit(obs: WebObservation) -> str:
    for node in obs.nodes:
        node.raw = None
    tree = obs.tree
    if tree is not None:
        tree.text = ""
    return CODEC.render(obs)


def _broken_line(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _obs(ctx)
    if obs is None:
        return None
    named = [n for n in obs.nodes[1:] if n.name]
    if not named:
        return None
    node = rng.choice(named)
    node.raw = node.render().replace(repr(node.name), node.name.replace("'", "") + " :", 1)  # type: ignore[union-attr]
    return CODEC.render(obs)


def _indent_jump(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _obs(ctx)
    if obs is None or len(obs.nodes) < 2:
        return None
    i = rng.randrange(1, len(obs.nodes))
    obs.nodes[i].depth = obs.nodes[i - 1].depth + 2
    return _edit(obs)


def _duplicate_bid(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _obs(ctx)
    if obs is None:
        return None
    with_bid = [n for n in obs.nodes if n.bid is not None]
    if len(with_bid) < 2:
        return None
    a, b = rng.sample(with_bid, 2)
    b.bid = a.bid
    return _edit(obs)


def _local_edit(ctx: TurnContext) -> tuple[str, WebObservation, WebObservation] | None:
    """``(bid, previous, copy of current)`` for a one-call local edit with no error and the URL kept."""
    call = single_call(ctx)
    prev, cur = previous(ctx), _obs(ctx)
    if call is None or call.name not in LOCAL_EDITS or prev is None or cur is None or cur.error is not None:
        return None
    bid = call.get("bid")
    if bid not in prev.by_bid() or bid not in cur.by_bid() or cur.url != prev.url:
        return None
    return bid, prev, cur


def _target_removed(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _local_edit(ctx)
    if found is None:
        return None
    bid, _, cur = found
    gone = {id(n) for n in cur.subtree(bid)}
    cur.tree.nodes = [n for n in cur.nodes if id(n) not in gone]  # type: ignore[union-attr]
    return _edit(cur)


def _wrong_value(ctx: TurnContext, rng: random.Random) -> str | None:
    if fill_shows_value(ctx) is None:
        return None
    call = single_call(ctx)
    cur = _obs(ctx)
    if call is None or cur is None:
        return None
    node = cur.by_bid().get(call.get("bid"))
    if node is None:
        return None
    if node.role in NUMBER_ROLES:
        node.value, node.has_value = (int(float(node.value)) + 7 if node.has_value else 7), True
    elif node.role in TEXT_ROLES:
        node.value = (str(node.value) if node.has_value else "") + " (typo)"
        node.has_value = True
    else:
        return None
    return _edit(cur)


def _stale_page(ctx: TurnContext, rng: random.Random) -> str | None:
    result = navigation_changes_page(ctx)
    prev = previous(ctx)
    if result is None or not result.ok or prev is None:
        return None
    return CODEC.render(prev)


def _collateral_rename(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _local_edit(ctx)
    if found is None:
        return None
    bid, prev, cur = found
    inside = {n.bid for n in prev.subtree(bid)}
    before = prev.by_bid()
    others = [n for n in cur.nodes if n.bid is not None and n.bid not in inside and n.bid in before and n.name]
    if not others:
        return None
    node = rng.choice(others)
    node.name = f"{node.name} (changed)"
    return _edit(cur)


def _active_tab_lost(ctx: TurnContext, rng: random.Random) -> str | None:
    cur = _obs(ctx)
    if cur is None or not cur.tabs:
        return None
    for tab in cur.tabs:
        tab.active = False
    return CODEC.render(cur)


def _second_focus(ctx: TurnContext, rng: random.Random) -> str | None:
    cur = _obs(ctx)
    if cur is None or any(n.role == "Iframe" for n in cur.nodes):
        return None
    candidates = [n for n in cur.nodes if n.bid is not None and not n.focused and n.role != "RootWebArea"]
    already = [n for n in cur.nodes if n.focused and n.role != "RootWebArea"]
    need = 2 - len(already)
    if len(candidates) < need:
        return None
    for node in rng.sample(candidates, need):
        node.props.append(("focused", FLAG))
    return _edit(cur)


def _title_mismatch(ctx: TurnContext, rng: random.Random) -> str | None:
    cur = _obs(ctx)
    if cur is None or cur.root is None or cur.active_tab is None:
        return None
    cur.active_tab.title = (cur.active_tab.title + " - Old title").strip(" -")
    return CODEC.render(cur)


def _html_instead(ctx: TurnContext, rng: random.Random) -> str | None:
    cur = _obs(ctx)
    if cur is None:
        return None
    tree = cur.tree
    assert tree is not None
    body = "".join(f"<p>{n.name}</p>" for n in cur.nodes if n.name)
    tree.kind, tree.text, tree.nodes = "text", f"<html><body>{body}</body></html>", []
    return CODEC.render(cur)


def _message_navigates(ctx: TurnContext, rng: random.Random) -> str | None:
    call = single_call(ctx)
    cur = _obs(ctx)
    if call is None or call.name not in ("send_msg_to_user", "report_infeasible") or cur is None:
        return None
    tab = cur.active_tab
    if tab is None or previous(ctx) is None:
        return None
    tab.url = tab.url.rstrip("/") + "/elsewhere"
    root: AXNode | None = cur.root
    if root is not None:
        root.props = [(k, tab.url if k == "url" else v) for k, v in root.props]
    return _edit(cur)


FAULTS: tuple[Fault, ...] = (
    Fault("broken_tree_line", "lines_parse", "a tree line whose name lost its quotes", _broken_line),
    Fault("indent_jump", "indent_step", "a line indented two levels deeper than the one before", _indent_jump),
    Fault("duplicate_bid", "unique_bids", "one element given another element's bid", _duplicate_bid),
    Fault("target_removed", "target_exists", "the element a fill/select/hover/focus/clear acted on vanishes",
          _target_removed),
    Fault("wrong_value", "fill_shows_value", "the filled field shows another value", _wrong_value),
    Fault("stale_page", "navigation_changes_page", "a navigation shows the page it left", _stale_page),
    Fault("collateral_rename", "local_edit_scope", "a local edit renames an element it did not touch",
          _collateral_rename),
    Fault("active_tab_lost", "tabs_consistent", "no tab is marked active", _active_tab_lost),
    Fault("second_focus", "focus_consistent", "two elements are focused at once", _second_focus),
    Fault("title_mismatch", "header_matches_tree", "the tab's title differs from the page's", _title_mismatch),
    Fault("html_instead_of_tree", "representation_kept", "the page shown as HTML instead of the tree",
          _html_instead),
    Fault("message_navigates", "message_no_effect", "a message to the user moves the page", _message_navigates),
)
