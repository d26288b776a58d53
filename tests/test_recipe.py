"""Recipes: overrides, validation that reports every problem with file and key, TOML round trip,
shipped recipes, and validation staying torch-free."""

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

from awctl import plugins
from awctl.errors import ConfigError
from awctl.keyvalue import parse_value
from awctl.recipe import (
    apply_overrides,
    dump_toml,
    find_recipe,
    load_recipe,
    shipped_recipes,
    validate_recipe,
)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "recipes"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project folder with the test stage plugin loaded (a loose plugin via AWCTL_PLUGINS_DIR)."""
    (tmp_path / "awctl.toml").write_text('output_root = "runs"\n[plugins]\ndirs = []\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.txt").write_text("a\nb\n")
    (tmp_path / "recipes").mkdir()
    for name in ("pipeline.toml", "three_mistakes.toml"):
        shutil.copy(FIXTURES / name, tmp_path / "recipes" / name)
    monkeypatch.setenv("AWCTL_CONFIG", str(tmp_path / "awctl.toml"))
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(FIXTURES / "plugins"))
    monkeypatch.chdir(tmp_path)
    plugins.get_registry(refresh=True)
    yield tmp_path
    plugins._REGISTRY = None  # rebuilt lazily without the test plugin


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_parse_value_reads_toml_values_and_falls_back_to_strings():
    assert parse_value("3") == 3
    assert parse_value("0.5") == 0.5
    assert parse_value("true") is True
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value('"quoted"') == "quoted"
    assert parse_value("plain words") == "plain words"
    assert parse_value("@write.text") == "@write.text"


def test_overrides_set_recipe_keys_stage_options_by_name_and_by_index(project):
    resolved = load_recipe(
        "pipeline",
        ["recipe.seed=3", "stages.write.repeat=4", "stages.1.input=@write.text", "stages.write.text=hi"],
    )
    assert resolved.seed == 3
    write_stage = resolved.stages[0]
    assert write_stage.options.repeat == 4 and write_stage.options.text == "hi"
    assert resolved.stages[1].raw["input"] == "@write.text"


def test_override_of_a_missing_key_path_names_it_and_close_matches(project):
    data = tomllib.loads((FIXTURES / "pipeline.toml").read_text())
    problems = apply_overrides(
        data,
        ["stages.write.repeet=2", "stages.shoot.input=x", "recipe.sed=1", "nokey"],
        "cli",
        plugins.get_registry(),
    )
    assert len(problems) == 4
    assert "'stages.write.repeet' does not exist" in problems[0] and "repeat" in problems[0]
    assert "'stages.shoot' does not exist" in problems[1] and "shout" in problems[1]
    assert "'recipe.sed' does not exist" in problems[2] and "seed" in problems[2]
    assert "key.path=value" in problems[3]


def test_option_with_a_default_may_be_overridden_although_the_recipe_omits_it(project):
    # `repeat` is not written in this recipe but is a field of the stage's Options.
    path = write(project / "r.toml", '[recipe]\nname = "r"\n[[stages]]\nkind = "write-text"\ntext = "x"\n')
    resolved, problems = validate_recipe(path, ["stages.write-text.repeat=5"])
    assert problems == [] and resolved.stages[0].options.repeat == 5


def test_three_mistakes_are_all_reported_with_file_and_key(project):
    path = FIXTURES / "three_mistakes.toml"
    resolved, problems = validate_recipe(path)
    assert resolved is None
    assert len(problems) == 3, problems
    assert all(p.startswith(f"{path}: stages.") for p in problems)
    joined = "\n".join(problems)
    assert "stages.write.repeat" in joined and "greater than or equal to 1" in joined
    assert "stages.shout.kind: unknown stage kind 'uper'" in joined and "did you mean upper" in joined
    assert "stages.early" in joined and "'@late.text'" in joined and "comes later" in joined


def test_toml_syntax_error_names_file_and_line(project):
    _, problems = validate_recipe(FIXTURES / "syntax_error.toml")
    assert len(problems) == 1
    assert problems[0].startswith(f"{FIXTURES / 'syntax_error.toml'}:6: invalid TOML")


def test_structural_problems_are_reported_together(project):
    path = write(
        project / "bad.toml",
        """
[recipe]
name = "bad"
colour = "red"

[stagez]
x = 1

[[stages]]
name = "nokind"

[[stages]]
kind = "upper"
name = "u"
input = "data/missing.txt"

[[stages]]
kind = "upper"
name = "u"
input = "@nowhere.out"
""",
    )
    _, problems = validate_recipe(path)
    joined = "\n".join(problems)
    assert f"{path}: stagez: unknown top-level key (did you mean 'stages'?)" in joined
    assert f"{path}: recipe.colour: unknown key" in joined
    assert f"{path}: stages.1.kind: missing" not in joined  # index of the kind-less stage is 0
    assert f"{path}: stages.0.kind: missing" in joined
    assert f"{path}: stages.u: duplicate stage name" in joined
    assert "input path 'data/missing.txt' does not exist" in joined
    assert "'@nowhere.out' names a stage that does not exist" in joined
    assert len(problems) == 6, problems


def test_resolved_recipe_round_trips_through_toml_and_revalidates(project):
    resolved = load_recipe("pipeline", ["recipe.seed=9"])
    text = resolved.to_toml()
    assert tomllib.loads(text) == json.loads(json.dumps(resolved.to_dict()))
    again = load_recipe(write(project / "again.toml", text))
    assert again.to_dict() == resolved.to_dict()


def test_dump_toml_writes_nested_tables_inline_tables_and_skips_none():
    data = {
        "recipe": {"name": "x", "output_root": None},
        "domains": {"terminal": {"rows": 40, "name with space": 'a"b'}},
        "stages": [{"kind": "k", "opts": {"lr": 0.1, "flags": [True, False]}, "none": None}],
    }
    parsed = tomllib.loads(dump_toml(data))
    assert parsed == {
        "recipe": {"name": "x"},
        "domains": {"terminal": {"rows": 40, "name with space": 'a"b'}},
        "stages": [{"kind": "k", "opts": {"lr": 0.1, "flags": [True, False]}}],
    }


def test_find_recipe_error_suggests_close_names(project):
    with pytest.raises(ConfigError) as info:
        find_recipe("pipelin")
    assert "did you mean pipeline" in str(info.value.hint)


def test_every_shipped_recipe_validates():
    """The recipes in the repo's recipes/ folder validate with the real registry (no test plugins)."""
    env = {k: v for k, v in os.environ.items() if k not in ("AWCTL_PLUGINS_DIR", "AWCTL_CONFIG")}
    shipped = shipped_recipes()
    assert shipped, "no shipped recipes found"
    proc = subprocess.run(
        [sys.executable, "-m", "awctl.cli.main", "recipes", "validate"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in shipped:
        assert f"ok  {path.stem}" in proc.stdout


def test_validation_does_not_import_torch():
    code = (
        "import sys\n"
        "from awctl.recipe import shipped_recipes, validate_recipe\n"
        "for p in shipped_recipes():\n"
        "    validate_recipe(p)\n"
        f"validate_recipe({str(FIXTURES / 'pipeline.toml')!r})\n"
        "heavy = [m for m in ('torch', 'transformers', 'vllm', 'deepspeed') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('clean')\n"
    )
    env = {**os.environ, "AWCTL_PLUGINS_DIR": str(FIXTURES / "plugins")}
    env.pop("AWCTL_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "clean" in proc.stdout, proc.stderr
