"""Codecs for MCP tool calls and their results, in every form a real source writes them.

Actions (:class:`McpActionCodec`, parsed into :class:`ToolCall`):

- ``request``: a JSON-RPC ``tools/call`` request, what travels on the wire and what awctl records::

      {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_note", "arguments": {...}}}

- ``call``: the shorthand agents and benchmarks write, ``{"name": ..., "arguments": ...}`` (optional ``id``;
  ``arguments`` may be a JSON string as in OpenAI logs);
- ``openai``: OpenAI's ``{"type": "function", "function": {"name", "arguments"}}`` wrapper.

Any of them may sit inside a Markdown code fence (AgentWorldBench writes the action as a fenced JSON block).

Observations (:class:`McpObservationCodec`, parsed into :class:`McpObservation`), by ``form``:

- ``envelope``: the JSON-RPC response, ``{"jsonrpc": "2.0", "id": 3, "result": <CallToolResult>}`` or
  ``{"jsonrpc": "2.0", "id": 3, "error": {"code": ..., "message": ...}}`` (awctl's recordings, wire logs);
- ``result``: the ``CallToolResult`` object as an MCP client returns it (``content``, ``isError``,
  ``structuredContent``, ``_meta``, ``resultType``, any other key), e.g. a pydantic dump of the SDK's result;
- ``error``: a bare JSON-RPC error object ``{"code", "message", "data"?}``, what a client raises for a
  protocol error (an unknown tool on SDK-based Python servers) when a harness dumps the exception's data;
- ``blocks``: the result's content-block list alone (``[{"type": "text", "text": ...}, ...]``);
- ``text``: anything else -- the tool's plain text output, which may itself be JSON (a time server's
  ``{"timezone": ...}``) or may not parse at all.

Parsing is lenient on purpose: plain text is a real form, so a text that is not an MCP JSON form is read as
``text`` rather than rejected. The verifiers decide, from the other turns of the trajectory, which form a
turn should have (a truncated CallToolResult in a trajectory of CallToolResults is broken JSON, not text).
Only a text that announces itself as a JSON-RPC message (a ``"jsonrpc"`` key) and is malformed raises
``CodecError``, since no tool output looks like that.

Both codecs are lossless: ``render(parse(text)) == text`` byte for byte (key order, spacing, fences, extra
keys). A parsed value that was changed afterwards is rendered in the style its text was written in
(indentation, separators, ASCII escaping, fence) when that style is one of the common ones, else compactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

from .tools import TOOLS_FENCE, render_tool_list, tools_from_text, tools_from_trajectory

__all__ = [
    "ACTION_SCHEMA",
    "FAMILIES",
    "FORMS",
    "TOOLS_FENCE",
    "JsonStyle",
    "McpActionCodec",
    "McpObservation",
    "McpObservationCodec",
    "ToolCall",
    "error_response",
    "form_of",
    "same_json",
    "is_error",
    "render_tool_list",
    "result_of",
    "split_frame",
    "text_of",
    "text_result",
    "tools_from_text",
    "tools_from_trajectory",
]

#: How the action space is described to a simulator or an agent.
ACTION_SCHEMA = """\
Each action is one JSON-RPC 2.0 request calling one MCP tool:
{"jsonrpc": "2.0", "id": <int>, "method": "tools/call", "params": {"name": "<tool>", "arguments": {...}}}
The environment answers with the JSON-RPC response whose "result" is an MCP CallToolResult:
{"jsonrpc": "2.0", "id": <same id>, "result": {"content": [{"type": "text", "text": "..."}], "isError": false}}
Content blocks have type text, image, audio, resource or resource_link. Tools that declare an outputSchema
also return "structuredContent" conforming to it. Invalid arguments or a failing tool give "isError": true;
protocol failures give a JSON-RPC "error" object instead of "result"."""

#: Observation forms, and the family each belongs to (a trajectory keeps to one family; ``result`` and
#: ``error`` mix because a client returns results and raises protocol errors).
FORMS: tuple[str, ...] = ("envelope", "result", "error", "blocks", "text")
FAMILIES: dict[str, str] = {
    "envelope": "envelope",
    "result": "result",
    "error": "result",
    "blocks": "blocks",
    "text": "text",
}
RESULT_KEYS = frozenset({"content", "structuredContent", "isError"})
BLOCK_TYPES = ("text", "image", "audio", "resource", "resource_link")
ERROR_KEYS = frozenset({"code", "message", "data"})

_FENCE_RE = re.compile(r"\A(?P<pre>\s*```[^\n`]*\n)(?P<body>.*?)(?P<post>\n?[ \t]*```\s*)\Z", re.S)
_JSONRPC_START = re.compile(r'\A\{\s*"jsonrpc"\s*:')


# ── text framing and JSON style ────────────────────────────────────────────────────────────────────


def split_frame(text: str) -> tuple[str, str, str]:
    """``(prefix, body, suffix)`` with ``prefix + body + suffix == text``: the body without a surrounding
    Markdown code fence and without leading/trailing whitespace."""
    match = _FENCE_RE.match(text)
    if match:
        return match.group("pre"), match.group("body"), match.group("post")
    body = text.strip()
    if not body:
        return "", text, ""
    start = text.index(body)
    return text[:start], body, text[start + len(body) :]


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON text was written (``json.dumps`` arguments), so edited values keep the source's look."""

    indent: int | None = None
    separators: tuple[str, str] = (", ", ": ")
    ensure_ascii: bool = False

    def dumps(self, value: Any) -> str:
        return json.dumps(
            value, indent=self.indent, separators=self.separators, ensure_ascii=self.ensure_ascii
        )


