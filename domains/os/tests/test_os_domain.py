"""The os domain as awctl sees it: registration, prompts, perturbations, the CLI record/verify round."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from awctl_domains.os.domain import OsDomain

from awctl.plugins import get_registry
from awctl.trajectory import SystemPrompt

from .conftest import require_desktop

DOMAIN = OsDomain()


def test_the_domain_is_registered_with_everything_it_offers() -> None:
    domain = get_registry(refresh=True).domain("os")
    info = domain.describe()
    assert info["modality"] == "gui" and info["suites"] == {"basic": len(DOMAIN.tasks("basic"))}
    assert len(info["verifiers"]) >= 6 and info["importers"] == ["osworld", "agentworldbench-os"]
    assert len(DOMAIN.faults()) >= len(info["verifiers"])
    assert {f.verifier for f in DOMAIN.faults()} == set(info["verifiers"])


def test_ten_prompt_wordings_and_a_judge_guidance() -> None:
    sections = DOMAIN.sections_for(DOMAIN.tasks("basic")[0], initial_state="<desktop-frame/>")
    assert "1920x1080 screen" in sections.initial_state and "```xml\n<desktop-frame/>\n```" in sections.initial_state
    prompts = {DOMAIN.system_prompt(sections, v) for v in range(DOMAIN.prompt_variants)}
    assert DOMAIN.prompt_variants >= 10 and len(prompts) == DOMAIN.prompt_variants
    assert all("computer_13" in p and "<desktop-frame/>" in p for p in prompts)
    assert "accessibility tree" in DOMAIN.judge_guidance
    raw = SystemPrompt(raw="verbatim")
    assert DOMAIN.system_prompt(raw, 3) == "verbatim"


def test_perturbations_render_with_defaults_and_overrides() -> None:
    for p in DOMAIN.perturbations():
        assert p.render()
    crash = next(p for p in DOMAIN.perturbations() if p.name == "window_crash")
    assert "mousepad crashes" in crash.render(app="mousepad")


def test_awb_action_and_observation_bodies_are_kept_as_written() -> None:
    body = "```python\npyautogui.click(1, 2)\n```"
    assert DOMAIN.from_awb_action(body) == body and DOMAIN.to_awb_action(body) == body


def test_cli_records_a_task_and_verifies_it_with_zero_failures(tmp_path: Path) -> None:
    require_desktop()
    out = tmp_path / "o.jsonl"
    cli = [sys.executable, "-m", "awctl.cli.main"]
    rec = subprocess.run([*cli, "record", "-d", "os", "--task-id", "os/basic/close_save_changes", "-o", str(out),
                          "--json"], capture_output=True, text=True, timeout=300)
    assert rec.returncode == 0, rec.stderr[-2000:]
    summary = json.loads(rec.stdout)
    assert summary["passed"] == 1 and not summary["errors"]
    ver = subprocess.run([*cli, "data", "verify", str(out), "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(ver.stdout)
    assert ver.returncode == 0 and report["failed"] == 0, report["failures"]
    assert report["summary"]["closed_window_gone"]["passed"] >= 1


def test_awctl_domains_lists_os() -> None:
    out = subprocess.run([sys.executable, "-m", "awctl.cli.main", "domains", "--json"], capture_output=True,
                         text=True, timeout=120)
    names = [d["name"] for d in json.loads(out.stdout)]
    assert "os" in names


def test_the_copy_baseline_repeats_the_previous_tree() -> None:
    from awctl.trajectory import Trajectory, Turn

    start = "<desktop-frame/>"
    traj = Trajectory(id="t", domain="os", system=DOMAIN.sections_for(None, initial_state=start),
                      turns=[Turn(action="WAIT", observation="<desktop-frame><application name=\"a\"/></desktop-frame>"),
                             Turn(action="WAIT", observation=start)])
    assert DOMAIN.copy_baseline(traj, 0) == start
    assert DOMAIN.copy_baseline(traj, 1) == traj.turns[0].observation
