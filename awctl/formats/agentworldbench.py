"""AgentWorldBench (AWB) rows ⇄ awctl trajectories, losslessly.

An AWB row is one evaluated turn of one trajectory::

    {"task": "terminal", "id": "...", "prompt": [...], "response": [...], "current_prompt": "...",
     "system_str": "...", "turn_idx": 3, "total_turns": 5, ...extra keys}

``prompt[j]`` is ``### Turn j+1\\n`` + optional ``**Header:**`` sections + ``**Action:**\\n`` + the action;
``response[j]`` is ``**Environment Observation:**\\n`` + the observation. ``prompt``/``response`` may be
plain strings (the official eval wraps them into one-element lists).

Reading (:func:`read_rows` / :class:`RowGrouper`) groups the rows of one trajectory: rows join a group
when ``task`` and ``system_str`` are equal, their ``prompt`` and ``response`` lists are prefixes of the
group's (or the other way round) and their ``turn_idx`` is not already in the group. Rows of one
trajectory are usually adjacent; non-adjacent rows are still grouped as long as fewer than
``max_open`` other trajectories start in between (memory stays bounded by ``max_open`` trajectories).
Trajectories come out in the order of their first row.

Losslessness rule: :func:`trajectory_to_rows` of a trajectory read from AWB reproduces every row exactly
(same keys in the same order, same values, string-vs-list form, whitespace). Turn texts are decoded with
the domain's ``from_awb_*`` hooks; wherever re-rendering would not give the original string back, the
original is kept verbatim in ``turn.metadata["awb_prompt"]`` / ``["awb_response"]``. Per-row data lives
in ``trajectory.metadata["agentworldbench"]``. See docs/formats.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awctl.domain import Domain
from awctl.errors import InputError
from awctl.formats.sections import parse_sections
from awctl.trajectory import Trajectory, Turn, iter_jsonl, write_jsonl

SOURCE = "agentworldbench"
META_KEY = "agentworldbench"
# Rows written from an awctl trajectory carry what the AWB fields cannot (id, source, tags, split,
# metadata, sections, per-turn reasoning/metadata) under this extra key; official tools ignore it.
AWCTL_KEY = "awctl"
DOMAINS: tuple[str, ...] = ("mcp", "search", "terminal", "swe", "android", "web", "os")
OBSERVATION_MARKER = "**Environment Observation:**"
ACTION_MARKER = "**Action:**\n"
# Keys whose values are rebuilt from the group or the turns rather than stored per row.
_DERIVED_KEYS = ("task", "prompt", "response", "system_str", "current_prompt")
_TURN_SUFFIX = re.compile(r"[_\-.]turn[_\-]?\d+$", re.IGNORECASE)


def subtask(task: str) -> str:
    """The domain name of an AWB ``task`` (``"something/terminal"`` → ``"terminal"``), as eval.py does."""
    return task.split("/")[-1] if "/" in task else task


# ── domain hooks (a missing domain, or a failing hook, means identity) ─────────────────────────────────────────────────────


def _hook(domain: Domain | None, name: str, text: str) -> str:
    if domain is None:
        return text
    try:
        out = getattr(domain, name)(text)
    except Exception:  # a failing hook means "no opinion": the verbatim copy keeps the round trip exact
        return text
    return out if isinstance(out, str) else text


@dataclass
class TurnCodec:
    """Decodes and renders AWB prompt/response strings for one domain (``None`` = identity hooks)."""

    domain: Domain | None = None

    def decode_prompt(self, text: str, index: int) -> tuple[str, str]:
        """``(before_action, action)`` of a prompt string; ``before_action`` is the header sections text."""
        header = f"### Turn {index + 1}\n"
        body_start = len(header) if text.startswith(header) else 0
        pos = text.find(ACTION_MARKER, body_start)
        if pos < 0:
            return "", text
        before = text[body_start:pos]
        return before, _hook(self.domain, "from_awb_action", text[pos + len(ACTION_MARKER) :])

    def render_prompt(self, action: str, index: int, before_action: str = "") -> str:
        body = _hook(self.domain, "to_awb_action", action)
        return f"### Turn {index + 1}\n{before_action}{ACTION_MARKER}{body}"

    def decode_response(self, text: str) -> str:
        if text.startswith(OBSERVATION_MARKER + "\n"):
            return _hook(self.domain, "from_awb_observation", text[len(OBSERVATION_MARKER) + 1 :])
        return text

    def render_response(self, observation: str) -> str:
        return f"{OBSERVATION_MARKER}\n{_hook(self.domain, 'to_awb_observation', observation)}"

    # ── the texts a trajectory's turn stands for (verbatim copies win while the turn is unedited) ──
    def prompt_text(self, turn: Turn, index: int) -> str:
        original = turn.metadata.get("awb_prompt")
        if isinstance(original, str) and self.decode_prompt(original, index)[1] == turn.action:
            return original
        before = turn.metadata.get("awb_before_action", "")
        return self.render_prompt(turn.action, index, before if isinstance(before, str) else "")

    def response_text(self, turn: Turn) -> str:
        original = turn.metadata.get("awb_response")
        if isinstance(original, str) and self.decode_response(original) == turn.observation:
            return original
        return self.render_response(turn.observation)

    def turn_from(self, prompt: str | None, response: str | None, index: int) -> Turn:
        """A turn for the AWB strings at ``index`` (``None`` = absent from every row's list)."""
        meta: dict[str, Any] = {}
        action = observation = ""
        if prompt is not None:
            before, action = self.decode_prompt(prompt, index)
            if before:
                meta["awb_before_action"] = before
            if self.render_prompt(action, index, before) != prompt:
                meta["awb_prompt"] = prompt
        if response is not None:
            observation = self.decode_response(response)
            if self.render_response(observation) != response:
                meta["awb_response"] = response
        return Turn(action=action, observation=observation, metadata=meta)


def codec_for(domain_name: str, domains: Mapping[str, Domain]) -> TurnCodec:
    return TurnCodec(domains.get(domain_name))


# ── rows → trajectories ──────────────────────────────────────────────────────────────────────────────


def _as_list(value: Any, key: str, where: str) -> tuple[list[str], bool]:
    """``(items, was_string)``; raises naming the field when the value is neither a string nor strings."""
    if isinstance(value, str):
        return [value], True
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value), False
    raise InputError(
        f"{where}: field {key!r} must be a string or a list of strings, got {type(value).__name__}",
        hint="AgentWorldBench rows hold the turn texts as strings",
    )


