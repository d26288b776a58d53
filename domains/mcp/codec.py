"""Codecs for MCP: actions are JSON-RPC ``tools/call`` requests, observations their JSON-RPC responses.

Canonical action text (what :meth:`McpActionCodec.render` writes and trajectories store)::

    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_note", "arguments": {...}}}

``parse`` also accepts the shorthand agents and logs use -- ``{"name": ..., "arguments": ...}`` (with an
optional ``id``; ``arguments`` may be a JSON string as in OpenAI logs), OpenAI's
``{"type": "function", "function": {...}}`` wrapper -- and any of these inside a Markdown code fence.

An observation is the JSON-RPC response: ``{"jsonrpc": "2.0", "id": 3, "result": <CallToolResult>}`` or
``{"jsonrpc": "2.0", "id": 3, "error": {"code": ..., "message": ...}}``.

The declared tools (``tools/list``: name, description, inputSchema, optional outputSchema) are embedded in
the system prompt as one fenced block whose info string is ``json mcp-tools``::

    ```json mcp-tools
    {"tools": [...]}
    ```

:func:`render_tool_list` writes it and :func:`tools_from_text` / :func:`tools_from_trajectory` read it back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError
from awctl.trajectory import Trajectory

TOOLS_FENCE = "json mcp-tools"
_FENCE_RE = re.compile(r"^\s*```[^\n]*\n(.*?)\n?```\s*$", re.S)
_TOOLS_BLOCK_RE = re.compile(r"```json mcp-tools[ \t]*\n(.*?)\n```", re.S)

#: How the action space is described to a simulator or an agent.
ACTION_SCHEMA = """\
Each action is one JSON-RPC 2.0 request calling one MCP tool:
{"jsonrpc": "2.0", "id": <int>, "method": "tools/call", "params": {"name": "<tool>", "arguments": {...}}}
The environment answers with the JSON-RPC response whose "result" is an MCP CallToolResult:
{"jsonrpc": "2.0", "id": <same id>, "result": {"content": [{"type": "text", "text": "..."}], "isError": false}}
Content blocks have type text, image, audio, resource or resource_link. Tools that declare an outputSchema
also return "structuredContent" conforming to it. Invalid arguments or a failing tool give "isError": true;
protocol failures give a JSON-RPC "error" object instead of "result"."""


@dataclass(frozen=True)
class ToolCall:
    """One ``tools/call`` request. ``id`` is the JSON-RPC request id (int or string)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: int | str = 1

    def to_request(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.id,
            "method": "tools/call",
            "params": {"name": self.name, "arguments": self.arguments},
        }


def _strip_fence(text: str) -> str:
    match = _FENCE_RE.match(text)
    return match.group(1) if match else text


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CodecError(
            f"not valid JSON ({exc.msg})",
            where=f"{what} line {exc.lineno} column {exc.colno}",
            hint=f"the {what} must be one JSON object",
        ) from None


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):  # OpenAI logs carry arguments as a JSON string
        value = _loads(value, where) if value.strip() else {}
    if not isinstance(value, dict):
        raise CodecError(f"must be a JSON object, got {type(value).__name__}", where=where)
    return value


def _request_id(value: Any, where: str) -> int | str:
    # bool is an int subclass but not a valid JSON-RPC id
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise CodecError(f"must be an integer or a string, got {json.dumps(value)}", where=where)
    return value


class McpActionCodec(ActionCodec):
    """Parses tool calls (canonical request, shorthand, OpenAI wrapper); renders canonical JSON-RPC."""

    def parse(self, text: str) -> ToolCall:
        obj = _loads(_strip_fence(text.strip()), "action")
        if not isinstance(obj, dict):
            raise CodecError(f"expected a JSON object, got {type(obj).__name__}", where="action")
        if "method" in obj or "jsonrpc" in obj:
            if obj.get("jsonrpc") != "2.0":
                raise CodecError('must be "2.0"', where="action.jsonrpc")
            if obj.get("method") != "tools/call":
                raise CodecError(
                    f"unsupported method {obj.get('method')!r}",
                    where="action.method",
                    hint='use "tools/call"',
                )
            if "id" not in obj:
                raise CodecError("missing (a tools/call request needs an id)", where="action.id")
            params = obj.get("params")
            if not isinstance(params, dict):
                raise CodecError("must be an object with name and arguments", where="action.params")
            name, args, rid = params.get("name"), params.get("arguments"), _request_id(obj["id"], "action.id")
            where = "action.params"
        else:
            if isinstance(obj.get("function"), dict):  # OpenAI {"type": "function", "function": {...}}
                obj = {**obj["function"], "id": obj.get("id", 1)}
            name, args, rid = (
                obj.get("name"),
                obj.get("arguments"),
                _request_id(obj.get("id", 1), "action.id"),
            )
            where = "action"
        if not isinstance(name, str) or not name:
            raise CodecError("missing or not a string", where=f"{where}.name", hint="name the tool to call")
        return ToolCall(name, _arguments(args, f"{where}.arguments"), rid)

    def render(self, action: ToolCall) -> str:
        return json.dumps(action.to_request(), ensure_ascii=False)

    def schema(self) -> str:
        return ACTION_SCHEMA

    def family(self, text: str) -> str:
        try:
            return self.parse(text).name
        except CodecError:
            return "invalid"


