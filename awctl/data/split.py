"""Source-level splits for out-of-distribution evaluation.

A whole source (benchmark, MCP server, repository, site — ``Trajectory.source``, or ``domain:<input
file>`` when a trajectory names none) goes to exactly one split, chosen by a seeded hash of its name, so
the assignment is deterministic, independent of processing order, and the same on every prep shard.
Ratios are over sources, not trajectories.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from awctl.errors import AwctlError
from awctl.trajectory import Trajectory


def parse_ratios(text: str) -> dict[str, float]:
    """``"train=0.9,val=0.05,test=0.05"`` → ordered ratios normalised to sum 1."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        try:
            ratio = float(value)
        except ValueError:
            ratio = -1.0
        if not sep or not name or ratio < 0 or name in out:
            raise AwctlError(
                f"bad split spec {text!r} at {part.strip()!r}",
                hint="write name=ratio pairs, e.g. --split train=0.9,val=0.05,test=0.05",
            )
        out[name.strip()] = ratio
    total = sum(out.values())
    if total <= 0:
        raise AwctlError(f"split spec {text!r} has no positive ratio", hint="e.g. train=1")
    return {k: v / total for k, v in out.items()}


def source_key(traj: Trajectory, file: str) -> str:
    return traj.source or f"{traj.domain}:{Path(file).name}"


@dataclass(frozen=True)
class SourceSplitter:
    ratios: dict[str, float]
    seed: int = 0

    def assign(self, source: str) -> str:
        h = hashlib.blake2b(f"{self.seed}\x00{source}".encode(), digest_size=8).digest()
        u = int.from_bytes(h, "big") / 2**64
        acc = 0.0
        names = list(self.ratios)
        for name in names:
            acc += self.ratios[name]
            if u < acc:
                return name
        return names[-1]
