"""Importer for OpenAI-style chat logs with tool calls -> MCP trajectories.

One conversation per trajectory. A file is a JSON object (one conversation), a JSON array of them, or
JSONL (one per line; ``.gz``/``.zst`` too). A conversation looks like::

    {"id": "conv-1",
     "tools": [{"type": "function", "function": {"name": "read_note", "description": "...",
                                                 "parameters": {...JSON Schema...}}}],
     "messages": [
       {"role": "user", "content": "..."},
       {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "read_note", "arguments": "{\\"path\\": \\"a.md\\"}"}}]},
       {"role": "tool", "tool_call_id": "call_1", "content": "hello"}]}

Each answered tool call becomes a turn: the action is the canonical ``tools/call`` request (ids 1, 2, ...
in call order; the log's call id is kept in ``metadata["tool_call_id"]``), the observation the tool
message's content as content blocks (text parts become text blocks, ``image_url`` data-URL parts image
blocks). OpenAI logs have no error flag, so by default the observation is the block list alone -- writing
``"isError": false`` would claim every failed call succeeded. A log that records errors with the
non-standard ``"is_error"`` field on its tool messages (on any of them) gets JSON-RPC responses whose
``isError`` is that flag. The tools become the ``json mcp-tools`` block of the action space
(``parameters`` -> ``inputSchema``). Calls never answered are dropped and counted in
``metadata["unanswered_calls"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl, open_text

from .codec import ACTION_SCHEMA, McpActionCodec, ToolCall, render_tool_list
from .prompts import MCP_SIMULATION_INSTRUCTION

_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.S)
_codec = McpActionCodec()


def _conversations(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, conversation)`` pairs; ``where`` is ``file:line`` for JSONL, ``file[i]`` for JSON arrays."""
    if any(s in (".jsonl",) for s in path.suffixes):
        for lineno, obj in iter_jsonl(path):
            yield f"{path}:{lineno}", obj
        return
    with open_text(path) as handle:
        text = handle.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{exc.lineno}: invalid JSON ({exc.msg})", hint="fix the file or use JSONL"
        ) from None
    items = data if isinstance(data, list) else [data]
    for i, obj in enumerate(items):
        if not isinstance(obj, dict):
            raise InputError(f"{path}[{i}]: expected a conversation object, got {type(obj).__name__}")
        yield (f"{path}[{i}]" if isinstance(data, list) else str(path)), obj


def _tool_entry(raw: Any, where: str) -> dict[str, Any]:
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        fn = raw["function"]
        tool = {
            "name": fn.get("name"),
            "inputSchema": fn.get("parameters") or {"type": "object", "properties": {}},
        }
        if fn.get("description"):
            tool["description"] = fn["description"]
    elif isinstance(raw, dict) and "inputSchema" in raw:  # already an MCP tool
        tool = dict(raw)
    else:
        raise InputError(
            f"{where}: not an OpenAI function tool", hint='use {"type": "function", "function": {...}}'
        )
    if not isinstance(tool.get("name"), str):
        raise InputError(f"{where}: tool needs a string name")
    return tool


def _content_blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise InputError(f"{where}: content must be a string or a list of parts")
    blocks = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            match = _DATA_URL.match(url)
            if not match:
                raise InputError(f"{where}[{i}]: only data: image URLs can become MCP image blocks")
            blocks.append({"type": "image", "data": match.group(2), "mimeType": match.group(1)})
        else:
            raise InputError(
                f"{where}[{i}]: unsupported content part type {kind!r}", hint="use text or image_url"
            )
    return blocks


