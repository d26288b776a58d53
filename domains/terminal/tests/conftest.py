"""Fixtures for the terminal domain's tests: a private Docker engine (session-scoped) and backends."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[Any]:
    """A private dockerd (``--bridge=none``) with the busybox + static bash sandbox image imported.

    Skips, with the reason, where no engine can start (not root, dockerd/busybox/bash-static missing).
    """
    from awctl.envs.dockerd import DockerEngine, engine_unavailable_reason
    from awctl.errors import EnvironmentUnavailable

    reason = engine_unavailable_reason()
    if reason:
        pytest.skip(f"no private Docker engine: {reason}")
    engine = DockerEngine()
    try:
        engine.start()
    except EnvironmentUnavailable as exc:
        pytest.skip(f"the private Docker engine did not start: {exc.message}")
    try:
        engine.import_image()
        yield engine
    finally:
        engine.stop()


@pytest.fixture(params=["bubblewrap", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])])
def shell_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Keyword arguments for SandboxedShell selecting each backend in turn."""
    if request.param == "docker":
        engine = request.getfixturevalue("docker_engine")
        return {"backend": "docker", "docker_host": engine.host}
    missing = [p for p in ("bwrap", "tmux") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"bubblewrap sandbox needs {', '.join(missing)}")
    return {"backend": "bubblewrap"}