def _is_prefix_compatible(a: list[str], b: list[str]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _default_current_prompt(prompts: list[str], turn_idx: Any) -> str:
    # eval.py: turn_idx = max(job.get("turn_idx", 1) - 1, 0); current = prompts[turn_idx] when in range.
    if not isinstance(turn_idx, int) or isinstance(turn_idx, bool):
        return ""
    t = max(turn_idx - 1, 0)
    return prompts[t] if t < len(prompts) else ""


@dataclass
class _Row:
    where: str
    line: int | None
    keys: list[str]
    fields: dict[str, Any]
    prompts: list[str]
    responses: list[str]
    prompt_is_str: bool
    response_is_str: bool
    current_prompt: Any
    has_current_prompt: bool

    @property
    def turn_idx(self) -> Any:
        return self.fields.get("turn_idx")


def parse_row(obj: dict[str, Any], where: str = "", line: int | None = None) -> _Row:
    """Validate one AWB row; errors name ``where`` and the field."""
    task = obj.get("task")
    if not isinstance(task, str) or not task:
        raise InputError(
            f"{where}: field 'task' must be a non-empty string, got {task!r}",
            hint="AgentWorldBench rows name their domain in 'task', e.g. \"terminal\"",
        )
    system = obj.get("system_str", "")
    if not isinstance(system, str):
        raise InputError(f"{where}: field 'system_str' must be a string, got {type(system).__name__}")
    prompts, p_str = _as_list(obj.get("prompt", []), "prompt", where)
    responses, r_str = _as_list(obj.get("response", []), "response", where)
    return _Row(
        where=where,
        line=line,
        keys=list(obj),
        fields={k: v for k, v in obj.items() if k not in _DERIVED_KEYS},
        prompts=prompts,
        responses=responses,
        prompt_is_str=p_str,
        response_is_str=r_str,
        current_prompt=obj.get("current_prompt"),
        has_current_prompt="current_prompt" in obj,
    )


@dataclass
class _Group:
    task: str
    system: str
    rows: list[_Row] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)

    def accepts(self, row: _Row, task: str, system: str) -> bool:
        if task != self.task or system != self.system:
            return False
        if row.turn_idx is not None and any(r.turn_idx == row.turn_idx for r in self.rows):
            return False
        return _is_prefix_compatible(row.prompts, self.prompts) and _is_prefix_compatible(
            row.responses, self.responses
        )

    def add(self, row: _Row) -> None:
        self.rows.append(row)
        if len(row.prompts) > len(self.prompts):
            self.prompts = row.prompts
        if len(row.responses) > len(self.responses):
            self.responses = row.responses


