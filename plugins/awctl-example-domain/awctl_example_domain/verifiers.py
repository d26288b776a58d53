"""Deterministic checks of one calculator turn, every expectation read from the trajectory itself.

* ``result_format`` — the observation is one line the calculator can print, an error one of its messages
  (applies to every turn);
* ``assignment_echo`` — ``name = expr`` is answered with ``name = <value>`` or an ``Error:`` line
  (applies to assignments);
* ``deterministic_result`` — the observation is what the calculator prints after the initial state's
  variables and every earlier line (applies where the trajectory gives that: its initial state is the
  calculator's banner and every earlier recorded line is what the calculator printed).

A verifier returns ``None`` (abstains) only where the trajectory does not establish what to expect; on a
turn where it applies, a prediction it cannot read fails, so unreadable text earns no credit.
"""

from __future__ import annotations

import re

from awctl.domain import TurnContext, VerifyResult, verifier
from awctl.errors import CodecError

from .calculator import ERROR_MESSAGES, calculator_from_state
from .codec import CalcActionCodec, CalcObservationCodec

_ACTIONS = CalcActionCodec()
_OBSERVATIONS = CalcObservationCodec()
_KNOWN_ERROR = re.compile("|".join(f"(?:{m})" for m in ERROR_MESSAGES))


def _target(action: str) -> str | None:
    try:
        return _ACTIONS.parse(action).target
    except CodecError:
        return None


def expected_output(ctx: TurnContext) -> str | None:
    """What the calculator prints for ``ctx.action`` after the trajectory's initial state and history, or
    ``None`` when the trajectory does not establish it (the initial state is not a calculator banner, or
    an earlier recorded line differs from what the calculator prints: another program's recording).
    Computed once per turn (kept in ``ctx.state``)."""
    if "expected" not in ctx.state:
        ctx.state["expected"] = None
        calc = calculator_from_state(ctx.system.initial_state)
        if calc is not None and all(calc.execute(t.action) == t.observation.strip() for t in ctx.history):
            ctx.state["expected"] = calc.execute(ctx.action)
    return ctx.state["expected"]


@verifier("result_format", "the observation is one line: a number, `name = number` or `Error: <a message the "
          "calculator prints>`")
def result_format(ctx: TurnContext) -> VerifyResult:
    try:
        out = _OBSERVATIONS.parse(ctx.observation)
    except CodecError as exc:
        return VerifyResult("result_format", False, str(exc))
    if out.kind == "error" and not _KNOWN_ERROR.fullmatch(out.value):
        return VerifyResult("result_format", False, f"line 1: the calculator prints no error {out.value[:60]!r}")
    return VerifyResult("result_format", True)


@verifier("assignment_echo", "`name = expression` is answered with `name = <value>` or an `Error:` line")
def assignment_echo(ctx: TurnContext) -> VerifyResult | None:
    name = _target(ctx.action)
    if name is None:
        return None
    line = ctx.observation.strip().split("\n", 1)[0]
    ok = line.startswith((f"{name} = ", "Error: "))
    return VerifyResult("assignment_echo", ok, "" if ok else f"line 1: expected '{name} = <value>', got {line[:60]!r}")


@verifier("deterministic_result", "the observation equals what the calculator prints after the initial state "
          "and every earlier line")
def deterministic_result(ctx: TurnContext) -> VerifyResult | None:
    expected = expected_output(ctx)
    if expected is None:
        return None
    ok = ctx.observation.strip() == expected
    return VerifyResult(
        "deterministic_result", ok,
        "" if ok else f"line 1: expected {expected!r} (replaying {len(ctx.history)} earlier line(s) from the "
        f"initial state), got {ctx.observation.strip()[:60]!r}",
    )


VERIFIERS = (result_format, assignment_echo, deterministic_result)
