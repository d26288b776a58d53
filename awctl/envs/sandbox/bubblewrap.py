"""The bubblewrap jail: bash in a sandbox built by ``bwrap`` around one process.

Every namespace is unshared (so no network at all, and a private PID namespace whose processes all die
with it), ``/usr`` is read-only, ``/etc`` is a minimal generated one, the workspace is the only writable
host folder (plus a private tmpfs ``/tmp``), the process dies with its parent, and the host's home and
``/root`` are absent.
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

from .jail import Jail, JailSpec
from .processes import descendants, nspid
from .protocol import CONTROL_DIR, bash_argv


class BubblewrapJail(Jail):
    """:class:`~.jail.Jail` through bubblewrap (``bwrap`` on PATH; ``tmux`` too for a terminal)."""

    def __init__(self, spec: JailSpec) -> None:
        super().__init__(spec)
        self._etc: Path | None = None

    def check_available(self) -> None:
        missing = [p for p in ("bwrap", *(["tmux"] if self.spec.terminal else [])) if shutil.which(p) is None]
        if missing:
            raise EnvironmentUnavailable(
                f"the bubblewrap sandbox needs {', '.join(missing)} on PATH",
                hint="apt-get install -y bubblewrap tmux",
            )

    def prepare(self) -> None:
        # Nothing to start: bwrap builds the sandbox around each process. Only /etc is generated.
        self._etc = minimal_etc(self.spec.mount_point)

    def shell_argv(self, interactive: bool) -> list[str]:
        if self._etc is None:
            raise AwctlError(
                "the bubblewrap jail was not prepared", hint="call prepare() before shell_argv()"
            )
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
        return argv + bash_argv(interactive)

    def teardown(self) -> None:
        # Nothing to remove: the sandbox dies with its process, and the generated /etc is shared.
        pass

    def kill_children(self, host_pid: int, shell_nspid: int) -> None:
        # The shell is the host process's descendant whose pid inside the namespace is shell_nspid.
        for pid in descendants(host_pid):
            if nspid(pid) == shell_nspid and shell_nspid:
                for child in descendants(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
                return


_ETC_CACHE: dict[str, Path] = {}
_ETC_LOCK = threading.Lock()


def minimal_etc(home: str) -> Path:
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
