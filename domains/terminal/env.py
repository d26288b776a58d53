"""The real terminal environment: Terminus-style keystrokes into a sandboxed bash in a real terminal.

:class:`TerminalEnv` runs each episode in a fresh :class:`awctl.envs.sandbox.SandboxedShell` (backend,
geometry, limits and the shell's identity from ``awctl.toml [domains.terminal]``). ``reset(task)`` applies
``task.setup``:

* ``files``: ``{relative path: text}`` or ``{relative path: {"content": text, "mode": 0o755}}``,
  written into the workspace, the directory the episode starts in (``/workspace`` by default);
* ``env``: environment variables of the shell;
* ``commands``: shell commands run before the episode (their output is cleared from the screen);

and returns the first screen (a prompt in the workspace). ``step`` sends each keystroke item and waits
its ``duration`` (capped by ``max_duration_s``, default 30 s), returning early once a command it ran
has brought the prompt back, then returns the settled screen.

**Prompt styles.** By default the shell is root on host ``sandbox`` and shows ``root@sandbox:<cwd># ``.
The setting ``prompt`` picks another style, and the user, host and home it shows are real in the sandbox
(:mod:`awctl.envs.sandbox.identity`): ``debian`` (``alice@devbox:~/work$ ``), ``fedora``
(``[alice@devbox work]$ ``) or ``bare`` (``bash-5.2$ ``), with ``user`` (default ``alice``), ``hostname``
(default ``devbox``) and ``workdir`` (default ``~/work``, the workspace) to change them. Record with
one, e.g. ``awctl record -d terminal --env-opt prompt=debian ...`` or ``[domains.terminal] prompt =
"fedora"`` in awctl.toml; :attr:`TerminalEnv.identity` says which one an env uses.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult

from .codec import TerminalActionCodec

if TYPE_CHECKING:
    from awctl.domain import Task
    from awctl.envs.sandbox import SandboxedShell


class TerminalEnv(Environment):
    """A real terminal session per episode. ``settings`` default to ``[domains.terminal]`` of awctl.toml;
    ``shell_options`` override them (``backend``, ``rows``, ``cols``, ``docker_host``, ``identity``, ...).
    ``identity`` is the shell's :class:`~awctl.envs.sandbox.ShellIdentity` (prompt style, user, host,
    home, working directory), checked when the env is made."""

    domain = "terminal"

    def __init__(self, settings: dict[str, Any] | None = None, **shell_options: Any) -> None:
        if settings is None:
            from awctl.config import load_project_config

            settings = load_project_config().domain_settings("terminal")
        from awctl.envs.sandbox import ShellIdentity

        self.settings = dict(settings)
        self.shell_options = shell_options
        given = shell_options.get("identity")
        self.identity: ShellIdentity = given if given is not None else ShellIdentity.from_settings(self.settings)
        self.max_duration_s = float(self.settings.get("max_duration_s", 30.0))
        self.codec = TerminalActionCodec()
        self.shell: SandboxedShell | None = None

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        from awctl.envs.sandbox import make_shell

        self.close()
        setup = dict(task.setup) if task is not None else {}
        options = {"identity": self.identity, **self.shell_options}
        env = {**options.pop("env", {}), **{str(k): str(v) for k, v in setup.get("env", {}).items()}}
        shell = make_shell(self.settings, terminal=True, env=env, **options)
        self.shell = shell
        for rel, spec in setup.get("files", {}).items():
            path = shell.workspace / rel
            if not path.resolve().is_relative_to(shell.workspace):
                raise ValueError(f"task setup file {rel!r} lies outside the workspace")
            content, mode = (spec.get("content", ""), spec.get("mode")) if isinstance(spec, dict) else (spec, None)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
            if mode is not None:
                path.chmod(int(mode))
        shell.start()
        for command in setup.get("commands", []):
            result = shell.run(command)
            if result.exit_code != 0:
                raise RuntimeError(f"task setup command {command!r} failed ({result.exit_code}): {result.output}")
        shell.clear()
        return shell.settle()

    def step(self, action: str) -> StepResult:
        if self.shell is None:
            self.reset()
        assert self.shell is not None
        items = self.codec.parse(action)
        t0 = time.monotonic()
        waited = []
        for item in items:
            wait = min(item.duration, self.max_duration_s)
            if item.is_wait:
                time.sleep(wait)
                waited.append(wait)
                continue
            mark = self.shell.output_mark()
            start = time.monotonic()
            self.shell.send_keys(item.keystrokes)
            # Return early once the shell prompts again, so fast commands give a deterministic screen.
            self.shell.wait_prompt(mark, wait)
            waited.append(round(time.monotonic() - start, 4))
        screen = self.shell.settle()
        done = not self.shell.alive()
        return StepResult(screen, done=done, info={"waited_s": waited, "elapsed_s": round(time.monotonic() - t0, 4),
                                                   "shell_exited": done})

    def close(self) -> None:
        if self.shell is not None:
            self.shell.close()
            self.shell = None
