"""A cap on the number of processes in one bubblewrap sandbox, so a fork bomb stays inside it.

An agent's policy will type anything, ``:(){ :|:& };:`` included. Without a cap its processes fill the
host's PID table and every other sandbox, and the host itself, can no longer fork. Two ways to cap one
sandbox, tried in this order by ``method="auto"``:

* ``cgroup`` — a pids cgroup of its own (cgroup v2 ``pids.max`` where the unified hierarchy has the pids
  controller, else the cgroup v1 pids hierarchy), made for this sandbox and removed with it. The sandbox's
  first host process writes itself into the cgroup's ``cgroup.procs`` and then execs ``bwrap``, so every
  process of the sandbox is born inside it. Needs write access to the cgroup file system (root on most
  hosts, or a delegated subtree).
* ``userns`` — ``RLIMIT_NPROC`` (``ulimit -u``) set by the sandbox's rc file. The kernel (5.14+) counts
  that limit per user *in each user namespace*, and bwrap gives every sandbox a user namespace of its
  own, so the count is this sandbox's processes alone. The limit binds only when the sandbox's root is
  not the host's root: as root on the host, ``bwrap`` is started through ``setpriv`` as an unprivileged
  uid of its own (mapped to 0 inside), and the workspace is handed to that uid for the sandbox's life.
  Raising a hard limit needs ``CAP_SYS_RESOURCE`` on the host, which nothing in the sandbox has.

Threads count as processes in both (the kernel counts tasks).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

from awctl.errors import AwctlError, EnvironmentUnavailable

METHODS = ("auto", "cgroup", "userns")
#: Host uids handed to sandboxes in the ``userns`` method (far above any account a system creates).
SANDBOX_UID_RANGE = (1_500_000_000, 1_600_000_000)


# ── cgroups ──────────────────────────────────────────────────────────────────────────────────────────


def _mounts() -> list[tuple[str, str, list[str]]]:
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 4:
                out.append((parts[1], parts[2], parts[3].split(",")))
    return out


def _own_cgroup(v2: bool) -> str:
    """This process's cgroup path in the unified hierarchy (v2) or in the pids hierarchy (v1)."""
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as fh:
        for line in fh:
            num, controllers, path = line.rstrip("\n").split(":", 2)
            if (v2 and num == "0" and controllers == "") or (not v2 and "pids" in controllers.split(",")):
                return path
    return "/"


def pids_hierarchy() -> tuple[Path, int] | None:
    """Where a sandbox's pids cgroup can go: (parent folder, cgroup version), or ``None`` when this host
    has no pids controller mounted (nothing is created here)."""
    for point, fstype, _options in _mounts():
        if fstype == "cgroup2":
            with contextlib.suppress(OSError):
                if "pids" in (Path(point) / "cgroup.controllers").read_text().split():
                    # Sandboxes go right under the hierarchy's root: the root may enable controllers for
                    # its children although it holds processes (no other cgroup may).
                    return Path(point), 2
    for point, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options:
            return Path(point) / _own_cgroup(False).lstrip("/"), 1
    return None


