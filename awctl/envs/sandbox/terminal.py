"""The terminal driver: bash in a real terminal emulator, tmux with a private socket.

Keystrokes go in with ``send-keys``; the visible screen comes out with ``capture-pane``. Everything the
pane prints is also appended, byte for byte, to a log file (``pipe-pane``), where the rc file's invisible
markers (:mod:`.protocol`) say when a command started and when the prompt came back, with the exit code
and working directory. :meth:`TerminalDriver.run` types a command at the prompt and cuts its output from
that log between the two markers.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time

from awctl.errors import AwctlError, EnvironmentUnavailable

from .protocol import CommandResult, ControlFolder, parse_done

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


class TerminalDriver:
    """One tmux server (socket and pane log in the control folder) with one ``rows`` x ``cols`` pane.
    ``pgids`` collects the process groups to kill if the shell is dropped without being closed."""

    interactive = True

    def __init__(self, control: ControlFolder, rows: int, cols: int, pgids: list[int]) -> None:
        self.control = control
        self.rows, self.cols = rows, cols
        self.socket = control.tmux_socket
        self._pgids = pgids
        self._pane_log = control.path / "pane.log"
        self._last_screen = ""

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=10,
        )

    def start(self, argv: list[str], timeout: float) -> None:
        """Start ``argv`` (the jail's interactive shell) in the pane; returns at the first prompt.
        Raises :class:`~awctl.errors.EnvironmentUnavailable` when no prompt shows within ``timeout`` + 10 s."""
        conf = self.control.path / "tmux.conf"
        conf.write_text(
            "set -g status off\nset -g escape-time 0\nset -g remain-on-exit on\n"
            "set -g history-limit 5000\nset -g default-terminal tmux-256color\n"
        )
        subprocess.run(
            [
                "tmux",
                "-S",
                str(self.socket),
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
        (self.control.run / "go").touch()
        if self._wait_marker("done", 0, timeout + 10) is None:
            screen = self._capture()
            raise EnvironmentUnavailable(
                "the sandboxed shell did not show a prompt", hint=f"screen was:\n{screen}"
            )

    def stop(self) -> None:
        """Kill the pane's process group and the tmux server."""
        if not self.socket.exists():
            return
        pane = self._tmux("display-message", "-p", "-t", "awctl", "#{pane_pid}", check=False).stdout.strip()
        if pane.isdigit():
            # The pane process is bwrap (or docker exec), a session leader: kill its whole group; bwrap's
            # child dies with it (--die-with-parent), taking the sandbox's PID namespace down.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(pane), signal.SIGKILL)
        self._tmux("kill-server", check=False)

    def alive(self) -> bool:
        res = self._tmux("display-message", "-p", "-t", "awctl", "#{pane_dead}", check=False)
        return res.returncode == 0 and res.stdout.strip() == "0"

    # ── the pane's byte stream ───────────────────────────────────────────────────────────────────────

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
        nonce = self.control.nonce.encode()
        pat = re.compile(rb"\x1b\]777;" + nonce + rb";" + kind.encode() + rb"([^\x07]*)\x07")
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

    def output_mark(self) -> int:
        """The current position in the pane's raw output stream."""
        try:
            return self._pane_log.stat().st_size
        except FileNotFoundError:
            return 0

    def wait_prompt(self, since: int, timeout: float) -> bool:
        """Wait until bash shows a new prompt after stream position ``since``; False on timeout."""
        return self._wait_marker("done", since, timeout) is not None

    # ── keys and screen ──────────────────────────────────────────────────────────────────────────────

    def _capture(self) -> str:
        res = self._tmux("capture-pane", "-p", "-t", "awctl", check=False)
        if res.returncode == 0:
            self._last_screen = res.stdout
        return self._last_screen

    def send_keys(self, keystrokes: str) -> None:
        """Type ``keystrokes``: a whole-string tmux key name is that key, anything else literal text."""
        if keystrokes:
            if is_key_name(keystrokes):
                self._tmux("send-keys", "-t", "awctl", keystrokes)
            else:
                self._tmux("send-keys", "-t", "awctl", "-l", "--", keystrokes)

    def screen(self) -> str:
        """The visible screen as text, trailing spaces and blank lines stripped."""
        lines = [line.rstrip() for line in self._capture().split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def clear(self, timeout: float) -> None:
        """Clear the screen and scrollback (waits up to ``timeout`` for the prompt after ``clear``)."""
        mark = self.output_mark()
        self._tmux("send-keys", "-t", "awctl", "-l", "--", "clear\n")
        self.wait_prompt(mark, timeout)
        self._tmux("clear-history", "-t", "awctl", check=False)

    # ── run ──────────────────────────────────────────────────────────────────────────────────────────

    def run(self, command: str, seq: int, timeout: float) -> CommandResult:
        """Type ``command`` at the prompt and return what it printed (see ``SandboxedShell.run``)."""
        t0 = time.monotonic()
        offset = self._pane_log.stat().st_size
        # One-line commands are typed as they are; multi-line ones are sourced from a control file so
        # one prompt cycle (one pair of markers) covers them.
        line = command if "\n" not in command.strip("\n") else f". {self.control.command_file(command, seq)}"
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
        code, cwd = parse_done(done[2])
        output = raw.decode("utf-8", "replace").replace("\r\n", "\n")
        return CommandResult(output, 124 if timed_out else code, cwd, duration, timed_out)
