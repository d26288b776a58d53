"""Codecs: the text of a calculator action (one line typed) and of its observation (one line printed).

Both codecs raise only :class:`awctl.errors.CodecError` on bad text, and ``render(parse(text)) == text``
holds for every text ``parse`` accepts. The observation codec accepts exactly the canonical line the
calculator prints, which is also what the judge and the RL reward compare: they strip a prediction's
leading and trailing whitespace first, so a stripped observation must parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)\s*(.*?)\s*$")
NUMBER = r"-?(?:\d+(?:\.\d+)?(?:e[+-]\d+)?|inf|nan)"
_VALUE = re.compile(rf"^{NUMBER}$")
_ASSIGNMENT = re.compile(rf"^([A-Za-z_]\w*) = ({NUMBER})$")
_ERROR = re.compile(r"^Error: (\S.*)$")


@dataclass(frozen=True)
class Statement:
    """One line the agent types: ``text`` verbatim, ``target`` the variable it assigns (``None`` for a
    bare expression) and ``expression`` the part that is evaluated."""

    text: str
    target: str | None
    expression: str


@dataclass(frozen=True)
class Output:
    """One line the calculator prints: a ``value``, an ``assignment`` echo (``name = value``) or an
    ``error`` (``Error: <message>``; ``value`` holds the message)."""

    kind: Literal["value", "assignment", "error"]
    value: str
    name: str | None = None


class CalcActionCodec(ActionCodec):
    """An action is one line: an expression, or ``name = expression``."""

    def parse(self, text: str) -> Statement:
        if not text.strip():
            raise CodecError("empty action", where="action", hint="send an expression such as 2 + 3")
        if "\n" in text.strip():
            raise CodecError("more than one line", where="action", hint="send one statement per action")
        match = _ASSIGN.match(text)
        if match:
            return Statement(text, match.group(1), match.group(2))
        return Statement(text, None, text.strip())

    def render(self, action: Statement) -> str:
        return action.text

    def schema(self) -> str:
        return (
            "Each action is one line: an arithmetic expression (numbers, variables, + - * / // % ** and "
            "parentheses) or `name = expression`, which stores the value in a variable."
        )

    def family(self, text: str) -> str:
        return "assignment" if _ASSIGN.match(text) else "expression"


class CalcObservationCodec(ObservationCodec):
    """An observation is the one line the calculator prints, without surrounding whitespace."""

    def parse(self, text: str) -> Output:
        if "\n" in text:
            raise CodecError(
                f"{text.count(chr(10)) + 1} lines; the calculator prints one", where="observation line 2",
                hint="an observation is a number, `name = number` or `Error: message`",
            )
        if text != text.strip():
            raise CodecError("leading or trailing whitespace", where="observation line 1",
                             hint="the calculator prints its line without surrounding spaces")
        if _VALUE.match(text):
            return Output("value", text)
        if match := _ASSIGNMENT.match(text):
            return Output("assignment", match.group(2), match.group(1))
        if match := _ERROR.match(text):
            return Output("error", match.group(1))
        raise CodecError(
            f"not a result line: {text[:60]!r}", where="observation line 1",
            hint="an observation is a number, `name = number` or `Error: message`",
        )

    def render(self, observation: Output) -> str:
        if observation.kind == "assignment":
            return f"{observation.name} = {observation.value}"
        if observation.kind == "error":
            return f"Error: {observation.value}"
        return observation.value
