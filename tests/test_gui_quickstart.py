"""The shipped GUI quickstart recipe, shortened by overrides, runs end to end in the real browser and the
real Xvfb desktop: record (reference solutions pass), verify (zero failed turns), prep, CPT, and the
evaluation table with the copy baseline beside the untrained and trained models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awctl.plugins import get_domain

SHORT = [
    "stages.record_web.suite=cross",  # one two-app task (shop + tracker)
    "stages.record_os.limit=2",
    'stages.heldout_web.tasks=["web/tracker/close_issue"]',
    'stages.heldout_os.tasks=["os/basic/switch_to_calculator"]',
    "stages.prep.tokenizer=train:400",
    "stages.cpt.steps=2",
    "stages.eval_untrained.max_tokens=8",
    "stages.eval_trained.max_tokens=8",
]


def test_gui_quickstart_records_verifies_trains_and_evaluates(tmp_path: Path, awctl) -> None:
    for name in ("web", "os"):
        ok, why = get_domain(name).real_env_status()
        if not ok:
            pytest.skip(f"no real {name} environment: {why}")
    proc = awctl("run", "gui-quickstart", *SHORT, "--output-root", str(tmp_path), "--quiet", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = tmp_path.iterdir()
    for stage, trajectories in (("verify_web", 1), ("verify_os", 2)):
        verify = json.loads((run_dir / "stages" / stage / "verify.json").read_text())
        assert verify["trajectories"] == trajectories and verify["failed"] == 0, verify
    report = (run_dir / "report.md").read_text()
    for row in ("| copy baseline |", "| eval_untrained |", "| eval_trained |"):
        assert row in report, report
