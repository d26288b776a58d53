"""docs/plugin-api.md is generated from the code (docs/gen_plugin_api.py) and cannot drift from it."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "plugin-api.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_plugin_api", REPO / "docs" / "gen_plugin_api.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
TEXT, MISSING = GEN.render()


def test_committed_plugin_api_page_matches_the_code() -> None:
    committed = PAGE.read_text(encoding="utf-8")
    if committed != TEXT:
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), TEXT.splitlines(True),
                                                 "docs/plugin-api.md (committed)", "generated", n=1))[:40])
        raise AssertionError(f"docs/plugin-api.md is stale: run `{GEN.COMMAND}` and commit it\n{diff}")


def test_check_mode_fails_on_a_stale_page_and_names_the_command(tmp_path, monkeypatch, capsys) -> None:
    stale = tmp_path / "plugin-api.md"
    stale.write_text(TEXT.replace("Base class for a domain plugin", "Base class"), encoding="utf-8")
    monkeypatch.setattr(GEN, "PAGE", stale)
    assert GEN.main(["--check"]) == 1
    assert GEN.COMMAND in capsys.readouterr().err
    stale.write_text(TEXT, encoding="utf-8")
    assert GEN.main(["--check"]) == 0


def test_every_type_a_plugin_touches_has_an_entry() -> None:
    names = {
        "awctl.domain": ["Domain", "ActionCodec", "ObservationCodec", "Verifier", "verifier()", "VerifyResult",
                         "TurnContext", "Importer", "Task", "CheckResult", "Perturbation", "Fault",
                         "VerifierCredit", "verifier_credit()"],
        "awctl.env": ["Environment", "StepResult"],
        "awctl.prompts": ["PromptBuilder"],
        "awctl.trajectory": ["Trajectory", "Turn", "SystemPrompt"],
        "awctl.hookspecs": ["register_domains()", "register_backends()", "register_judges()", "register_stages()",
                            "register_commands()"],
        "awctl.errors": ["CodecError", "InputError", "EnvironmentUnavailable"],
        "awctl.conformance": ["check_domain()", "ConformanceReport"],
    }
    for module, entries in names.items():
        for name in entries:
            assert f"### `{module}.{name}`" in TEXT, f"{module}.{name} is not documented"
    # Every method a domain may override appears with its signature.
    from awctl.domain import Domain

    for member in ("faults", "copy_baseline", "transforms", "judge_guidance", "sections_for", "real_env"):
        assert member in Domain.__dict__, member
        assert f" {member}(self" in TEXT or f"property {member} ->" in TEXT, member


def test_every_documented_core_member_has_a_docstring() -> None:
    assert MISSING == [], f"add docstrings to: {', '.join(MISSING)}"


def test_the_page_states_the_implicit_rules_of_the_contract() -> None:
    rules = [
        '`setup["source"]` becomes the recorded trajectory\'s `source`',  # source-level split
        "prep's source-level split",
        "`max_turns`: the recorder stops the episode",
        "`tags`: added to the recorded trajectory's tags",
        "The returned text becomes the recorded trajectory's `system.initial_state`",
        "strip a prediction's leading and trailing whitespace",
        "abstains on a prediction counts as a **failure**",
        "`instruction` is the template",
        "judge_guidance",
        "copy_baseline",
        "transforms",
        "def faults(self) -> list[Fault]",
    ]
    for rule in rules:
        assert rule in TEXT, rule
    assert "instruction_template" not in TEXT
