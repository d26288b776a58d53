"""Planted faults: one kind of deliberate error per calc verifier, written into a copy of a real observation.

Each :class:`awctl.domain.Fault` returns the corrupted observation for a turn, or ``None`` where its kind
cannot occur in that turn. The conditions are read from the turn only, never by running a verifier.

* ``prose_answer`` — the value wrapped in a sentence (``result_format``);
* ``echo_other_name`` — an assignment echoed under another variable's name (``assignment_echo``);
* ``wrong_value`` — one digit of the printed number changed, the line otherwise intact
  (``deterministic_result``).
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

from awctl.domain import Fault, TurnContext
from awctl.errors import CodecError

from .codec import CalcActionCodec, CalcObservationCodec

_ACTIONS = CalcActionCodec()
_OBSERVATIONS = CalcObservationCodec()
_NAMES = ("result", "value", "tmp", "y", "z")


def _prose_answer(ctx: TurnContext, rng: random.Random) -> str | None:
    line = ctx.observation.strip()
    if not line:
        return None
    return rng.choice(("The result is {}.", "Sure! {}", "{} (computed)")).format(line)


def _echo_other_name(ctx: TurnContext, rng: random.Random) -> str | None:
    try:
        name = _ACTIONS.parse(ctx.action).target
        out = _OBSERVATIONS.parse(ctx.observation)
    except CodecError:
        return None
    if name is None or out.kind != "assignment" or out.name != name:
        return None
    other = rng.choice([n for n in _NAMES if n != name])
    return f"{other} = {out.value}"


def _wrong_value(ctx: TurnContext, rng: random.Random) -> str | None:
    try:
        out = _OBSERVATIONS.parse(ctx.observation)
    except CodecError:
        return None
    if out.kind == "error":
        return None
    digits = [m.start() for m in re.finditer(r"\d", out.value)]
    if not digits:  # inf, nan
        return None
    at = rng.choice(digits)
    leading = at == 0 or not out.value[at - 1].isdigit() and out.value[at - 1] != "."
    choices = [d for d in ("123456789" if leading and len(digits) > 1 else "0123456789") if d != out.value[at]]
    value = out.value[:at] + rng.choice(choices) + out.value[at + 1:]
    return _OBSERVATIONS.render(replace(out, value=value))


FAULTS: tuple[Fault, ...] = (
    Fault("prose_answer", "result_format", "the value wrapped in a sentence", _prose_answer),
    Fault("echo_other_name", "assignment_echo", "an assignment echoed under another variable's name",
          _echo_other_name),
    Fault("wrong_value", "deterministic_result", "one digit of the printed number changed", _wrong_value),
)
