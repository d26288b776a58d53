"""Planted faults: deliberate errors of one kind each, put into a copy of a real turn's observation, that the
named verifier must catch (see :class:`awctl.domain.Fault`).

A fault is planted only where its kind exists in the turn -- ``content`` not a list needs a result with
``content``; a wrong id needs a JSON-RPC response to a request that carried an id; another tool's result
needs another tool whose results the trajectory shows to look different (a different declared outputSchema,
other structuredContent keys or content types): where two tools return same-looking text, no deterministic
check can tell their results apart, so the fault is not planted there. The corrupted observation is written
in the style of the original (indentation, separators, fence), so only the planted error differs.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from awctl.domain import Fault, TurnContext

from .codec import McpObservation, McpObservationCodec, split_frame
from .reading import block_kinds, other_turns, structured_of, tools_of, view
from .verifiers import lax_coercible, schema_errors

_codec = McpObservationCodec()
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg+M/A8B8ABQACAeIhvDMAAAAASUVORK5CYII="


def _rewrite(ctx: TurnContext, obs: McpObservation, value: Any) -> str:
    """``value`` in place of ``obs``'s, rendered in the style of the recorded text."""
    return _codec.render(McpObservation(obs.form, value, ctx.observation))


def _with_result(obs: McpObservation, result: dict[str, Any]) -> Any:
    """``obs``'s JSON value with its CallToolResult replaced (the envelope, id and all, kept)."""
    if obs.form == "envelope":
        value = copy.deepcopy(obs.value)
        value.pop("error", None)
        value["result"] = result
        return value
    return result


def _result_turn(ctx: TurnContext) -> tuple[McpObservation, dict[str, Any]] | None:
    obs = view(ctx).obs
    if obs is None or obs.result is None:
        return None
    return obs, copy.deepcopy(obs.result)


# ── form ─────────────────────────────────────────────────────────────────────────────────────────────