DEFAULT_STYLE = JsonStyle()
_STYLES: tuple[JsonStyle, ...] = tuple(
    JsonStyle(indent, seps, ascii_)
    for ascii_ in (False, True)
    for indent, seps in (
        (None, (", ", ": ")),
        (None, (",", ":")),
        (2, (",", ": ")),
        (4, (",", ": ")),
        (1, (",", ": ")),
        (None, (",", ": ")),
    )
)


def same_json(a: Any, b: Any) -> bool:
    """Equality as JSON sees it (``True`` is not ``1``, ``1`` is not ``1.0``; key order does not matter)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def detect_style(body: str, value: Any) -> JsonStyle | None:
    """The common style that writes ``value`` as exactly ``body``, or ``None``."""
    for style in _STYLES:
        if style.indent is None and "\n" in body:
            continue
        if style.dumps(value) == body:
            return style
    return None


# ── actions ──────────────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class ToolCall:
    """One tool call. ``id`` is the JSON-RPC request id (int or string; 1 when the text gave none).

    Equality compares ``name``, ``arguments`` and ``id`` only. ``form`` (``request``/``call``/``openai``),
    ``id_given`` (whether the text carried an id) and ``text`` (the parsed text, which :meth:`McpActionCodec
    .render` reproduces while the call is unchanged) describe how the call was written.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: int | str = 1
    form: str = field(default="request", compare=False)
    id_given: bool = field(default=True, compare=False)
    text: str | None = field(default=None, compare=False, repr=False)

    def to_request(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.id,
            "method": "tools/call",
            "params": {"name": self.name, "arguments": self.arguments},
        }


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
    """Parses tool calls in the ``request``, ``call`` and ``openai`` forms (fenced or not); renders a parsed
    call back to its exact text and a new or edited call in its form (``request`` by default)."""

    def parse(self, text: str) -> ToolCall:
        _, body, _ = split_frame(text)
        obj = _loads(body, "action")
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
            name, args, where = params.get("name"), params.get("arguments"), "action.params"
            rid, id_given, form = _request_id(obj["id"], "action.id"), True, "request"
        else:
            form = "call"
            if isinstance(obj.get("function"), dict):  # OpenAI {"type": "function", "function": {...}}
                obj, form = {**obj["function"], **({"id": obj["id"]} if "id" in obj else {})}, "openai"
            name, args, where = obj.get("name"), obj.get("arguments"), "action"
            id_given = "id" in obj
            rid = _request_id(obj["id"], "action.id") if id_given else 1
        if not isinstance(name, str) or not name:
            raise CodecError("missing or not a string", where=f"{where}.name", hint="name the tool to call")
        return ToolCall(name, _arguments(args, f"{where}.arguments"), rid, form, id_given, text)

    def render(self, action: ToolCall) -> str:
        if action.text is not None:
            try:
                again = self.parse(action.text)
            except CodecError:
                again = None
            if (
                again is not None
                and (again.name, again.id, again.form, again.id_given)
                == (action.name, action.id, action.form, action.id_given)
                and same_json(again.arguments, action.arguments)
                and type(again.id) is type(action.id)
            ):
                return action.text
        if action.form == "call":
            out: dict[str, Any] = {"name": action.name, "arguments": action.arguments}
        elif action.form == "openai":
            fn = {"name": action.name, "arguments": json.dumps(action.arguments, ensure_ascii=False)}
            out = {"type": "function", "function": fn}
        else:
            return json.dumps(action.to_request(), ensure_ascii=False)
        if action.id_given:
            out["id"] = action.id
        return json.dumps(out, ensure_ascii=False)

    def schema(self) -> str:
        return ACTION_SCHEMA

    def family(self, text: str) -> str:
        try:
            return self.parse(text).name
        except CodecError:
            return "invalid"


