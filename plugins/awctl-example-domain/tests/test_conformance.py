"""The calc domain against awctl's conformance kit: what a plugin's own CI runs (``pip install -e . &&
pytest``). The kit records every task's reference solution in the real calculator and checks codecs, the
judge on a perfect copy, verifiers on garbage and planted faults, tasks, prompt variants and resets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from awctl_example_domain.domain import CalcDomain

from awctl.conformance import check_domain


def test_calc_domain_passes_every_conformance_rule(recordings) -> None:
    # The extra sessions (errors, floats, reassignment) widen what the codec, judge and fault rules see.
    report = check_domain(CalcDomain(), recordings=recordings)
    assert report.ok, report.text()
    assert not report.skipped, report.text()


@pytest.mark.skipif(not any(ep.name == "calc" for ep in entry_points(group="awctl")),
                    reason="the package is not installed (pip install -e .): its entry point is missing")
def test_awctl_domains_check_calc_passes_from_the_command_line() -> None:
    out = subprocess.run([sys.executable, "-m", "awctl.cli.main", "domains", "check", "calc", "--json"],
                         capture_output=True, text=True, timeout=300, env=os.environ.copy())
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and {r["status"] for r in report["rules"]} == {"ok"}
