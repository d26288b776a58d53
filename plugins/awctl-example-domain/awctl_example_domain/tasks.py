"""The ``basic`` suite: three tasks with scripted reference solutions and checkers that read one variable.

A checker talks to the environment only through ``env.step`` (here: typing the variable's name), so the
same checker judges an episode in the real calculator or in a simulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from awctl.domain import CheckResult, Task
from awctl.env import Environment

SUITES = ("basic",)


def _reads(variable: str, expected: str) -> Callable[[Environment], CheckResult]:
    def check(env: Environment) -> CheckResult:
        got = env.step(variable).observation.strip()
        return CheckResult(got == expected, f"{variable} -> {got!r}, expected {expected!r}")

    return check


def _task(task_id: str, instruction: str, solution: list[str], variable: str, expected: str,
          setup: dict[str, Any] | None = None) -> Task:
    return Task(id=task_id, domain="calc", suite="basic", instruction=instruction, solution=solution,
                check=_reads(variable, expected), setup=setup or {}, max_turns=5, tags=("arithmetic",))


def tasks_for(suite: str) -> list[Task]:
    """The tasks of ``suite`` (none for a suite this domain does not have)."""
    if suite != "basic":
        return []
    return [
        _task("basic-01", "Store 6 times 7 in answer.", ["answer = 6 * 7"], "answer", "42"),
        # ``setup["variables"]`` is applied by CalcEnv.reset and listed in the initial state.
        _task("basic-02", "The rectangle is w by h. Store its area in area.", ["area = w * h"], "area", "13.5",
              setup={"variables": {"w": 3, "h": 4.5}}),
        _task("basic-03", "Set total to 2 to the 10th power minus 24.", ["p = 2 ** 10", "total = p - 24"],
              "total", "1000"),
    ]
