"""A non-editable install carries everything a user needs: the built-in domains (as ``awctl_domains``,
never a top-level ``domains``) and the shipped recipes (as package data), usable from any folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-compile",
         "--target", str(target), str(REPO)],
        check=True, capture_output=True, text=True, timeout=600,
    )
    return target


def _awctl(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWCTL_")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "awctl.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_wheel_holds_domains_and_recipes_under_names_that_cannot_collide(installed: Path) -> None:
    assert (installed / "awctl_domains" / "terminal" / "domain.py").is_file()
    assert (installed / "awctl_recipes" / "quickstart.toml").is_file()
    assert (installed / "awctl_recipes" / "deepspeed" / "zero3.json").is_file()
    assert not (installed / "domains").exists() and not (installed / "recipes").exists()


def test_an_installed_awctl_lists_runs_and_copies_recipes_from_any_folder(installed: Path, tmp_path: Path) -> None:
    listed = _awctl(installed, tmp_path, "recipes", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    paths = {r["name"]: r["path"] for r in json.loads(listed.stdout)}
    assert "quickstart" in paths and paths["quickstart"].startswith(str(installed))
    valid = _awctl(installed, tmp_path, "recipes", "validate", "quickstart")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    domains = {d["name"] for d in json.loads(_awctl(installed, tmp_path, "domains", "--json").stdout)}
    assert {"terminal", "swe", "mcp", "search", "web", "os", "android"} <= domains
    assert _awctl(installed, tmp_path, "recipes", "cp", "quickstart").returncode == 0
    assert (tmp_path / "recipes" / "quickstart.toml").is_file()