class McpObservationCodec(ObservationCodec):
    """Parses/renders JSON-RPC responses; ``normalize`` sorts keys and drops volatile ``_meta``."""

    def parse(self, text: str) -> dict[str, Any]:
        obj = _loads(_strip_fence(text.strip()), "observation")
        if not isinstance(obj, dict):
            raise CodecError(f"expected a JSON object, got {type(obj).__name__}", where="observation")
        if obj.get("jsonrpc") != "2.0":
            raise CodecError('must be "2.0"', where="observation.jsonrpc")
        if "id" not in obj:
            raise CodecError("missing", where="observation.id")
        if ("result" in obj) == ("error" in obj):
            raise CodecError("needs exactly one of result or error", where="observation")
        return obj

    def render(self, observation: dict[str, Any]) -> str:
        return json.dumps(observation, ensure_ascii=False)

    def normalize(self, text: str) -> str:
        try:
            obj = self.parse(text)
        except CodecError:
            return super().normalize(text)
        result = obj.get("result")
        if isinstance(result, dict):
            # _meta carries server bookkeeping (trace ids, timings) that no simulator can or should predict.
            obj = {**obj, "result": {k: v for k, v in result.items() if k != "_meta"}}
        return json.dumps(obj, ensure_ascii=False, sort_keys=True)


# ── helpers over parsed observations ───────────────────────────────────────────────────────────────


def result_of(observation: dict[str, Any]) -> dict[str, Any] | None:
    """The ``CallToolResult`` dict of a response, or ``None`` for a JSON-RPC error."""
    result = observation.get("result")
    return result if isinstance(result, dict) else None


def is_error(observation: dict[str, Any]) -> bool:
    """True for a JSON-RPC error or a result with ``isError: true``."""
    result = result_of(observation)
    return result is None or result.get("isError") is True


def text_of(observation: dict[str, Any]) -> str:
    """The text blocks of a result joined by newlines (the error message for a JSON-RPC error)."""
    result = result_of(observation)
    if result is None:
        return str((observation.get("error") or {}).get("message", ""))
    return "\n".join(
        b.get("text", "")
        for b in result.get("content", [])
        if isinstance(b, dict) and b.get("type") == "text"
    )


def text_result(request_id: int | str, text: str, is_error: bool = False) -> dict[str, Any]:
    """A response carrying one text block (used by importers and synthetic env errors)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "isError": is_error},
    }


def error_response(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


# ── the declared tool list inside a system prompt ──────────────────────────────────────────────────


def render_tool_list(tools: list[dict[str, Any]]) -> str:
    """The fenced ``json mcp-tools`` block for a list of MCP tool dicts (as ``tools/list`` returns them)."""
    body = json.dumps({"tools": tools}, ensure_ascii=False, indent=1, sort_keys=True)
    return f"```{TOOLS_FENCE}\n{body}\n```"


def tools_from_text(text: str) -> list[dict[str, Any]] | None:
    """The tool list of the first ``json mcp-tools`` block in ``text``; ``None`` when there is none.

    Raises ``CodecError`` when a block is present but malformed (silently ignoring it would make every
    schema verifier skip).
    """
    match = _TOOLS_BLOCK_RE.search(text)
    if not match:
        return None
    obj = _loads(match.group(1), "mcp-tools block")
    tools = obj.get("tools") if isinstance(obj, dict) else None
    if not isinstance(tools, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
    ):
        raise CodecError(
            'must be {"tools": [{"name": ..., "inputSchema": ...}, ...]}', where="mcp-tools block"
        )
    return tools


def tools_from_trajectory(trajectory: Trajectory) -> dict[str, dict[str, Any]] | None:
    """Declared tools by name, read from the action space, initial state, raw or extra prompt text."""
    system = trajectory.system
    for text in (system.action_space, system.initial_state, system.raw or "", system.extra):
        tools = tools_from_text(text)
        if tools is not None:
            return {t["name"]: t for t in tools}
    return None
