""":class:`SandboxedShell`, one jail and one driver put together, and :func:`make_shell`, which builds one
from a domain's settings."""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError, EnvironmentUnavailable

from .bubblewrap import BubblewrapJail
from .docker import DockerJail
from .identity import ShellIdentity, identity_from_settings
from .jail import Jail, JailSpec
from .pipe import PipeDriver
from .processes import emergency_cleanup
from .protocol import CommandResult, ControlFolder
from .terminal import TerminalDriver

#: The jail behind each backend name.
JAILS: dict[str, type[Jail]] = {"bubblewrap": BubblewrapJail, "docker": DockerJail}
BACKENDS = tuple(JAILS)


class SandboxedShell:
    """One persistent, sandboxed bash session. See :mod:`awctl.envs.sandbox` for the guarantees.

    ``workspace`` is the host folder bound read-write at ``mount_point``; when ``None`` a temporary
    folder is created and removed on :meth:`close`. ``identity`` is who and where the shell is (its
    prompt style, user, host, home; :mod:`.identity`): by default root on ``sandbox`` with the prompt
    ``root@sandbox:<cwd># `` and ``HOME`` at the mount point (``/workspace``); with an identity the
    workspace is bound at ``identity.workdir`` (``mount_point`` may then only repeat it). ``env`` adds
    environment variables. ``image`` is the container image for the docker backend. ``jail_options`` go
    to the backend's jail (both:
    ``pids_limit``, the most processes in the sandbox, 0 for no cap; bubblewrap: ``pids_method``;
    docker: ``docker_host``, ``cpus``). Use as a context manager. ``jail`` and ``driver`` are the two
    parts it puts together.
    """

    def __init__(
        self,
        workspace: Path | None = None,
        *,
        mount_point: str | None = None,
        backend: str = "bubblewrap",
        terminal: bool = True,
        rows: int = 40,
        cols: int = 160,
        timeout_s: float = 30.0,
        memory_mb: int = 1024,
        env: dict[str, str] | None = None,
        image: str | None = None,
        identity: ShellIdentity | None = None,
        **jail_options: Any,
    ) -> None:
        if identity is not None and mount_point not in (None, identity.workdir):
            raise AwctlError(f"mount_point {mount_point!r} differs from the identity's workdir {identity.workdir!r}",
                             hint="leave mount_point out: a shell with an identity starts in its workdir")
        mount_point = identity.workdir if identity is not None else mount_point or "/workspace"
        if backend not in BACKENDS:
            raise AwctlError(f"unknown sandbox backend {backend!r}", hint=f"use one of {', '.join(BACKENDS)}")
        if not mount_point.startswith("/") or mount_point.rstrip("/") in (
            "",
            "/usr",
            "/etc",
            "/proc",
            "/dev",
        ):
            raise AwctlError(f"mount_point {mount_point!r} must be an absolute path outside system folders")
        self.backend = backend
        self._owns_workspace = workspace is None
        self.workspace = Path(tempfile.mkdtemp(prefix="awctl-ws-")) if workspace is None else Path(workspace)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.workspace = self.workspace.resolve()
        self.mount_point = mount_point.rstrip("/")
        self.identity = identity or ShellIdentity.awctl_default(self.mount_point)
        self.terminal = terminal
        self.rows, self.cols = rows, cols
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.env = dict(env or {})
        self.control = ControlFolder()
        self._ctl = self.control.path
        self._started = False
        self._closed = False
        self._seq = 0
        self._lock = threading.RLock()
        self._pgids: list[int] = []  # process groups to kill if this object is dropped without close()
        self._finalizer = weakref.finalize(
            self,
            emergency_cleanup,
            self._ctl,
            self.control.tmux_socket,
            self._pgids,
            self.workspace if self._owns_workspace else None,
        )
        spec = JailSpec(
            workspace=self.workspace,
            mount_point=self.mount_point,
            control=self.control.run,
            label=self.control.nonce,
            terminal=terminal,
            memory_mb=memory_mb,
            env=self.env,
            image=image,
            identity=self.identity,
        )
        try:
            self.jail: Jail = JAILS[backend](spec, **jail_options)
        except BaseException:
            self._finalizer()  # a wrong jail option: remove the folders made above now
            raise
        self.image = self.jail.image
        self.driver: TerminalDriver | PipeDriver
        if terminal:
            self.driver = TerminalDriver(self.control, rows, cols, self._pgids)
        else:
            self.driver = PipeDriver(self.control, self._pgids, self.jail.kill_children)

    # ── lifecycle ────────────────────────────────────────────────────────────────────────────────────

    def __enter__(self) -> SandboxedShell:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the sandbox and its shell; returns when the first prompt is ready. Idempotent."""
        with self._lock:
            if self._closed:
                raise AwctlError("this sandboxed shell was closed", hint="create a new SandboxedShell")
            if self._started:
                return
            self.jail.check_available()
            self._write_rc()
            self._prepare()
            try:
                self.driver.start(self._shell_argv(self.driver.interactive), self.timeout_s)
            except EnvironmentUnavailable:
                self.close()  # the shell did not come up: nothing of it may stay behind
                raise
            self._started = True

    def close(self) -> None:
        """Kill the shell and every process it started, remove temp folders. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.driver.stop()
                self.jail.teardown()
            finally:
                shutil.rmtree(self._ctl, ignore_errors=True)
                if self._owns_workspace:
                    shutil.rmtree(self.workspace, ignore_errors=True)
                self._finalizer.detach()

    # The three steps before a shell starts, kept as methods because the fixture recorder
    # (domains/terminal/tests/fixtures/record_cast.py) runs them to start the sandbox's bash itself.

    def _write_rc(self) -> None:
        self.control.write_rc(memory_mb=self.memory_mb, mount_point=self.mount_point, terminal=self.terminal,
                              extra=self.jail.rc_lines(), ps1=self.identity.ps1)

    def _prepare(self) -> None:
        self.jail.prepare()

    def _shell_argv(self, interactive: bool) -> list[str]:
        return self.jail.shell_argv(interactive)

    # ── prompt ───────────────────────────────────────────────────────────────────────────────────────

    @property
    def prompt_re(self) -> re.Pattern[str]:
        """Matches a line holding this shell's prompt followed by what was typed (groups ``typed`` and,
        where the style shows a directory, ``path``): ``PROMPT_RE``'s counterpart for any identity."""
        return self.identity.prompt_re

    def prompt(self, cwd: str | None = None) -> str:
        """The prompt this shell shows in ``cwd`` (default: where it started), trailing space included."""
        return self.identity.prompt(cwd)

    # ── terminal ─────────────────────────────────────────────────────────────────────────────────────

    def _terminal(self, what: str) -> TerminalDriver:
        if not isinstance(self.driver, TerminalDriver):
            raise AwctlError(f"{what} needs a terminal", hint="create the shell with terminal=True")
        return self.driver

    def send_keys(self, keystrokes: str, duration: float = 0.0) -> None:
        """Type ``keystrokes`` (a whole-string tmux key name like ``C-c`` is that key; anything else is
        literal text, ``\\n`` pressing Enter), then wait ``duration`` seconds."""
        driver = self._terminal("send_keys")
        self.start()
        driver.send_keys(keystrokes)
        if duration > 0:
            time.sleep(duration)

    def screen(self) -> str:
        """The visible screen (``rows`` x ``cols``) as text, trailing spaces and blank lines stripped."""
        driver = self._terminal("screen")
        self.start()
        return driver.screen()

    def output_mark(self) -> int:
        """The current position in the terminal's raw output stream (for :meth:`wait_prompt`)."""
        return self._terminal("output_mark").output_mark()

    def wait_prompt(self, since: int, timeout: float) -> bool:
        """Wait until bash shows a new prompt after stream position ``since``; False on timeout."""
        return self._terminal("wait_prompt").wait_prompt(since, timeout)

    def settle(self, timeout: float = 0.5, quiet: float = 0.02) -> str:
        """The screen once it stopped changing for ``quiet`` seconds (or at ``timeout``)."""
        deadline = time.monotonic() + timeout
        last = self.screen()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.screen()
            if now == last:
                return now
            last = now
        return last

    def alive(self) -> bool:
        """Whether the shell is still running (``exit`` or C-d at the prompt ends it)."""
        if not self._started or self._closed:
            return False
        return self.driver.alive()

    def clear(self) -> None:
        """Clear the screen and scrollback so the next screen starts with a fresh prompt."""
        self._terminal("clear").clear(self.timeout_s)

    # ── run ──────────────────────────────────────────────────────────────────────────────────────────

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """Run ``command`` in the persistent shell and return its exact output, exit code and cwd.

        On timeout the command is interrupted (Ctrl-C in a terminal; its processes killed otherwise),
        ``timed_out`` is set and ``exit_code`` is 124; the shell and its state survive.
        With a terminal the command is typed at the prompt: it assumes the shell is idle at an empty
        prompt (not inside a program started with ``send_keys``) and that ``PS1``/``PS0`` keep the
        sandbox's values, which carry the markers. A multi-line command is typed as
        ``. /run/awctl/cmd_<n>`` (its text is sourced from a control file).
        """
        self.start()
        timeout = self.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            self._seq += 1
            return self.driver.run(command, self._seq, timeout)


