"""Importers of SWE agent logs: SWE-agent ``.traj`` files → unified trajectories.

A SWE-agent trajectory file is one JSON object::

    {"trajectory": [{"action", "observation", "response", "thought", "state", "execution_time", ...}],
     "history": [{"role", "content", "action"?, "tool_calls"?, "message_type", ...}],
     "info": {"exit_status", "submission", "swe_agent_version", "model_stats", ...},
     "replay_config": "...", "environment": "..."}

Each step with a non-empty ``action`` becomes one turn. The action is taken from the matching
assistant message's ``tool_calls`` when there is one (exact arguments), else parsed from SWE-agent's
command-line rendering (``str_replace_editor view /testbed/x.py --view_range 1 20``); any other text is
a bash command and ``submit`` ends the episode. Actions are stored in the domain's canonical JSON; an
action that the codec rejects (a relative path, say) is kept verbatim and marked
``metadata["unparsed_action"]``. SWE-agent bash observations have no exit-code trailer, so the
trajectory is marked ``metadata["bash_observation_format"] = "raw"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .codec import EDITOR_ALIASES, BashCall, SubmitCall, SweAction, SweActionCodec

_CODEC = SweActionCodec()
RAW_BASH_NOTE = (
    "Bash observations in this trajectory are the command's raw output (no exit-code trailer); a command "
    "without output shows \"Your command ran successfully and did not produce any output.\""
)


def _action_from_step(text: str, tool_calls: list[Any] | None) -> SweAction:
    if tool_calls and len(tool_calls) == 1:
        return _CODEC.from_obj(tool_calls[0])
    stripped = text.strip()
    head = stripped.split(None, 1)[0] if stripped else ""
    if head in EDITOR_ALIASES or stripped.startswith(("{", "```")):
        return _CODEC.parse(stripped)
    if stripped == "submit":
        return SubmitCall()
    return BashCall(stripped)


def load_sweagent_traj(path: Path) -> Iterator[Trajectory]:
    """The one trajectory of a SWE-agent ``.traj`` file; errors name the file and the field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})", hint="a .traj file is one JSON object") from None
    if not isinstance(data, dict) or not isinstance(data.get("trajectory"), list):
        raise InputError(f"{path}: missing the `trajectory` list", hint="expected a SWE-agent .traj file")
    history = data.get("history") if isinstance(data.get("history"), list) else []
    calls_by_action: dict[str, list[list[Any]]] = {}
    problem = ""
    agent_system = ""
    for message in history:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "system" and not agent_system:
            agent_system = _content_text(message.get("content"))
        if message.get("role") == "user" and not problem:
            problem = _content_text(message.get("content"))
        if message.get("role") == "assistant" and message.get("tool_calls"):
            calls_by_action.setdefault(str(message.get("action", "")).strip(), []).append(message["tool_calls"])
    turns: list[Turn] = []
    for i, step in enumerate(data["trajectory"]):
        if not isinstance(step, dict):
            raise InputError(f"{path}: trajectory[{i}] is not an object")
        action_text = step.get("action")
        observation = step.get("observation")
        if not isinstance(action_text, str) or not action_text.strip():
            continue  # a text-only step: the agent answered without calling a tool
        if not isinstance(observation, str):
            raise InputError(f"{path}: trajectory[{i}].observation must be a string")
        queue = calls_by_action.get(action_text.strip())
        tool_calls = queue.pop(0) if queue else None
        meta: dict[str, Any] = {"source_action": action_text}
        for key in ("thought", "execution_time"):
            if step.get(key) not in (None, ""):
                meta[key] = step[key]
        try:
            action = _CODEC.render(_action_from_step(action_text, tool_calls))
        except CodecError as exc:
            action = action_text
            meta["unparsed_action"] = str(exc)
        turns.append(Turn(action=action, observation=observation, metadata=meta))
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    system = SystemPrompt(
        task_description=problem,
        action_space=_CODEC.schema(),
        simulation_instruction=_simulation_instruction(),
        extra=RAW_BASH_NOTE,
    )
    yield Trajectory(
        id=f"swe-agent/{Path(path).stem}",
        domain="swe",
        source="swe-agent",
        system=system,
        turns=turns,
        metadata={
            "bash_observation_format": "raw",
            "instance_id": Path(path).stem,
            "exit_status": info.get("exit_status"),
            "swe_agent_version": info.get("swe_agent_version"),
            "agent_system_prompt": agent_system,
        },
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _simulation_instruction() -> str:
    from .prompts import SIMULATION_INSTRUCTION

    return SIMULATION_INSTRUCTION


IMPORTERS: tuple[Importer, ...] = (
    Importer(
        "swe-agent",
        "SWE-agent .traj files (trajectory/history/info JSON) with str_replace_editor, bash and submit",
        ("*.traj",),
        load_sweagent_traj,
    ),
)