def _row_record(row: _Row) -> dict[str, Any]:
    """What a row needs beyond the group's lists to be rebuilt exactly."""
    rec: dict[str, Any] = {"keys": row.keys, "fields": row.fields}
    if "prompt" in row.keys:
        rec["n_prompt"] = len(row.prompts)
        if row.prompt_is_str:
            rec["prompt_str"] = True
    if "response" in row.keys:
        rec["n_response"] = len(row.responses)
        if row.response_is_str:
            rec["response_str"] = True
    if row.has_current_prompt:
        default = _default_current_prompt(row.prompts, row.turn_idx)
        value = row.current_prompt
        if value == default:
            pass  # derivable: nothing stored
        elif isinstance(value, str) and default and value.startswith(default):
            rec["current_prompt_suffix"] = value[len(default) :]
        else:
            rec["current_prompt"] = value
    if row.line is not None:
        rec["line"] = row.line
    return rec


def _trajectory_id(rows: list[_Row]) -> str:
    first = rows[0].fields.get("id")
    text = str(first) if first is not None else ""
    base = _TURN_SUFFIX.sub("", text) or text
    return base or f"awb-line{rows[0].line or 0}"


def _group_to_trajectory(
    group: _Group, domains: Mapping[str, Domain] | None = None, traj_id: str | None = None
) -> Trajectory:
    domain_name = subtask(group.task) or "unknown"
    codec = codec_for(domain_name, domains or {})
    n = max(len(group.prompts), len(group.responses))
    turns = [
        codec.turn_from(
            group.prompts[i] if i < len(group.prompts) else None,
            group.responses[i] if i < len(group.responses) else None,
            i,
        )
        for i in range(n)
    ]
    meta = {
        "task": group.task,
        "n_prompts": len(group.prompts),
        "n_responses": len(group.responses),
        "rows": [_row_record(r) for r in group.rows],
    }
    carried = group.rows[0].fields.get(AWCTL_KEY)
    if isinstance(carried, dict):
        return _restore(carried, group, domain_name, (domains or {}).get(domain_name), turns, meta, traj_id)
    system = parse_sections(group.system)
    return Trajectory(
        id=traj_id or _trajectory_id(group.rows),
        domain=domain_name,
        source=SOURCE,
        system=system,
        turns=turns,
        metadata={META_KEY: meta},
    )


