"""Recipe stages ``eval`` and ``audit`` run through the real runner against a local OpenAI-compatible
server, write their outputs in the stage folder and honour ``fail_under``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awctl.eval.extract import inference_messages, row_view
from awctl.eval.replay_server import ReplayServer
from awctl.eval.rows import iter_input_rows
from awctl.plugins import get_registry
from awctl.recipe import load_recipe
from awctl.runner import run_recipe

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "awctl.toml").write_text('output_root = "runs"\n[plugins]\ndirs = []\n')
    (tmp_path / "recipes").mkdir()
    monkeypatch.setenv("AWCTL_CONFIG", str(tmp_path / "awctl.toml"))
    monkeypatch.chdir(tmp_path)
    # The registry is not refreshed: this project adds no plugins, and rebuilding it after the openai
    # backend's module was imported resolves the factory name to the submodule (see the lead's report).
    yield tmp_path


def _recipe(project: Path, base_url: str, fail_under: float) -> Path:
    awb = FIXTURES / "awb" / "mcp_test.jsonl"
    recorded = FIXTURES / "eval" / "search_recorded.jsonl"
    path = project / "recipes" / "ev.toml"
    path.write_text(f"""
[recipe]
name = "ev"

[[stages]]
kind = "eval"
name = "bench"
inputs = ["{awb}"]
backend = "openai"
backend_options = {{ base_url = "{base_url}", model = "replay" }}

[[stages]]
kind = "audit"
name = "fidelity"
domain = "search"
trajectories = ["{recorded}"]
backend = "openai"
backend_options = {{ base_url = "{base_url}", model = "replay" }}
fail_under = {fail_under}
""")
    return path


def _responder():
    rows = list(iter_input_rows([FIXTURES / "awb" / "mcp_test.jsonl"], get_registry().domains))
    table = {json.dumps(inference_messages(r)): row_view(r).ground_truth_raw for r in rows}
    return lambda messages, body: f"<predicted_observation>\n{table.get(json.dumps(messages), 'x')}\n" \
                                  "</predicted_observation>"


def test_eval_and_audit_stages_write_scores_and_reports(project: Path) -> None:
    with ReplayServer(_responder()) as srv:
        outcome = run_recipe(load_recipe(str(_recipe(project, srv.base_url, 0.0))), console=None)
    assert outcome.status == "done", outcome.error
    run_dir = outcome.run_dir
    scores = json.loads((run_dir / "stages" / "bench" / "scores.json").read_text())
    assert scores["domains"]["mcp"]["scores"]["total_score"] == pytest.approx(100.0)
    # Replaying the ground truth is an exact match on every row; report.md says so for the eval stage.
    n = len(list(iter_input_rows([FIXTURES / "awb" / "mcp_test.jsonl"], get_registry().domains)))
    assert scores["exact"] == {"count": n, "of": n, "rate": 1.0}
    report = (run_dir / "report.md").read_text()
    assert f"| model | {n} | 100.00 | {n}/{n} (100.0%) |" in report
    # The copy baseline (the previous result again) is exact nowhere it has to predict; the margin says so.
    vs = scores["vs_baseline"]["with_output"]
    assert vs["worse"] == 0 and vs["better"] == vs["rows"] > 0 and vs["low"] > 0
    assert f"| bench | {n} | 100.00 | {n}/{n} |" in report and "minus baseline, turns with output" in report
    audit = json.loads((run_dir / "stages" / "fidelity" / "audit.json").read_text())
    assert audit["overall"]["turns"] == 12 and (run_dir / "stages" / "fidelity" / "plots" / "score.png").exists()


def test_audit_stage_fail_under_fails_the_run(project: Path) -> None:
    with ReplayServer(_responder()) as srv:
        outcome = run_recipe(load_recipe(str(_recipe(project, srv.base_url, 90.0))), console=None)
    assert outcome.status == "failed", outcome.error
    assert outcome.stages == {"bench": "done", "fidelity": "failed"}, outcome.error
    assert "below fail_under 90.0" in outcome.error
