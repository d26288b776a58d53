"""Importers of desktop-agent logs.

**osworld** — OSWorld result directories (``results/<action space>/<observation>/<model>/<domain>/<example>/``):
``traj.jsonl`` holds one line per executed action, ``{"step_num", "action_timestamp", "action", "response"?,
"reward", "done", "info", "screenshot_file"}``, where ``action`` is pyautogui code, ``WAIT``/``DONE``/``FAIL``
or a computer_13 dict. The accessibility tree after each step is read from a file beside the screenshot
with the same stem (``step_3_20240101@120000.xml``, ``.txt``, ``_a11y.xml``, ``_a11y_tree.txt``...) — runs
that keep trees save them so — and the tree before the first step from ``step_0*``/``initial*`` files.
Lines of one step that share a screenshot (several actions of one response) become one turn. The
instruction comes from a task file beside the log (``task.json``/``example.json``/``config.json``, key
``instruction``) and the screen size from an ``args.json`` up the tree (``screen_width``/``screen_height``).
A path may be a ``traj.jsonl``, an example directory, or any directory above them.

**agentworldbench-os** — AgentWorldBench rows (``task`` ``os``) of a JSONL file (``*.awb-os.jsonl``, or any
file with ``--from agentworldbench-os``), read by the lossless core converter; rows of other domains are
skipped. Plain ``.jsonl`` files of AgentWorldBench rows are read by the core for every domain anyway.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl

from .a11y import parse_observation
from .actions import parse_action

TREE_SUFFIXES = (".xml", ".a11y.xml", "_a11y.xml", "_a11y_tree.xml", ".txt", ".a11y.txt", "_a11y.txt",
                 "_a11y_tree.txt", ".a11y_tree.txt")
TASK_FILES = ("task.json", "example.json", "config.json", "task_config.json")


def _action_text(action: Any, where: str) -> str:
    if isinstance(action, str):
        return action
    if isinstance(action, dict):
        return json.dumps(action, ensure_ascii=False)
    raise InputError(f"{where}: field 'action' must be a string or an object, got {type(action).__name__}",
                     hint="OSWorld logs actions as pyautogui code, WAIT/DONE/FAIL, or computer_13 objects")


def _tree_file(directory: Path, stem: str) -> Path | None:
    for suffix in TREE_SUFFIXES:
        candidate = directory / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _read_tree(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" or text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("AT"), str):
            text = obj["AT"]  # the server's own answer, saved as is
    try:
        parse_observation(text)
    except CodecError as exc:
        raise InputError(f"{path}: not an accessibility tree: {exc.message}",
                         hint="tree files hold OSWorld's XML (<desktop-frame ...>) or its linearized table") from None
    return text


def _initial_tree(directory: Path) -> str | None:
    for pattern in ("step_0_*", "step_0.*", "initial*", "step_0*"):
        for candidate in sorted(directory.glob(pattern)):
            if candidate.suffix in (".xml", ".txt", ".json") and candidate.is_file():
                return _read_tree(candidate)
    return None


def _instruction(directory: Path) -> str:
    for name in TASK_FILES:
        path = directory / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
            if isinstance(data, dict) and isinstance(data.get("instruction"), str):
                return data["instruction"]
    return ""


def _screen(directory: Path) -> tuple[int, int] | None:
    for parent in [directory, *directory.parents]:
        path = parent / "args.json"
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                return None
            w, h = data.get("screen_width"), data.get("screen_height")
            if isinstance(w, int) and isinstance(h, int):
                return w, h
            return None
    return None


def load_osworld_log(traj: Path) -> Trajectory:
    """One OSWorld example directory's ``traj.jsonl`` as a trajectory (see the module docstring)."""
    directory = traj.parent
    steps: list[tuple[str, list[str], list[str], dict[str, Any]]] = []  # (stem, actions, responses, meta)
    for lineno, obj in iter_jsonl(traj):
        where = f"{traj}:{lineno}"
        if "action" not in obj:
            raise InputError(f"{where}: missing field 'action'", hint="an OSWorld traj.jsonl line has an 'action'")
        text = _action_text(obj["action"], where)
        try:
            parse_action(text)
        except CodecError as exc:
            raise InputError(f"{where}: field 'action': {exc.message}", hint=exc.hint) from None
        shot = obj.get("screenshot_file")
        stem = Path(shot).stem if isinstance(shot, str) and shot else f"step_{obj.get('step_num')}_{obj.get('action_timestamp')}"
        meta = {k: obj[k] for k in ("step_num", "action_timestamp", "reward", "done") if k in obj}
        if steps and steps[-1][0] == stem:
            steps[-1][1].append(text)
            if isinstance(obj.get("response"), str):
                steps[-1][2].append(obj["response"])
            continue
        steps.append((stem, [text], [obj["response"]] if isinstance(obj.get("response"), str) else [], meta))
    if not steps:
        raise InputError(f"{traj}: no steps", hint="traj.jsonl has one JSON line per executed action")
    turns = []
    for stem, actions, responses, meta in steps:
        tree_path = _tree_file(directory, stem)
        if tree_path is None:
            raise InputError(
                f"{traj}: step {meta.get('step_num', '?')}: no accessibility tree file for {stem!r} in {directory}",
                hint=f"save the tree after each step as {stem}.xml (or one of: {', '.join(TREE_SUFFIXES)})",
            )
        turn_meta: dict[str, Any] = {**meta, "tree_file": tree_path.name}
        if responses:
            turn_meta["agent_response"] = "\n\n".join(dict.fromkeys(responses))
        turns.append(Turn(action=_join_actions(actions), observation=_read_tree(tree_path), metadata=turn_meta))
    start = _initial_tree(directory)
    screen = _screen(directory)
    state = []
    if screen:
        state.append(f"An Ubuntu desktop with a {screen[0]}x{screen[1]} screen (OSWorld).")
    if start is not None:
        fence = "xml" if start.lstrip().startswith("<") else ""
        state.append(f"The accessibility tree shows:\n```{fence}\n{start}\n```")
    result = directory / "result.txt"
    metadata: dict[str, Any] = {"example": directory.name, "log": str(traj)}
    if result.is_file():
        metadata["result"] = result.read_text(encoding="utf-8").strip()
    from .codec import OsActionCodec

    return Trajectory(
        id=f"osworld-{directory.parent.name}-{directory.name}",
        domain="os",
        source="osworld",
        tags=["real", "osworld"],
        system=SystemPrompt(task_description=_instruction(directory), action_space=OsActionCodec().schema(),
                            initial_state="\n".join(state)),
        turns=turns,
        metadata=metadata,
    )


