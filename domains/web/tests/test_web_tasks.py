"""Every task's reference solution succeeds in the real browser (recorded through the recorder), doing
nothing fails every checker, and the recorded trajectories pass every verifier."""

from __future__ import annotations

import time
from typing import Any

import pytest
from awctl_domains.web.domain import WebDomain

from awctl.domain import run_verifiers
from awctl.record import record_episode, scripted_policy

DOMAIN = WebDomain()
TASKS = DOMAIN.tasks("all")


def test_suites_have_at_least_twenty_tasks_over_both_apps() -> None:
    assert len(TASKS) >= 20 and len({t.id for t in TASKS}) == len(TASKS)
    assert {DOMAIN.tasks(s)[0].setup["start"] for s in ("shop", "tracker")} == {"http://shop.test/",
                                                                              "http://tracker.test/"}
    assert all(t.solution and t.instruction and t.max_turns >= len(t.solution) for t in TASKS)
    for task in TASKS:
        for action in task.solution:
            DOMAIN.action_codec.parse(action)


def test_every_reference_solution_passes_and_doing_nothing_fails(web_env: Any, capsys: pytest.CaptureFixture) -> None:
    steps, step_s, failures = 0, 0.0, []
    for task in TASKS:
        traj = record_episode(DOMAIN, web_env, task, scripted_policy)
        check = traj.metadata["check"]
        if not check["ok"]:
            failures.append(f"{task.id}: solution failed: {check['message']}")
        for i in range(len(traj.turns)):
            failures += [f"{task.id} turn {i}: {r.check}: {r.message}" for r in run_verifiers(DOMAIN, traj, i) if not r.ok]
        steps += len(traj.turns)
        step_s += sum(t.metadata["duration_s"] for t in traj.turns)
        web_env.reset(task)
        web_env.step("noop(0)")
        idle = task.check(web_env)
        if idle.ok:
            failures.append(f"{task.id}: the checker passes without the task being done")
    assert not failures, "\n".join(failures)
    with capsys.disabled():
        print(f"\nweb: {len(TASKS)} tasks, {steps} steps, {steps / step_s:.1f} steps/s in env.step "
              f"(measured {time.strftime('%H:%M')})")
