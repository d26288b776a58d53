"""What a trajectory establishes about its MCP turns: the observation form it uses, each turn's call and
result, and what each tool's results look like. Verifiers and planted faults read turns through here, so
both take their expectations from the trajectory itself, never from a server awctl runs.

The form a turn should have comes from the *other* turns of the trajectory (a candidate observation must
not vouch for itself): when their JSON forms all belong to one family (see :data:`codec.FAMILIES`) and make
up at least half of them, that family is established (plain-text turns beside JSON ones are tolerated,
since a harness may print an exception where it dumps results); when plain text is the majority, ``text``
is (a tool's own JSON output now and then does not make results of a text trajectory). With no other
turns, awctl's own action schema in the system prompt establishes JSON-RPC responses. Otherwise nothing is
established and form checks abstain.

Where a JSON family is established, a candidate without that structure (:func:`form_problem`: text that
is not JSON, broken JSON, another family's form) fails every check that applies to the turn, naming the
expected form -- except an exception's message where results are dumped (``Error: ...``, ``McpError: ...``,
a traceback), the one kind of plain text a harness writes there.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from awctl.domain import TurnContext
from awctl.errors import CodecError
from awctl.trajectory import Trajectory

from .codec import (
    ACTION_SCHEMA,
    FAMILIES,
    McpActionCodec,
    McpObservation,
    McpObservationCodec,
    ToolCall,
    form_of,
    split_frame,
    tools_from_trajectory,
)

_actions = McpActionCodec()
_observations = McpObservationCodec()
_AWCTL_SCHEMA_LINE = ACTION_SCHEMA.splitlines()[0]

FAMILY_WORDS = {
    "envelope": "JSON-RPC responses",
    "result": "CallToolResult objects",
    "blocks": "content-block lists",
    "text": "plain text",
}
FORM_WORDS = {
    "envelope": "a JSON-RPC response",
    "result": "a CallToolResult object",
    "error": "a JSON-RPC error object",
    "blocks": "a content-block list",
    "text": "plain text",
}


@lru_cache(maxsize=4096)
def parse_call(text: str) -> ToolCall | None:
    """The parsed call (``None`` when the text is no tool call). Cached, as every turn reads every other
    turn: callers must not modify what it returns."""
    try:
        return _actions.parse(text)
    except CodecError:
        return None


@lru_cache(maxsize=4096)
def _parse_observation(text: str) -> tuple[McpObservation | None, str | None]:
    try:
        return _observations.parse(text), None
    except CodecError as exc:
        return None, f"{exc.where}: {exc.message}" if exc.where else exc.message


def established_family(trajectory: Trajectory, index: int) -> str | None:
    """The observation family the trajectory's turns other than ``index`` establish, or ``None``."""
    counts = Counter(FAMILIES[form_of(t.observation)] for j, t in enumerate(trajectory.turns) if j != index)
    json_families = set(counts) - {"text"}
    if len(json_families) == 1:
        family = json_families.pop()
        # A few JSON-looking tool outputs among plain text (a tool printing {"code": ..., "message": ...})
        # do not make a trajectory of text a trajectory of results.
        return family if counts[family] * 2 >= sum(counts.values()) else "text"
    if json_families:
        return None  # turns disagree: nothing is established
    if counts:
        return "text"
    system = trajectory.system
    prompt = "\n".join((system.action_space, system.raw or "", system.extra))
    return "envelope" if _AWCTL_SCHEMA_LINE in prompt else None


def read_observation(text: str, family: str | None) -> tuple[McpObservation | None, str | None]:
    """``(observation, problem)``: the text read in the trajectory's family (a trajectory of plain text reads
    JSON-looking turns as text too), or ``None`` and the codec's message when it cannot be read. Cached by
    text: callers must not modify the observation (copy it first, as the faults do)."""
    obs, problem = _parse_observation(text)
    if obs is None:
        return None, problem
    if family == "text" and obs.form != "text":
        obs = McpObservation("text", text, text)
    return obs, None


# JSON as MCP forms write it: an object with a key, or a list of objects/strings -- not "[FILE] a.txt",
# "[1] first hit" or "[INFO] started", which plain tool output often starts with.
_JSON_START = re.compile(r'\A(?:\{\s*["}]|\[\s*[\[{"\]])')


