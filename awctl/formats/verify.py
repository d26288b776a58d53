"""Check trajectories with their domain's codecs and verifiers (``awctl data verify``, ``verify`` stage).

Checks per turn: ``action_parse`` (the domain's action codec parses the action), ``observation_parse``
(its observation codec parses the observation) and every verifier :func:`awctl.domain.run_verifiers`
applies. A trajectory whose domain is not registered fails the ``domain`` check once and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awctl.domain import Domain, run_verifiers
from awctl.trajectory import Trajectory, read_trajectories


@dataclass
class VerifyReport:
    """Counts per check and the first ``max_failures`` failures of each check."""

    path: str
    max_failures: int = 50
    trajectories: int = 0
    turns: int = 0
    summary: dict[str, dict[str, int]] = field(default_factory=dict)
    failures: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Total number of failed checks."""
        return sum(s["failed"] for s in self.summary.values())

    def record(self, check: str, ok: bool, trajectory: str, turn: int | None, message: str = "") -> None:
        counts = self.summary.setdefault(check, {"passed": 0, "failed": 0})
        if ok:
            counts["passed"] += 1
            return
        counts["failed"] += 1
        listed = self.failures.setdefault(check, [])
        if len(listed) < self.max_failures:
            listed.append({"trajectory": trajectory, "turn": turn, "message": message})

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "trajectories": self.trajectories,
            "turns": self.turns,
            "failed": self.failed,
            "summary": self.summary,
            "failures": self.failures,
        }


def _error_text(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".split("\nhint:")[0]


def verify_trajectories(
    trajectories: Iterable[Trajectory],
    domains: Mapping[str, Domain] | None = None,
    path: str = "",
    max_failures: int = 50,
) -> VerifyReport:
    """Run every check on every turn; never raises for bad data (a failing check is a report line)."""
    if domains is None:
        from awctl.plugins import get_registry

        domains = get_registry().domains
    report = VerifyReport(path, max_failures)
    for traj in trajectories:
        report.trajectories += 1
        domain = domains.get(traj.domain)
        report.record(
            "domain",
            domain is not None,
            traj.id,
            None,
            f"domain {traj.domain!r} is not registered (known: {', '.join(sorted(domains)) or 'none'})",
        )
        if domain is None:
            continue
        for i, turn in enumerate(traj.turns):
            report.turns += 1
            for check, codec, text in (
                ("action_parse", domain.action_codec, turn.action),
                ("observation_parse", domain.observation_codec, turn.observation),
            ):
                try:
                    codec.parse(text)
                except Exception as exc:  # any parse failure is a finding, whatever its type
                    report.record(check, False, traj.id, i, _error_text(exc))
                else:
                    report.record(check, True, traj.id, i)
            for res in run_verifiers(domain, traj, i):
                report.record(res.check, res.ok, traj.id, i, res.message)
    return report


def verify_file(
    path: str | Path, domains: Mapping[str, Domain] | None = None, max_failures: int = 50
) -> VerifyReport:
    """:func:`verify_trajectories` over a trajectory JSONL file, streamed."""
    from awctl.errors import InputError

    if str(path) != "-" and not Path(path).exists():
        raise InputError(f"{path}: file not found", hint="pass an awctl trajectory JSONL file")
    return verify_trajectories(read_trajectories(path), domains, str(path), max_failures)