def _carried(traj: Trajectory) -> dict[str, Any]:
    """What AgentWorldBench rows cannot hold but an awctl trajectory has, for the rows' ``awctl`` key."""
    system = traj.system.model_dump(exclude={"raw"}, exclude_defaults=True)
    out: dict[str, Any] = {"id": traj.id, "source": traj.source, "tags": list(traj.tags), "system": system}
    if traj.split is not None:
        out["split"] = traj.split
    if traj.metadata:
        out["metadata"] = traj.metadata
    turn_meta = [{**({"reasoning": t.reasoning} if t.reasoning is not None else {}),
                  **({"metadata": t.metadata} if t.metadata else {})} for t in traj.turns]
    if any(turn_meta):
        out["turns"] = turn_meta
    return out


def _restore(carried: dict[str, Any], group: _Group, domain_name: str, domain: Domain | None, turns: list[Turn],
             meta: dict[str, Any], traj_id: str | None) -> Trajectory:
    """The trajectory rows written by :func:`trajectory_to_rows` came from: id, source, tags, split,
    metadata, sections and per-turn reasoning and metadata from their ``awctl`` key."""
    from awctl.trajectory import SystemPrompt

    system = SystemPrompt.model_validate(carried.get("system") or {})
    # Keep the row's system text verbatim only when the sections would not render back to it.
    probe = Trajectory(id="probe", domain=domain_name, system=system)
    if system_text(probe, domain, 0) != group.system:
        system = system.model_copy(update={"raw": group.system})
    for turn, extra in zip(turns, carried.get("turns") or [], strict=False):
        if "reasoning" in extra:
            turn.reasoning = extra["reasoning"]
        turn.metadata.update(extra.get("metadata") or {})
    metadata = {**(carried.get("metadata") or {}), META_KEY: meta}
    return Trajectory(id=traj_id or str(carried.get("id") or _trajectory_id(group.rows)), domain=domain_name,
                      source=str(carried.get("source", SOURCE)), split=carried.get("split"),
                      tags=list(carried.get("tags") or []), system=system, turns=turns, metadata=metadata)


class RowGrouper:
    """Streams AWB rows into trajectories with at most ``max_open`` trajectories held in memory.

    ``max_open=1`` assumes rows of one trajectory are adjacent (pure streaming); larger values also
    regroup rows that arrive interleaved. Feed rows with :meth:`add_row`, which yields trajectories that are
    complete (evicted), then :meth:`finish` for the rest. A trajectory id is the first row's id without a
    ``_turnN`` suffix; repeated ids get ``~2``, ``~3``... appended.
    """

    def __init__(self, domains: Mapping[str, Domain] | None = None, max_open: int = 16) -> None:
        if max_open < 1:
            raise ValueError("max_open must be >= 1")
        self.domains = domains
        self.max_open = max_open
        self._open: list[_Group] = []  # in order of first row
        self._seen_ids: dict[str, int] = {}

    def _emit(self, group: _Group) -> Trajectory:
        base = _trajectory_id(group.rows)
        count = self._seen_ids.get(base, 0) + 1
        self._seen_ids[base] = count
        return _group_to_trajectory(group, self.domains, base if count == 1 else f"{base}~{count}")

    def add_row(self, obj: dict[str, Any], where: str = "", line: int | None = None) -> list[Trajectory]:
        """Add one row; returns trajectories that left the window (complete by assumption)."""
        row = parse_row(obj, where, line)
        task, system = obj["task"], obj.get("system_str", "")
        # Newest group first: with adjacent rows that is the one that matches.
        for group in reversed(self._open):
            if group.accepts(row, task, system):
                group.add(row)
                return []
        group = _Group(task, system)
        group.add(row)
        self._open.append(group)
        out = []
        while len(self._open) > self.max_open:
            out.append(self._emit(self._open.pop(0)))
        return out

    def finish(self) -> list[Trajectory]:
        out = [self._emit(g) for g in self._open]
        self._open = []
        return out


