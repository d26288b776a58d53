"""Importers of Android agent logs into trajectories.

``androidworld``: AndroidWorld episode logs as JSON — one episode object, a list of them, or JSONL with one
per line. An episode names its goal (``goal``, or ``instruction``/``task_goal``), optionally
``screen_size`` (``[width, height]``) and ``task_template``, and its steps either as a ``steps`` list or
column-wise in ``episode_data`` (a dict of equal-length lists, as AndroidWorld's runner saves them). Per
step:

* the screen the action acted on: ``ui_elements`` (or ``before_element_list``) — a list of UIElement
  dicts as ``dataclasses.asdict`` writes them (``bbox_pixels`` as ``{"x_min", "x_max", "y_min", "y_max"}``);
* the action: an action object, its JSON text, or an agent answer ``Reason: ... Action: {...}``
  (``action``, ``action_output`` or ``converted_action``); an action that does not parse is imported as
  ``{"action_type": "unknown"}`` (AndroidWorld executes nothing for it) with the original text in the turn's
  ``metadata["raw_action"]``;
* optionally the screen after it (``after_ui_elements``/``after_element_list``) and the foreground
  activity (``foreground_activity``/``activity``, ``package/activity``).

A turn's observation is the screen after the action (the step's "after" list, else the next step's
screen), written as AndroidWorld's text agent lists elements: ``UI element <i>: UIElement(...)`` for the
elements its filter keeps (visible, box not empty and not entirely off screen), indices unchanged. A
final action with no screen after it is kept in ``metadata["unobserved_final_action"]``.

``agentworldbench``: AgentWorldBench rows of the android task (``android_test.jsonl``), read with the core
AgentWorldBench reader and this domain's hooks (losslessly).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl, open_text

from . import actions as A
from .codec import ACTION_SPACE
from .prompts import SIMULATION_INSTRUCTION, initial_state_text
from .screens import (
    FOREGROUND_ACTIVITY,
    FOREGROUND_APP,
    SCREEN_SIZE,
    BoundingBox,
    Screen,
    UIElement,
    canonical_screen,
)

_BEFORE = ("ui_elements", "before_element_list", "before_ui_elements")
_AFTER = ("after_ui_elements", "after_element_list")
_ACTION = ("action", "converted_action", "action_output")
_VALUE = (str, bool, int, float, type(None))


def _first(step: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((step[k] for k in keys if step.get(k) is not None), None)


def _element(obj: Any, where: str) -> UIElement:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a UI element must be an object, got {type(obj).__name__}")
    fields: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("bbox", "bbox_pixels") and isinstance(value, dict):
            try:
                value = BoundingBox(*(value[k] for k in ("x_min", "x_max", "y_min", "y_max")))
            except KeyError as exc:
                raise InputError(f"{where}.{key}: missing {exc.args[0]!r}",
                                 hint='a box is {"x_min": .., "x_max": .., "y_min": .., "y_max": ..}') from None
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in
                       (value.x_min, value.x_max, value.y_min, value.y_max)):
                raise InputError(f"{where}.{key}: coordinates must be numbers")
        elif not isinstance(value, _VALUE):
            raise InputError(f"{where}.{key}: unsupported value of type {type(value).__name__}")
        fields[str(key)] = value
    return UIElement(fields)


def _listed(element: UIElement, size: tuple[int, int] | None) -> bool:
    """AndroidWorld's ``validate_ui_element``: visible, and a box that is not empty or entirely off screen."""
    if element.get("is_visible") is False:
        return False
    box = element.bbox_pixels
    if box is None or size is None:
        return True
    w, h = size
    return not (box.x_min >= box.x_max or box.x_min >= w or box.x_max <= 0
                or box.y_min >= box.y_max or box.y_min >= h or box.y_max <= 0)


def _screen_text(raw: Any, where: str, size: tuple[int, int] | None, activity: str | None) -> str:
    if not isinstance(raw, list):
        raise InputError(f"{where}: the UI element list must be a list, got {type(raw).__name__}")
    elements = [(i, e) for i, e in ((i, _element(o, f"{where}[{i}]")) for i, o in enumerate(raw)) if _listed(e, size)]
    header: list[tuple[str, str]] = []
    if activity is not None:
        header += [(FOREGROUND_APP, activity.split("/", 1)[0]), (FOREGROUND_ACTIVITY, activity)]
    if size is not None:
        header.append((SCREEN_SIZE, f"{size[0]}x{size[1]}"))
    return canonical_screen(Screen("elements", header=header, elements=elements))


def _action_text(raw: Any) -> tuple[str, str | None]:
    """(action text, the original when it had to be replaced by ``unknown``)."""
    if isinstance(raw, dict):
        text = json.dumps({k: v for k, v in raw.items() if v is not None}, ensure_ascii=False)
    elif isinstance(raw, str):
        text = A.extract_action_json(raw)
    else:
        text = json.dumps(raw)
    try:
        return A.render_action(A.parse_action(text)), None
    except CodecError:
        original = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return json.dumps({"action_type": A.UNKNOWN}), original


