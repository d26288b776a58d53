"""The calc domain: codecs, verifiers, tasks, perturbations and the real environment in one file
(a bigger domain splits these into codec.py, verifiers.py, tasks.py, env.py, as awctl's built-ins do)."""

from __future__ import annotations

import re
from functools import cached_property

from awctl.domain import (
    ActionCodec,
    CheckResult,
    Domain,
    ObservationCodec,
    Perturbation,
    Task,
    TurnContext,
    Verifier,
    VerifyResult,
    verifier,
)
from awctl.env import Environment, StepResult
from awctl.errors import CodecError
from awctl.prompts import PromptBuilder
from awctl_example_domain.calc import Calculator

_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)")
_RESULT = re.compile(r"^(?:[A-Za-z_]\w* = )?-?(\d+(\.\d+)?(e[+-]?\d+)?|inf|nan)$|^Error: .+$")


class CalcActionCodec(ActionCodec):
    """An action is one line: an expression, or ``name = expression``."""

    def parse(self, text: str) -> str:
        line = text.strip()
        if not line:
            raise CodecError("empty action", where="action", hint="send an expression such as 2 + 3")
        if "\n" in line:
            raise CodecError("more than one line", where="action", hint="send one statement per action")
        return line

    def render(self, action: str) -> str:
        return action.strip()

    def schema(self) -> str:
        return "One line per action: an arithmetic expression (+ - * / // % **, parentheses) or `name = expression`."

    def family(self, text: str) -> str:
        return "assign" if _ASSIGN.match(text) else "expression"


class CalcObservationCodec(ObservationCodec):
    def parse(self, text: str) -> str:
        line = text.strip()
        if not _RESULT.match(line):
            raise CodecError(f"not a result or an error line: {line[:60]!r}", where="observation")
        return line

    def render(self, observation: str) -> str:
        return observation.strip()


class CalcEnv(Environment):
    domain = "calc"

    def __init__(self) -> None:
        self.calc = Calculator()

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self.calc = Calculator()
        for name, value in (task.setup.get("variables", {}) if task else {}).items():
            self.calc.variables[name] = value
        return "calc ready; variables: " + (", ".join(sorted(self.calc.variables)) or "none")

    def step(self, action: str) -> StepResult:
        return StepResult(self.calc.execute(action))


def _replay(ctx: TurnContext) -> str:
    """What the real calculator prints for this action, given the recorded history."""
    calc = Calculator()
    for turn in ctx.history:
        calc.execute(turn.action)
    return calc.execute(ctx.action)


@verifier("result_format", "the observation is a number, an assignment echo or an `Error: ...` line")
def _result_format(ctx: TurnContext) -> VerifyResult:
    ok = bool(_RESULT.match(ctx.observation.strip()))
    return VerifyResult("result_format", ok, "" if ok else "not a result line")


@verifier("deterministic_result", "the result equals replaying the history in a real calculator")
def _deterministic(ctx: TurnContext) -> VerifyResult:
    expected = _replay(ctx)
    ok = ctx.observation.strip() == expected
    return VerifyResult("deterministic_result", ok, "" if ok else f"expected {expected!r}")


@verifier("assignment_echo", "`x = ...` is answered with `x = <value>`")
def _assignment(ctx: TurnContext) -> VerifyResult | None:
    match = _ASSIGN.match(ctx.action)
    if not match or ctx.observation.startswith("Error:"):
        return None
    ok = ctx.observation.startswith(f"{match.group(1)} = ")
    return VerifyResult("assignment_echo", ok, "" if ok else "assignment not echoed")


def _task(n: int, instruction: str, solution: list[str], var: str, expected: str) -> Task:
    def check(env: Environment) -> CheckResult:
        got = env.step(var).observation.strip()
        return CheckResult(got == expected, f"{var} -> {got!r}, expected {expected!r}")

    return Task(id=f"calc-{n:02d}", domain="calc", suite="basic", instruction=instruction,
                solution=solution, check=check)


class CalcDomain(Domain):
    name = "calc"
    description = "Example third-party domain: a calculator REPL with variables"
    action_codec = CalcActionCodec()
    observation_codec = CalcObservationCodec()

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        return PromptBuilder(domain_title="calculator REPL")

    def verifiers(self) -> list[Verifier]:
        return [_result_format, _deterministic, _assignment]

    def suites(self) -> list[str]:
        return ["basic"]

    def tasks(self, suite: str) -> list[Task]:
        if suite != "basic":
            return []
        return [
            _task(1, "Store 6 times 7 in answer.", ["answer = 6 * 7"], "answer", "42"),
            _task(2, "Compute the area of a 3 by 4.5 rectangle into area.", ["w = 3", "h = 4.5", "area = w * h"],
                  "area", "13.5"),
            _task(3, "Set total to 2 to the 10th power minus 24.", ["total = 2 ** 10 - 24"], "total", "1000"),
        ]

    def perturbations(self) -> list[Perturbation]:
        return [Perturbation("overflow", "every result overflows", "Answer every expression with `Error: overflow`.")]

    def real_env(self, config: dict | None = None) -> Environment:
        return CalcEnv()

    def real_env_status(self) -> tuple[bool, str]:
        return True, "in-process calculator"
