"""Deterministic checks on one MCP turn, with every expectation taken from the trajectory.

What a verifier expects comes from the system prompt's declared tools (names, ``inputSchema``,
``outputSchema``; see :mod:`.tools`), from the observation form the trajectory's other turns use (see
:mod:`.reading`) and from the tool's other results in the trajectory. A verifier returns ``None`` (abstains)
where the trajectory does not establish what it would check -- an action that does not parse (the
``action_parse`` check reports it), a trajectory of plain text (which carries no error flag or structure),
a trajectory whose system prompt declares no tools, arguments that satisfy the schema. Whether a check
applies is decided from the action and the trajectory; where it applies and the trajectory establishes a
JSON form, a candidate without that structure (:func:`.reading.form_problem`) fails it, so text the
verifiers cannot read earns no credit. A failure names the field or line and what was expected.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier

from .codec import ACTION_SCHEMA, BLOCK_TYPES
from .reading import (
    block_kinds,
    family_of,
    form_problem,
    json_problem,
    other_turns,
    structured_of,
    successes_of,
    tools_of,
    view,
)

# The sentence of awctl's own action schema that promises error results for invalid arguments.
_STRICT_PROMISE = next(line for line in ACTION_SCHEMA.splitlines() if "Invalid arguments" in line)


def _fail(check: str, message: str) -> VerifyResult:
    return VerifyResult(check, False, message)


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def schema_errors(schema: dict[str, Any], value: Any) -> tuple[list[Any], str | None]:
    """``(errors, schema_problem)``: the validation errors of ``value``, best first."""
    import jsonschema

    try:
        validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        errors = sorted(validator_cls(schema).iter_errors(value), key=jsonschema.exceptions.relevance)
    except jsonschema.exceptions.SchemaError as exc:
        return [], f"declared schema is invalid: {exc.message}"
    return errors, None


def _where(error: Any) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "<root>"


def _schema_error(schema: dict[str, Any], value: Any) -> str | None:
    errors, problem = schema_errors(schema, value)
    if problem:
        return problem
    return f"{_where(errors[0])}: {errors[0].message}" if errors else None


# ── form ─────────────────────────────────────────────────────────────────────────────────────────────


@verifier(
    "mcp.envelope",
    "the observation has the form the trajectory's other turns use (a JSON-RPC response answering the "
    "request's id, a CallToolResult, an error object, content blocks) and is well-formed JSON for it",
)
def check_envelope(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.envelope"
    turn = view(ctx)
    if turn.call is None:
        return None
    family = family_of(ctx)
    obs = turn.obs
    problem = form_problem(ctx)
    if problem:
        plain = obs is not None and obs.form == "text" and not json_problem(ctx.observation)
        if family == "envelope" and plain:
            return _fail(
                name,
                "line 1: plain text where the other observations of this trajectory are JSON-RPC responses: "
                f'expected {{"jsonrpc": "2.0", "id": {json.dumps(turn.call.id)}, "result": ...}}',
            )
        return _fail(name, problem)
    if obs is None:
        return _fail(name, f"not a valid JSON-RPC response: {ctx.state.get('problem')}")
    if obs.form == "text":
        return None  # plain text is a form of its own (or an exception's message): nothing to check here
    if obs.form != "envelope":
        return VerifyResult(name, True)
    env = obs.value
    rid = env.get("id")
    if turn.call.id_given and rid != turn.call.id and not (rid is None and "error" in env):
        return _fail(
            name,
            f"id: the response's id {json.dumps(rid)} does not answer request id {json.dumps(turn.call.id)}",
        )
    if "error" in env:
        err = env["error"]
        if (
            not isinstance(err, dict)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("code"), int)
        ):
            return _fail(name, "error: must be an object with an integer code")
        if not isinstance(err.get("message"), str):
            return _fail(name, "error.message: must be a string")
    elif not isinstance(env["result"], dict):
        return _fail(name, f"result: must be an object (a CallToolResult), got {_json_type(env['result'])}")
    return VerifyResult(name, True)


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


@verifier(
    "mcp.content_blocks",
    "result.content is a list of well-formed text/image/audio/resource blocks; isError is a boolean",
)
def check_content_blocks(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.content_blocks"
    problem = form_problem(ctx)
    if problem:
        return _fail(name, problem)
    obs = view(ctx).obs
    if obs is None or obs.form not in ("envelope", "result", "blocks"):
        return None
    if obs.form == "blocks":
        content = obs.value
    else:
        result = obs.result
        if result is None or result.get("resultType") not in (None, "complete"):
            return None  # a JSON-RPC error, or an intermediate (input-required) result without content
        if "content" not in result:
            return _fail(name, "result.content: missing; a CallToolResult carries a list of content blocks")
        content = result["content"]
        if not isinstance(content, list):
            return _fail(name, f"result.content: must be a list of content blocks, got {_json_type(content)}")
        flag = result.get("isError")
        if flag is not None and not isinstance(flag, bool):
            return _fail(name, f"result.isError: must be true or false, got {json.dumps(flag)}")
        structured = result.get("structuredContent")
        if structured is not None and not isinstance(structured, dict):
            return _fail(name, f"result.structuredContent: must be an object, got {_json_type(structured)}")
    for i, block in enumerate(content):
        problem = _block_problem(i, block)
        if problem:
            return _fail(name, problem)
    return VerifyResult(name, True)


# ── declared tools ───────────────────────────────────────────────────────────────────────────────────


@verifier("mcp.unknown_tool", "calling a tool the system prompt does not declare yields an error")
def check_unknown_tool(ctx: TurnContext) -> VerifyResult | None:
    call, obs, tools = view(ctx).call, view(ctx).obs, tools_of(ctx)
    if call is None or tools is None or call.name in tools:
        return None
    problem = form_problem(ctx)
    if problem:
        return _fail("mcp.unknown_tool", f"{problem}, an error for the undeclared tool {call.name!r}")
    if obs is None or obs.is_error is None:
        return None
    if obs.is_error:
        return VerifyResult("mcp.unknown_tool", True)
    return _fail(
        "mcp.unknown_tool",
        f"tool {call.name!r} is not among the {len(tools)} tools the system prompt declares, yet the call "
        "succeeded: expected an error result (isError true) or a JSON-RPC error",
    )


_INT_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_BOOL_TEXT = {"true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n"}


def lax_coercible(error: Any) -> bool:
    """A type mismatch that lax validators (pydantic's default mode) convert instead of rejecting:
    ``"5"`` for an integer or number, ``"true"``/``1`` for a boolean."""
    if error.validator != "type":
        return False
    expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    value = error.instance
    for kind in expected:
        if kind == "integer" and isinstance(value, str) and _INT_TEXT.fullmatch(value):
            return True
        if kind == "number" and isinstance(value, str):
            try:
                float(value)
            except ValueError:
                continue
            return True
        if kind == "boolean" and (
            (isinstance(value, str) and value.strip().lower() in _BOOL_TEXT) or value in (0, 1)
        ):
            return True
    return False


def _strict_validation_established(ctx: TurnContext, tools: dict[str, dict[str, Any]]) -> bool:
    """Whether the trajectory shows its server rejecting lax-coercible values: the system prompt promises
    error results for invalid arguments (awctl's action schema), or another turn's call whose only schema
    violations are coercible got an error."""
    system = ctx.trajectory.system
    if _STRICT_PROMISE in "\n".join((system.action_space, system.raw or "", system.extra)):
        return True
    for other in other_turns(ctx):
        if other.call is None or other.obs is None or other.obs.is_error is not True:
            continue
        schema = tools.get(other.call.name, {}).get("inputSchema")
        if isinstance(schema, dict):
            errors, _ = schema_errors(schema, other.call.arguments)
            if errors and all(lax_coercible(e) for e in errors):
                return True
    return False


@verifier("mcp.arguments_schema", "arguments that fail the tool's declared inputSchema yield an error result")
def check_arguments_schema(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.arguments_schema"
    call, obs, tools = view(ctx).call, view(ctx).obs, tools_of(ctx)
    if call is None or tools is None or call.name not in tools:
        return None
    schema = tools[call.name].get("inputSchema")
    if not isinstance(schema, dict):
        return None
    errors, problem = schema_errors(schema, call.arguments)
    if problem or not errors:
        return None  # a broken declaration holds the server to nothing; valid arguments may get any answer
    problem = form_problem(ctx)
    if problem:
        return _fail(name, f"{problem}, an error for the invalid arguments")
    if obs is None or obs.is_error is None:
        return None
    if obs.is_error:
        return VerifyResult(name, True)
    if all(lax_coercible(e) for e in errors) and not _strict_validation_established(ctx, tools):
        return (
            None  # e.g. "5" for an integer: lax servers accept it, and nothing here says this one is strict
        )
    first = errors[0]
    return _fail(
        name,
        f"arguments.{_where(first)}: {first.message} (violates {call.name}'s inputSchema), yet the call "
        "succeeded: expected an error result (isError true) saying which argument is invalid",
    )


@verifier(
    "mcp.output_schema", "a successful result of a tool with an outputSchema has conforming structuredContent"
)
def check_output_schema(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.output_schema"
    call, obs, tools = view(ctx).call, view(ctx).obs, tools_of(ctx)
    if call is None or tools is None or call.name not in tools:
        return None
    schema = tools[call.name].get("outputSchema")
    if not isinstance(schema, dict):
        return None
    problem = form_problem(ctx)
    if problem:
        return _fail(name, problem)
    result = obs.result if obs is not None else None
    if result is None or obs.is_error is not False:  # type: ignore[union-attr]
        return None
    if result.get("structuredContent") is None:
        return _fail(name, f"result.structuredContent: missing, but {call.name} declares an outputSchema")
    problem = _schema_error(schema, result["structuredContent"])
    if problem:
        return _fail(name, f"result.structuredContent/{problem} (does not match {call.name}'s outputSchema)")
    return VerifyResult(name, True)


# ── the tool's other results ─────────────────────────────────────────────────────────────────────────


def _shape(result: dict[str, Any]) -> tuple[frozenset[str] | None, frozenset[str]]:
    structured = structured_of(result)
    keys = frozenset(structured) if structured is not None else None
    return keys, block_kinds(result.get("content"))


def _describe(keys: frozenset[str] | None, kinds: frozenset[str]) -> str:
    structured = f"structuredContent keys {sorted(keys)}" if keys is not None else "no structuredContent"
    return f"{structured}, content types {sorted(kinds)}"


@verifier(
    "mcp.consistent_shape",
    "a tool's successful results keep one shape: no structuredContent keys its earlier results and "
    "outputSchema never had, no content types disjoint from the earlier ones",
)
def check_consistent_shape(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.consistent_shape"
    call, obs, tools = view(ctx).call, view(ctx).obs, tools_of(ctx) or {}
    if call is None:
        return None
    earlier = [v for v in successes_of(ctx, call.name) if v.index < ctx.index]
    if not earlier:
        return None
    problem = form_problem(ctx)
    if problem:
        return _fail(name, problem)
    result = obs.result if obs is not None else None
    if result is None or obs.is_error is not False:  # type: ignore[union-attr]
        return None
    keys, kinds = _shape(result)
    past = [_shape(v.obs.result) for v in earlier]  # type: ignore[union-attr,arg-type]
    declared = (tools.get(call.name) or {}).get("outputSchema")
    declared_keys = set((declared or {}).get("properties") or {}) if isinstance(declared, dict) else set()
    past_keys = [k for k, _ in past if k is not None]
    if keys is not None and past_keys:
        extra = keys - set().union(*past_keys) - declared_keys
        if extra:
            return _fail(
                name,
                f"result.structuredContent: keys {sorted(extra)} appear in none of {call.name}'s "
                f"{len(past_keys)} earlier results ({_describe(*past[-1])}) nor in its outputSchema",
            )
    if (keys is None) != (past[-1][0] is None) and not isinstance(declared, dict):
        return _fail(
            name, f"{call.name} returned {_describe(keys, kinds)} but earlier {_describe(*past[-1])}"
        )
    past_kinds = [k for _, k in past if k]
    if kinds and past_kinds and all(kinds.isdisjoint(k) for k in past_kinds):
        return _fail(
            name,
            f"result.content: types {sorted(kinds)} share nothing with {call.name}'s earlier results "
            f"(types {sorted(past_kinds[-1])})",
        )
    return VerifyResult(name, True)


def _numbers_as_floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _numbers_as_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def same_value(a: Any, b: Any) -> bool:
    """Equality of two JSON values as a reader sees it: ``1`` and ``1.0`` agree, ``true`` and ``1`` do not."""
    return json.dumps(_numbers_as_floats(a), sort_keys=True) == json.dumps(
        _numbers_as_floats(b), sort_keys=True
    )


def _relation(text_value: Any, text: str, structured: dict[str, Any]) -> tuple[str, str] | None:
    """How a text block mirrors structuredContent: ``("json", "")`` the text is its JSON, ``("json", k)`` the
    JSON of its key ``k``, ``("text", k)`` the string at key ``k``; ``None`` when it mirrors none of them."""
    if text_value is not _NOT_JSON:
        if same_value(text_value, structured):
            return "json", ""
        for key, value in structured.items():
            if isinstance(value, dict | list) and same_value(text_value, value):
                return "json", key
    for key, value in structured.items():
        if isinstance(value, str) and value == text:
            return "text", key
    return None


_NOT_JSON = object()


def _text_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return _NOT_JSON


_NO_TEXT = ("", "")


def _mirrors(result: dict[str, Any] | None) -> tuple[str, str] | None:
    """The relation (see :func:`_relation`) of a result's first text block to its structuredContent
    (``_NO_TEXT`` when the result has no text block to relate)."""
    structured = structured_of(result)
    if structured is None:
        return _NO_TEXT
    texts = [
        b.get("text") for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
    ]  # type: ignore[union-attr]
    texts = [t for t in texts if isinstance(t, str)]
    if not texts:
        return _NO_TEXT
    return _relation(_text_json(texts[0]), texts[0], structured)


def _expected_relation(ctx: TurnContext, tool: str) -> tuple[str, str] | None:
    """The relation the trajectory establishes for ``tool``: the one all its other structured results show,
    or, when it has none, the one every structured result of every other tool shows -- then only a relation
    through a named key (``structuredContent.content`` is the text), a server's convention that a tool
    whose results differ in shape is not held to (the caller abstains when the key is missing)."""
    own = [_mirrors(v.obs.result) for v in successes_of(ctx, tool)]  # type: ignore[union-attr]
    own = [r for r in own if r != _NO_TEXT]
    if own:
        return own[0] if own[0] is not None and all(r == own[0] for r in own) else None
    views = [v for v in other_turns(ctx) if v.obs is not None and v.obs.is_error is False]
    server = [r for r in (_mirrors(v.obs.result) for v in views) if r != _NO_TEXT]  # type: ignore[union-attr]
    if server and server[0] is not None and server[0][1] and all(r == server[0] for r in server):
        return server[0]
    return None


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                return f"{path}/{key} (missing from structuredContent)"
            if not same_value(a[key], b[key]):
                return _first_difference(a[key], b[key], f"{path}/{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not same_value(x, y):
                return _first_difference(x, y, f"{path}/{i}")
    return f"{path or '<root>'}: text says {json.dumps(a)[:80]}, structuredContent says {json.dumps(b)[:80]}"


@verifier(
    "mcp.structured_text_agrees",
    "the text block and structuredContent say the same thing, in the way this tool's (or server's) other "
    "results mirror one another",
)
def check_structured_text_agrees(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.structured_text_agrees"
    turn = view(ctx)
    if turn.call is None:
        return None
    problem = form_problem(ctx)
    if problem:
        return _fail(name, problem)
    result = turn.obs.result if turn.obs is not None else None
    structured = structured_of(result)
    if structured is None or turn.call is None or turn.obs.is_error:  # type: ignore[union-attr]
        return None
    texts = [
        b.get("text") for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
    ]  # type: ignore[union-attr]
    texts = [t for t in texts if isinstance(t, str)]
    if not texts:
        return None
    if _mirrors(result) not in (None, _NO_TEXT):
        return VerifyResult(name, True)
    parsed = _text_json(texts[0])
    if isinstance(parsed, dict) and parsed.keys() == structured.keys():
        return _fail(
            name,
            "content[0] is the JSON of structuredContent but differs at "
            + _first_difference(parsed, structured),
        )
    expected = _expected_relation(ctx, turn.call.name)
    if expected is None:
        return None  # this tool's text need not mirror its structured content
    kind, key = expected
    if key and key not in structured:
        return None  # a differently shaped result: the shape checks judge that
    target = structured[key] if key else structured
    if kind == "json":
        detail = (
            _first_difference(parsed, target, f"/{key}" if key else "")
            if parsed is not _NOT_JSON
            else ("the text is not JSON")
        )
        where = f"structuredContent.{key}" if key else "structuredContent"
        return _fail(
            name, f"content[0] should be the JSON of {where}, as in the other results, but differs: {detail}"
        )
    return _fail(
        name,
        f"content[0] should equal structuredContent.{key}, as in the other results, but the text says "
        f"{json.dumps(texts[0])[:80]} and structuredContent.{key} says {json.dumps(target)[:80]}",
    )


@verifier(
    "mcp.result_fits_tool",
    "a successful result has the shape the called tool's results have -- its declared outputSchema, the "
    "structuredContent and content types of its other results -- not another tool's",
)
def check_result_fits_tool(ctx: TurnContext) -> VerifyResult | None:
    name = "mcp.result_fits_tool"
    call, obs, tools = view(ctx).call, view(ctx).obs, tools_of(ctx) or {}
    if call is None:
        return None
    problem = form_problem(ctx)
    if problem:
        return _fail(name, problem)
    result = obs.result if obs is not None else None
    if result is None or obs.is_error is not False:  # type: ignore[union-attr]
        return None
    structured = result.get("structuredContent")

    def lookalike() -> str:
        """Which other declared tool the result would fit, for the message."""
        for other, spec in tools.items():
            schema = spec.get("outputSchema")
            if other == call.name or not isinstance(schema, dict):
                continue
            if isinstance(structured, dict) and not schema_errors(schema, structured)[0]:
                return f"; it fits {other}'s outputSchema instead"
        return ""

    checked = False
    declared = (tools.get(call.name) or {}).get("outputSchema")
    if isinstance(declared, dict):
        checked = True
        if not isinstance(structured, dict):
            return _fail(
                name, f"{call.name} declares an outputSchema but this result has no structuredContent"
            )
        problem = _schema_error(declared, structured)
        if problem:
            return _fail(
                name, f"structuredContent/{problem}: not a result of {call.name}'s outputSchema{lookalike()}"
            )
    others = successes_of(ctx, call.name)
    if others:
        checked = True
        keys, kinds = _shape(result)
        shapes = [_shape(v.obs.result) for v in others]  # type: ignore[union-attr,arg-type]
        seen = [k for k, _ in shapes if k is not None]
        if not isinstance(declared, dict):
            if len(seen) == len(shapes) and keys is None:
                return _fail(
                    name,
                    f"no structuredContent, but all {len(shapes)} other results of {call.name} carry one"
                    + lookalike(),
                )
            if keys is not None and seen and keys.isdisjoint(set().union(*seen)):
                return _fail(
                    name,
                    f"structuredContent keys {sorted(keys)} share nothing with {call.name}'s other results "
                    f"(keys {sorted(set().union(*seen))}){lookalike()}",
                )
            if keys is not None and not seen:
                return _fail(
                    name,
                    f"structuredContent, but none of {call.name}'s {len(shapes)} other results has one"
                    + lookalike(),
                )
        past_kinds = [k for _, k in shapes if k]
        if kinds and past_kinds and all(kinds.isdisjoint(k) for k in past_kinds):
            return _fail(
                name,
                f"content types {sorted(kinds)}, but {call.name}'s other results have "
                f"{sorted(set().union(*past_kinds))}",
            )
    return VerifyResult(name, True) if checked else None


@verifier(
    "mcp.error_explained", "an error result carries at least one non-empty text block saying what failed"
)
def check_error_explained(ctx: TurnContext) -> VerifyResult | None:
    problem = form_problem(ctx)
    if problem:
        return _fail("mcp.error_explained", problem)
    obs = view(ctx).obs
    result = obs.result if obs is not None else None
    if result is None or result.get("isError") is not True:
        return None
    texts = [
        b.get("text") for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
    ]
    if any(isinstance(t, str) and t.strip() for t in texts):
        return VerifyResult("mcp.error_explained", True)
    return _fail(
        "mcp.error_explained", "result.content: isError is true but no text block explains the error"
    )


VERIFIERS: list[Verifier] = [
    check_envelope,
    check_content_blocks,
    check_unknown_tool,
    check_arguments_schema,
    check_output_schema,
    check_consistent_shape,
    check_structured_text_agrees,
    check_result_fits_tool,
    check_error_explained,
]
