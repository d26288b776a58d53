"""The basic suite against the recorded device transcripts: references pass, doing nothing fails, and the
recorder records a task through the ADB adapter."""

from __future__ import annotations

import pytest
from awctl_domains.android.domain import AndroidDomain
from awctl_domains.android.tasks import BASIC, TRANSCRIPTS

from awctl.domain import run_verifiers
from awctl.record import record
from awctl.trajectory import read_trajectories


def test_the_suite_covers_settings_notes_and_contacts() -> None:
    assert len(BASIC) == 8 and len({t.id for t in BASIC}) == 8
    assert {t.setup["transcript"] for t in BASIC} == {"settings", "notes", "contacts"}
    assert all((TRANSCRIPTS / f"{t.setup['transcript']}.json").exists() for t in BASIC)
    kinds = {a.split('"action_type": "')[1].split('"')[0] for t in BASIC for a in t.solution}
    assert kinds >= {"click", "long_press", "input_text", "scroll", "open_app"}


@pytest.mark.parametrize("name", [t.id.rsplit("/", 1)[1] for t in BASIC])
def test_reference_solution_passes_and_doing_nothing_fails(recorded, name: str) -> None:
    done, idle = recorded[name].verdict, recorded[f"{name}/noop"].verdict
    assert done.ok and done.score == 1.0, done.message
    assert not idle.ok and idle.score == 0.0, idle.message


def test_awctl_record_runs_a_task_on_the_stand_in_device(adb, tmp_path) -> None:
    domain = AndroidDomain()
    task = next(t for t in BASIC if t.id.endswith("/delete_note"))
    adb.use(task.setup["transcript"])
    summary = record(domain, [task], tmp_path / "out.jsonl", env_settings={"settle_s": 0, "wait_s": 0})
    assert summary.passed == 1 and not summary.errors and not summary.failed
    (trajectory,) = read_trajectories(tmp_path / "out.jsonl")
    assert len(trajectory.turns) == 3 and "Screen size: 1080x2400" in trajectory.system.initial_state
    for i in range(len(trajectory.turns)):
        assert all(r.ok for r in run_verifiers(domain, trajectory, i))