def rows_to_trajectories(
    rows: Iterable[dict[str, Any]], domains: Mapping[str, Domain] | None = None, max_open: int = 16
) -> Iterator[Trajectory]:
    """Trajectories of an iterable of AWB row dicts (see module docstring for grouping)."""
    grouper = RowGrouper(domains, max_open)
    for i, obj in enumerate(rows, 1):
        yield from grouper.add_row(obj, where=f"row {i}")
    yield from grouper.finish()


def read_rows(
    path: str | Path, domains: Mapping[str, Domain] | None = None, max_open: int = 16
) -> Iterator[Trajectory]:
    """Stream trajectories from an AWB JSONL file (``.gz``/``.zst`` too); errors name file:line."""
    grouper = RowGrouper(domains, max_open)
    for lineno, obj in iter_jsonl(path):
        yield from grouper.add_row(obj, where=f"{path}:{lineno}", line=lineno)
    yield from grouper.finish()


# ── trajectories → rows ──────────────────────────────────────────────────────────────────────────────


def awb_metadata(traj: Trajectory) -> dict[str, Any] | None:
    meta = traj.metadata.get(META_KEY)
    if not isinstance(meta, dict) or not isinstance(meta.get("rows"), list):
        return None
    if not isinstance(meta.get("task"), str):
        return None
    return meta


