"""``awctl recipes list|show|validate`` and ``awctl run`` argument handling, through the real CLI in a
subprocess (so the plugin registry is built fresh with the test stage plugin)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "recipes"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "awctl.toml").write_text('output_root = "runs"\n[plugins]\ndirs = []\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.txt").write_text("a\nb\n")
    (tmp_path / "recipes").mkdir()
    for name in ("pipeline.toml", "three_mistakes.toml"):
        shutil.copy(FIXTURES / name, tmp_path / "recipes" / name)
    return tmp_path


def awctl(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "AWCTL_CONFIG": str(project / "awctl.toml"),
        "AWCTL_PLUGINS_DIR": str(FIXTURES / "plugins"),
    }
    return subprocess.run(
        [sys.executable, "-m", "awctl.cli.main", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_list_json_shows_project_recipes_and_extra_paths(project):
    extra = project / "elsewhere.toml"
    shutil.copy(FIXTURES / "failing.toml", extra)
    proc = awctl(project, "recipes", "list", "--json", str(extra))
    assert proc.returncode == 0, proc.stderr
    items = {i["name"]: i for i in json.loads(proc.stdout)}
    assert items["pipeline"]["path"] == str(project / "recipes" / "pipeline.toml")
    assert [s["name"] for s in items["pipeline"]["stages"]] == ["write", "shout", "shout-file"]
    assert items["failing"]["path"] == str(extra)


def test_show_prints_the_resolved_recipe_with_overrides_and_defaults(project):
    proc = awctl(
        project, "recipes", "show", "pipeline", "recipe.seed=5", "stages.shout-file.input=data/in.txt"
    )
    assert proc.returncode == 0, proc.stderr
    data = tomllib.loads(proc.stdout)
    assert data["recipe"]["seed"] == 5
    assert data["stages"][0] == {"kind": "write-text", "name": "write", "text": "hello world", "repeat": 2}
    as_json = json.loads(awctl(project, "recipes", "show", "pipeline", "recipe.seed=5", "--json").stdout)
    assert as_json["recipe"]["seed"] == 5 and len(as_json["stages"]) == 3


def test_validate_prints_all_three_mistakes_with_file_and_key(project):
    path = project / "recipes" / "three_mistakes.toml"
    proc = awctl(project, "recipes", "validate", "pipeline", str(path))
    assert proc.returncode == 1
    assert "ok  pipeline" in proc.stdout
    assert "FAIL three_mistakes: 3 problem(s)" in proc.stdout
    problems = [line for line in proc.stdout.splitlines() if line.startswith("  - ")]
    assert len(problems) == 3
    for key in ("stages.write.repeat", "stages.shout.kind", "stages.early"):
        assert any(line.startswith(f"  - {path}: {key}") for line in problems), (key, problems)


def test_validate_reports_bad_overrides_with_close_matches(project):
    proc = awctl(project, "recipes", "validate", "pipeline", "stages.write.repet=3")
    assert proc.returncode == 1
    assert "key path 'stages.write.repet' does not exist; did you mean repeat" in proc.stdout


def test_run_with_a_bad_override_fails_before_creating_a_run_dir(project):
    proc = awctl(project, "run", "pipeline", "recipe.sed=1")
    assert proc.returncode == 2
    assert "recipe.sed" in proc.stderr and "seed" in proc.stderr
    assert not (project / "runs").exists()


def test_run_then_resume_without_naming_the_recipe(project):
    first = awctl(project, "run", "pipeline", "recipe.seed=4", "-q")
    assert first.returncode == 0, first.stderr
    run_dir = next((project / "runs").glob("pipeline-*"))
    again = awctl(project, "run", "--resume", str(run_dir))
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("stage reused") == 3
    assert json.loads((run_dir / "config.resolved.json").read_text())["recipe"]["seed"] == 4


def test_shipped_recipes_are_listed_anywhere_and_cp_copies_one_with_the_files_it_names(project):
    listed = {r["name"] for r in json.loads(awctl(project, "recipes", "list", "--json").stdout)}
    assert {"quickstart", "gpu-qwen-agentworld", "pipeline"} <= listed  # shipped + the project's own
    out = awctl(project, "recipes", "cp", "gpu-qwen-agentworld")
    assert out.returncode == 0, out.stderr
    copied = project / "recipes" / "gpu-qwen-agentworld.toml"
    assert tomllib.loads(copied.read_text())["recipe"]["name"] == "gpu-qwen-agentworld"
    assert (project / "recipes" / "deepspeed" / "zero3.json").is_file()  # a path the recipe names
    again = awctl(project, "recipes", "cp", "gpu-qwen-agentworld")
    assert again.returncode == 2 and "--force" in again.stderr
    missing = awctl(project, "recipes", "cp", "nosuch")
    assert missing.returncode == 2 and "shipped recipes: " in missing.stderr