def make_shell(settings: dict[str, Any], **kwargs: Any) -> SandboxedShell:
    """A shell configured from a domain's settings (``awctl.toml [domains.<name>]``).

    Reads ``sandbox`` (``bubblewrap`` | ``docker``), ``rows``, ``cols``, ``timeout_s``, ``memory_mb``,
    ``image``, ``pids_limit`` (most processes in the sandbox, 0: no cap; default 256), for bubblewrap
    ``pids_method`` (``auto`` | ``cgroup`` | ``userns``), for docker ``docker_host``, and the shell's
    identity: ``prompt`` (``awctl`` | ``debian`` | ``fedora`` | ``bare``), ``user``, ``hostname``,
    ``workdir`` (:mod:`.identity`); keyword arguments override the settings.
    """
    backend = kwargs.pop("backend", settings.get("sandbox", "bubblewrap"))
    opts: dict[str, Any] = {
        k: settings[k] for k in ("rows", "cols", "timeout_s", "memory_mb", "image", "pids_limit") if k in settings
    }
    if backend == "docker" and "docker_host" in settings:
        opts["docker_host"] = settings["docker_host"]
    if backend == "bubblewrap" and "pids_method" in settings:
        opts["pids_method"] = settings["pids_method"]
    if "identity" not in kwargs and "mount_point" not in kwargs:
        identity = identity_from_settings(settings)
        if identity is not None:
            opts["identity"] = identity
    opts.update(kwargs)
    return SandboxedShell(backend=backend, **opts)
