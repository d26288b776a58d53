"""Planted faults: does each verifier catch the errors of its kind on real turns?

For every :class:`~awctl.domain.Fault` a domain lists, the fault is planted into every turn of the given
trajectories where it applies (``plant`` returns a corrupted observation), and the verifier it targets is
run on the corrupted turn. The fault is *caught* when that verifier fails; abstaining does not count.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import Domain, Fault, TurnContext, Verifier
from awctl.trajectory import Trajectory


@dataclass
class FaultTally:
    """Caught/planted counts of one fault kind, and up to a few turns where it slipped through."""

    fault: str
    verifier: str
    planted: int = 0
    caught: int = 0
    missed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.caught / self.planted if self.planted else None

    def to_dict(self) -> dict[str, Any]:
        return {"fault": self.fault, "verifier": self.verifier, "planted": self.planted, "caught": self.caught,
                "rate": self.rate, "missed": self.missed}


def _verifier(domain: Domain, name: str) -> Verifier | None:
    return next((v for v in domain.verifiers() if v.name == name), None)


def plant_faults(
    domain: Domain, trajectories: Iterable[Trajectory], seed: int = 0, max_missed: int = 5
) -> dict[str, FaultTally]:
    """Tally of every fault kind of ``domain`` over every applicable turn of ``trajectories``."""
    trajectories = [t for t in trajectories if t.domain == domain.name]
    tallies: dict[str, FaultTally] = {}
    for fault in domain.faults():
        tally = tallies[fault.name] = FaultTally(fault.name, fault.verifier)
        target = _verifier(domain, fault.verifier)
        rng = random.Random(f"{seed}:{fault.name}")
        for traj in trajectories:
            for index in range(len(traj.turns)):
                corrupted = _plant(fault, TurnContext.at(traj, index), rng)
                if corrupted is None or corrupted == traj.turns[index].observation:
                    continue
                tally.planted += 1
                result = _run(target, TurnContext.at(traj, index, corrupted)) if target else None
                if result is not None and not result.ok:
                    tally.caught += 1
                elif len(tally.missed) < max_missed:
                    why = "abstained" if result is None else "passed"
                    if target is None:
                        why = f"the domain has no verifier named {fault.verifier!r}"
                    tally.missed.append({"trajectory": traj.id, "turn": index, "why": why})
    return tallies


def _plant(fault: Fault, ctx: TurnContext, rng: random.Random) -> str | None:
    try:
        return fault.plant(ctx, rng)
    except Exception:  # a planter that cannot handle this turn plants nothing here
        return None


def _run(verifier: Verifier, ctx: TurnContext) -> Any:
    try:
        return verifier(ctx)
    except Exception as exc:  # a verifier that crashes on a fault caught nothing
        from awctl.domain import VerifyResult

        return VerifyResult(verifier.name, True, f"raised {type(exc).__name__}")


def format_tallies(tallies: dict[str, FaultTally]) -> str:
    """A Markdown table: fault, targeted verifier, caught/planted."""
    lines = ["| fault | verifier | caught / planted |", "|---|---|---:|"]
    for t in tallies.values():
        rate = f" ({t.rate:.0%})" if t.rate is not None else ""
        lines.append(f"| {t.fault} | {t.verifier} | {t.caught} / {t.planted}{rate} |")
    return "\n".join(lines)