def _join_actions(actions: list[str]) -> str:
    if len(actions) == 1:
        return actions[0]
    # Several actions of one response: one fenced block each, as the agents wrote them.
    blocks = []
    for a in actions:
        stripped = a.strip()
        if stripped.startswith("```"):
            blocks.append(stripped)
        else:
            lang = "json" if stripped.startswith("{") else "python"
            blocks.append(f"```{lang}\n{stripped}\n```")
    return "\n".join(blocks)


def load_osworld(path: Path) -> Iterator[Trajectory]:
    """Every OSWorld example under ``path`` (a traj.jsonl, an example directory or a directory above)."""
    path = Path(path)
    if path.is_file():
        yield load_osworld_log(path)
        return
    if not path.is_dir():
        raise InputError(f"{path}: no such file or directory")
    logs = sorted(path.rglob("traj.jsonl"))
    if not logs:
        raise InputError(f"{path}: no traj.jsonl below this directory", hint="point at an OSWorld results directory")
    for log in logs:
        yield load_osworld_log(log)


def load_awb_os(path: Path) -> Iterator[Trajectory]:
    """The os trajectories of an AgentWorldBench JSONL file (other domains' rows are skipped)."""
    from awctl.formats.agentworldbench import read_rows

    for traj in read_rows(path):
        if traj.domain == "os":
            yield traj


IMPORTERS: tuple[Importer, ...] = (
    Importer("osworld", "OSWorld result directories: traj.jsonl plus the accessibility tree saved per step",
             ("traj.jsonl",), load_osworld),
    # Plain JSONL (AgentWorldBench rows included) goes to the core's reader; this importer takes only *.awb-os.jsonl.
    Importer("agentworldbench-os", "AgentWorldBench rows of task os only (lossless core converter)",
             ("*.awb-os.jsonl",), load_awb_os),
)
