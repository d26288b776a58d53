"""The pipe driver: bash with no terminal, reading commands from a pipe.

Each command is written to a control file and sourced (so ``cd`` and variables persist), then a marker
carrying the exit code and working directory is printed; the command's output is everything before that
marker. A thread pumps bash's merged stdout and stderr into a buffer.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable

from awctl.errors import AwctlError, EnvironmentUnavailable

from .processes import kill_group
from .protocol import CONTROL_DIR, CommandResult, ControlFolder, parse_done


class PipeDriver:
    """One bash process fed through its stdin. ``kill_children(host_pid, shell_nspid)`` is the jail's way
    to kill what a timed-out command left running; ``pgids`` collects the process groups to kill if the
    shell is dropped without being closed."""

    interactive = False

    def __init__(
        self, control: ControlFolder, pgids: list[int], kill_children: Callable[[int, int], None]
    ) -> None:
        self.control = control
        self._pgids = pgids
        self._kill_children = kill_children
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._buf_cond = threading.Condition()
        self._eof = False
        self._shell_nspid = 0

    def start(self, argv: list[str], timeout: float) -> None:
        """Start ``argv`` (the jail's non-interactive shell); returns once it read the rc file.
        Raises :class:`~awctl.errors.EnvironmentUnavailable` when it does not answer within ``timeout`` + 10 s."""
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
        n = self.control.nonce
        # Merge stderr into stdout inside the shell, so both keep their order (docker exec would
        # otherwise carry them on two streams).
        self._write_stdin(f"exec 2>&1\n. {CONTROL_DIR}/rc\nprintf '\\036{n};ready;%d\\036\\n' $$\n")
        got = self._wait_marker("ready", 0, timeout + 10)
        if got is None:
            out = bytes(self._buf).decode("utf-8", "replace")
            raise EnvironmentUnavailable(
                "the sandboxed shell did not start", hint=f"it printed: {out[-2000:]}"
            )
        self._shell_nspid = int(got[2].lstrip(b";") or 0)
        with self._buf_cond:
            del self._buf[: got[1] + 1]

    def stop(self) -> None:
        """Kill the shell's process group."""
        if self._proc is not None:
            kill_group(self._proc)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

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

    def _wait_marker(self, kind: str, start: int, timeout: float) -> tuple[int, int, bytes] | None:
        pat = re.compile(rb"\x1e" + self.control.nonce.encode() + rb";" + kind.encode() + rb"([^\x1e]*)\x1e")
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

    def run(self, command: str, seq: int, timeout: float) -> CommandResult:
        """Run ``command`` in the shell and return what it printed (see ``SandboxedShell.run``)."""
        if self._eof:
            raise AwctlError("the sandboxed shell has exited", hint="start a new SandboxedShell")
        t0 = time.monotonic()
        path = self.control.command_file(command, seq)
        n = self.control.nonce
        # Sourcing keeps the command in this shell (cd, variables persist); </dev/null keeps it off the
        # shell's own stdin, which carries this protocol.
        self._write_stdin(f'. {path} </dev/null\nprintf \'\\036{n};done;%d;%s\\036\\n\' "$?" "$PWD"\n')
        done = self._wait_marker("done", 0, timeout)
        timed_out = False
        if done is None and not self._eof:
            timed_out = True
            if self._proc is not None:
                self._kill_children(self._proc.pid, self._shell_nspid)
            done = self._wait_marker("done", 0, 5.0)
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
        code, cwd = parse_done(done[2])
        return CommandResult(output, 124 if timed_out else code, cwd, duration, timed_out)