def conversation_to_trajectory(conv: dict[str, Any], where: str, fallback_id: str) -> Trajectory:
    """One OpenAI chat conversation as an MCP trajectory; errors name ``where`` and the message index."""
    messages = conv.get("messages")
    if not isinstance(messages, list):
        raise InputError(f"{where}: conversation needs a 'messages' list")
    tools = [_tool_entry(t, f"{where}: tools[{i}]") for i, t in enumerate(conv.get("tools") or [])]
    pending: dict[str, tuple[ToolCall, str, str]] = {}
    order: list[str] = []
    turns: list[Turn] = []
    user, agent_system, final = [], [], None
    next_id = 1
    # Only a log that flags errors can say a call succeeded.
    flags_errors = any(isinstance(m, dict) and "is_error" in m for m in messages)
    for m, msg in enumerate(messages):
        here = f"{where}: messages[{m}]"
        if not isinstance(msg, dict):
            raise InputError(f"{here}: expected an object")
        role = msg.get("role")
        if role == "system":
            agent_system.append(str(msg.get("content") or ""))
        elif role == "user":
            user.append(
                msg.get("content") if isinstance(msg.get("content"), str) else json.dumps(msg.get("content"))
            )
        elif role == "assistant":
            text = msg.get("content") if isinstance(msg.get("content"), str) else ""
            calls = msg.get("tool_calls") or []
            if not calls:
                final = text
            for c, call in enumerate(calls):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(call.get("id"), str):
                    raise InputError(
                        f"{here}.tool_calls[{c}]: needs an id and a function {{name, arguments}}"
                    )
                try:
                    parsed = _codec.parse(
                        json.dumps({"name": fn.get("name"), "arguments": fn.get("arguments"), "id": next_id})
                    )
                except CodecError as exc:
                    raise InputError(f"{here}.tool_calls[{c}]: {exc.message}") from None
                next_id += 1
                pending[call["id"]] = (parsed, text if c == 0 else "", call["id"])
                order.append(call["id"])
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                raise InputError(f"{here}: tool_call_id {call_id!r} answers no earlier tool call")
            call, text, _ = pending.pop(call_id)
            order.remove(call_id)
            blocks = _content_blocks(msg.get("content"), f"{here}.content")
            observation: Any = blocks
            if flags_errors:
                result = {"content": blocks, "isError": bool(msg.get("is_error"))}
                observation = {"jsonrpc": "2.0", "id": call.id, "result": result}
            meta: dict[str, Any] = {"tool_call_id": call_id}
            if text:
                meta["assistant_text"] = text
            turns.append(
                Turn(
                    action=_codec.render(call),
                    observation=json.dumps(observation, ensure_ascii=False),
                    metadata=meta,
                )
            )
        else:
            raise InputError(f"{here}: unknown role {role!r}", hint="roles are system, user, assistant, tool")
    metadata: dict[str, Any] = {"format": "openai-chat"}
    if agent_system:
        metadata["agent_system_prompt"] = "\n\n".join(agent_system)
    if final:
        metadata["final_answer"] = final
    if order:
        metadata["unanswered_calls"] = len(order)
    action_space = ACTION_SCHEMA + ("\n\nDeclared tools:\n" + render_tool_list(tools) if tools else "")
    return Trajectory(
        id=str(conv.get("id") or fallback_id),
        domain="mcp",
        source="openai-chat",
        system=SystemPrompt(
            task_description="\n\n".join(u for u in user if u),
            action_space=action_space,
            simulation_instruction=MCP_SIMULATION_INSTRUCTION,
        ),
        turns=turns,
        metadata=metadata,
    )


def load_openai_chat(path: Path) -> Iterator[Trajectory]:
    """Stream trajectories from an OpenAI chat-log file (JSON, JSON array or JSONL)."""
    path = Path(path)
    for n, (where, conv) in enumerate(_conversations(path)):
        yield conversation_to_trajectory(conv, where, f"{path.name.split('.')[0]}-{n}")


OPENAI_CHAT = Importer(
    "openai-chat",
    "OpenAI chat logs with assistant tool_calls and tool messages (+ a tools list) -> MCP trajectories",
    ("*.openai.json", "*.openai.jsonl", "*.openai.jsonl.gz", "*.openai.jsonl.zst"),
    load_openai_chat,
)