def json_problem(text: str) -> str | None:
    """Where and why ``text`` (without fence and surrounding space) is not JSON, when it looks like JSON."""
    _, body, _ = split_frame(text)
    if not _JSON_START.match(body):
        return None
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})"
    return None


# The message of an exception a harness printed instead of dumping a result (never random text: it opens
# with an error word).
_ERROR_TEXT = re.compile(
    r"\A\s*(?:(?:MCP\s+)?[\w.]*(?:error|exception)\b|traceback\b|failed\b|failure\b)", re.IGNORECASE
)


def form_problem(ctx: TurnContext) -> str | None:
    """Why the candidate lacks the observation structure the trajectory's other turns establish (a JSON
    family, see :func:`established_family`), or ``None`` when it has it, is an exception's message where
    results are dumped, or nothing is established (plain-text trajectories, turns that disagree)."""
    family = family_of(ctx)
    if family in (None, "text"):
        return None
    obs = view(ctx).obs
    others = f"the other observations of this trajectory are {FAMILY_WORDS[family]}"
    expected = "expected " + (
        "a CallToolResult object (or a JSON-RPC error object)" if family == "result" else FORM_WORDS[family]
    )
    if obs is None:
        return f"{ctx.state.get('problem')}; {others}: {expected}"
    if obs.form == "text":
        problem = json_problem(ctx.observation)
        if problem:
            return f"{problem}; {others}: {expected}"
        if family != "envelope" and _ERROR_TEXT.match(ctx.observation):
            return None
        first = ctx.observation.strip().split("\n", 1)[0]
        return f"line 1: plain text ({first[:40]!r}) where {others}: {expected}"
    if FAMILIES[obs.form] != family:
        return f"{FORM_WORDS[obs.form]} where {others}: {expected}"
    return None


@dataclass
class TurnView:
    """One turn of the trajectory as the verifiers see it."""

    index: int
    call: ToolCall | None
    obs: McpObservation | None


def view(ctx: TurnContext) -> TurnView:
    """The turn under test (its candidate observation), read in the established family; cached per turn."""
    if "view" not in ctx.state:
        family = family_of(ctx)
        obs, problem = read_observation(ctx.observation, family)
        ctx.state["view"] = TurnView(ctx.index, parse_call(ctx.action), obs)
        ctx.state["problem"] = problem
    return ctx.state["view"]  # type: ignore[no-any-return]


def family_of(ctx: TurnContext) -> str | None:
    if "family" not in ctx.state:
        ctx.state["family"] = established_family(ctx.trajectory, ctx.index)
    return ctx.state["family"]  # type: ignore[no-any-return]


def tools_of(ctx: TurnContext) -> dict[str, dict[str, Any]] | None:
    if "tools" not in ctx.state:
        try:
            ctx.state["tools"] = tools_from_trajectory(ctx.trajectory)
        except CodecError:
            ctx.state["tools"] = None
    return ctx.state["tools"]  # type: ignore[no-any-return]


def other_turns(ctx: TurnContext) -> list[TurnView]:
    """Every other turn of the trajectory (earlier and later), read in the established family; cached."""
    if "others" not in ctx.state:
        family = family_of(ctx)
        views = []
        for j, turn in enumerate(ctx.trajectory.turns):
            if j == ctx.index:
                continue
            obs, _ = read_observation(turn.observation, family)
            views.append(TurnView(j, parse_call(turn.action), obs))
        ctx.state["others"] = views
    return ctx.state["others"]  # type: ignore[no-any-return]


def successes_of(ctx: TurnContext, tool: str) -> list[TurnView]:
    """Other turns calling ``tool`` whose observation is a successful result."""
    return [
        v
        for v in other_turns(ctx)
        if v.call is not None
        and v.call.name == tool
        and v.obs is not None
        and v.obs.result is not None
        and v.obs.is_error is False
    ]


def block_kinds(content: Any) -> frozenset[str]:
    if not isinstance(content, list):
        return frozenset()
    return frozenset(str(b.get("type")) for b in content if isinstance(b, dict))


def structured_of(result: dict[str, Any] | None) -> dict[str, Any] | None:
    if result is None:
        return None
    value = result.get("structuredContent")
    return value if isinstance(value, dict) else None
