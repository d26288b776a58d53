"""Real recordings of the calc domain, made by its own environment (no model needed)."""

from __future__ import annotations

import pytest
from awctl_example_domain.domain import CalcDomain
from awctl_example_domain.tasks import tasks_for

from awctl.domain import Task
from awctl.record import record_episode, scripted_policy
from awctl.trajectory import Trajectory

DOMAIN = CalcDomain()

# Sessions beyond the reference solutions: errors, floats, reassignment, negative numbers.
EXTRA_SESSIONS: dict[str, tuple[dict, list[str]]] = {
    "errors": ({}, ["x = 1 / 0", "y", "2 +", "x = 2 ** 1000", "a = 1; b = 2", "x = 5", "x // 0"]),
    "floats": ({"r": 2.5}, ["r * 3", "third = 1 / 3", "third * 3", "big = 10 ** 20 / 3", "-r", "r = -r"]),
    "reuse": ({"n": 7}, ["n = n + 1", "n = n * n", "n % 5", "m = n // 6", "m - n"]),
}


def record_calc(task: Task, actions: list[str] | None = None) -> Trajectory:
    env = DOMAIN.real_env()
    if actions is not None:
        task = Task(id=task.id, domain="calc", suite=task.suite, instruction=task.instruction, solution=actions,
                    check=task.check, setup=task.setup, max_turns=len(actions))
    with env:
        return record_episode(DOMAIN, env, task, scripted_policy)


def _recordings() -> list[Trajectory]:
    basic = tasks_for("basic")
    out = [record_calc(task) for task in basic]
    for name, (variables, actions) in EXTRA_SESSIONS.items():
        task = Task(id=f"extra-{name}", domain="calc", suite="extra", instruction=f"Explore: {name}.",
                    solution=actions, check=basic[0].check, setup={"variables": variables})
        out.append(record_calc(task, actions))
    return out


RECORDINGS = _recordings()


@pytest.fixture(scope="session")
def recordings() -> list[Trajectory]:
    return RECORDINGS


@pytest.fixture
def record():
    """``record(task, actions=None)``: one real episode of ``task`` (its reference solution by default)."""
    return record_calc
