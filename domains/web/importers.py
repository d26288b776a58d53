"""Importer of BrowserGym / WebArena step logs (JSON or JSONL, ``*.browsergym.jsonl`` and friends).

BrowserGym's own per-step pickles are not portable; what agents and harnesses export is one JSON object per
step carrying the fields of BrowserGym's observation dict and the action taken after it::

    {"episode": "webarena.310", "step": 0, "goal": "...", "action": "click('a51')",
     "axtree_txt": "RootWebArea 'Dashboard', focused\\n\\t[a51] link 'Orders'...",
     "url": "http://...", "open_pages_urls": [...], "open_pages_titles": [...], "active_page_index": 0,
     "last_action_error": ""}

The observation fields may also sit under ``"obs"``; ``episode`` may be ``episode_id``, ``task_id`` or
``exp_id`` (consecutive lines with one value form one episode; without any, the file is one episode). A JSON
file may hold a list of steps, ``{"steps": [...]}`` or a list of such episodes. A page given as
``pruned_html``/``dom_txt``/``html`` instead of ``axtree_txt`` is kept as HTML.

Step ``t``'s observation is what the agent saw before its action ``t``, so the first step's observation is
the initial state and turn ``t`` pairs action ``t`` with the observation of step ``t + 1``. Each observation
is written in the web domain's layout (open tabs, the last action's error, the tree) with the tree text
byte for byte; actions are rendered canonically when they parse and kept verbatim otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import CodecError, InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn, iter_jsonl

from .codec import Tab, WebActionCodec, render_block

_ACTIONS = WebActionCodec()
_EPISODE_KEYS = ("episode", "episode_id", "task_id", "exp_id")
_OBS_KEYS = ("axtree_txt", "pruned_html", "dom_txt", "html", "url", "open_pages_urls", "open_pages_titles",
             "active_page_index", "last_action_error", "goal")


def _obs_fields(step: dict[str, Any]) -> dict[str, Any]:
    nested = step.get("obs") if isinstance(step.get("obs"), dict) else {}
    return {k: step[k] if k in step else nested.get(k) for k in _OBS_KEYS}


def step_observation(step: dict[str, Any], where: str = "") -> str:
    """One step's observation in the web domain's layout (raises ``InputError`` naming ``where``)."""
    from .codec import Block

    f = _obs_fields(step)
    parts: list[str] = []
    urls, titles = f["open_pages_urls"], f["open_pages_titles"]
    if isinstance(urls, list) and urls and all(isinstance(u, str) for u in urls):
        titles = titles if isinstance(titles, list) and len(titles) == len(urls) else [""] * len(urls)
        active = f["active_page_index"]
        active = int(active[0] if isinstance(active, list) and active else active or 0)
        tabs = [Tab(i, str(t), u, i == active) for i, (u, t) in enumerate(zip(urls, titles, strict=True))]
        parts.append(render_block(Block("tabs", "", heading="# Open tabs", tabs=tabs)))
    elif isinstance(f["url"], str):
        parts.append(f"URL: {f['url']}")
    error = f["last_action_error"]
    if isinstance(error, str) and error.strip():
        parts.append("# Last action error\n" + error.strip())
    tree = f["axtree_txt"]
    if isinstance(tree, str) and tree.strip():
        parts.append("# Accessibility tree\n" + tree.strip("\n"))
    else:
        page = next((f[k] for k in ("pruned_html", "dom_txt", "html") if isinstance(f[k], str) and f[k].strip()), None)
        if page is None:
            raise InputError(f"{where}: step has no page (axtree_txt, pruned_html, dom_txt or html)",
                             hint="export BrowserGym's obs['axtree_txt'] (flatten_axtree_to_str) with each step")
        parts.append(page.strip("\n"))
    return "\n\n".join(parts)


def _action_text(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return _ACTIONS.canonical(_ACTIONS.parse(value))
    except CodecError:
        return value


def steps_to_trajectory(steps: list[dict[str, Any]], traj_id: str, source: str, where: str) -> Trajectory:
    """A trajectory from one episode's steps (see the module docstring for the pairing)."""
    if not steps:
        raise InputError(f"{where}: episode {traj_id!r} has no steps")
    initial = step_observation(steps[0], f"{where} step 0")
    turns: list[Turn] = []
    for i in range(len(steps) - 1):
        action = _action_text(steps[i].get("action"))
        if action is None:
            break
        meta: dict[str, Any] = {}
        if action != steps[i].get("action"):
            meta["source_action"] = steps[i].get("action")
        turns.append(Turn(action=action, observation=step_observation(steps[i + 1], f"{where} step {i + 1}"),
                          metadata=meta))
    goal = next((str(_obs_fields(s)["goal"]) for s in steps if _obs_fields(s)["goal"]), "")
    from .prompts import SIMULATION_INSTRUCTION

    return Trajectory(
        id=traj_id, domain="web", source=source, tags=["imported", "browsergym"],
        system=SystemPrompt(task_description=goal, action_space=_ACTIONS.schema(), initial_state=initial,
                            simulation_instruction=SIMULATION_INSTRUCTION),
        turns=turns, metadata={"steps": len(steps)})


def _episodes_from_json(data: Any, path: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    if isinstance(data, dict) and isinstance(data.get("steps"), list):
        yield str(next((data[k] for k in _EPISODE_KEYS if k in data), path.stem)), data["steps"]
    elif isinstance(data, list) and all(isinstance(x, dict) and isinstance(x.get("steps"), list) for x in data) and data:
        for i, ep in enumerate(data):
            yield str(next((ep[k] for k in _EPISODE_KEYS if k in ep), f"{path.stem}-{i}")), ep["steps"]
    elif isinstance(data, list) and all(isinstance(x, dict) for x in data):
        yield from _group(data, path)
    else:
        raise InputError(f"{path}: expected a list of steps, {{\"steps\": [...]}} or a list of episodes",
                         hint="see awctl_domains.web.importers for the step log layout")


def _group(steps: list[dict[str, Any]], path: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    current: list[dict[str, Any]] = []
    key: Any = None
    for step in steps:
        k = next((step[e] for e in _EPISODE_KEYS if e in step), None)
        if current and k != key:
            yield str(key if key is not None else path.stem), current
            current = []
        key = k
        current.append(step)
    if current:
        yield str(key if key is not None else path.stem), current


def load_browsergym_steps(path: Path) -> Iterator[Trajectory]:
    """Trajectories of a BrowserGym/WebArena step log (JSON or JSONL)."""
    path = Path(path)
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        episodes = list(_episodes_from_json(data, path))
    else:
        episodes = list(_group([obj for _, obj in iter_jsonl(path)], path))
    seen: dict[str, int] = {}
    for name, steps in episodes:
        seen[name] = seen.get(name, 0) + 1
        traj_id = name if seen[name] == 1 else f"{name}~{seen[name]}"
        yield steps_to_trajectory(steps, traj_id, f"browsergym:{path.name}", str(path))


BROWSERGYM_STEPS = Importer(
    name="browsergym_steps",
    description="BrowserGym / WebArena step logs (JSON/JSONL with axtree_txt, url, open tabs, action per step)",
    patterns=("*.browsergym.jsonl", "*.browsergym.json", "*.webarena.jsonl", "*.webarena.json"),
    load=load_browsergym_steps,
)

IMPORTERS: tuple[Importer, ...] = (BROWSERGYM_STEPS,)
