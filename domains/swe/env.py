"""The real SWE environment: a git repository in a bubblewrap sandbox, edited by a real editor.

On ``reset`` the task's fixture repository (``task.setup["repo"]``, a folder under ``fixtures/repos``) is
copied into a fresh workspace, ``task.setup["files"]`` (path → text) is written over it, and the result
becomes the first commit of a new git repository. The workspace is mounted read-write at ``/testbed`` in
a :class:`~awctl.envs.sandbox.SandboxedShell` (no network, read-only system).

``str_replace_editor`` actions run on the host against the workspace files through
:class:`~awctl_domains.swe.editor.Editor` (paths outside ``/testbed`` do not exist for it); ``bash`` actions run
in the sandbox's persistent shell; ``submit`` stages everything and returns ``git diff --cached`` and ends
the episode. The initial observation is the editor's directory view of ``/testbed``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, CodecError, EnvironmentUnavailable

from .codec import BashCall, EditorCall, SubmitCall, SweActionCodec, render_bash
from .editor import Editor

if TYPE_CHECKING:
    from awctl.domain import Task
    from awctl.envs.sandbox import SandboxedShell

REPOS_DIR = Path(__file__).parent / "fixtures" / "repos"
MOUNT_POINT = "/testbed"
DEFAULT_REPO = "inikit"
# Fixed identity and dates make the initial commit's hash the same on every reset.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "awctl",
    "GIT_AUTHOR_EMAIL": "awctl@example.invalid",
    "GIT_COMMITTER_NAME": "awctl",
    "GIT_COMMITTER_EMAIL": "awctl@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def available_repos() -> list[str]:
    """Names of the fixture repositories a task may name in ``setup["repo"]``."""
    return sorted(p.name for p in REPOS_DIR.iterdir() if p.is_dir())


def build_repository(workspace: Path, repo: str, files: dict[str, str] | None = None) -> None:
    """Copy fixture ``repo`` into ``workspace``, overlay ``files``, and commit it as a new git repository."""
    source = REPOS_DIR / repo
    if not source.is_dir():
        raise AwctlError(f"unknown SWE fixture repository {repo!r}", hint=f"use one of {', '.join(available_repos())}")
    shutil.copytree(source, workspace, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for rel, text in (files or {}).items():
        target = workspace / rel
        if not target.resolve().is_relative_to(workspace.resolve()):
            raise AwctlError(f"setup file {rel!r} lies outside the repository")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    env = {**os.environ, **_GIT_ENV, "HOME": str(workspace)}
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "config", "user.name", "awctl"],
        ["git", "config", "user.email", "awctl@example.invalid"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", f"{repo}: initial state"],
    ):
        subprocess.run(argv, cwd=workspace, env=env, check=True, capture_output=True, timeout=30)


class SweEnv(Environment):
    """One SWE episode at a time in a real sandbox. ``settings`` are ``awctl.toml [domains.swe]``.

    Recognised settings: ``sandbox`` (``bubblewrap``), ``timeout_s`` (per bash command, default 60),
    ``memory_mb``. Use as a context manager; ``close`` removes the workspace and stops the shell.
    """

    domain = "swe"

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = dict(settings or {})
        self.codec = SweActionCodec()
        self.workspace: Path | None = None
        self.shell: SandboxedShell | None = None
        self.editor: Editor | None = None
        self.cwd = MOUNT_POINT
        self.done = False

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self._teardown()
        setup = task.setup if task is not None else {}
        self.workspace = Path(tempfile.mkdtemp(prefix="awctl-swe-"))
        build_repository(self.workspace, setup.get("repo", DEFAULT_REPO), setup.get("files"))
        from awctl.envs.sandbox import make_shell

        self.shell = make_shell(
            self.settings,
            workspace=self.workspace,
            mount_point=MOUNT_POINT,
            terminal=False,
            timeout_s=float(self.settings.get("timeout_s", 60.0)),
            env={"PYTHONDONTWRITEBYTECODE": "1", "GIT_CONFIG_NOSYSTEM": "1"},
        )
        self.shell.start()
        self.cwd = MOUNT_POINT
        self.done = False
        self.editor = Editor(self.workspace, MOUNT_POINT, cwd=lambda: self.cwd)
        return self.editor.run("view", MOUNT_POINT).observation

    def step(self, action: str) -> StepResult:
        if self.shell is None or self.editor is None:
            raise EnvironmentUnavailable("the SWE environment has not been reset", hint="call reset() first")
        try:
            call = self.codec.parse(action)
        except CodecError as exc:
            return StepResult(f"Invalid action: {exc.message}", False, {"error": "codec", "detail": str(exc)})
        if isinstance(call, EditorCall):
            outcome = self.editor.run(call.command, call.path, **call.kwargs())
            return StepResult(outcome.observation, False, {"tool": "str_replace_editor", "ok": outcome.ok})
        if isinstance(call, BashCall):
            result = self.shell.run(call.command)
            self.cwd = result.cwd or self.cwd
            text = render_bash(result.output, result.exit_code, self.cwd, result.timed_out)
            info = {"tool": "bash", "exit_code": result.exit_code, "cwd": self.cwd,
                    "duration_s": result.duration_s, "timed_out": result.timed_out}
            return StepResult(text, False, info)
        assert isinstance(call, SubmitCall)
        result = self.shell.run(f"git -C {MOUNT_POINT} add -A && git -C {MOUNT_POINT} diff --cached")
        self.done = True
        return StepResult(result.output.rstrip("\n"), True, {"tool": "submit", "exit_code": result.exit_code})

    def _teardown(self) -> None:
        if self.shell is not None:
            self.shell.close()
            self.shell = None
        if self.workspace is not None:
            shutil.rmtree(self.workspace, ignore_errors=True)
            self.workspace = None
        self.editor = None

    def close(self) -> None:
        self._teardown()


def real_env_status() -> tuple[bool, str]:
    """Whether bubblewrap and git are installed (cheap: no process is started)."""
    missing = [p for p in ("bwrap", "git") if shutil.which(p) is None]
    if missing:
        return False, f"needs {', '.join(missing)} (apt-get install -y bubblewrap git)"
    return True, "bubblewrap sandbox with a git repository at /testbed"
