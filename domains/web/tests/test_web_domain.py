"""The web domain as the CLI and the formats see it: registration, prompts, perturbations, AgentWorldBench
rows both ways, and `awctl record` followed by `awctl data verify` in the real browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.web.domain import WebDomain
from awctl_domains.web.importers import load_browsergym_steps
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.formats.agentworldbench import rows_to_trajectories, trajectory_to_rows
from awctl.plugins import get_registry
from awctl.trajectory import read_trajectories

DOMAIN = WebDomain()
FIXTURES = Path(__file__).parent / "fixtures"


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_awctl_domains_lists_web_with_verifiers_importers_tasks_and_real_env() -> None:
    (web,) = [d for d in json.loads(_cli("domains", "--json")) if d["name"] == "web"]
    assert web["modality"] == "gui" and len(web["verifiers"]) >= 8 and web["importers"] == ["browsergym_steps"]
    assert web["suites"]["all"] >= 20 and web["prompt_variants"] == 10
    assert isinstance(web["real_env"]["available"], bool) and web["real_env"]["detail"]
    assert get_registry().domain("web").name == "web"


def test_prompts_perturbations_and_judge_guidance() -> None:
    sections = DOMAIN.sections_for(DOMAIN.tasks("shop")[0], "# Open tabs\nTab 0 (active tab):\n    Title: A\n"
                                                           "    URL: http://shop.test/")
    assert "http://shop.test/" in sections.initial_state and "fill(bid: str, value: str)" in sections.action_space
    prompts = {DOMAIN.system_prompt(sections, v) for v in range(DOMAIN.prompt_variants)}
    assert len(prompts) == 10 and all(sections.task_description in p for p in prompts)
    for p in DOMAIN.perturbations():
        assert p.render() and "{" not in p.render()
    assert "accessibility tree" in DOMAIN.judge_guidance


def test_agentworldbench_rows_round_trip_and_action_bodies() -> None:
    domains = {"web": DOMAIN}
    for traj in load_browsergym_steps(FIXTURES / "sessions.browsergym.jsonl"):
        rows = trajectory_to_rows(traj, domains)
        (back,) = rows_to_trajectories(rows, domains)
        assert [(t.action, t.observation) for t in back.turns] == [(t.action, t.observation) for t in traj.turns]
        assert trajectory_to_rows(back, domains) == rows
    assert DOMAIN.from_awb_action("```python\nclick( 'a1' )\n```") == "click('a1')"
    assert DOMAIN.from_awb_action("<action>fill('3', \"x\")</action>") == "fill('3', 'x')"
    assert DOMAIN.from_awb_action("I would click the button") == "I would click the button"


def test_record_then_verify_end_to_end_in_the_real_browser(tmp_path: Path) -> None:
    ok, why = DOMAIN.real_env_status()
    if not ok:
        pytest.skip(f"no real browser: {why}")
    out = tmp_path / "w.jsonl"
    summary = json.loads(_cli("record", "-d", "web", "--task-id", "web/shop/cancel_order", "--task-id",
                              "web/cross/report_damaged_order", "-o", str(out), "--json"))
    assert summary["passed"] == 2 and not summary["errors"], summary
    trajs = list(read_trajectories(out))
    assert {t.id for t in trajs} == {"web/shop/cancel_order-r0", "web/cross/report_damaged_order-r0"}
    report = json.loads(_cli("data", "verify", str(out), "--json"))
    assert report["failed"] == 0 and report["turns"] == 11, report["failures"]


RECIPE = """\
[recipe]
name = "web-mini"
description = "record two web tasks in the real browser, verify them, prepare them for training"

[[stages]]
kind = "record"
domains = ["web"]
tasks = ["web/shop/add_mugs", "web/tracker/close_issue"]
policy = "scripted"

[[stages]]
kind = "verify"
input = "@record.trajectories"

[[stages]]
kind = "prep"
inputs = ["@record.trajectories"]
tokenizer = "train:300"
split = "train=1"
"""


def test_a_quickstart_style_recipe_records_verifies_and_preps_web(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok, why = DOMAIN.real_env_status()
    if not ok:
        pytest.skip(f"no real browser: {why}")
    recipe = tmp_path / "web-mini.toml"
    recipe.write_text(RECIPE)
    monkeypatch.chdir(tmp_path)
    output = _cli("run", str(recipe))
    assert "run done" in output, output
    (run_dir,) = (tmp_path / "runs").iterdir()
    verify = json.loads((run_dir / "stages" / "verify" / "verify.json").read_text())
    assert verify["trajectories"] == 2 and verify["failed"] == 0, verify
    assert (run_dir / "stages" / "prep" / "manifest.json").is_file()
