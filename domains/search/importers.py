"""Importers of search-agent logs: OpenAI-style chat logs, and the Qwen web agents' ReAct run results.

OpenAI chat logs (``*.search-chat.jsonl``)
------------------------------------------

Format (one episode per line, JSONL): ``{"id": "...", "messages": [...]}`` where ``messages`` follow the
OpenAI Chat Completions shape — ``system``/``user`` messages, ``assistant`` messages whose ``tool_calls``
items are ``{"id", "type": "function", "function": {"name", "arguments": "<JSON string>"}}``, and ``tool``
messages ``{"role": "tool", "tool_call_id", "content"}`` answering them. The legacy shape (assistant
``function_call`` answered by a ``{"role": "function", "name", "content"}`` message) is read too.

Each tool call becomes one turn: the action is the call rendered canonically by
:class:`SearchActionCodec` (tool and argument aliases such as ``search``/``visit``/``query`` are
accepted), the observation the answering message's content. The first user message becomes the task
description; the agent's own system prompt and any assistant text go to metadata. The action space is the
tool list the log declares (the request's ``tools``, as JSON function schemas) or, for a log that declares
none, the tool list of the one layout its tool outputs are written in (awctl's where they show none).

Qwen web-agent run results (``*.qwen-agent.jsonl``)
---------------------------------------------------
What the Qwen web agents' ReAct loop (Tongyi DeepResearch, WebSailor, WebDancer) writes per question, one
JSON object per line: ``{"question", "answer", "messages", "prediction", "termination"}``. ``messages`` is
the raw dialogue: a ``system`` message declaring the tools inside ``<tools></tools>`` (one JSON function
schema per line), the ``user`` question, then ``assistant`` messages whose content ends with
``<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>``, each answered by a ``user`` message
``<tool_response>\n<tool output>\n</tool_response>``, and a final assistant message with ``<answer>``.
Each answered tool call of a search-domain tool becomes a turn (action: the call rendered canonically;
observation: the text inside ``<tool_response>``, byte for byte); calls of other tools (a Python
interpreter, a scholar search) are left out and listed in ``metadata["skipped_tool_calls"]``. The task
description is the question, the action space the ``<tools>`` block as declared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl

from .codec import SearchActionCodec, SearchObservationCodec
from .observations import layouts_of
from .prompts import simulation_instruction_for
from .toolsets import tool_set

_CODEC = SearchActionCodec()
_OBS = SearchObservationCodec()


def _layout_of_outputs(texts: list[str]) -> str:
    """The one layout the tool outputs are written in; awctl's when they show none or several."""
    common: frozenset[str] | None = None
    for text in texts:
        try:
            lay = layouts_of(_OBS.parse(text))
        except Exception:  # an unparseable output says nothing about the layout
            continue
        if lay is not None:
            common = lay if common is None else common & lay
    if common and len(common) == 1:
        return next(iter(common))
    return "awctl"


