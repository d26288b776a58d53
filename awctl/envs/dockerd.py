"""A private Docker engine for tests and CI, and the busybox image the docker sandbox runs.

:class:`DockerEngine` starts ``dockerd`` with its data root, exec root, pidfile and socket in a temp
folder, **always** with ``--bridge=none --iptables=false`` (no default bridge is ever created; sandbox
containers use ``network_mode="none"``), waits until it answers, and stops it by its PID. It needs root
and the ``dockerd`` binary (Debian ``docker.io``); :func:`engine_unavailable_reason` says why not.

:func:`build_rootfs` writes a rootfs tarball: ``/bin/busybox`` (``busybox-static``) with one symlink per
applet (what ``busybox --install`` would create) plus ``/bin/bash`` copied from Debian's static bash
(``bash-static``), because the sandbox's prompt and command markers need bash features (``PS0``,
``PROMPT_COMMAND``) that busybox ``sh`` lacks. :meth:`DockerEngine.import_image` ``docker import``s it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from awctl.errors import EnvironmentUnavailable

BUSYBOX = ("/bin/busybox", "/usr/bin/busybox")
STATIC_BASH = ("/bin/bash-static", "/usr/bin/bash-static")


def _first(paths: tuple[str, ...]) -> str | None:
    return next((p for p in paths if Path(p).is_file()), None)


def engine_unavailable_reason() -> str | None:
    """Why a private engine cannot start here (``None`` when it can); cheap, starts nothing."""
    if os.geteuid() != 0:
        return "starting dockerd needs root"
    if shutil.which("dockerd") is None:
        return "dockerd is not installed (apt-get install -y docker.io)"
    if _first(BUSYBOX) is None:
        return "busybox is not installed (apt-get install -y busybox-static)"
    if _first(STATIC_BASH) is None:
        return "bash-static is not installed (apt-get install -y bash-static)"
    try:
        import docker  # noqa: F401
    except ImportError:
        return "the docker SDK is not installed (pip install 'awctl[docker]')"
    return None


def build_rootfs(path: Path) -> Path:
    """Write the sandbox image's rootfs tarball to ``path`` (see the module docstring)."""
    busybox, bash = _first(BUSYBOX), _first(STATIC_BASH)
    if busybox is None or bash is None:
        raise EnvironmentUnavailable(
            "building the sandbox image needs busybox-static and bash-static",
            hint="apt-get install -y busybox-static bash-static",
        )
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True).stdout.split()

    def add_dir(tar: tarfile.TarFile, name: str, mode: int = 0o755) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.mode = tarfile.DIRTYPE, mode
        tar.addfile(info)

    def add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(path, "w") as tar:
        for d in ("bin", "etc", "dev", "proc", "sys", "run", "workspace", "root"):
            add_dir(tar, d)
        add_dir(tar, "tmp", 0o1777)
        tar.add(busybox, "bin/busybox")
        tar.add(bash, "bin/bash")
        for applet in applets:
            if applet not in ("busybox", "bash"):
                link = tarfile.TarInfo(f"bin/{applet}")
                link.type, link.linkname = tarfile.SYMTYPE, "busybox"
                tar.addfile(link)
        add_text(tar, "etc/passwd", "root:x:0:0:root:/workspace:/bin/bash\n")
        add_text(tar, "etc/group", "root:x:0:\n")
        add_text(tar, "etc/hostname", "sandbox\n")
    return path


class DockerEngine:
    """A private ``dockerd``; use as a context manager. ``host`` is its ``unix://`` socket address."""

    def __init__(self, root: Path | None = None, start_timeout_s: float = 60.0) -> None:
        self._owns_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="awctl-dockerd-")) if root is None else Path(root)
        self.socket = self.root / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.pidfile = self.root / "docker.pid"
        self.log_path = self.root / "dockerd.log"
        self.start_timeout_s = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> DockerEngine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start dockerd and wait until it answers; raises EnvironmentUnavailable with its log on failure."""
        reason = engine_unavailable_reason()
        if reason:
            raise EnvironmentUnavailable(f"cannot start a private Docker engine: {reason}")
        argv = [
            "dockerd",
            "--data-root",
            str(self.root / "data"),
            "--exec-root",
            str(self.root / "exec"),
            "--host",
            self.host,
            "--pidfile",
            str(self.pidfile),
            "--bridge=none",  # never create the default bridge network
            "--iptables=false",
            "--ip6tables=false",
        ]
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if self.socket.exists() and self._ping():
                return
            time.sleep(0.2)
        log_tail = self.log_path.read_text(errors="replace")[-2000:]
        self.stop()
        raise EnvironmentUnavailable(
            "the private Docker engine did not start", hint=f"dockerd log:\n{log_tail}"
        )

    def _ping(self) -> bool:
        import docker

        try:
            client = docker.DockerClient(base_url=self.host, timeout=5)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:
            return False

    def client(self) -> Any:
        """A docker SDK client for this engine (close it when done)."""
        import docker

        return docker.DockerClient(base_url=self.host)

    def import_image(self, tag: str = "awctl-sandbox:latest") -> str:
        """``docker import`` the busybox + static bash rootfs as ``tag``; returns the tag."""
        repo, _, version = tag.partition(":")
        tarball = build_rootfs(self.root / "rootfs.tar")
        client = self.client()
        try:
            with open(tarball, "rb") as fh:
                client.api.import_image_from_data(fh.read(), repository=repo, tag=version or "latest")
            client.images.get(tag)
        finally:
            client.close()
        return tag

    def stop(self) -> None:
        """Stop dockerd by its PID (TERM, then KILL) and remove its folder when this engine created it."""
        pid = None
        if self._proc is not None:
            pid = self._proc.pid
        elif self.pidfile.exists():
            with contextlib.suppress(ValueError):
                pid = int(self.pidfile.read_text().strip())
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and _alive(pid, self._proc):
                time.sleep(0.1)
            if _alive(pid, self._proc):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            if self._proc is not None:
                with contextlib.suppress(Exception):
                    self._proc.wait(5)
        self._proc = None
        if self._owns_root:
            # dockerd unmounts its overlays on a clean stop; anything still mounted is left in place.
            shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int, proc: subprocess.Popen[bytes] | None) -> bool:
    if proc is not None:
        return proc.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
