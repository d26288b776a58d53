"""Importers of SWE agent logs: SWE-agent ``.traj`` files → unified trajectories.

A SWE-agent trajectory file is one JSON object in one of two layouts:

* with a ``trajectory`` list (SWE-agent 0.x and 1.x)::

    {"trajectory": [{"action", "observation", "response", "thought", "state", "execution_time", ...}],
     "history": [{"role", "content", "action"?, "tool_calls"?, "message_type"?, "agent"?, ...}],
     "info": {"exit_status", "submission", "swe_agent_version", "model_stats", ...},
     "replay_config": "..." | {...}, "environment": "..."}

  Each step with a non-empty ``action`` becomes one turn whose observation is the step's ``observation``
  (the tool's raw output). ``state`` is a JSON string in 0.x (the session *before* the action) and an
  object in 1.x (the session *after* it); it is kept per turn in ``metadata["state"]``.

* history only (the function-calling demonstrations)::

    {"history": [{"role": "system"|"user"|"assistant"|"tool", "content", "action"?, "tool_calls"?,
                  "tool_call_ids"?, "message_type", "agent"}, ...], "info"?: {...}}

  Each assistant message with an ``action`` becomes one turn; its observation is the next ``tool`` (or
  ``user``) message's content, as the agent saw it — with SWE-agent's state line
  ``(Open file: ...)\\n(Current directory: ...)\\nbash-$`` at the end.

Actions come from the assistant message's ``tool_calls`` when there is one (exact arguments), else from
SWE-agent's command-line rendering: ``str_replace_editor view /x.py --view_range 1 20``, the classic
interface (``open``, ``goto``, ``edit 4:4`` ... ``end_of_edit``, ``find_file``...), ``submit``, and
anything else is a bash command. They are stored in the domain's canonical JSON; an action the codec
rejects (a relative editor path, say) is kept verbatim and marked ``metadata["unparsed_action"]``.

The initial state is the session's first state line (from the first instance message, else from the
first 0.x ``state``), so verifiers can resolve relative paths against the repository root.
``metadata["bash_observation_format"]`` records how bash results look: ``raw`` for ``trajectory`` steps,
``state`` for history observations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .classic import is_command_line, parse_command, split_state
from .codec import EDITOR_ALIASES, BashCall, SubmitCall, SweAction, SweActionCodec

_CODEC = SweActionCodec()
RAW_BASH_NOTE = (
    "Bash observations in this trajectory are the command's raw output (no exit-code trailer); a command "
    "without output shows \"Your command ran successfully and did not produce any output.\""
)
STATE_NOTE = (
    "Every observation in this trajectory ends with SWE-agent's state line: \"(Open file: <path>)\", "
    "\"(Current directory: <dir>)\" and \"bash-$\", each on its own line."
)

SWEAGENT_SCHEMA = """\
The agent works in SWE-agent's shell interface. Each action is one command:
- any bash command line (run in a persistent shell);
- str_replace_editor <view|create|str_replace|insert|undo_edit> <path> [--view_range A B] [--old_str S]
  [--new_str S] [--insert_line N] [--file_text S] (the file editor tool);
- the file viewer: open "<path>" [<line_number>], goto <line_number>, scroll_up, scroll_down, create <filename>
  (each prints a window "[File: <path> (<N> lines total)]", "(K more lines above)", numbered "n:text" lines,
  "(M more lines below)");
- edits of the open file: edit <start_line>:<end_line> followed by the replacement lines and a line
  end_of_edit; or edit <search> <replace> [<replace-all>]; insert <text> [--line <line>];