def full_lists(traj: Trajectory, codec: TurnCodec, meta: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The longest prompt and response lists of an AWB-sourced trajectory, rebuilt from its turns."""
    n_p = int(meta.get("n_prompts", len(traj.turns)))
    n_r = int(meta.get("n_responses", len(traj.turns)))
    prompts = [codec.prompt_text(traj.turns[i], i) for i in range(min(n_p, len(traj.turns)))]
    responses = [codec.response_text(traj.turns[i]) for i in range(min(n_r, len(traj.turns)))]
    return prompts, responses


def rebuild_row(
    rec: dict[str, Any], task: str, system: str, prompts: list[str], responses: list[str]
) -> dict[str, Any]:
    fields = rec.get("fields", {})
    row_prompts = prompts[: rec.get("n_prompt", len(prompts))]
    row_responses = responses[: rec.get("n_response", len(responses))]
    out: dict[str, Any] = {}
    for key in rec.get("keys", []):
        if key == "task":
            out[key] = task
        elif key == "system_str":
            out[key] = system
        elif key == "prompt":
            out[key] = row_prompts[0] if rec.get("prompt_str") and row_prompts else row_prompts
        elif key == "response":
            out[key] = row_responses[0] if rec.get("response_str") and row_responses else row_responses
        elif key == "current_prompt":
            if "current_prompt" in rec:
                out[key] = rec["current_prompt"]
            else:
                default = _default_current_prompt(row_prompts, fields.get("turn_idx"))
                out[key] = default + rec.get("current_prompt_suffix", "")
        else:
            out[key] = fields.get(key)
    return out


def trajectory_to_rows(traj: Trajectory, domains: Mapping[str, Domain] | None = None) -> list[dict[str, Any]]:
    """AWB rows for a trajectory: the original rows for AWB-sourced ones, else one row per turn."""
    domain = (domains or {}).get(traj.domain)
    codec = TurnCodec(domain)
    meta = awb_metadata(traj)
    if meta is not None:
        prompts, responses = full_lists(traj, codec, meta)
        system = system_text(traj, domain, 0)
        return [rebuild_row(rec, meta["task"], system, prompts, responses) for rec in meta["rows"]]

    system = system_text(traj, domain, 0)  # variant 0: the evaluation's fixed wording
    prompts = [codec.prompt_text(t, i) for i, t in enumerate(traj.turns)]
    responses = [codec.response_text(t) for t in traj.turns]
    total = len(traj.turns)
    carried = _carried(traj)
    return [
        {
            "task": traj.domain,
            "id": f"{traj.id}_turn{n}",
            "prompt": prompts[:n],
            "response": responses[:n],
            "current_prompt": prompts[n - 1],
            "system_str": system,
            "turn_idx": n,
            "total_turns": total,
            AWCTL_KEY: carried,
        }
        for n in range(1, total + 1)
    ]


def system_text(traj: Trajectory, domain: Domain | None, variant: int = 0) -> str:
    """The system prompt a model sees for ``traj``: ``SystemPrompt.raw`` verbatim when the source gave one,
    else the domain's prompt builder in wording ``variant`` (a builder that fails falls back to the
    sections as written, so no data is lost)."""
    if traj.system.raw is not None or domain is None:
        return traj.system.render()
    try:
        return domain.system_prompt(traj.system, variant)
    except Exception:  # a prompt builder bug must not lose the data
        return traj.system.render()


def write_rows(
    path: str | Path, trajectories: Iterable[Trajectory], domains: Mapping[str, Domain] | None = None
) -> int:
    """Write AWB rows for ``trajectories`` (streaming); returns the number of rows written."""

    def rows() -> Iterator[dict[str, Any]]:
        for traj in trajectories:
            yield from trajectory_to_rows(traj, domains)

    return write_jsonl(path, rows())


# ── one row as the official eval reads it ────────────────────────────────────────────────────────────


def clean_marker(text: str, marker: str = OBSERVATION_MARKER) -> str:
    """``text`` without the response marker: a leading one is cut off, otherwise all occurrences go."""
    if text.startswith(marker):
        return text[len(marker) :].strip()
    return text.replace(marker, "").strip()


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def turn_index(row: dict[str, Any]) -> int:
    """The 0-based index of the evaluated turn (``turn_idx`` is 1-based; missing means 1)."""
    raw = row.get("turn_idx", 1)
    try:
        return max(int(raw) - 1, 0)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class RowView:
    """The parts of one row a world model and a judge see."""

    domain: str
    system: str
    history: list[tuple[str, str]]  # (prompt, response) pairs of the turns before the evaluated one
    current_prompt: str
    ground_truth_raw: str
    turn: int

    @property
    def ground_truth(self) -> str:
        return clean_marker(self.ground_truth_raw)


def row_view(row: dict[str, Any]) -> RowView:
    """Split an AWB row the way ``eval.py`` does (history bounded by both list lengths)."""
    prompts, responses = _str_list(row.get("prompt", [])), _str_list(row.get("response", []))
    t = turn_index(row)
    history = [(prompts[j], responses[j]) for j in range(min(t, len(prompts), len(responses)))]
    current = row.get("current_prompt") or ""
    if not current and t < len(prompts):
        current = prompts[t]
    truth = responses[t] if t < len(responses) else ""
    return RowView(
        domain=subtask(str(row.get("task", "mcp"))),
        system=str(row.get("system_str") or ""),
        history=history,
        current_prompt=str(current),
        ground_truth_raw=truth,
        turn=t,
    )


def inference_messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """System prompt (when non-empty), the history as user/assistant pairs, then the current action.

    A row ``awctl eval`` built from an awctl trajectory may carry, in ``awctl.history`` (turn index ->
    text), the view's stand-ins for earlier responses (:func:`awctl.formats.view.evaluation_rows`): the
    model is asked what training showed it, while ``response`` keeps every observation for the judges."""
    view = row_view(row)
    stand_ins = _stand_ins(row)
    messages = [{"role": "system", "content": view.system}] if view.system else []
    for j, (prompt, response) in enumerate(view.history):
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": stand_ins.get(str(j), response)})
    messages.append({"role": "user", "content": view.current_prompt})
    return messages


def _stand_ins(row: dict[str, Any]) -> dict[str, str]:
    carried = row.get(AWCTL_KEY)
    history = carried.get("history") if isinstance(carried, dict) else None
    if not isinstance(history, dict):
        return {}
    return {str(k): v for k, v in history.items() if isinstance(v, str)}