def _declared_tools(tools: Any, where: str) -> str:
    """An OpenAI request's ``tools`` as one JSON function schema per line."""
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise InputError(
            f"{where}: 'tools' must be a list of tool objects", hint='e.g. [{"type": "function", ...}]'
        )
    return "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)


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
                    action = _CODEC.canonical(json.dumps(call))
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
    ordered = [t for _, t in turns]
    # Where the action space comes from (verifiers trust it only when the log declared it or its outputs
    # showed the layout); chat imports without this key predate tool lists and declared awctl's schema.
    tool_list = "declared" if "tools" in obj else "inferred from the tool outputs"
    if "tools" in obj:
        action_space = _declared_tools(obj["tools"], where)
        declared = tool_set(SystemPrompt(action_space=action_space))
        layout = declared.layout or _layout_of_outputs([t.observation for t in ordered])
    else:
        layout = _layout_of_outputs([t.observation for t in ordered])
        action_space = _CODEC.schema_for(layout)
    return Trajectory(
        id=str(obj.get("id") or default_id),
        domain="search",
        source="openai-chat",
        system=SystemPrompt(
            task_description=task,
            action_space=action_space,
            simulation_instruction=simulation_instruction_for(layout),
        ),
        turns=ordered,
        metadata={"tool_list": tool_list, **({"agent_system": agent_system} if agent_system else {})},
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


# ── Qwen web-agent run results ───────────────────────────────────────────────────────────────────────

_TOOLS_BLOCK = re.compile(r"<tools>\n(.*?)\n</tools>", re.S)  # not the prose "<tools></tools> XML tags"
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_RESPONSE_OPEN, _RESPONSE_CLOSE = "<tool_response>", "</tool_response>"


def _tool_response(text: str) -> str | None:
    """The tool output inside a ``<tool_response>`` message (one newline after/before the tags dropped)."""
    if not (text.startswith(_RESPONSE_OPEN) and text.rstrip().endswith(_RESPONSE_CLOSE)):
        return None
    inner = text.rstrip()[len(_RESPONSE_OPEN) : -len(_RESPONSE_CLOSE)]
    inner = inner[1:] if inner.startswith("\n") else inner
    return inner[:-1] if inner.endswith("\n") else inner


def _react_episode(obj: dict[str, Any], where: str, default_id: str) -> Trajectory:
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InputError(
            f"{where}: missing a non-empty 'messages' list", hint="a ReAct run result has 'messages'"
        )
    agent_system, question = "", obj.get("question") if isinstance(obj.get("question"), str) else None
    turns: list[Turn] = []
    skipped: list[dict[str, Any]] = []
    pending: tuple[str | None, int, str] | None = None  # (action or None when skipped, message, agent text)
    for i, msg in enumerate(messages):
        at = f"{where}: messages[{i}]"
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str):
            raise InputError(f"{at}: not a message with a string 'content'")
        role, text = msg.get("role"), msg["content"]
        if role == "system":
            agent_system = agent_system or text
        elif role == "assistant":
            if pending is not None:
                raise InputError(
                    f"{at}: a new assistant message before messages[{pending[1]}]'s tool call was answered"
                )
            call = _TOOL_CALL.search(text)
            if call is None:
                continue  # thinking or the final answer
            try:
                body = json.loads(call.group(1))
                name = body.get("name") if isinstance(body, dict) else None
            except json.JSONDecodeError as exc:
                raise InputError(f"{at}: <tool_call> is not JSON ({exc.msg})") from None
            try:
                action: str | None = _CODEC.canonical(call.group(1))
            except CodecError as exc:
                if isinstance(name, str) and "unknown tool" in exc.message:
                    action = None  # another tool of the agent (code, scholar...): not a search-domain turn
                    skipped.append({"message": i, "tool": name})
                else:
                    raise InputError(f"{at}: <tool_call>: {exc.message}", hint=exc.hint) from None
            pending = (action, i, text[: call.start()].strip())
        elif role == "user":
            output = _tool_response(text)
            if output is None:
                question = question if question is not None else text
                continue
            if pending is None:
                raise InputError(f"{at}: a <tool_response> that answers no earlier <tool_call>")
            action, _, agent_text = pending
            pending = None
            if action is not None:
                meta = {"agent_text": agent_text} if agent_text else {}
                turns.append(Turn(action=action, observation=output, metadata=meta))
        else:
            raise InputError(
                f"{at}: unexpected role {role!r}", hint="ReAct messages are system, user or assistant"
            )
    tools = _TOOLS_BLOCK.search(agent_system)
    action_space = tools.group(1) if tools else ""
    layout = tool_set(SystemPrompt(action_space=action_space)).layout or _layout_of_outputs(
        [t.observation for t in turns]
    )
    meta: dict[str, Any] = {"agent_system": agent_system} if agent_system else {}
    meta.update({k: obj[k] for k in ("answer", "prediction", "termination") if k in obj})
    if skipped:
        meta["skipped_tool_calls"] = skipped
    return Trajectory(
        id=str(obj.get("id") or default_id),
        domain="search",
        source="qwen-agent",
        system=SystemPrompt(
            task_description=question or "",
            action_space=action_space,
            simulation_instruction=simulation_instruction_for(layout),
        ),
        turns=turns,
        metadata=meta,
    )


def load_qwen_agent_log(path: Path) -> Iterator[Trajectory]:
    for lineno, obj in iter_jsonl(path):
        yield _react_episode(obj, f"{path}:{lineno}", f"{Path(path).stem}-{lineno}")


QWEN_AGENT_LOG = Importer(
    name="search-qwen-agent",
    description="run results of the Qwen web agents' ReAct loop (Tongyi DeepResearch, WebSailor): <tool_call> / "
    "<tool_response> messages",
    patterns=("*.qwen-agent.jsonl", "*.qwen-agent.jsonl.gz"),
    load=load_qwen_agent_log,
)