def _steps(episode: dict[str, Any], where: str) -> list[dict[str, Any]]:
    if isinstance(episode.get("steps"), list):
        steps = episode["steps"]
    elif isinstance(episode.get("episode_data"), dict):
        columns = {k: v for k, v in episode["episode_data"].items() if isinstance(v, list)}
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise InputError(f"{where}.episode_data: columns have different lengths {sorted(lengths)}",
                             hint="each column holds one value per step")
        n = lengths.pop() if lengths else 0
        steps = [{k: v[i] for k, v in columns.items()} for i in range(n)]
    else:
        raise InputError(f"{where}: no 'steps' list and no 'episode_data' columns",
                         hint='an episode is {"goal": ..., "steps": [{"ui_elements": [...], "action": {...}}]}')
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise InputError(f"{where}.steps[{i}]: a step must be an object")
    return steps


def episode_to_trajectory(episode: Any, where: str, default_id: str) -> Trajectory:
    """One AndroidWorld episode (see the module docstring) as a trajectory."""
    if not isinstance(episode, dict):
        raise InputError(f"{where}: an episode must be a JSON object, got {type(episode).__name__}")
    goal = next((episode[k] for k in ("goal", "instruction", "task_goal") if isinstance(episode.get(k), str)), "")
    size_raw = episode.get("screen_size") or episode.get("logical_screen_size")
    size = None
    if size_raw is not None:
        if not (isinstance(size_raw, list) and len(size_raw) == 2 and all(isinstance(v, int) for v in size_raw)):
            raise InputError(f"{where}.screen_size: expected [width, height], got {size_raw!r}")
        size = (size_raw[0], size_raw[1])
    steps = _steps(episode, where)
    activities = [_first(s, ("foreground_activity", "activity")) for s in steps]
    keep_activity = bool(steps) and all(isinstance(a, str) and "/" in a for a in activities)
    screens: list[str | None] = []
    afters: list[str | None] = []
    for i, step in enumerate(steps):
        at = f"{where}.steps[{i}]"
        activity = activities[i] if keep_activity else None
        before = _first(step, _BEFORE)
        after = _first(step, _AFTER)
        screens.append(None if before is None else _screen_text(before, f"{at}.ui_elements", size, activity))
        after_activity = _first(step, ("after_foreground_activity",)) if keep_activity else None
        afters.append(None if after is None else _screen_text(after, f"{at}.after_ui_elements", size,
                                                            after_activity or activity))
    if not steps or screens[0] is None:
        raise InputError(f"{where}: the first step has no UI element list", hint="give steps[0].ui_elements")
    turns: list[Turn] = []
    unobserved = None
    for i, step in enumerate(steps):
        raw = _first(step, _ACTION)
        if raw is None:
            raise InputError(f"{where}.steps[{i}]: no action", hint="give 'action' (an AndroidWorld action)")
        action, original = _action_text(raw)
        observation = afters[i] if afters[i] is not None else (screens[i + 1] if i + 1 < len(steps) else None)
        if observation is None:
            unobserved = action
            continue
        meta: dict[str, Any] = {"step": i}
        if original is not None:
            meta["raw_action"] = original
        turns.append(Turn(action=action, observation=observation, metadata=meta))
    first = screens[0]
    size_text = f"{size[0]}x{size[1]}" if size else None
    metadata: dict[str, Any] = {"initial_screen": first}
    if size:
        metadata["screen_size"] = list(size)
    for key in ("task_template", "task_name", "seed", "is_successful"):
        if key in episode:
            metadata[key] = episode[key]
    if unobserved is not None:
        metadata["unobserved_final_action"] = unobserved
    return Trajectory(
        id=str(episode.get("id") or episode.get("episode_id") or default_id),
        domain="android",
        source="androidworld",
        system=SystemPrompt(task_description=goal, action_space=ACTION_SPACE,
                            initial_state=initial_state_text(first, size_text, "elements"),
                            simulation_instruction=SIMULATION_INSTRUCTION),
        turns=turns,
        metadata=metadata,
    )


def load_androidworld(path: Path) -> Iterator[Trajectory]:
    """Trajectories of an AndroidWorld episode file (JSON object, JSON list, or JSONL)."""
    path = Path(path)
    if path.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
        for lineno, obj in iter_jsonl(path):
            yield episode_to_trajectory(obj, f"{path}:{lineno}", f"{path.stem}-{lineno}")
        return
    with open_text(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})",
                             hint="an AndroidWorld log is one JSON episode or a list of them") from None
    episodes = data if isinstance(data, list) else [data]
    for i, episode in enumerate(episodes):
        yield episode_to_trajectory(episode, f"{path}[{i}]" if isinstance(data, list) else str(path),
                                    f"{path.stem}-{i}")


def load_agentworldbench(path: Path) -> Iterator[Trajectory]:
    """The android trajectories of an AgentWorldBench rows file (other tasks' rows are skipped)."""
    from awctl.formats.agentworldbench import read_rows

    from .domain import AndroidDomain

    for trajectory in read_rows(path, {"android": AndroidDomain()}):
        if trajectory.domain == "android":
            yield trajectory


IMPORTERS: tuple[Importer, ...] = (
    Importer("androidworld", "AndroidWorld episode logs (goal, per-step UI element lists and JSON actions)",
             ("*.androidworld.json", "*.androidworld.jsonl", "*.androidworld.jsonl.gz"), load_androidworld),
    Importer("agentworldbench-android", "AgentWorldBench android rows (android_test.jsonl)",
             ("android_test.jsonl", "*.android-awb.jsonl"), load_agentworldbench),
)
