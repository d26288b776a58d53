"""Documented, graded corruptions of an observation, for calibrating and testing judges.

Each function takes the observation text and an ``amount`` in [0, 1] and is *nested*: the changes made
at a smaller amount are a subset of those made at a larger one (they always start from the same end), so
a judge that is monotone in the damage must score them monotonically. ``amount = 0`` returns the text
unchanged. Used by ``tests/test_eval_deterministic.py`` and documented in docs/evaluation.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable


def _count(amount: float, n: int) -> int:
    if not 0 <= amount <= 1:
        raise ValueError(f"amount must be in [0, 1], got {amount}")
    return min(n, math.ceil(amount * n))


def drop_lines(text: str, amount: float) -> str:
    """Remove the last ``ceil(amount * lines)`` lines."""
    lines = text.split("\n")
    k = _count(amount, len(lines))
    return "\n".join(lines[: len(lines) - k])


def change_digits(text: str, amount: float) -> str:
    """Increment (mod 10) the first ``ceil(amount * digits)`` digits, scanning from the start."""
    positions = [m.start() for m in re.finditer(r"\d", text)]
    chars = list(text)
    for pos in positions[: _count(amount, len(positions))]:
        chars[pos] = str((int(chars[pos]) + 1) % 10)
    return "".join(chars)


def break_format(text: str, amount: float) -> str:
    """Join the first ``ceil(amount * line breaks)`` lines onto the previous one (layout destroyed)."""
    parts = text.split("\n")
    k = _count(amount, len(parts) - 1)
    if k == 0:
        return text
    return " ".join(parts[: k + 1]) + ("\n" + "\n".join(parts[k + 1 :]) if parts[k + 1 :] else "")


_IDS = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?"
    r"|\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"
)


def malform_ids(text: str, amount: float) -> str:
    """Insert ``_`` in the middle of the first ``ceil(amount * ids)`` ids/timestamps (UUIDs, hex ids, ISO
    times), so they keep their length but no longer have the form of one."""
    spans = [m.span() for m in _IDS.finditer(text)]
    out, prev = [], 0
    for start, end in spans[: _count(amount, len(spans))]:
        value = text[start:end]
        half = len(value) // 2
        out += [text[prev:start], value[:half] + "_" + value[half:]]
        prev = end
    out.append(text[prev:])
    return "".join(out)


CORRUPTIONS: dict[str, Callable[[str, float], str]] = {
    "drop_lines": drop_lines,
    "change_digits": change_digits,
    "break_format": break_format,
    "malform_ids": malform_ids,
}