- searches: find_file <file_name> [<dir>], search_dir <search_term> [<dir>], search_file <search_term> [<file>];
- submit (the observation is the repository diff).
Canonically each action is stored as JSON, e.g. {"tool": "open", "path": "src/x.py", "line_number": 40} or
{"tool": "bash", "command": "ls"}."""


def _action_from_step(text: str, tool_calls: list[Any] | None) -> SweAction:
    if tool_calls and len(tool_calls) == 1:
        return _CODEC.from_obj(tool_calls[0])
    stripped = text.strip()
    head = stripped.split(None, 1)[0] if stripped else ""
    if head in EDITOR_ALIASES or stripped.startswith(("{", "```")):
        return _CODEC.parse(stripped)
    if stripped == "submit":
        return SubmitCall()
    if is_command_line(stripped):
        return parse_command(stripped)
    return BashCall(stripped)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: byte {exc.start}: not UTF-8 text", hint="a .traj file is one UTF-8 JSON object"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})", hint="a .traj file is one JSON object") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(data).__name__}", hint="expected a SWE-agent .traj file")
    return data


def _state_dict(state: Any) -> dict[str, Any] | None:
    if isinstance(state, str):
        try:
            state = json.loads(state)
        except json.JSONDecodeError:
            return None
    return state if isinstance(state, dict) else None


def _state_line(state: dict[str, Any]) -> str:
    return f"(Open file: {state.get('open_file') or 'n/a'})\n(Current directory: {state.get('working_dir')})\nbash-$"


def _is_demo(message: dict[str, Any]) -> bool:
    return bool(message.get("is_demo")) or message.get("message_type") == "demonstration"


def _make_turn(action_text: str, observation: str, tool_calls: list[Any] | None, meta: dict[str, Any]) -> Turn:
    meta = {"source_action": action_text, **meta}
    try:
        action = _CODEC.render_canonical(_action_from_step(action_text, tool_calls))
    except CodecError as exc:
        action = action_text
        meta["unparsed_action"] = str(exc)
    return Turn(action=action, observation=observation, metadata=meta)


def _turns_from_steps(path: Path, steps: list[Any], history: list[Any]) -> list[Turn]:
    calls_by_action: dict[str, list[list[Any]]] = {}
    for message in history:
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("tool_calls"):
            calls_by_action.setdefault(str(message.get("action", "")).strip(), []).append(message["tool_calls"])
    turns: list[Turn] = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise InputError(f"{path}: trajectory[{i}] is not an object")
        action_text = step.get("action")
        observation = step.get("observation")
        if not isinstance(action_text, str) or not action_text.strip():
            continue  # a text-only step: the agent answered without calling a tool
        if not isinstance(observation, str):
            raise InputError(f"{path}: trajectory[{i}].observation must be a string")
        queue = calls_by_action.get(action_text.strip())
        meta: dict[str, Any] = {}
        for key in ("thought", "execution_time"):
            if step.get(key) not in (None, ""):
                meta[key] = step[key]
        state = _state_dict(step.get("state"))
        if state is not None:
            # 0.x stores the state as a JSON string, taken before the action; 1.x as an object, after it.
            meta["state"] = state
            meta["state_when"] = "before" if isinstance(step.get("state"), str) else "after"
        turns.append(_make_turn(action_text, observation, queue.pop(0) if queue else None, meta))
    return turns


def _turns_from_history(path: Path, history: list[Any]) -> list[Turn]:
    turns: list[Turn] = []
    pending: tuple[str, list[Any] | None, dict[str, Any]] | None = None
    for i, message in enumerate(history):
        if not isinstance(message, dict):
            raise InputError(f"{path}: history[{i}] is not an object")
        if _is_demo(message):
            continue
        role = message.get("role")
        if role == "assistant":
            action_text = message.get("action")
            if isinstance(action_text, str) and action_text.strip():
                meta = {"thought": message["thought"]} if message.get("thought") else {}
                pending = (action_text, message.get("tool_calls"), meta)
            continue
        if role in ("tool", "user") and pending is not None:
            content = _content_text(message.get("content"))
            if message.get("content") is not None and not isinstance(message.get("content"), str | list):
                raise InputError(f"{path}: history[{i}].content must be a string or a list of content blocks")
            turns.append(_make_turn(pending[0], content, pending[1], pending[2]))
            pending = None
    return turns


def _first_messages(history: list[Any]) -> tuple[str, str]:
    """The agent's system prompt and the instance message (the first non-demonstration user message)."""
    system = problem = ""
    for message in history:
        if not isinstance(message, dict) or _is_demo(message):
            continue
        if message.get("role") == "system" and not system:
            system = _content_text(message.get("content"))
        if message.get("role") == "user" and not problem:
            text = _content_text(message.get("content"))
            if not text.startswith("Here is a demonstration"):
                problem = text
    return system, problem


def load_sweagent_traj(path: Path) -> Iterator[Trajectory]:
    """The one trajectory of a SWE-agent ``.traj`` file (either layout); errors name the file and the field."""
    data = _read(path)
    history = data.get("history")
    steps = data.get("trajectory")
    if steps is not None and not isinstance(steps, list):
        raise InputError(f"{path}: `trajectory` must be a list", hint="expected a SWE-agent .traj file")
    if history is not None and not isinstance(history, list):
        raise InputError(f"{path}: `history` must be a list", hint="expected a SWE-agent .traj file")
    if steps is None and history is None:
        raise InputError(
            f"{path}: missing the `trajectory` list and the `history` list",
            hint="expected a SWE-agent .traj file (either layout has one of them)",
        )
    history = history or []
    agent_system, instance = _first_messages(history)
    if steps is not None:
        turns = _turns_from_steps(path, steps, history)
        bash_format, note = "raw", RAW_BASH_NOTE
    else:
        turns = _turns_from_history(path, history)
        bash_format, note = "state", STATE_NOTE
    problem, state = split_state(instance)
    initial = ""
    if state is not None:
        initial = instance[len(problem) :].strip("\n")
    elif turns and turns[0].metadata.get("state_when") == "before":
        initial = _state_line(turns[0].metadata["state"])
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    system = SystemPrompt(
        task_description=problem.strip("\n"),
        action_space=SWEAGENT_SCHEMA,
        initial_state=initial,
        simulation_instruction=_simulation_instruction(),
        extra=note,
    )
    yield Trajectory(
        id=f"swe-agent/{Path(path).stem}",
        domain="swe",
        source="swe-agent",
        system=system,
        turns=turns,
        metadata={
            "bash_observation_format": bash_format,
            "traj_layout": "trajectory" if steps is not None else "history",
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
        "SWE-agent .traj files (a trajectory list, or history-only with tool calls): str_replace_editor, bash, "
        "the classic interface (open, goto, edit, find_file, ...) and submit",
        ("*.traj",),
        load_sweagent_traj,
    ),
)
