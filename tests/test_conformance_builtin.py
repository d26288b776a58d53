"""Every built-in domain passes the conformance kit (:mod:`awctl.conformance`) on recordings from other
programs (tests/foreign/<domain>/), its own test fixtures and, where its real environment runs here, fresh
recordings of its tasks' reference solutions."""

from __future__ import annotations

from pathlib import Path

import pytest

from awctl.conformance import check_domain
from awctl.formats.ingest import Record, expand_inputs, iter_records
from awctl.plugins import get_registry

REPO = Path(__file__).resolve().parents[1]
BUILTIN = ("terminal", "swe", "mcp", "search", "web", "os", "android")
# Raw logs and row files the domains' importers and readers take (generators and notes are not data).
_DATA = (".jsonl", ".json", ".cast", ".traj", ".typescript", ".gz", ".zst")


def recordings(name: str) -> list:
    domains = get_registry().domains
    folders = [REPO / "tests" / "foreign" / name, REPO / "domains" / name / "tests" / "fixtures"]
    files = [p for p in expand_inputs([f for f in folders if f.is_dir()])
             if p.name.endswith(_DATA) and "__pycache__" not in p.parts]
    return [r.trajectory for r in iter_records(files, domains) if isinstance(r, Record)]


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_domain_conforms(name: str) -> None:
    domain = get_registry().domain(name)
    report = check_domain(domain, recordings=recordings(name), task_limit=3, examples=150)
    assert report.ok, report.text()
    skipped = dict(report.skipped)
    if domain.real_env_status()[0]:
        assert not skipped, report.text()  # every rule ran
    else:  # android here: no device; the rules that need one say so
        assert set(skipped) <= {"task.reference_passes", "task.noop_fails", "env.reset_reproducible",
                            "env.first_observation"}
