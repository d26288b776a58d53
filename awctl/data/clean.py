"""Per-trajectory checks: the domain's codecs and verifiers on every turn, and length/turn filters.

Each check returns the reasons a trajectory fails (empty when it passes); the pipeline writes them to the
quarantine file. A codec or verifier that raises is a failed check, never an exception out of prep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from awctl.domain import run_verifiers
from awctl.errors import AwctlError
from awctl.trajectory import Trajectory


@dataclass(frozen=True)
class Failure:
    """Why a trajectory is rejected: ``check`` (e.g. ``codec:action``, ``verifier:exit_code``,
    ``filter:turns``), a message, and the turn it concerns (``None`` for whole-trajectory checks)."""

    check: str
    reason: str
    turn: int | None = None


@dataclass(frozen=True)
class Filters:
    """Length and turn-count limits; ``None`` means no limit. Characters count actions + observations."""

    min_turns: int = 1
    max_turns: int | None = None
    min_chars: int = 0
    max_chars: int | None = None


def check_filters(traj: Trajectory, filters: Filters) -> list[Failure]:
    n = len(traj.turns)
    chars = sum(len(t.action) + len(t.observation) for t in traj.turns)
    out = []
    if n < filters.min_turns:
        out.append(Failure("filter:turns", f"{n} turns, fewer than min_turns={filters.min_turns}"))
    if filters.max_turns is not None and n > filters.max_turns:
        out.append(Failure("filter:turns", f"{n} turns, more than max_turns={filters.max_turns}"))
    if chars < filters.min_chars:
        out.append(Failure("filter:chars", f"{chars} characters, fewer than min_chars={filters.min_chars}"))
    if filters.max_chars is not None and chars > filters.max_chars:
        out.append(Failure("filter:chars", f"{chars} characters, more than max_chars={filters.max_chars}"))
    return out


def _error_text(exc: Exception) -> str:
    return exc.message if isinstance(exc, AwctlError) else f"{type(exc).__name__}: {exc}"


def check_domain(traj: Trajectory, domain: Any, verify: bool = True) -> list[Failure]:
    """Parse every action and observation with the domain's codecs and run its verifiers on every turn.

    Stops at the first failing turn (the rest of a broken trajectory adds nothing to the report).
    """
    codecs = (("action", domain.action_codec), ("observation", domain.observation_codec))
    for i, turn in enumerate(traj.turns):
        for (kind, codec), text in zip(codecs, (turn.action, turn.observation), strict=True):
            try:
                codec.parse(text)
            except Exception as exc:  # CodecError, or a codec bug: both make the turn unusable
                return [Failure(f"codec:{kind}", _error_text(exc), i)]
        if verify:
            bad = [r for r in run_verifiers(domain, traj, i) if not r.ok]
            if bad:
                return [Failure(f"verifier:{r.check}", r.message or "check failed", i) for r in bad]
    return []