def plant_broken_json(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = view(ctx).obs
    if obs is None or obs.form == "text":
        return None
    pre, body, post = split_frame(ctx.observation)
    how = rng.choice(("truncate", "drop_closing", "trailing_comma"))
    if how == "drop_closing":
        broken = body[:-1]
    elif how == "trailing_comma":
        broken = body[:-1].rstrip() + ", " + body[-1]
    else:  # cut mid-way, as when a server dies while writing
        broken = body[: rng.randint(max(1, len(body) // 3), max(1, 2 * len(body) // 3))]
    try:
        json.loads(broken)
    except json.JSONDecodeError:
        return pre + broken + post
    return pre + body[: max(1, len(body) // 2)] + post


def plant_wrong_id(ctx: TurnContext, rng: random.Random) -> str | None:
    turn = view(ctx)
    obs = turn.obs
    if obs is None or obs.form != "envelope" or turn.call is None or not turn.call.id_given:
        return None
    value = copy.deepcopy(obs.value)
    rid = value.get("id")
    value["id"] = (
        rid + rng.randint(1, 50) if isinstance(rid, int) and not isinstance(rid, bool) else f"{rid}-b"
    )
    return _rewrite(ctx, obs, value)


# ── result fields ────────────────────────────────────────────────────────────────────────────────────


def plant_content_not_list(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _result_turn(ctx)
    if found is None or not isinstance(found[1].get("content"), list):
        return None
    obs, result = found
    blocks = result["content"]
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    if blocks and rng.random() < 0.5:
        result["content"] = blocks[0]  # one block instead of a list of one
    else:
        result["content"] = "\n".join(str(t) for t in texts)  # the text instead of blocks
    return _rewrite(ctx, obs, _with_result(obs, result))


def plant_is_error_not_bool(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _result_turn(ctx)
    if found is None:
        return None
    obs, result = found
    truth = result.get("isError") is True
    result["isError"] = rng.choice((str(truth).lower(), int(truth), "yes" if truth else "no"))
    return _rewrite(ctx, obs, _with_result(obs, result))


def _scalar_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _scalar_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _scalar_paths(v, (*path, i))]
    return [path] if value is not None and path else []


def _changed(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + rng.choice((1, 7, 13))
    text = str(value)
    return text + rng.choice((" (2)", "x", " revised")) if text else "changed"


def plant_structured_contradicts_text(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _result_turn(ctx)
    if found is None or view(ctx).obs.is_error:  # type: ignore[union-attr]
        return None
    obs, result = found
    structured = structured_of(result)
    has_text = any(isinstance(b, dict) and b.get("type") == "text" for b in result.get("content") or [])
    paths = _scalar_paths(structured) if structured is not None else []
    if not paths or not has_text:
        return None
    path = rng.choice(paths)
    node = result["structuredContent"]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = _changed(node[path[-1]], rng)
    return _rewrite(ctx, obs, _with_result(obs, result))


# ── what the declared tools and the tool's other results say ────────────────────────────────────────


def _as_success(obs: McpObservation, rng: random.Random) -> Any:
    """``obs`` turned into a successful result saying what the error said (the error flag dropped)."""
    texts = obs.texts or ["done"]
    result = (
        copy.deepcopy(obs.result)
        if obs.result is not None
        else {"content": [{"type": "text", "text": texts[0]}]}
    )
    if rng.random() < 0.5 or "isError" in result:
        result["isError"] = False
    else:
        result.pop("isError", None)
    if obs.form == "error":
        return result
    return _with_result(obs, result)


def _success_form(obs: McpObservation) -> str:
    return "result" if obs.form == "error" else obs.form


def plant_undeclared_tool_succeeds(ctx: TurnContext, rng: random.Random) -> str | None:
    turn, tools = view(ctx), tools_of(ctx)
    obs = turn.obs
    if (
        turn.call is None
        or obs is None
        or tools is None
        or turn.call.name in tools
        or obs.is_error is not True
    ):
        return None
    return _codec.render(McpObservation(_success_form(obs), _as_success(obs, rng), ctx.observation))


def plant_invalid_arguments_accepted(ctx: TurnContext, rng: random.Random) -> str | None:
    turn, tools = view(ctx), tools_of(ctx)
    obs = turn.obs
    if turn.call is None or obs is None or tools is None or obs.is_error is not True:
        return None
    schema = tools.get(turn.call.name, {}).get("inputSchema")
    if not isinstance(schema, dict):
        return None
    errors, _ = schema_errors(schema, turn.call.arguments)
    if not errors or all(lax_coercible(e) for e in errors):
        return None
    return _codec.render(McpObservation(_success_form(obs), _as_success(obs, rng), ctx.observation))


def _wrong_type(value: Any) -> Any:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return {"items": value}
    return [value]


def plant_output_schema_violation(ctx: TurnContext, rng: random.Random) -> str | None:
    turn, tools = view(ctx), tools_of(ctx) or {}
    found = _result_turn(ctx)
    schema = tools.get(turn.call.name, {}).get("outputSchema") if turn.call is not None else None
    if found is None or not isinstance(schema, dict) or turn.obs.is_error:  # type: ignore[union-attr]
        return None
    obs, result = found
    structured = structured_of(result)
    if not structured:
        return None
    required = [k for k in schema.get("required") or [] if k in structured]
    if required and rng.random() < 0.5:
        del structured[rng.choice(required)]
    else:
        key = rng.choice(sorted(structured))
        structured[key] = _wrong_type(structured[key])
    if not schema_errors(schema, structured)[0]:
        return None  # the schema allows it: no violation was planted
    return _rewrite(ctx, obs, _with_result(obs, result))


def plant_shape_changed(ctx: TurnContext, rng: random.Random) -> str | None:
    turn = view(ctx)
    found = _result_turn(ctx)
    if found is None or turn.call is None or turn.obs.is_error:  # type: ignore[union-attr]
        return None
    earlier = [
        v
        for v in other_turns(ctx)
        if v.index < ctx.index
        and v.call is not None
        and v.call.name == turn.call.name
        and v.obs is not None
        and v.obs.is_error is False
        and block_kinds(v.obs.content)
    ]
    if not earlier:
        return None
    obs, result = found
    seen = set().union(*(block_kinds(v.obs.content) for v in earlier))  # type: ignore[union-attr]
    if "image" not in seen:
        result["content"] = [{"type": "image", "data": _PNG, "mimeType": "image/png"}]
    elif "text" not in seen:
        result["content"] = [{"type": "text", "text": "done"}]
    else:
        result["content"] = [{"type": "audio", "data": _PNG, "mimeType": "audio/wav"}]
    return _rewrite(ctx, obs, _with_result(obs, result))


def _shape_of(obs: McpObservation | None) -> tuple[Any, ...]:
    result = obs.result if obs is not None else None
    structured = structured_of(result)
    return (
        frozenset(structured) if structured is not None else None,
        block_kinds(obs.content if obs else None),
    )


def plant_other_tool_result(ctx: TurnContext, rng: random.Random) -> str | None:
    turn, tools = view(ctx), tools_of(ctx) or {}
    obs = turn.obs
    if turn.call is None or obs is None or obs.result is None or obs.is_error is not False:
        return None
    name = turn.call.name
    declared = tools.get(name, {}).get("outputSchema")
    mine = {
        _shape_of(v.obs)
        for v in other_turns(ctx)
        if v.call is not None and v.call.name == name and v.obs is not None and v.obs.is_error is False
    }
    donors = []
    for other in other_turns(ctx):
        if other.call is None or other.call.name == name or other.obs is None or other.obs.result is None:
            continue
        if other.obs.is_error is not False:
            continue
        if isinstance(declared, dict):
            distinct = tools.get(other.call.name, {}).get("outputSchema") != declared
        else:
            distinct = bool(mine) and _shape_of(other.obs) not in mine
        if distinct:
            donors.append(other)
    if not donors:
        return None
    donor = rng.choice(donors)
    return _rewrite(ctx, obs, _with_result(obs, copy.deepcopy(donor.obs.result)))  # type: ignore[union-attr]


def plant_unexplained_error(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _result_turn(ctx)
    if found is None or found[1].get("isError") is not True:
        return None
    obs, result = found
    result["content"] = [] if rng.random() < 0.5 else [{"type": "text", "text": " "}]
    return _rewrite(ctx, obs, _with_result(obs, result))


FAULTS: list[Fault] = [
    Fault("broken_json", "mcp.envelope", "the observation's JSON is cut off or malformed", plant_broken_json),
    Fault("wrong_id", "mcp.envelope", "the JSON-RPC response carries another request's id", plant_wrong_id),
    Fault(
        "content_not_list",
        "mcp.content_blocks",
        "result.content is one block or a string instead of a list of blocks",
        plant_content_not_list,
    ),
    Fault(
        "is_error_not_bool",
        "mcp.content_blocks",
        'result.isError is "true"/"false", 0/1 or "yes"/"no" instead of a boolean',
        plant_is_error_not_bool,
    ),
    Fault(
        "other_tool_result",
        "mcp.result_fits_tool",
        "the result is another tool's (whose results the trajectory shows to look different)",
        plant_other_tool_result,
    ),
    Fault(
        "structured_contradicts_text",
        "mcp.structured_text_agrees",
        "one value in structuredContent is changed, so it contradicts the text block",
        plant_structured_contradicts_text,
    ),
    Fault(
        "undeclared_tool_succeeds",
        "mcp.unknown_tool",
        "a call to a tool the system prompt does not declare succeeds",
        plant_undeclared_tool_succeeds,
    ),
    Fault(
        "invalid_arguments_accepted",
        "mcp.arguments_schema",
        "a call whose arguments violate the inputSchema succeeds",
        plant_invalid_arguments_accepted,
    ),
    Fault(
        "output_schema_violation",
        "mcp.output_schema",
        "structuredContent loses a required key or a value changes type",
        plant_output_schema_violation,
    ),
    Fault(
        "shape_changed",
        "mcp.consistent_shape",
        "the content blocks change to a type the tool's earlier results never had",
        plant_shape_changed,
    ),
    Fault(
        "unexplained_error",
        "mcp.error_explained",
        "an error result's text is empty or missing",
        plant_unexplained_error,
    ),
]
