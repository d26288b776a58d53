"""Importer for OpenAI-style chat logs of search agents (tool calls to web_search / visit / memory).

Format (one episode per line, JSONL): ``{"id": "...", "messages": [...]}`` where ``messages`` follow the
OpenAI Chat Completions shape — ``system``/``user`` messages, ``assistant`` messages whose ``tool_calls``
items are ``{"id", "type": "function", "function": {"name", "arguments": "<JSON string>"}}``, and ``tool``
messages ``{"role": "tool", "tool_call_id", "content"}`` answering them. The legacy shape (assistant
``function_call`` answered by a ``{"role": "function", "name", "content"}`` message) is read too.

Each tool call becomes one turn: the action is the call rendered canonically by
:class:`SearchActionCodec` (tool and argument aliases such as ``search``/``visit``/``query`` are
accepted), the observation the answering message's content. The first user message becomes the task
description; the agent's own system prompt and any assistant text go to metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl

from .codec import SearchActionCodec
from .prompts import SEARCH_SIMULATION_INSTRUCTION

_CODEC = SearchActionCodec()


def _content(value: Any) -> str:
    """Message content as text: a string, or the text parts of a content-part list joined."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p.get("text", "") for p in value if isinstance(p, dict) and p.get("type") in ("text", None)
        )
    raise TypeError(f"content of type {type(value).__name__}")


def _episode(obj: dict[str, Any], where: str, default_id: str) -> Trajectory:
    messages = obj.get("messages")
    if not isinstance(messages, list):
        raise InputError(f"{where}: missing a 'messages' list", hint='each line is {"messages": [...]}')
    task = ""
    agent_system = ""
    pending: dict[str, tuple[str, int, str]] = {}  # call id -> (action, message index, agent text)
    legacy: list[tuple[str, int, str]] = []
    turns: list[tuple[int, Turn]] = []
    for i, msg in enumerate(messages):
        at = f"{where}: messages[{i}]"
        if not isinstance(msg, dict) or "role" not in msg:
            raise InputError(f"{at}: not a message object with a 'role'")
        role = msg["role"]
        try:
            text = _content(msg.get("content"))
        except TypeError as exc:
            raise InputError(f"{at}: unreadable content ({exc})") from None
        if role == "system":
            agent_system = agent_system or text
        elif role == "user":
            task = task or text
        elif role == "assistant":
            calls = msg.get("tool_calls") or []
            if msg.get("function_call"):
                calls = [{"id": None, "function": msg["function_call"]}]
            for j, call in enumerate(calls):
                try:
                    action = _CODEC.render(_CODEC.parse(json.dumps(call)))
                except CodecError as exc:
                    raise InputError(f"{at}.tool_calls[{j}]: {exc.message}", hint=exc.hint) from None
                if call.get("id") is None:
                    legacy.append((action, i, text))
                else:
                    pending[call["id"]] = (action, i, text)
        elif role in ("tool", "function"):
            call_id = msg.get("tool_call_id")
            if call_id is not None:
                if call_id not in pending:
                    raise InputError(f"{at}: tool_call_id {call_id!r} answers no earlier tool call")
                action, origin, agent_text = pending.pop(call_id)
            elif legacy:
                action, origin, agent_text = legacy.pop(0)
            else:
                raise InputError(f"{at}: a {role} message that answers no earlier call")
            meta = {"agent_text": agent_text} if agent_text else {}
            turns.append((origin, Turn(action=action, observation=text, metadata=meta)))
    if pending or legacy:
        ids = sorted(pending) or ["(function_call)"]
        raise InputError(f"{where}: tool call(s) {ids} never answered", hint="drop the unfinished call")
    return Trajectory(
        id=str(obj.get("id") or default_id),
        domain="search",
        source="openai-chat",
        system=SystemPrompt(
            task_description=task,
            action_space=_CODEC.schema(),
            simulation_instruction=SEARCH_SIMULATION_INSTRUCTION,
        ),
        turns=[t for _, t in turns],
        metadata={"agent_system": agent_system} if agent_system else {},
    )


def load_openai_chat(path: Path) -> Iterator[Trajectory]:
    for lineno, obj in iter_jsonl(path):
        yield _episode(obj, f"{path}:{lineno}", f"{Path(path).stem}-{lineno}")


OPENAI_CHAT = Importer(
    name="search-openai-chat",
    description="OpenAI chat-completion logs of search agents (tool_calls to web_search/visit/memory + tool replies)",
    patterns=("*.search-chat.jsonl", "*.search-chat.jsonl.gz"),
    load=load_openai_chat,
)
