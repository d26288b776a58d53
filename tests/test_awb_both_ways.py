"""Trajectories → AgentWorldBench rows → trajectories keeps everything an awctl trajectory has (id,
source, tags, split, checker verdict, sections, per-turn reasoning and metadata), and the rows stay
byte-identical on the way back."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.formats.agentworldbench import rows_to_trajectories, system_text, trajectory_to_rows
from awctl.plugins import get_registry
from awctl.trajectory import SystemPrompt, Trajectory, Turn

DOMAINS = get_registry().domains
_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


@st.composite
def trajectories(draw: st.DrawFn) -> Trajectory:
    n = draw(st.integers(1, 4))
    return Trajectory(
        id=draw(st.from_regex(r"[a-z][a-z0-9_/-]{0,20}", fullmatch=True)),
        domain=draw(st.sampled_from(["search", "mcp", "nosuch"])),
        source=draw(_text),
        split=draw(st.sampled_from([None, "train", "test"])),
        tags=draw(st.lists(_text, max_size=3)),
        system=SystemPrompt(task_description=draw(_text), action_space=draw(_text),
                            initial_state=draw(_text), demonstrations=draw(_text),
                            simulation_instruction=draw(_text), extra=draw(_text)),
        turns=[Turn(action=draw(_text), observation=draw(_text), reasoning=draw(st.one_of(st.none(), _text)),
                    metadata=draw(st.dictionaries(st.sampled_from(["exit_code", "duration_s"]),
                                                  st.integers(0, 9), max_size=2)))
               for _ in range(n)],
        metadata={"check": {"ok": draw(st.booleans()), "message": draw(_text), "score": None},
                  "task": draw(_text)},
    )


def _essential(traj: Trajectory) -> dict:
    data = traj.model_dump(mode="json")
    data["metadata"].pop("agentworldbench", None)
    data["system"].pop("raw")
    return data


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traj=trajectories())
def test_trajectory_to_rows_and_back_keeps_everything(traj: Trajectory) -> None:
    rows = json.loads(json.dumps(trajectory_to_rows(traj, DOMAINS)))
    (back,) = rows_to_trajectories(rows, DOMAINS)
    assert _essential(back) == _essential(traj)
    assert system_text(back, DOMAINS.get(back.domain)) == rows[0]["system_str"]  # what the model saw
    again = trajectory_to_rows(back, DOMAINS)
    assert json.dumps(again) == json.dumps(rows)


def test_the_recorder_builds_ids_once() -> None:
    from awctl.record import trajectory_id

    terminal = DOMAINS["terminal"]
    task = terminal.tasks("basic")[0]
    assert task.id.startswith("terminal/")
    assert trajectory_id(terminal, task, 0) == f"{task.id}-r0"
    assert not trajectory_id(terminal, task, 0).startswith("terminal-terminal")
