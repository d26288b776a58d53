"""The real environment: an in-process calculator session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from awctl.env import Environment, StepResult

from .calculator import Calculator, calculator_from_state

if TYPE_CHECKING:
    from awctl.domain import Task


class CalcEnv(Environment):
    """One calculator session. ``reset`` applies ``task.setup["variables"]`` and returns the banner listing
    every variable with its value; the recorder makes that banner the trajectory's initial state, which is
    all the verifiers replay from."""

    domain = "calc"

    def __init__(self) -> None:
        self.calc = Calculator()

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        # The calculator is deterministic: ``seed`` changes nothing, so every reset of a task is identical.
        start = Calculator(dict(task.setup.get("variables", {})) if task else {})
        banner = start.state()
        # Start from the banner itself, so the session holds exactly the values the trajectory records
        # (a float the banner prints to 12 digits is the float the session uses).
        self.calc = calculator_from_state(banner) or start
        return banner

    def step(self, action: str) -> StepResult:
        return StepResult(self.calc.execute(action))
