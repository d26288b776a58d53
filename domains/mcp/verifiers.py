"""Deterministic checks on one MCP turn: ``(history, action, observation) -> VerifyResult``.

Each verifier returns ``None`` (does not apply) when what it needs is missing -- an action that does not
parse, an observation that is not JSON (``mcp.envelope`` reports that), or a trajectory whose system
prompt declares no tool list (the schema checks need one; see ``codec.render_tool_list``).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.errors import CodecError

from .codec import (
    McpActionCodec,
    McpObservationCodec,
    ToolCall,
    is_error,
    result_of,
    tools_from_trajectory,
)

_actions = McpActionCodec()
_observations = McpObservationCodec()

BLOCK_TYPES = ("text", "image", "audio", "resource", "resource_link")


def _call(ctx: TurnContext) -> ToolCall | None:
    if "call" not in ctx.state:
        try:
            ctx.state["call"] = _actions.parse(ctx.action)
        except CodecError:
            ctx.state["call"] = None
    return ctx.state["call"]


def _observation(ctx: TurnContext) -> dict[str, Any] | None:
    if "obs" not in ctx.state:
        try:
            ctx.state["obs"] = _observations.parse(ctx.observation)
        except CodecError as exc:
            ctx.state["obs"] = None
            ctx.state["obs_error"] = exc.message
    return ctx.state["obs"]


def _tools(ctx: TurnContext) -> dict[str, dict[str, Any]] | None:
    if "tools" not in ctx.state:
        try:
            ctx.state["tools"] = tools_from_trajectory(ctx.trajectory)
        except CodecError:
            ctx.state["tools"] = None
    return ctx.state["tools"]


def _schema_error(schema: dict[str, Any], value: Any) -> str | None:
    import jsonschema

    try:
        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(value))
    except jsonschema.exceptions.SchemaError as exc:
        return f"declared schema is invalid: {exc.message}"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "<root>"
    return f"{where}: {error.message}"


@verifier(
    "mcp.envelope", "the observation is a JSON-RPC 2.0 response to the action's id, with one of result/error"
)
def check_envelope(ctx: TurnContext) -> VerifyResult | None:
    call = _call(ctx)
    if call is None:
        return None
    obs = _observation(ctx)
    if obs is None:
        return VerifyResult("mcp.envelope", False, f"not a JSON-RPC response: {ctx.state.get('obs_error')}")
    if obs["id"] != call.id and not (obs["id"] is None and "error" in obs):
        return VerifyResult(
            "mcp.envelope", False, f"response id {obs['id']!r} does not match request id {call.id!r}"
        )
    if "error" in obs:
        err = obs["error"]
        if (
            not isinstance(err, dict)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("code"), int)
        ):
            return VerifyResult("mcp.envelope", False, "error must be an object with an integer code")
        if not isinstance(err.get("message"), str):
            return VerifyResult("mcp.envelope", False, "error.message must be a string")
    elif not isinstance(obs["result"], dict):
        return VerifyResult("mcp.envelope", False, "result must be an object (a CallToolResult)")
    return VerifyResult("mcp.envelope", True)


def _block_problem(i: int, block: Any) -> str | None:
    if not isinstance(block, dict):
        return f"content[{i}] is not an object"
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        return f"content[{i}].type {kind!r} is not one of {', '.join(BLOCK_TYPES)}"
    if kind == "text" and not isinstance(block.get("text"), str):
        return f"content[{i}] (text) needs a string 'text'"
    if kind in ("image", "audio"):
        if not isinstance(block.get("mimeType"), str) or not isinstance(block.get("data"), str):
            return f"content[{i}] ({kind}) needs string 'data' (base64) and 'mimeType'"
        try:
            base64.b64decode(block["data"], validate=True)
        except (binascii.Error, ValueError):
            return f"content[{i}] ({kind}) data is not valid base64"
    if kind == "resource":
        res = block.get("resource")
        if not isinstance(res, dict) or not isinstance(res.get("uri"), str):
            return f"content[{i}] (resource) needs 'resource' with a string 'uri'"
        if not isinstance(res.get("text"), str) and not isinstance(res.get("blob"), str):
            return f"content[{i}] (resource) needs resource.text or resource.blob"
    if kind == "resource_link" and not (
        isinstance(block.get("uri"), str) and isinstance(block.get("name"), str)
    ):
        return f"content[{i}] (resource_link) needs string 'uri' and 'name'"
    return None


@verifier("mcp.content_blocks", "result.content is a list of well-formed text/image/audio/resource blocks")
def check_content_blocks(ctx: TurnContext) -> VerifyResult | None:
    obs = _observation(ctx)
    result = result_of(obs) if obs else None
    if result is None:
        return None
    content = result.get("content")
    if not isinstance(content, list):
        return VerifyResult("mcp.content_blocks", False, "result.content must be a list")
    if "isError" in result and not isinstance(result["isError"], bool):
        return VerifyResult("mcp.content_blocks", False, "result.isError must be a boolean")
    if "structuredContent" in result and not isinstance(result["structuredContent"], dict):
        return VerifyResult("mcp.content_blocks", False, "result.structuredContent must be an object")
    for i, block in enumerate(content):
        problem = _block_problem(i, block)
        if problem:
            return VerifyResult("mcp.content_blocks", False, problem)
    return VerifyResult("mcp.content_blocks", True)


@verifier("mcp.unknown_tool", "calling a tool the server did not declare yields an error")
def check_unknown_tool(ctx: TurnContext) -> VerifyResult | None:
    call, obs, tools = _call(ctx), _observation(ctx), _tools(ctx)
    if call is None or obs is None or tools is None or call.name in tools:
        return None
    if is_error(obs):
        return VerifyResult("mcp.unknown_tool", True)
    return VerifyResult(
        "mcp.unknown_tool", False, f"tool {call.name!r} is not declared but the call succeeded"
    )


@verifier("mcp.arguments_schema", "arguments that fail the tool's inputSchema yield an error result")
def check_arguments_schema(ctx: TurnContext) -> VerifyResult | None:
    call, obs, tools = _call(ctx), _observation(ctx), _tools(ctx)
    if call is None or obs is None or tools is None or call.name not in tools:
        return None
    schema = tools[call.name].get("inputSchema")
    if not isinstance(schema, dict):
        return None
    problem = _schema_error(schema, call.arguments)
    if problem is None or is_error(obs):
        return VerifyResult("mcp.arguments_schema", True)
    return VerifyResult(
        "mcp.arguments_schema",
        False,
        f"arguments violate {call.name}'s inputSchema ({problem}) but the call succeeded",
    )


@verifier(
    "mcp.output_schema", "a successful result of a tool with an outputSchema has conforming structuredContent"
)
def check_output_schema(ctx: TurnContext) -> VerifyResult | None:
    call, obs, tools = _call(ctx), _observation(ctx), _tools(ctx)
    if call is None or obs is None or tools is None or call.name not in tools:
        return None
    schema = tools[call.name].get("outputSchema")
    result = result_of(obs)
    if not isinstance(schema, dict) or result is None or result.get("isError") is True:
        return None
    if "structuredContent" not in result:
        return VerifyResult(
            "mcp.output_schema",
            False,
            f"{call.name} declares an outputSchema but returned no structuredContent",
        )
    problem = _schema_error(schema, result["structuredContent"])
    if problem:
        return VerifyResult(
            "mcp.output_schema",
            False,
            f"structuredContent does not match {call.name}'s outputSchema: {problem}",
        )
    return VerifyResult("mcp.output_schema", True)


def _shape(result: dict[str, Any]) -> tuple[Any, ...]:
    structured = result.get("structuredContent")
    keys = tuple(sorted(structured)) if isinstance(structured, dict) else None
    kinds = tuple(sorted({b.get("type") for b in result.get("content", []) if isinstance(b, dict)}))
    return keys, kinds


def _describe(shape: tuple[Any, ...]) -> str:
    keys, kinds = shape
    structured = f"structuredContent keys {list(keys)}" if keys is not None else "no structuredContent"
    return f"{structured}, content types {list(kinds) or '[]'}"


@verifier("mcp.consistent_shape", "a tool's successful results keep one shape (structured keys, block types)")
def check_consistent_shape(ctx: TurnContext) -> VerifyResult | None:
    call, obs = _call(ctx), _observation(ctx)
    result = result_of(obs) if obs else None
    if call is None or result is None or result.get("isError") is True:
        return None
    keys, kinds = _shape(result)
    for turn in reversed(ctx.history):
        try:
            past_call, past = _actions.parse(turn.action), _observations.parse(turn.observation)
        except CodecError:
            continue
        past_result = result_of(past)
        if past_call.name != call.name or past_result is None or past_result.get("isError") is True:
            continue
        past_keys, past_kinds = _shape(past_result)
        # Block types are compared only when both results have blocks: an empty listing may have none.
        if keys != past_keys or (kinds and past_kinds and kinds != past_kinds):
            return VerifyResult(
                "mcp.consistent_shape",
                False,
                f"{call.name} returned {_describe((keys, kinds))} but earlier {_describe((past_keys, past_kinds))}",
            )
        return VerifyResult("mcp.consistent_shape", True)
    return None


@verifier(
    "mcp.structured_text_agrees", "when a text block holds JSON next to structuredContent, the two agree"
)
def check_structured_text_agrees(ctx: TurnContext) -> VerifyResult | None:
    obs = _observation(ctx)
    result = result_of(obs) if obs else None
    if result is None or not isinstance(result.get("structuredContent"), dict):
        return None
    texts = [
        b["text"] for b in result.get("content", []) if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]
    for text in texts:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue  # free text beside structured content is allowed
        if isinstance(value, dict) and value != result["structuredContent"]:
            return VerifyResult(
                "mcp.structured_text_agrees", False, "the JSON text block differs from structuredContent"
            )
    return VerifyResult("mcp.structured_text_agrees", True)


@verifier(
    "mcp.error_explained", "an error result carries at least one non-empty text block saying what failed"
)
def check_error_explained(ctx: TurnContext) -> VerifyResult | None:
    obs = _observation(ctx)
    result = result_of(obs) if obs else None
    if result is None or result.get("isError") is not True:
        return None
    texts = [
        b.get("text") for b in result.get("content", []) if isinstance(b, dict) and b.get("type") == "text"
    ]
    if any(isinstance(t, str) and t.strip() for t in texts):
        return VerifyResult("mcp.error_explained", True)
    return VerifyResult("mcp.error_explained", False, "isError is true but no text block explains the error")


VERIFIERS: list[Verifier] = [
    check_envelope,
    check_content_blocks,
    check_unknown_tool,
    check_arguments_schema,
    check_output_schema,
    check_consistent_shape,
    check_structured_text_agrees,
    check_error_explained,
]
