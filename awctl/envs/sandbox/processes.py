"""The host processes of a sandboxed shell: walking a process tree through ``/proc``, killing a process
group, and the last-resort cleanup of a shell that was never closed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (empty when it is gone)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    return out


def descendants(pid: int) -> list[int]:
    """All descendants of ``pid``, parents before children."""
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def nspid(pid: int) -> int:
    """The pid of a process inside its innermost PID namespace (0 when unknown)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    return 0


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s process group (it leads one), reap it and close its pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(5)
    for stream in (proc.stdin, proc.stdout):
        with contextlib.suppress(Exception):
            stream and stream.close()  # type: ignore[func-returns-value]


def emergency_cleanup(ctl: Path, sock: Path, pgids: list[int], workspace: Path | None) -> None:
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
