"""A persistent bash session in a sandbox, with a real terminal screen and exact command results.

:class:`SandboxedShell` is the runtime the terminal and SWE domains share. One instance is one bash
process that lives until :meth:`SandboxedShell.close`; working directory, variables and files persist
across calls. Two ways in:

* ``send_keys`` / ``screen`` — Terminus-style keystrokes into a real terminal emulator (tmux with a
  private socket, ``rows`` x ``cols``), and the visible screen as text. Needs ``terminal=True``.
* ``run`` — one command, its exact output (stdout and stderr interleaved as written), exit code and the
  working directory afterwards. Works with or without a terminal. With a terminal the command is typed
  at the prompt (so it also shows on the screen) and its output is cut from the pane's raw byte stream
  between two invisible markers; without one, bash reads commands from a pipe.

Backends: ``bubblewrap`` (here) and ``docker`` (:mod:`awctl.envs.docker_sandbox`, same interface).

The bubblewrap sandbox: every namespace unshared (so no network at all, a private PID namespace whose
processes all die with it), a read-only ``/usr`` and a minimal generated ``/etc``, the workspace as the
only writable host folder (plus a private tmpfs ``/tmp``), ``--die-with-parent``, the host's home and
``/root`` absent, an address-space limit (``ulimit -v``, which a process in the sandbox cannot raise)
and a wall-clock limit per ``run``.

The prompt is fixed so observations are predictable: ``PROMPT`` is ``root@sandbox:<cwd># `` with the
absolute working directory (never ``~``); ``PROMPT_RE`` matches it. ``HOME`` is the mount point.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError, EnvironmentUnavailable

#: The prompt the sandbox shell shows, with ``{cwd}`` the absolute working directory.
PROMPT = "root@sandbox:{cwd}# "
#: Matches a prompt line (group ``cwd``) followed by whatever was typed after it (group ``typed``).
PROMPT_RE = re.compile(r"^root@sandbox:(?P<cwd>/[^#\n]*)# (?P<typed>.*)$")

BACKENDS = ("bubblewrap", "docker")
CONTROL_DIR = "/run/awctl"  # where the control files (rc, long commands) appear inside the sandbox

# tmux key names Terminus-style keystrokes may use as a whole item: ``C-c``, ``M-x``, ``Enter``, ...
_NAMED_KEYS = (
    "Enter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|PageUp|PageDown|PPage|NPage|DC|IC"
)
KEY_NAME_RE = re.compile(
    rf"^(?:(?:[CMS]-)+(?:[A-Za-z0-9\[\]\\^_@?]|{_NAMED_KEYS})|{_NAMED_KEYS}|F(?:[1-9]|1[0-2]))$"
)


def is_key_name(keystrokes: str) -> bool:
    """Whether a whole keystrokes string names one key (``C-c``, ``Enter``) rather than literal text."""
    return bool(KEY_NAME_RE.match(keystrokes))


@dataclass
class CommandResult:
    """The result of :meth:`SandboxedShell.run`.

    ``output`` is exactly what the command wrote (stdout and stderr merged, ``\\r\\n`` of the terminal
    turned back into ``\\n``); ``cwd`` is the shell's working directory afterwards; ``timed_out`` is true
    when the wall-clock limit hit and the command was interrupted (``exit_code`` is then 124).
    """

    output: str
    exit_code: int
    cwd: str
    duration_s: float
    timed_out: bool


class SandboxedShell:
    """One persistent, sandboxed bash session. See the module docstring for the guarantees.

    ``workspace`` is the host folder bound read-write at ``mount_point``; when ``None`` a temporary
    folder is created and removed on :meth:`close`. ``env`` adds environment variables. ``image`` is
    the container image for the docker backend. Use as a context manager.
    """

    def __new__(cls, *args: Any, backend: str = "bubblewrap", **kwargs: Any) -> SandboxedShell:
        # SandboxedShell(backend="docker") gives the docker implementation of the same interface.
        if cls is SandboxedShell and backend == "docker":
            from awctl.envs.docker_sandbox import DockerShell

            return super().__new__(DockerShell)
        return super().__new__(cls)

    def __init__(
        self,
        workspace: Path | None = None,
        *,
        mount_point: str = "/workspace",
        backend: str = "bubblewrap",
        terminal: bool = True,
        rows: int = 40,
        cols: int = 160,
        timeout_s: float = 30.0,
        memory_mb: int = 1024,
        env: dict[str, str] | None = None,
        image: str | None = None,
    ) -> None:
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
        self.terminal = terminal
        self.rows, self.cols = rows, cols
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.env = dict(env or {})
        self.image = image
        self._ctl = Path(tempfile.mkdtemp(prefix="awctl-sb-"))
        self._nonce = secrets.token_hex(6)
        self._started = False
        self._closed = False
        self._seq = 0
        self._lock = threading.RLock()
        # pipe mode
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._buf_cond = threading.Condition()
        self._eof = False
        self._shell_nspid = 0
        # terminal mode
        self._tmux_sock = self._ctl / "tmux.sock"
        self._pane_log = self._ctl / "pane.log"
        self._log_offset = 0
        self._last_screen = ""
        self._etc = self._ctl / "etc"
        self._pgids: list[int] = []  # process groups to kill if this object is dropped without close()
        self._finalizer = weakref.finalize(
            self,
            _emergency_cleanup,
            self._ctl,
            self._tmux_sock,
            self._pgids,
            self.workspace if self._owns_workspace else None,
        )

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
            self._check_available()
            self._write_rc()
            self._prepare()
            if self.terminal:
                self._start_tmux()
            else:
                self._start_pipe()
            self._started = True

    def close(self) -> None:
        """Kill the shell and every process it started, remove temp folders. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self.terminal:
                    self._stop_tmux()
                if self._proc is not None:
                    _kill_group(self._proc)
                self._teardown()
            finally:
                shutil.rmtree(self._ctl, ignore_errors=True)
                if self._owns_workspace:
                    shutil.rmtree(self.workspace, ignore_errors=True)
                self._finalizer.detach()

    # ── backend hooks (the docker backend overrides these) ───────────────────────────────────────────

    def _check_available(self) -> None:
        missing = [p for p in ("bwrap", *(["tmux"] if self.terminal else [])) if shutil.which(p) is None]
        if missing:
            raise EnvironmentUnavailable(
                f"the bubblewrap sandbox needs {', '.join(missing)} on PATH",
                hint="apt-get install -y bubblewrap tmux",
            )

    def _prepare(self) -> None:
        """Create what the shell runs in (nothing for bubblewrap: bwrap builds it per process)."""
        self._write_etc()

    def _teardown(self) -> None:
        """Remove what ``_prepare`` created."""

    def _shell_argv(self, interactive: bool) -> list[str]:
        """The host command line that starts bash inside the sandbox."""
        argv = [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--uid",
            "0",
            "--gid",
            "0",
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / top
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), f"/{top}"]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), f"/{top}"]
        argv += ["--ro-bind", str(self._etc), "/etc"]
        argv += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--bind",
            str(self.workspace),
            self.mount_point,
            "--ro-bind",
            str(self._ctl / "run"),
            CONTROL_DIR,
            "--chdir",
            self.mount_point,
            # bwrap's root is a private tmpfs; make it read-only too, so the workspace and /tmp
            # are the only writable places.
            "--remount-ro",
            "/",
        ]
        if not interactive:
            # A terminal session keeps its (private) tmux pty as controlling terminal so C-c works;
            # the pty belongs to the sandbox alone, so TIOCSTI could only type into the sandbox itself.
            argv.append("--new-session")
        for key, value in self._shell_env().items():
            argv += ["--setenv", key, value]
        return argv + self._bash_argv(interactive)

    def _kill_children(self) -> None:
        """Kill every process the shell started (not the shell): used when a ``run`` times out."""
        if self._proc is None:
            return
        for pid in _descendants(self._proc.pid):
            if _nspid(pid) == self._shell_nspid and self._shell_nspid:
                for child in _descendants(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
                return

    # ── shared setup ─────────────────────────────────────────────────────────────────────────────────

    def _shell_env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": self.mount_point,
            "USER": "root",
            "LOGNAME": "root",
            "TERM": "tmux-256color" if self.terminal else "dumb",
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            **self.env,
        }

    def _bash_argv(self, interactive: bool) -> list[str]:
        rc = f"{CONTROL_DIR}/rc"
        if interactive:
            return ["/bin/bash", "--noprofile", "--rcfile", rc, "-i"]
        return ["/bin/bash", "--noprofile", "--norc"]

    def _write_etc(self) -> None:
        self._etc = _minimal_etc(self.mount_point)

    def _write_rc(self) -> None:
        run = self._ctl / "run"
        run.mkdir(exist_ok=True)
        n = self._nonce
        lines = [
            f"ulimit -v {self.memory_mb * 1024} 2>/dev/null",
            "unset HISTFILE",
            # Invisible OSC markers around each command in the pane's raw byte stream: PS0 is printed
            # after a command line is read; the start of PS1 carries the exit code and cwd, so the
            # "done" marker arrives in the same write as the prompt (never long before it shows).
            f"PS0='\\e]777;{n};start\\a'",
            "PROMPT_COMMAND='__awctl_rc=$?'",
            f"PS1='\\[\\e]777;{n};done;${{__awctl_rc:-0}};$PWD\\a\\]root@sandbox:$PWD# ' PS2='> '",
            # No bracketed-paste escapes around prompts: command output stays byte-exact.
            "bind 'set enable-bracketed-paste off' 2>/dev/null",
            "export PS1 PS2",
            f"cd {shlex.quote(self.mount_point)}",
        ]
        if self.terminal:
            # Wait until the host has attached its pipe to the pane, so no marker is missed.
            lines.insert(0, f"while [ ! -e {CONTROL_DIR}/go ]; do sleep 0.01; done")
        (run / "rc").write_text("\n".join(lines) + "\n")

    # ── terminal mode (tmux) ─────────────────────────────────────────────────────────────────────────

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", str(self._tmux_sock), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=10,
        )

    def _start_tmux(self) -> None:
        conf = self._ctl / "tmux.conf"
        conf.write_text(
            "set -g status off\nset -g escape-time 0\nset -g remain-on-exit on\n"
            "set -g history-limit 5000\nset -g default-terminal tmux-256color\n"
        )
        argv = self._shell_argv(interactive=True)
        subprocess.run(
            [
                "tmux",
                "-S",
                str(self._tmux_sock),
                "-f",
                str(conf),
                "new-session",
                "-d",
                "-s",
                "awctl",
                "-x",
                str(self.cols),
                "-y",
                str(self.rows),
                "--",
                *argv,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm"},
        )
        pane = self._tmux("display-message", "-p", "-t", "awctl", "#{pane_pid}").stdout.strip()
        if pane.isdigit():
            self._pgids.append(int(pane))
        self._pane_log.touch()
        self._tmux("pipe-pane", "-t", "awctl", "-o", f"cat >> {shlex.quote(str(self._pane_log))}")
        (self._ctl / "run" / "go").touch()
        if self._wait_marker("done", 0, self.timeout_s + 10) is None:
            screen = self._capture()
            self.close()
            raise EnvironmentUnavailable(
                "the sandboxed shell did not show a prompt", hint=f"screen was:\n{screen}"
            )

    def _stop_tmux(self) -> None:
        if not self._tmux_sock.exists():
            return
        pane = self._tmux("display-message", "-p", "-t", "awctl", "#{pane_pid}", check=False).stdout.strip()
        if pane.isdigit():
            # The pane process is bwrap (or docker exec), a session leader: kill its whole group; bwrap's
            # child dies with it (--die-with-parent), taking the sandbox's PID namespace down.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(pane), signal.SIGKILL)
        self._tmux("kill-server", check=False)

    def _read_log(self, start: int = 0) -> bytes:
        """The pane's raw output from byte ``start`` on (reading only the new part keeps polls cheap)."""
        try:
            with open(self._pane_log, "rb") as fh:
                fh.seek(start)
                return fh.read()
        except FileNotFoundError:
            return b""

    def _wait_marker(self, kind: str, start: int, timeout: float) -> tuple[int, int, bytes] | None:
        """First ``kind`` marker in the pane log after byte ``start``: (begin, end, payload)."""
        pat = re.compile(rb"\x1b\]777;" + self._nonce.encode() + rb";" + kind.encode() + rb"([^\x07]*)\x07")
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            m = pat.search(self._read_log(start))
            if m:
                return start + m.start(), start + m.end(), m.group(1)
            if time.monotonic() >= deadline:
                return None
            time.sleep(delay)
            delay = min(delay * 1.5, 0.02)

    def _capture(self) -> str:
        res = self._tmux("capture-pane", "-p", "-t", "awctl", check=False)
        if res.returncode == 0:
            self._last_screen = res.stdout
        return self._last_screen

    def send_keys(self, keystrokes: str, duration: float = 0.0) -> None:
        """Type ``keystrokes`` (a whole-string tmux key name like ``C-c`` is that key; anything else is
        literal text, ``\\n`` pressing Enter), then wait ``duration`` seconds."""
        self._need_terminal("send_keys")
        self.start()
        if keystrokes:
            if is_key_name(keystrokes):
                self._tmux("send-keys", "-t", "awctl", keystrokes)
            else:
                self._tmux("send-keys", "-t", "awctl", "-l", "--", keystrokes)
        if duration > 0:
            time.sleep(duration)

    def screen(self) -> str:
        """The visible screen (``rows`` x ``cols``) as text, trailing spaces and blank lines stripped."""
        self._need_terminal("screen")
        self.start()
        lines = [line.rstrip() for line in self._capture().split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def output_mark(self) -> int:
        """The current position in the terminal's raw output stream (for :meth:`wait_prompt`)."""
        self._need_terminal("output_mark")
        try:
            return self._pane_log.stat().st_size
        except FileNotFoundError:
            return 0

    def wait_prompt(self, since: int, timeout: float) -> bool:
        """Wait until bash shows a new prompt after stream position ``since``; False on timeout."""
        self._need_terminal("wait_prompt")
        return self._wait_marker("done", since, timeout) is not None

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
        if self.terminal:
            res = self._tmux("display-message", "-p", "-t", "awctl", "#{pane_dead}", check=False)
            return res.returncode == 0 and res.stdout.strip() == "0"
        return self._proc is not None and self._proc.poll() is None

    def clear(self) -> None:
        """Clear the screen and scrollback so the next screen starts with a fresh prompt."""
        self._need_terminal("clear")
        mark = self.output_mark()
        self._tmux("send-keys", "-t", "awctl", "-l", "--", "clear\n")
        self.wait_prompt(mark, self.timeout_s)
        self._tmux("clear-history", "-t", "awctl", check=False)

    def _need_terminal(self, what: str) -> None:
        if not self.terminal:
            raise AwctlError(f"{what} needs a terminal", hint="create the shell with terminal=True")

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
            seq = self._seq
            if self.terminal:
                return self._run_terminal(command, seq, timeout)
            return self._run_pipe(command, seq, timeout)

    def _command_file(self, command: str, seq: int) -> str:
        path = self._ctl / "run" / f"cmd_{seq}"
        path.write_text(command if command.endswith("\n") else command + "\n")
        return f"{CONTROL_DIR}/cmd_{seq}"

    def _run_terminal(self, command: str, seq: int, timeout: float) -> CommandResult:
        t0 = time.monotonic()
        offset = self._pane_log.stat().st_size
        # One-line commands are typed as they are; multi-line ones are sourced from a control file so
        # one prompt cycle (one pair of markers) covers them.
        line = command if "\n" not in command.strip("\n") else f". {self._command_file(command, seq)}"
        self._tmux("send-keys", "-t", "awctl", "-l", "--", line.strip("\n") + "\n")
        start = self._wait_marker("start", offset, timeout)
        timed_out = False
        done = None
        if start is not None:
            done = self._wait_marker("done", start[1], max(0.0, timeout - (time.monotonic() - t0)))
        if done is None:
            timed_out = True
            self._tmux("send-keys", "-t", "awctl", "C-c")
            if start is None:
                start = self._wait_marker("start", offset, 2.0)
            if start is not None:
                done = self._wait_marker("done", start[1], 5.0)
        duration = time.monotonic() - t0
        if start is None or done is None:
            raise AwctlError(
                f"the sandboxed shell stopped answering (command {command[:60]!r})",
                hint="close this shell and start a new one",
            )
        raw = self._read_log(start[1])[: done[0] - start[1]]
        code, cwd = _parse_done(done[2])
        output = raw.decode("utf-8", "replace").replace("\r\n", "\n")
        return CommandResult(output, 124 if timed_out else code, cwd, duration, timed_out)

    # ── pipe mode (no terminal) ──────────────────────────────────────────────────────────────────────

    def _start_pipe(self) -> None:
        argv = self._shell_argv(interactive=False)
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        self._pgids.append(self._proc.pid)
        threading.Thread(target=self._pump, daemon=True).start()
        n = self._nonce
        # Merge stderr into stdout inside the shell, so both keep their order (docker exec would
        # otherwise carry them on two streams).
        self._write_stdin(f"exec 2>&1\n. {CONTROL_DIR}/rc\nprintf '\\036{n};ready;%d\\036\\n' $$\n")
        got = self._wait_pipe_marker("ready", 0, self.timeout_s + 10)
        if got is None:
            out = bytes(self._buf).decode("utf-8", "replace")
            self.close()
            raise EnvironmentUnavailable(
                "the sandboxed shell did not start", hint=f"it printed: {out[-2000:]}"
            )
        self._shell_nspid = int(got[2].lstrip(b";") or 0)
        with self._buf_cond:
            del self._buf[: got[1] + 1]

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            with self._buf_cond:
                if not chunk:
                    self._eof = True
                    self._buf_cond.notify_all()
                    return
                self._buf += chunk
                self._buf_cond.notify_all()

    def _write_stdin(self, text: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(text.encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise AwctlError("the sandboxed shell has exited", hint="start a new SandboxedShell") from None

    def _wait_pipe_marker(self, kind: str, start: int, timeout: float) -> tuple[int, int, bytes] | None:
        pat = re.compile(rb"\x1e" + self._nonce.encode() + rb";" + kind.encode() + rb"([^\x1e]*)\x1e")
        deadline = time.monotonic() + timeout
        with self._buf_cond:
            while True:
                m = pat.search(self._buf, start)
                if m:
                    return m.start(), m.end(), m.group(1)
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    return None
                self._buf_cond.wait(left)

    def _run_pipe(self, command: str, seq: int, timeout: float) -> CommandResult:
        if self._eof:
            raise AwctlError("the sandboxed shell has exited", hint="start a new SandboxedShell")
        t0 = time.monotonic()
        path = self._command_file(command, seq)
        n = self._nonce
        # Sourcing keeps the command in this shell (cd, variables persist); </dev/null keeps it off the
        # shell's own stdin, which carries this protocol.
        self._write_stdin(f'. {path} </dev/null\nprintf \'\\036{n};done;%d;%s\\036\\n\' "$?" "$PWD"\n')
        done = self._wait_pipe_marker("done", 0, timeout)
        timed_out = False
        if done is None and not self._eof:
            timed_out = True
            self._kill_children()
            done = self._wait_pipe_marker("done", 0, 5.0)
        duration = time.monotonic() - t0
        with self._buf_cond:
            if done is None:
                output = bytes(self._buf).decode("utf-8", "replace")
                self._buf.clear()
                if self._eof:
                    code = self._proc.wait(5) if self._proc else -1
                    return CommandResult(output, code, "", duration, timed_out)
                raise AwctlError(
                    f"the sandboxed shell stopped answering (command {command[:60]!r})",
                    hint="close this shell and start a new one",
                )
            output = bytes(self._buf[: done[0]]).decode("utf-8", "replace")
            del self._buf[: done[1] + 1]
        code, cwd = _parse_done(done[2])
        return CommandResult(output, 124 if timed_out else code, cwd, duration, timed_out)


def make_shell(settings: dict[str, Any], **kwargs: Any) -> SandboxedShell:
    """A shell configured from a domain's settings (``awctl.toml [domains.<name>]``).

    Reads ``sandbox`` (``bubblewrap`` | ``docker``), ``rows``, ``cols``, ``timeout_s``, ``memory_mb``,
    ``image`` and, for docker, ``docker_host``; keyword arguments override the settings.
    """
    backend = kwargs.pop("backend", settings.get("sandbox", "bubblewrap"))
    opts: dict[str, Any] = {
        k: settings[k] for k in ("rows", "cols", "timeout_s", "memory_mb", "image") if k in settings
    }
    if backend == "docker" and "docker_host" in settings:
        opts["docker_host"] = settings["docker_host"]
    opts.update(kwargs)
    return SandboxedShell(backend=backend, **opts)


# ── helpers ──────────────────────────────────────────────────────────────────────────────────────────


def _parse_done(payload: bytes) -> tuple[int, str]:
    _, code, cwd = payload.decode("utf-8", "replace").split(";", 2)
    return int(code), cwd


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    return out


def _descendants(pid: int) -> list[int]:
    """All descendants of ``pid``, parents before children."""
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _nspid(pid: int) -> int:
    """The pid of a process inside its innermost PID namespace (0 when unknown)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    return 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(5)
    for stream in (proc.stdin, proc.stdout):
        with contextlib.suppress(Exception):
            stream and stream.close()  # type: ignore[func-returns-value]


_ETC_CACHE: dict[str, Path] = {}
_ETC_LOCK = threading.Lock()


def _minimal_etc(home: str) -> Path:
    """A generated, read-only-mounted /etc (built once per process and home, removed at exit)."""
    with _ETC_LOCK:
        cached = _ETC_CACHE.get(home)
        if cached is not None and cached.is_dir():
            return cached
        etc = Path(tempfile.mkdtemp(prefix="awctl-etc-"))
        atexit.register(shutil.rmtree, etc, True)
        (etc / "passwd").write_text(
            f"root:x:0:0:root:{home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (etc / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
        (etc / "hostname").write_text("sandbox\n")
        (etc / "hosts").write_text("127.0.0.1 localhost sandbox\n")
        (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files\n")
        # Copies, not binds (the generated /etc is mounted read-only as a whole): the loader cache and
        # the alternatives links (awk, editor...) keep /usr fully usable.
        for extra in ("ld.so.cache", "alternatives", "localtime", "terminfo"):
            src = Path("/etc", extra)
            if src.is_symlink():
                (etc / extra).symlink_to(os.readlink(src))
            elif src.is_dir():
                shutil.copytree(src, etc / extra, symlinks=True)
            elif src.is_file():
                shutil.copy2(src, etc / extra)
        os.chmod(etc, 0o755)
        _ETC_CACHE[home] = etc
        return etc


def _emergency_cleanup(ctl: Path, sock: Path, pgids: list[int], workspace: Path | None) -> None:
    """Last resort for a shell never closed (runs when it is collected or at interpreter exit):
    kill its processes, stop its tmux server, remove its temp folders."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    if sock.exists():
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, check=False)
    shutil.rmtree(ctl, ignore_errors=True)
    if workspace is not None:
        shutil.rmtree(workspace, ignore_errors=True)
