"""The android domain as a plugin: registration, light import, prompts, perturbations, faults."""

from __future__ import annotations

import subprocess
import sys

from awctl_domains.android.domain import AndroidDomain
from awctl_domains.android.prompts import JUDGE_GUIDANCE, ROLES
from awctl_domains.android.tasks import BASIC

from awctl.plugins import get_registry

D = AndroidDomain()


def test_registered_through_the_plugin_hook() -> None:
    domain = get_registry().domain("android")
    info = domain.describe()
    assert info["modality"] == "gui" and info["prompt_variants"] == 10
    assert len(info["verifiers"]) >= 6 and info["suites"] == {"basic": 8}
    assert set(info["importers"]) == {"androidworld", "agentworldbench-android"}


def test_plugin_import_stays_light() -> None:
    code = ("import sys; from awctl_domains.android.domain import AndroidDomain; d = AndroidDomain(); "
            "d.describe(); d.faults(); d.tasks('basic'); "
            "print(sorted(m for m in ('torch', 'transformers', 'playwright', 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ten_distinct_prompt_wordings_keep_the_sections() -> None:
    first = "Foreground app: com.android.settings\nForeground activity: x/.Y\nScreen size: 1080x2400\n" \
            "UI element 0: UIElement(text='Wi-Fi')"
    sections = D.sections_for(BASIC[0], first)
    assert "Screen size: 1080x2400" in sections.initial_state and first in sections.initial_state
    assert '"action_type": "click"' in sections.action_space
    prompts = [D.system_prompt(sections, v) for v in range(D.prompt_variants)]
    assert len(set(prompts)) == 10 and len(ROLES) == 10
    assert all(sections.task_description in p and "UI element 0" in p for p in prompts)


def test_perturbations_render_with_their_defaults() -> None:
    names = {p.name: p for p in D.perturbations()}
    assert {"system_dialog", "app_not_responding", "permission_prompt", "slow_load"} <= set(names)
    assert "Notes isn't responding" in names["app_not_responding"].render()
    assert "CAMERA" in names["permission_prompt"].render() and "Camera" not in names["slow_load"].render()


def test_one_fault_per_verifier_and_judge_guidance() -> None:
    assert {f.verifier for f in D.faults()} == {v.name for v in D.verifiers()}
    assert D.judge_guidance == JUDGE_GUIDANCE and "uiautomator" in JUDGE_GUIDANCE
