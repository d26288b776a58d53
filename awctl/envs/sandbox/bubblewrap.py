"""The bubblewrap jail: bash in a sandbox built by ``bwrap`` around one process.

Every namespace is unshared (so no network at all, and a private PID namespace whose processes all die
with it), ``/usr`` is read-only, ``/etc`` is a minimal generated one (with a passwd entry for the shell's
user), the workspace is the only writable host folder (plus a private tmpfs ``/tmp``, and one for the
user's home when it is not the workspace itself), the process dies with its parent, and the host's home
and ``/root`` are absent. The shell runs with its identity's uid and host name (:mod:`.identity`). The
number of processes in the sandbox is capped (``pids_limit``, see :mod:`.limits`), so a fork bomb fills
its own sandbox and nothing else.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from awctl.errors import AwctlError, EnvironmentUnavailable

from .identity import ShellIdentity
from .jail import Jail, JailSpec
from .limits import PidsCgroup, chown_tree, new_sandbox_uid, resolve_method
from .processes import descendants, nspid
from .protocol import CONTROL_DIR, bash_argv


class BubblewrapJail(Jail):
    """:class:`~.jail.Jail` through bubblewrap (``bwrap`` on PATH; ``tmux`` too for a terminal).

    ``pids_limit`` caps the processes (threads included) in the sandbox; 0 means no cap. ``pids_method``
    is how (:mod:`.limits`): ``auto`` (a pids cgroup where one can be made, else the user-namespace
    ``RLIMIT_NPROC``), ``cgroup`` or ``userns``; :attr:`pids_method_used` says which one applies once
    :meth:`check_available` ran. With ``userns`` as root, the sandbox runs as a host uid of its own and
    the workspace belongs to that uid while the sandbox lives (every folder above it must be searchable
    by others)."""

    def __init__(self, spec: JailSpec, *, pids_limit: int = 256, pids_method: str = "auto") -> None:
        super().__init__(spec)
        if pids_limit < 0:
            raise AwctlError(f"pids_limit must be >= 0 (0: no cap), got {pids_limit}")
        self._etc: Path | None = None
        self.pids_limit = int(pids_limit)
        self.pids_method = pids_method
        self.pids_method_used: str | None = None
        self.cgroup: PidsCgroup | None = None
        self.sandbox_uid: int | None = None
        self._workspace_owner = (0, 0)

    def check_available(self) -> None:
        missing = [p for p in ("bwrap", *(["tmux"] if self.spec.terminal else [])) if shutil.which(p) is None]
        if missing:
            raise EnvironmentUnavailable(
                f"the bubblewrap sandbox needs {', '.join(missing)} on PATH",
                hint="apt-get install -y bubblewrap tmux",
            )
        if self.pids_limit:
            self.pids_method_used = resolve_method(self.pids_method)

    def rc_lines(self) -> list[str]:
        # RLIMIT_NPROC, counted in the sandbox's own user namespace; it binds because the sandbox's root
        # is not the host's root in this method (and the hard limit cannot be raised from inside).
        if self.pids_method_used == "userns":
            return [f"ulimit -u {self.pids_limit}"]
        return []

    def prepare(self) -> None:
        # Nothing to start: bwrap builds the sandbox around each process. Only /etc is generated, and the
        # process cap is set up.
        self._etc = minimal_etc(self.spec.who)
        if self.pids_method_used == "cgroup" and self.cgroup is None:
            cgroup = PidsCgroup(self.spec.label, self.pids_limit)
            cgroup.create()
            self.cgroup = cgroup
        elif self.pids_method_used == "userns" and os.geteuid() == 0 and self.sandbox_uid is None:
            self._hand_over_to_sandbox_uid()

    def _hand_over_to_sandbox_uid(self) -> None:
        blocked = [
            str(p) for p in (*self.spec.workspace.parents, *self.spec.control.parents)
            if p.is_dir() and not os.stat(p).st_mode & 0o001 and p != self.spec.control.parent
        ]
        if blocked:
            raise EnvironmentUnavailable(
                f"the sandbox's own uid cannot reach its workspace: {blocked[0]} is not searchable by others",
                hint=f"chmod o+x {blocked[0]}, put the workspace elsewhere, or use pids_method = 'cgroup'",
            )
        stat = os.stat(self.spec.workspace)
        self._workspace_owner = (stat.st_uid, stat.st_gid)
        self.sandbox_uid = new_sandbox_uid()
        self.spec.control.parent.chmod(0o711)  # the control folder's run/ part is bound read-only inside
        self.spec.control.chmod(0o755)
        chown_tree(self.spec.workspace, self.sandbox_uid, self.sandbox_uid)

    def process_count(self) -> int | None:
        """Processes in the sandbox now, where the cap is a cgroup (``None`` otherwise)."""
        return self.cgroup.current() if self.cgroup is not None else None

    def forks_refused(self) -> int | None:
        """Forks the cap refused so far, where the cap is a cgroup (``None`` otherwise)."""
        return self.cgroup.refused() if self.cgroup is not None else None

    def shell_argv(self, interactive: bool) -> list[str]:
        if self._etc is None:
            raise AwctlError(
                "the bubblewrap jail was not prepared", hint="call prepare() before shell_argv()"
            )
        who = self.spec.who
        argv = [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--uid",
            str(who.uid),
            "--gid",
            str(who.uid),
            "--hostname",
            who.host,
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
            # A home of its own (not the workspace): private and writable, mounted before the workspace,
            # which may lie inside it.
            *(["--tmpfs", who.home] if who.home_is_separate else []),
            "--bind",
            str(self.spec.workspace),
            self.spec.mount_point,
            "--ro-bind",
            str(self.spec.control),
            CONTROL_DIR,
            "--chdir",
            self.spec.mount_point,
            # bwrap's root is a private tmpfs; make it read-only too, so the workspace and /tmp
            # are the only writable places.
            "--remount-ro",
            "/",
        ]
        if not interactive:
            # A terminal session keeps its (private) tmux pty as controlling terminal so C-c works;
            # the pty belongs to the sandbox alone, so TIOCSTI could only type into the sandbox itself.
            argv.append("--new-session")
        for key, value in self.shell_env().items():
            argv += ["--setenv", key, value]
        argv += bash_argv(interactive)
        if self.sandbox_uid is not None:
            uid = str(self.sandbox_uid)
            argv = ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", *argv]
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        return argv

    def teardown(self) -> None:
        # The sandbox dies with its process (its PID namespace with it) and the generated /etc is shared;
        # what is left is the cap: its cgroup (anything still in it is killed first) or the workspace's
        # hand-over to the sandbox's uid.
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        if self.sandbox_uid is not None:
            if self.spec.workspace.exists():
                chown_tree(self.spec.workspace, *self._workspace_owner)
            self.sandbox_uid = None

    def kill_children(self, host_pid: int, shell_nspid: int) -> None:
        # The shell is the host process's descendant whose pid inside the namespace is shell_nspid.
        for pid in descendants(host_pid):
            if nspid(pid) == shell_nspid and shell_nspid:
                for child in descendants(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
                return


_ETC_CACHE: dict[tuple[str, int, str, str], Path] = {}
_ETC_LOCK = threading.Lock()


def minimal_etc(who: ShellIdentity) -> Path:
    """A generated, read-only-mounted /etc for a shell's identity (users, groups, host name; built once
    per process and identity, removed at exit)."""
    key = (who.user, who.uid, who.host, who.home)
    with _ETC_LOCK:
        cached = _ETC_CACHE.get(key)
        if cached is not None and cached.is_dir():
            return cached
        etc = Path(tempfile.mkdtemp(prefix="awctl-etc-"))
        atexit.register(shutil.rmtree, etc, True)
        (etc / "passwd").write_text(who.passwd())
        (etc / "group").write_text(who.group())
        (etc / "hostname").write_text(f"{who.host}\n")
        (etc / "hosts").write_text(f"127.0.0.1 localhost {who.host}\n")
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
        _ETC_CACHE[key] = etc
        return etc