class PidsCgroup:
    """One sandbox's pids cgroup: :meth:`create` it, start processes through :meth:`wrap`, read
    :meth:`current`/:meth:`refused`, :meth:`destroy` it (kills what is left in it)."""

    def __init__(self, label: str, max_pids: int, parent: Path | None = None, version: int | None = None):
        found = (parent, version) if parent is not None and version is not None else pids_hierarchy()
        if found is None:
            raise EnvironmentUnavailable(
                "no pids cgroup controller is mounted on this host",
                hint="mount cgroup v2 with the pids controller, or use pids_method = 'userns'",
            )
        self.parent, self.version = found
        self.path = self.parent / f"awctl-sandbox-{label}"
        self.max_pids = max_pids

    def create(self) -> None:
        try:
            if self.version == 2:
                control = self.parent / "cgroup.subtree_control"
                if "pids" not in control.read_text().split():
                    control.write_text("+pids")
            self.path.mkdir()
            # A jail dropped without teardown still leaves no cgroup behind (at collection or exit).
            weakref.finalize(self, _remove_quietly, self.path)
            (self.path / "pids.max").write_text(str(self.max_pids))
        except OSError as exc:
            with contextlib.suppress(OSError):
                self.path.rmdir()
            raise EnvironmentUnavailable(
                f"cannot create the sandbox's pids cgroup at {self.path}: {exc.strerror or exc}",
                hint="run as root (or delegate a cgroup subtree), or use pids_method = 'userns'",
            ) from None

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside this cgroup: a shell writes its own pid into ``cgroup.procs`` and
        execs ``argv`` (same pid), so nothing of the sandbox is ever born outside the cgroup."""
        procs = self.path / "cgroup.procs"
        return ["/bin/sh", "-c", 'echo $$ > "$1" && shift && exec "$@"', "awctl-pids", str(procs), *argv]

    def _read(self, name: str) -> str | None:
        try:
            return (self.path / name).read_text()
        except OSError:
            return None

    def current(self) -> int | None:
        """Processes (tasks) in the sandbox now; ``None`` once the cgroup is gone."""
        text = self._read("pids.current")
        return int(text) if text is not None else None

    def refused(self) -> int | None:
        """How many forks the cap has refused so far (``pids.events`` ``max``)."""
        text = self._read("pids.events")
        if text is None:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
        return 0

    def pids(self) -> list[int]:
        text = self._read("cgroup.procs")
        return [int(p) for p in text.split()] if text else []

    def destroy(self, timeout: float = 10.0) -> None:
        """Kill every process left in the cgroup and remove it. Safe to call twice."""
        if not self.path.exists():
            return
        deadline = time.monotonic() + timeout
        while True:
            if self.version == 2:
                with contextlib.suppress(OSError):
                    (self.path / "cgroup.kill").write_text("1")
            for pid in self.pids():  # a fork bomb forks while we kill: repeat until the cgroup is empty
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AwctlError(
                        f"the sandbox's pids cgroup {self.path} still holds processes after {timeout}s",
                        hint=f"kill the pids in {self.path}/cgroup.procs, then rmdir it",
                    ) from None
                time.sleep(0.02)


def _remove_quietly(path: Path) -> None:
    for _ in range(100):
        try:
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


@functools.lru_cache(maxsize=1)
def cgroup_unavailable_reason() -> str | None:
    """Why a pids cgroup cannot be made here (``None`` when it can); probes once per process by creating
    and removing one."""
    probe = None
    try:
        probe = PidsCgroup(f"probe-{os.getpid()}-{secrets.token_hex(3)}", 1)
        probe.create()
    except EnvironmentUnavailable as exc:
        return exc.message
    finally:
        if probe is not None:
            with contextlib.suppress(Exception):
                probe.destroy()
    return None


# ── user namespaces ──────────────────────────────────────────────────────────────────────────────────


def new_sandbox_uid() -> int:
    """A host uid no account and (almost surely) no other live sandbox uses."""
    low, high = SANDBOX_UID_RANGE
    return low + secrets.randbelow(high - low)


@functools.lru_cache(maxsize=1)
def userns_unavailable_reason() -> str | None:
    """Why the ``userns`` method cannot cap processes here (``None`` when it can); probes once per process
    by starting a tiny bubblewrap sandbox whose process sets a limit of one process and must fail to fork."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed"
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    probe = ("import os, resource\nresource.setrlimit(resource.RLIMIT_NPROC, (1, 1))\ntry:\n"
             "    pid = os.fork()\nexcept BlockingIOError:\n    print('capped')\nelse:\n"
             "    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n    print('forked')\n")
    argv = ["bwrap", "--unshare-user", "--unshare-pid", "--die-with-parent", "--uid", "0", "--gid", "0",
            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", python, "-c", probe]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            return "setpriv (util-linux) is not installed"
        uid = str(new_sandbox_uid())
        argv = ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", *argv]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the probe sandbox did not run: {exc}"
    if out.returncode != 0:
        return f"an unprivileged bubblewrap sandbox cannot start here: {out.stderr.strip()[-300:]}"
    if out.stdout.strip() != "capped":
        return "RLIMIT_NPROC is not enforced inside a user namespace on this kernel"
    return None


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it to ``uid:gid`` (symlinks themselves, never their targets)."""
    with contextlib.suppress(OSError):
        os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            with contextlib.suppress(OSError):
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def resolve_method(method: str) -> str:
    """``cgroup`` or ``userns`` for ``method`` (``auto`` picks the first that works here); raises
    :class:`~awctl.errors.EnvironmentUnavailable` naming both reasons when neither does."""
    if method not in METHODS:
        raise AwctlError(f"unknown pids_method {method!r}", hint=f"use one of {', '.join(METHODS)}")
    reasons = {}
    for candidate, probe in (("cgroup", cgroup_unavailable_reason), ("userns", userns_unavailable_reason)):
        if method in ("auto", candidate):
            reason = probe()
            if reason is None:
                return candidate
            reasons[candidate] = reason
    raise EnvironmentUnavailable(
        "the sandbox cannot cap its process count here ("
        + "; ".join(f"{k}: {v}" for k, v in reasons.items())
        + ")",
        hint="run as root with a writable pids cgroup, or allow unprivileged user namespaces; "
        "pids_limit = 0 in [domains.<name>] runs without a cap (not for untrusted policies)",
    )
