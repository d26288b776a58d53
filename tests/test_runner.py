"""The runner: stages in order with artifacts, run directory files, manifests and hashes, resume,
failure and Ctrl-C. Stage kinds come from a real loose plugin (tests/fixtures/recipes/plugins)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from awctl import plugins
from awctl.recipe import load_recipe
from awctl.runner import RunError, hash_path, run_recipe

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "recipes"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "awctl.toml").write_text('output_root = "runs"\n[plugins]\ndirs = []\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.txt").write_text("a\nb\n")
    (tmp_path / "recipes").mkdir()
    for path in FIXTURES.glob("*.toml"):
        shutil.copy(path, tmp_path / "recipes" / path.name)
    monkeypatch.setenv("AWCTL_CONFIG", str(tmp_path / "awctl.toml"))
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(FIXTURES / "plugins"))
    monkeypatch.chdir(tmp_path)
    plugins.get_registry(refresh=True)
    yield tmp_path
    plugins._REGISTRY = None


def manifest(run_dir: Path, stage: str) -> dict:
    return json.loads((run_dir / "stages" / stage / "manifest.json").read_text())


def executions(run_dir: Path, stage: str) -> int:
    return (run_dir / "stages" / stage / "runs.log").read_text().count("ran")


def run(name: str, *overrides: str, resume: Path | None = None):
    return run_recipe(load_recipe(name, list(overrides)), resume=resume, console=None)


def test_stages_run_in_order_with_artifacts_and_a_complete_run_dir(project):
    outcome = run("pipeline", "recipe.seed=3")
    assert outcome.status == "done" and outcome.exit_code == 0
    run_dir = outcome.run_dir
    assert run_dir.parent == project / "runs" and run_dir.name.startswith("pipeline-")
    assert outcome.stages == {"write": "done", "shout": "done", "shout-file": "done"}

    # artifacts: shout read write's output through "@write.text"
    assert (run_dir / "stages/shout/lines/000.txt").read_text() == "HELLO WORLD"
    assert (run_dir / "stages/shout-file/lines/001.txt").read_text() == "B"

    m = [manifest(run_dir, s) for s in ("write", "shout", "shout-file")]
    assert [x["status"] for x in m] == ["done"] * 3
    assert m[0]["started_at"] <= m[0]["ended_at"] <= m[1]["started_at"] <= m[2]["started_at"]
    assert m[0]["options"] == {"text": "hello world", "repeat": 2}
    text = run_dir / "stages/write/text.txt"
    assert m[0]["outputs"]["text"] == {
        "path": "stages/write/text.txt",
        "type": "file",
        "sha256": hashlib.sha256(text.read_bytes()).hexdigest(),
    }
    assert m[1]["inputs"] == [
        {"ref": "@write.text", "path": "stages/write/text.txt", "sha256": m[0]["outputs"]["text"]["sha256"]}
    ]
    assert m[1]["outputs"]["lines"]["type"] == "dir"
    assert m[1]["outputs"]["lines"]["sha256"] == hash_path(run_dir / "stages/shout/lines")
    assert m[2]["inputs"][0]["sha256"] == hashlib.sha256(b"a\nb\n").hexdigest()
    assert m[0]["summary"] == {"lines": 2, "seed": 3}  # ctx.seed comes from recipe.seed

    resolved = tomllib.loads((run_dir / "config.resolved.toml").read_text())
    assert resolved["recipe"]["seed"] == 3
    assert json.loads((run_dir / "config.resolved.json").read_text()) == resolved

    events = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "run started" and events[-1]["event"] == "run finished"
    assert {"timestamp", "level", "run"} <= events[0].keys()
    assert any(e["event"] == "wrote" and e["stage"] == "write" and e["seed"] == 3 for e in events)

    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [(r["stage"], r["step"], r.get("loss")) for r in metrics[:3]] == [
        ("write", 0, 1.0),
        ("write", 1, 0.5),
        ("write", 2, 1 / 3),
    ]

    report = (run_dir / "report.md").read_text()
    assert "| write | write-text | done |" in report and "lines=2, seed=3" in report
    assert "wrote **text**" in report  # the stage's own fragment
    assert "![write: loss](plots/write--curves.png)" in report
    assert (run_dir / "plots/write--curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_hash_of_a_folder_changes_with_names_and_contents(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("1")
    first = hash_path(tmp_path / "d")
    (tmp_path / "d" / "a.txt").rename(tmp_path / "d" / "b.txt")
    renamed = hash_path(tmp_path / "d")
    (tmp_path / "d" / "b.txt").write_text("2")
    assert len({first, renamed, hash_path(tmp_path / "d")}) == 3
    assert hash_path(tmp_path / "missing") is None


def test_resume_reuses_unchanged_stages_and_reruns_changed_ones(project):
    run_dir = run("pipeline").run_dir

    again = run("pipeline", resume=run_dir)
    assert again.run_dir == run_dir.resolve()
    assert again.stages == {"write": "reused", "shout": "reused", "shout-file": "reused"}
    assert executions(run_dir, "shout") == 1 and executions(run_dir, "shout-file") == 1

    # a changed input file reruns only the stage that reads it
    (project / "data" / "in.txt").write_text("a\nb\nc\n")
    changed = run("pipeline", resume=run_dir)
    assert changed.stages == {"write": "reused", "shout": "reused", "shout-file": "done"}
    assert (run_dir / "stages/shout-file/lines/002.txt").read_text() == "C"

    # a changed option reruns that stage and the stage that references its output
    opt = run("pipeline", "stages.write.text=bye", resume=run_dir)
    assert opt.stages == {"write": "done", "shout": "done", "shout-file": "reused"}
    assert (run_dir / "stages/shout/lines/000.txt").read_text() == "BYE"
    # the rerun stage's old metric records were replaced, not duplicated
    metrics = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert sum(1 for r in metrics if r["stage"] == "write") == 3

    # a deleted output reruns its stage, and dependents rerun even though the new output is identical
    (run_dir / "stages/write/text.txt").unlink()
    dep = run("pipeline", "stages.write.text=bye", resume=run_dir)
    assert dep.stages == {"write": "done", "shout": "done", "shout-file": "reused"}
    assert executions(run_dir, "shout") == 3


def test_rerun_runs_a_stage_afresh_and_the_stages_that_use_it(project):
    run_dir = run("pipeline").run_dir
    (run_dir / "stages/write/stale-checkpoint").write_text("from the code being replaced")
    again = run_recipe(load_recipe("pipeline", []), resume=run_dir, console=None, rerun=["write"])
    assert again.stages == {"write": "done", "shout": "done", "shout-file": "reused"}
    assert not (run_dir / "stages/write/stale-checkpoint").exists()
    assert executions(run_dir, "shout") == 2
    with pytest.raises(RunError, match="no such stage") as err:
        run_recipe(load_recipe("pipeline", []), resume=run_dir, console=None, rerun=["wirte"])
    assert "write, shout, shout-file" in err.value.hint
    with pytest.raises(RunError, match="needs --resume"):
        run_recipe(load_recipe("pipeline", []), console=None, rerun=["write"])


def test_failing_stage_stops_the_run_and_records_the_error(project):
    outcome = run("failing")
    assert outcome.status == "failed" and outcome.exit_code == 1
    assert outcome.stages == {"write": "done", "fail": "failed", "upper": "not run"}
    assert "deliberate failure: boom" in outcome.error and "this stage always fails" in outcome.hint
    m = manifest(outcome.run_dir, "fail")
    assert m["status"] == "failed" and m["error"] == "deliberate failure: boom" and m["ended_at"]
    assert not (outcome.run_dir / "stages/upper/manifest.json").exists()
    report = (outcome.run_dir / "report.md").read_text()
    assert "status: **failed**" in report and "| upper | - | not run |" in report


def _cli_env(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AWCTL_CONFIG": str(project / "awctl.toml"),
        "AWCTL_PLUGINS_DIR": str(FIXTURES / "plugins"),
    }


def test_cli_failure_prints_one_error_line_with_a_hint(project):
    proc = subprocess.run(
        [sys.executable, "-m", "awctl.cli.main", "run", "failing", "-q"],
        cwd=project,
        env=_cli_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "error: stage 'fail' (fail) failed: deliberate failure: boom"
    assert lines[1].startswith("hint: this stage always fails; details in ") and "--resume" in lines[1]


def test_sigint_during_a_stage_leaves_a_consistent_run_dir_and_exits_130(project):
    proc = subprocess.Popen(
        [sys.executable, "-m", "awctl.cli.main", "run", "slow"],
        cwd=project,
        env=_cli_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell may start background jobs with SIGINT ignored; the child must see Ctrl-C as a user would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while not list((project / "runs").glob("slow-*/stages/slow/started")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "slow stage never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    run_dir = next((project / "runs").glob("slow-*"))
    assert manifest(run_dir, "write")["status"] == "done"
    slow = manifest(run_dir, "slow")
    assert slow["status"] == "interrupted" and slow["ended_at"] and slow["duration_s"] is not None
    assert not (run_dir / "stages/upper").exists()
    report = (run_dir / "report.md").read_text()
    assert "status: **interrupted**" in report and "| slow | slow | interrupted |" in report
    assert not list(run_dir.rglob("*.tmp")) and not list(run_dir.rglob(".*.tmp"))
    assert json.loads((run_dir / "log.jsonl").read_text().splitlines()[-1])["event"] == "run finished"
    assert "--resume" in err


def test_metric_series_take_numbers_only_and_survive_a_cut_line(tmp_path):
    from awctl.report.plots import plot_metrics, read_metric_series

    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text(
        '{"stage": "a", "step": 5, "loss": 2.0, "ok": true, "note": "x"}\n'
        '{"stage": "a", "step": null, "loss": 1.0, "nan": NaN}\n'
        '{"stage": "b", "acc": 0.5}\n'
        '{"stage": "a", "lo'  # a line cut by a crash
    )
    assert read_metric_series(metrics) == {"a": {"loss": [(5.0, 2.0), (1, 1.0)]}, "b": {"acc": [(0, 0.5)]}}
    made = plot_metrics(metrics, tmp_path / "plots")
    # One figure of curves per stage that has any; a single point ("b") is a number, not a curve.
    assert [(m["stage"], m["keys"]) for m in made] == [("a", ["loss"])]
    assert all(m["path"].read_bytes()[:4] == b"\x89PNG" for m in made)
