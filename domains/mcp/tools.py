"""The declared tool list of a trajectory, read from its system prompt in whatever layout the source used.

awctl writes the list as one fenced block whose info string is ``json mcp-tools``::

    ```json mcp-tools
    {"tools": [...]}
    ```

Prompts written elsewhere carry the same facts in other layouts, and :func:`tools_from_text` reads those
too: a fenced JSON block holding ``{"tools": [...]}``, a list of tools or one tool; a ``<tools>`` block
holding a JSON list or one JSON tool per line (the Qwen/Hermes function-calling layout). A tool is an MCP
tool (``name`` + ``inputSchema``), an OpenAI function (``{"type": "function", "function": {"name",
"parameters"}}``) or an Anthropic tool (``name`` + ``input_schema``); all come back as MCP tool dicts.
JSON that is not a tool list (a demonstration's tool call, an example result) is ignored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from awctl.errors import CodecError
from awctl.trajectory import Trajectory

TOOLS_FENCE = "json mcp-tools"
_AWCTL_BLOCK_RE = re.compile(r"```json mcp-tools[ \t]*\n(.*?)\n```", re.S)
_TOOLS_TAG_RE = re.compile(r"<tools>\s*\n?(.*?)\n?\s*</tools>", re.S)


def render_tool_list(tools: list[dict[str, Any]]) -> str:
    """The fenced ``json mcp-tools`` block for a list of MCP tool dicts (as ``tools/list`` returns them)."""
    body = json.dumps({"tools": tools}, ensure_ascii=False, indent=1, sort_keys=True)
    return f"```{TOOLS_FENCE}\n{body}\n```"


def as_mcp_tool(obj: Any) -> dict[str, Any] | None:
    """``obj`` as an MCP tool dict when it is an MCP, OpenAI-function or Anthropic tool; else ``None``."""
    if not isinstance(obj, dict):
        return None
    if obj.get("type") == "function" and isinstance(obj.get("function"), dict):
        fn = obj["function"]
        if not isinstance(fn.get("name"), str):
            return None
        tool = {"name": fn["name"], "inputSchema": fn.get("parameters") or {"type": "object"}}
        if fn.get("description"):
            tool["description"] = fn["description"]
        return tool
    if not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    if isinstance(obj.get("inputSchema"), dict):
        return obj
    if isinstance(obj.get("input_schema"), dict):
        return {**{k: v for k, v in obj.items() if k != "input_schema"}, "inputSchema": obj["input_schema"]}
    return None


def _tools_in(value: Any) -> list[dict[str, Any]] | None:
    """The tools a parsed JSON value declares, or ``None`` when it is not a tool list."""
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    tools = [as_mcp_tool(item) for item in items]
    if any(t is None for t in tools):
        return None
    return tools  # type: ignore[return-value]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(info string, body)`` of every Markdown code fence in ``text``, scanned line by line so that a
    fence in another language never pairs with the next block's opening."""
    blocks: list[tuple[str, str]] = []
    info: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if info is None:
            if stripped.startswith("```"):
                info, body = stripped[3:].strip(), []
        elif stripped == "```":
            blocks.append((info, "\n".join(body)))
            info = None
        else:
            body.append(line)
    return blocks


def _json_lines(body: str) -> list[Any] | None:
    """A ``<tools>`` body as one JSON value per non-blank line (``None`` when a line is not JSON)."""
    values = []
    for line in body.splitlines():
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError:
            return None
    return values


def tools_from_text(text: str) -> list[dict[str, Any]] | None:
    """The tools declared in ``text`` (any layout above, in order, first declaration of a name wins);
    ``None`` when the text declares none.

    Raises ``CodecError`` when awctl's own ``json mcp-tools`` block is present but malformed: silently
    ignoring it would make every schema verifier abstain on data awctl wrote itself.
    """
    match = _AWCTL_BLOCK_RE.search(text)
    if match:
        try:
            obj = json.loads(match.group(1))
        except json.JSONDecodeError as exc:
            raise CodecError(
                f"not valid JSON ({exc.msg})",
                where=f"mcp-tools block line {exc.lineno} column {exc.colno}",
                hint="the block must be one JSON object",
            ) from None
        tools = obj.get("tools") if isinstance(obj, dict) else None
        if not isinstance(tools, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
        ):
            raise CodecError(
                'must be {"tools": [{"name": ..., "inputSchema": ...}, ...]}', where="mcp-tools block"
            )
        return tools
    found: dict[str, dict[str, Any]] = {}
    bodies = [m.group(1) for m in _TOOLS_TAG_RE.finditer(text)]
    bodies += [body for info, body in fenced_blocks(text) if info.lower() in ("", "json", "jsonl")]
    for body in bodies:
        try:
            values: list[Any] | None = [json.loads(body)]
        except json.JSONDecodeError:
            values = _json_lines(body)
        if values is None:
            continue
        for value in values:
            for tool in _tools_in(value) or []:
                found.setdefault(tool["name"], tool)
    return list(found.values()) if found else None


def tools_from_trajectory(trajectory: Trajectory) -> dict[str, dict[str, Any]] | None:
    """Declared tools by name, read from the action space, initial state, raw or extra prompt text."""
    system = trajectory.system
    for text in (system.action_space, system.initial_state, system.raw or "", system.extra):
        tools = tools_from_text(text) if text else None
        if tools is not None:
            return {t["name"]: t for t in tools}
    return None
