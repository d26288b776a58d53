"""Check trajectories with their domain's codecs and verifiers (``awctl data verify``, ``verify`` stage).

Checks per turn: ``action_parse`` (the domain's action codec parses the action), ``observation_parse``
(its observation codec parses the observation) and every verifier of the domain
(:func:`awctl.domain.verifier_outcomes`). A verifier may abstain on a turn (the trajectory does not
establish what it would check): abstentions are counted per verifier, so a report shows a verifier that
silently checks nothing on some data. A trajectory whose domain is not registered fails the ``domain``
check once and is skipped.

Inputs are read like prep reads them (any format: awctl trajectories, AgentWorldBench rows, a domain
importer's raw logs), and a damaged line (not UTF-8, not JSON, not a valid record, a truncated stream)
fails the ``read`` check naming the file and line, then reading goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awctl.domain import Domain, verifier_outcomes
from awctl.trajectory import Trajectory

CODEC_CHECKS = ("action_parse", "observation_parse")


@dataclass
class VerifyReport:
    """Counts per check (passed, failed, abstained) and the first ``max_failures`` failures of each."""

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

    def _counts(self, check: str) -> dict[str, int]:
        return self.summary.setdefault(check, {"passed": 0, "failed": 0, "abstained": 0})

    def record(self, check: str, ok: bool, trajectory: str, turn: int | None, message: str = "") -> None:
        counts = self._counts(check)
        if ok:
            counts["passed"] += 1
            return
        counts["failed"] += 1
        listed = self.failures.setdefault(check, [])
        if len(listed) < self.max_failures:
            listed.append({"trajectory": trajectory, "turn": turn, "message": message})

    def abstain(self, check: str) -> None:
        self._counts(check)["abstained"] += 1

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


def _verify_one(report: VerifyReport, traj: Trajectory, domain: Domain) -> None:
    for i, turn in enumerate(traj.turns):
        report.turns += 1
        for check, codec, text in zip(
            CODEC_CHECKS, (domain.action_codec, domain.observation_codec), (turn.action, turn.observation),
            strict=True,
        ):
            try:
                codec.parse(text)
            except Exception as exc:  # any parse failure is a finding, whatever its type
                report.record(check, False, traj.id, i, _error_text(exc))
            else:
                report.record(check, True, traj.id, i)
        for name, res in verifier_outcomes(domain, traj, i):
            if res is None:
                report.abstain(name)
            else:
                report.record(res.check, res.ok, traj.id, i, res.message)


def verify_trajectories(
    trajectories: Iterable[Trajectory],
    domains: Mapping[str, Domain],
    path: str = "",
    max_failures: int = 50,
    report: VerifyReport | None = None,
) -> VerifyReport:
    """Run every check on every turn; never raises for bad data (a failing check is a report line)."""
    report = report or VerifyReport(path, max_failures)
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
        if domain is not None:
            _verify_one(report, traj, domain)
    return report


def verify_files(
    paths: Iterable[str | Path], domains: Mapping[str, Domain], max_failures: int = 50
) -> VerifyReport:
    """:func:`verify_trajectories` over files of any input format (folders walked), streamed; damaged
    lines fail the ``read`` check (named ``file:line``) and reading goes on."""
    from awctl.formats.ingest import Rejected, expand_inputs, iter_records

    paths = list(paths)
    report = VerifyReport(", ".join(map(str, paths)), max_failures)
    for item in iter_records(expand_inputs(paths), domains):
        if isinstance(item, Rejected):
            report.record("read", False, f"{item.file}:{item.line}", None, f"{item.check}: {item.reason}")
            continue
        verify_trajectories([item.trajectory], domains, report=report)
    return report
