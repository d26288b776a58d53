"""The docker jail: the same sandboxed shell in a Docker container.

The container runs with ``network_mode="none"``, a read-only root (plus a private tmpfs ``/tmp``),
memory/CPU/pids limits, the workspace bound read-write at the mount point and the shell's control folder
bound read-only at ``/run/awctl``; its main process only sleeps. The shell itself is ``docker exec`` of
``/bin/bash`` (with ``-t`` inside a private tmux for a terminal), so screens, markers and ``run`` work
exactly as with bubblewrap. The image must hold ``/bin/bash`` — :func:`awctl.envs.dockerd.build_rootfs`
puts Debian's static bash (``bash-static``) next to busybox for that reason. The container is removed on
teardown, which kills everything in it.

The shell's identity (:mod:`.identity`) is the container's host name, the ``docker exec`` user and a
generated ``/etc/passwd`` and ``/etc/group`` bound over the image's; a home that is not the workspace is a
tmpfs owned by the user. A user other than root gets the workspace's ownership while the container lives
(the engine maps no uids), which needs the host's root, as running a private engine does anyway.

The docker SDK is imported only here, and only when :meth:`DockerJail.check_available` runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from awctl.errors import EnvironmentUnavailable

from .jail import Jail, JailSpec
from .limits import chown_tree
from .protocol import CONTROL_DIR, bash_argv

DEFAULT_IMAGE = "awctl-sandbox:latest"


class DockerJail(Jail):
    """:class:`~.jail.Jail` in a Docker container. ``docker_host`` (e.g. ``unix:///tmp/x/docker.sock``)
    defaults to ``$DOCKER_HOST``; ``cpus`` and ``pids_limit`` (the most processes in the container, 0: no
    cap) bound the container; the image defaults to ``DEFAULT_IMAGE``."""

    def __init__(
        self, spec: JailSpec, *, docker_host: str | None = None, cpus: float = 1.0, pids_limit: int = 256
    ) -> None:
        super().__init__(spec)
        self.docker_host = docker_host or os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        self.cpus = cpus
        self.pids_limit = pids_limit
        self._client: Any = None
        self._container: Any = None
        self._etc: Path | None = None
        self._workspace_owner: tuple[int, int] | None = None

    @property
    def image(self) -> str:
        return self.spec.image or DEFAULT_IMAGE

    def check_available(self) -> None:
        missing = [
            p for p in ("docker", *(["tmux"] if self.spec.terminal else [])) if shutil.which(p) is None
        ]
        if missing:
            raise EnvironmentUnavailable(
                f"the docker sandbox needs {', '.join(missing)} on PATH",
                hint="apt-get install -y docker.io tmux",
            )
        try:
            import docker
        except ImportError:
            raise EnvironmentUnavailable(
                "the docker sandbox needs the docker SDK", hint="pip install 'awctl[docker]'"
            ) from None
        try:
            self._client = docker.DockerClient(base_url=self.docker_host)
            self._client.ping()
        except Exception as exc:
            raise EnvironmentUnavailable(
                f"no Docker engine answers at {self.docker_host}: {exc}",
                hint="start one (awctl.envs.dockerd.DockerEngine) or set DOCKER_HOST",
            ) from None

    def prepare(self) -> None:
        spec, who = self.spec, self.spec.who
        spec.control.chmod(0o755)
        tmpfs = {"/tmp": "rw,size=256m"}
        volumes = {
            str(spec.workspace): {"bind": spec.mount_point, "mode": "rw"},
            str(spec.control): {"bind": CONTROL_DIR, "mode": "ro"},
        }
        if who.home_is_separate:
            tmpfs[who.home] = f"rw,size=64m,mode=0755,uid={who.uid},gid={who.uid}"
        if who.user != "root" or who.home != "/workspace":
            # The image's passwd knows only root at /workspace: the shell's user and home come from here.
            self._etc = Path(tempfile.mkdtemp(prefix="awctl-etc-"))
            self._etc.chmod(0o755)
            for name, text in (("passwd", who.passwd()), ("group", who.group())):
                (self._etc / name).write_text(text)
                volumes[str(self._etc / name)] = {"bind": f"/etc/{name}", "mode": "ro"}
        if who.uid != 0:
            self._hand_workspace_to(who.uid)
        self._container = self._client.containers.run(
            self.image,
            ["sleep", "999999999"],
            detach=True,
            network_mode="none",
            mem_limit=f"{spec.memory_mb}m",
            memswap_limit=f"{spec.memory_mb}m",
            nano_cpus=int(self.cpus * 1e9),
            pids_limit=self.pids_limit or -1,  # 0 means no cap; docker's "unlimited" is -1
            hostname=who.host,
            read_only=True,  # like bubblewrap: only the workspace, /tmp and a separate home are writable
            tmpfs=tmpfs,
            working_dir=spec.mount_point,
            volumes=volumes,
            labels={"awctl.sandbox": spec.label},
        )

    def _hand_workspace_to(self, uid: int) -> None:
        stat = os.stat(self.spec.workspace)
        if (stat.st_uid, stat.st_gid) == (uid, uid):
            return
        if os.geteuid() != 0:
            raise EnvironmentUnavailable(
                f"the docker sandbox's user {self.spec.who.user} (uid {uid}) cannot write the workspace, and only "
                "root can hand it over", hint="run as root, or use prompt = 'awctl' or user = 'root'")
        self._workspace_owner = (stat.st_uid, stat.st_gid)
        chown_tree(self.spec.workspace, uid, uid)

    def teardown(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):
                self._container.remove(force=True)
            self._container = None
        if self._workspace_owner is not None:
            if self.spec.workspace.exists():
                chown_tree(self.spec.workspace, *self._workspace_owner)
            self._workspace_owner = None
        if self._etc is not None:
            shutil.rmtree(self._etc, ignore_errors=True)
            self._etc = None
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()

    def shell_argv(self, interactive: bool) -> list[str]:
        argv = ["docker", "-H", self.docker_host, "exec", "-i"]
        if interactive:
            argv.append("-t")
        if self.spec.who.uid != 0:
            argv += ["-u", f"{self.spec.who.uid}:{self.spec.who.uid}"]
        for key, value in self.shell_env().items():
            argv += ["-e", f"{key}={value}"]
        argv += ["-w", self.spec.mount_point, self._container.id]
        return argv + bash_argv(interactive)

    def shell_env(self) -> dict[str, str]:
        env = super().shell_env()
        # busybox's applets live in /bin; TERM must be one busybox tools and bash know without terminfo.
        env["TERM"] = "xterm" if self.spec.terminal else "dumb"
        return env

    def kill_children(self, host_pid: int, shell_nspid: int) -> None:
        if self._container is not None and shell_nspid:
            with contextlib.suppress(Exception):
                # busybox pkill has no -P: kill the shell's direct children found through /proc.
                script = (
                    "for s in /proc/[0-9]*/status; do while read -r k v; do "
                    f'[ "$k" = PPid: ] && [ "$v" = {shell_nspid} ] && kill -9 "${{s//[^0-9]/}}"; '
                    'done < "$s"; done 2>/dev/null'
                )
                self._container.exec_run(["/bin/bash", "-c", script])