# ── observations ─────────────────────────────────────────────────────────────────────────────────────


def classify(value: Any) -> str:
    """The form of a parsed JSON value (``text`` when it is no MCP form: a tool's own JSON output)."""
    if isinstance(value, dict):
        if "jsonrpc" in value:
            return "envelope"
        if RESULT_KEYS & value.keys():
            return "result"
        code = value.get("code")
        if (
            isinstance(code, int)
            and not isinstance(code, bool)
            and isinstance(value.get("message"), str)
            and value.keys() <= ERROR_KEYS
        ):
            return "error"
        return "text"
    if (
        isinstance(value, list)
        and value
        and all(isinstance(b, dict) and b.get("type") in BLOCK_TYPES for b in value)
    ):
        return "blocks"
    return "text"  # "[]" too: an empty block list and a tool's empty JSON list read the same


@dataclass
class McpObservation:
    """One parsed observation: its ``form`` (see :data:`FORMS`) and ``value`` (the JSON value for JSON forms,
    the whole text for ``text``). ``text`` is the parsed text, reproduced by ``render`` while ``value`` is
    unchanged. Read-only mapping access (``obs["result"]``, ``obs.get``) reaches a JSON object's keys."""

    form: str
    value: Any
    text: str | None = field(default=None, compare=False, repr=False)

    # ── what the observation says, whatever its form ──
    @property
    def result(self) -> dict[str, Any] | None:
        """The CallToolResult object (an envelope's ``result``, or the bare result); ``None`` otherwise."""
        if self.form == "result":
            return self.value  # type: ignore[no-any-return]
        value = self.value
        if self.form == "envelope" and isinstance(value, dict) and isinstance(value.get("result"), dict):
            return value["result"]  # type: ignore[no-any-return]
        return None

    @property
    def error(self) -> Any:
        """The JSON-RPC error object (an envelope's ``error`` or the bare error); ``None`` otherwise."""
        if self.form == "error":
            return self.value
        if self.form == "envelope" and isinstance(self.value, dict):
            return self.value.get("error")
        return None

    @property
    def content(self) -> Any:
        """The content-block list (``None`` when the form has none; may be malformed: verifiers check it)."""
        if self.form == "blocks":
            return self.value
        result = self.result
        return result.get("content") if result is not None else None

    @property
    def is_error(self) -> bool | None:
        """True for a protocol error or ``isError: true``, False for a result, ``None`` when the form does not
        say (content blocks, plain text)."""
        if self.error is not None:
            return True
        result = self.result
        if result is None:
            return None
        return result.get("isError") is True

    @property
    def texts(self) -> list[str]:
        """The text blocks' texts (the message of an error, the whole text of a ``text`` observation)."""
        if self.form == "text":
            return [self.value]
        err = self.error
        if err is not None:
            return [str(err.get("message", ""))] if isinstance(err, dict) else []
        content = self.content
        if not isinstance(content, list):
            return []
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]

    # ── read-only mapping access to a JSON object's keys (callers that treat it as the raw JSON) ──
    def __getitem__(self, key: str) -> Any:
        if not isinstance(self.value, dict):
            raise KeyError(key)
        return self.value[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.value.get(key, default) if isinstance(self.value, dict) else default

    def __contains__(self, key: object) -> bool:
        return isinstance(self.value, dict) and key in self.value


def _check_envelope(obj: dict[str, Any]) -> None:
    if obj.get("jsonrpc") != "2.0":
        raise CodecError('must be "2.0"', where="observation.jsonrpc")
    if "id" not in obj:
        raise CodecError("missing", where="observation.id")
    if ("result" in obj) == ("error" in obj):
        raise CodecError("needs exactly one of result or error", where="observation")


@lru_cache(maxsize=8192)
def form_of(text: str) -> str:
    """The form :meth:`McpObservationCodec.parse` gives ``text`` (``envelope`` for a malformed JSON-RPC
    message, which parse rejects). Cached: verifiers ask for every other turn's form on every turn."""
    _, body, _ = split_frame(text)
    try:
        return classify(json.loads(body))
    except json.JSONDecodeError:
        return "envelope" if _JSONRPC_START.match(body) else "text"


class McpObservationCodec(ObservationCodec):
    """Parses every observation form losslessly; ``normalize`` drops volatile ``_meta`` and null fields."""

    def parse(self, text: str) -> McpObservation:
        _, body, _ = split_frame(text)
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            if _JSONRPC_START.match(body):
                raise CodecError(
                    f"not valid JSON ({exc.msg})",
                    where=f"observation line {exc.lineno} column {exc.colno}",
                    hint="a JSON-RPC response must be one complete JSON object",
                ) from None
            return McpObservation("text", text, text)
        form = classify(value)
        if form == "envelope":
            _check_envelope(value)
        return McpObservation(form, text if form == "text" else value, text)

    def render(self, observation: McpObservation | dict[str, Any]) -> str:
        if not isinstance(observation, McpObservation):  # a plain JSON value (older callers)
            return json.dumps(observation, ensure_ascii=False)
        if observation.form == "text":
            return str(observation.value)
        original = observation.text
        if original is not None:
            try:
                again = self.parse(original)
            except CodecError:
                again = None
            if (
                again is not None
                and again.form == observation.form
                and same_json(again.value, observation.value)
            ):
                return original
            pre, body, post = split_frame(original)
            try:
                style = detect_style(body, json.loads(body)) or DEFAULT_STYLE
            except json.JSONDecodeError:
                style = DEFAULT_STYLE
            return pre + style.dumps(observation.value) + post
        return DEFAULT_STYLE.dumps(observation.value)

    def normalize(self, text: str) -> str:
        try:
            obs = self.parse(text)
        except CodecError:
            return super().normalize(text)
        if obs.form == "text":
            return super().normalize(text)
        return json.dumps(_strip_volatile(obs.value), ensure_ascii=False, sort_keys=True)


def _strip_volatile(value: Any, depth: int = 0) -> Any:
    """``value`` without ``_meta`` (server bookkeeping no simulator can predict) and without null optional
    protocol fields (a full pydantic dump writes ``"annotations": null``; a wire message omits it)."""
    if isinstance(value, dict) and depth < 4:
        return {
            k: _strip_volatile(v, depth + 1)
            for k, v in value.items()
            if k != "_meta" and not (v is None and k in ("annotations", "structuredContent", "isError"))
        }
    if isinstance(value, list) and depth < 4:
        return [_strip_volatile(v, depth + 1) for v in value]
    return value


# ── helpers over parsed observations (dicts from older callers are envelopes) ──────────────────────


def _as_observation(observation: McpObservation | dict[str, Any]) -> McpObservation:
    if isinstance(observation, McpObservation):
        return observation
    if isinstance(observation, dict) and ("result" in observation or "error" in observation):
        return McpObservation("envelope", observation)
    return McpObservation(classify(observation), observation)


def result_of(observation: McpObservation | dict[str, Any]) -> dict[str, Any] | None:
    """The ``CallToolResult`` dict of an observation, or ``None`` (error, content blocks, text)."""
    return _as_observation(observation).result


def is_error(observation: McpObservation | dict[str, Any]) -> bool:
    """True for a protocol error or a result with ``isError: true`` (and for forms that carry no result)."""
    obs = _as_observation(observation)
    return obs.is_error is not False


def text_of(observation: McpObservation | dict[str, Any]) -> str:
    """The text blocks of a result joined by newlines (the error message for a protocol error)."""
    obs = _as_observation(observation)
    if obs.form == "envelope" and obs.result is None and obs.error is None:
        return ""
    return "\n".join(obs.texts)


def text_result(request_id: int | str, text: str, is_error: bool = False) -> dict[str, Any]:
    """A response carrying one text block (used by importers and synthetic env errors)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "isError": is_error},
    }


def error_response(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
