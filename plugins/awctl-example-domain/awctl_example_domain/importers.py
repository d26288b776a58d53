"""Importer of calculator session transcripts (``*.calc.txt``), as a terminal user would save them::

    calc ready; variables: w = 3
    > area = w * 2
    area = 6

The first line is the session's banner (the trajectory's initial state); then each ``> line`` typed is
followed by the one line the calculator printed. ``#`` lines and blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from awctl.domain import Importer
from awctl.errors import InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .calculator import READY
from .codec import CalcActionCodec
from .prompts import CALC_SIMULATION_INSTRUCTION

_FIX = "a transcript is the banner line, then pairs of `> typed line` and the printed line"


def load_transcript(path: Path) -> Iterator[Trajectory]:
    """One trajectory per transcript file; a malformed line raises :class:`InputError` naming file:line."""
    lines = [(n, line.rstrip("\n")) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if line.strip() and not line.startswith("#")]
    if not lines or not lines[0][1].startswith(READY):
        where = f"{path}:{lines[0][0]}" if lines else str(path)
        raise InputError(f"{where}: expected the banner {READY!r}...", hint=_FIX)
    turns: list[Turn] = []
    body = lines[1:]
    for k in range(0, len(body), 2):
        lineno, typed = body[k]
        if not typed.startswith("> "):
            raise InputError(f"{path}:{lineno}: expected a typed line starting with '> ', got {typed[:40]!r}",
                             hint=_FIX)
        if k + 1 >= len(body):
            raise InputError(f"{path}:{lineno}: the typed line has no printed line after it", hint=_FIX)
        turns.append(Turn(action=typed[2:], observation=body[k + 1][1]))
    yield Trajectory(
        id=path.name.removesuffix(".calc.txt"),
        domain="calc",
        # One transcript is one source: prep's source-level split keeps it in a single split.
        source=f"calc-transcript:{path.name}",
        tags=["imported"],
        system=SystemPrompt(action_space=CalcActionCodec().schema(), initial_state=lines[0][1],
                            simulation_instruction=CALC_SIMULATION_INSTRUCTION),
        turns=turns,
    )


TRANSCRIPT = Importer("calc-transcript", "calculator session transcripts (banner, then `> line` / output pairs)",
                      ("*.calc.txt",), load_transcript)
