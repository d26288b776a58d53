import subprocess
import sys

from awctl_domains.swe.domain import SweDomain
from awctl_domains.swe.tasks import tasks

from awctl.plugins import get_registry
from awctl.trajectory import SystemPrompt


def test_domain_is_registered_through_the_hook():
    domain = get_registry().domain("swe")
    info = domain.describe()
    assert info["name"] == "swe" and info["modality"] == "text"
    assert len(info["verifiers"]) >= 6 and info["importers"] == ["swe-agent"]
    assert info["suites"]["all"] >= 20
    assert {"permission_denied", "test_timeout", "flaky_test", "disk_full", "git_lock"} <= set(info["perturbations"])


def test_ten_distinct_swe_role_phrasings():
    domain = SweDomain()
    sections = domain.sections_for(tasks("ledger")[0])
    assert "/testbed/ledger/money.py" in sections.initial_state
    assert "str_replace_editor" in sections.action_space
    prompts = {domain.system_prompt(sections, v) for v in range(domain.prompt_variants)}
    assert domain.prompt_variants == 10 and len(prompts) == 10
    assert all("to_cents" in p for p in prompts)
    assert domain.sections_for(None, "state") == SystemPrompt(
        task_description="Work on the Python repository checked out at /testbed.",
        action_space=domain.action_codec.schema(), initial_state="state",
        simulation_instruction=domain.prompt_builder.simulation_instruction)


def test_perturbations_render_with_defaults_and_overrides():
    perts = {p.name: p for p in SweDomain().perturbations()}
    assert "/testbed/setup.py: Permission denied" in perts["permission_denied"].render()
    assert "/testbed/a.py: Permission denied" in perts["permission_denied"].render(path="/testbed/a.py")
    assert "[timed_out]" in perts["test_timeout"].render(seconds=5)


def test_plugin_import_stays_light():
    code = ("import sys, awctl_domains.swe.domain as p; d = p.SweDomain(); d.verifiers(); d.tasks('all'); "
            "d.real_env_status(); bad = [m for m in ('torch', 'transformers', 'mcp', 'docker') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
