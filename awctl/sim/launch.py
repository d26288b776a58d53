"""Start ``awctl simulate serve`` (or any OpenAI-compatible server command) as a child process and wait
until it answers — for tests, benchmarks and scripts that need a live endpoint on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """Run ``command`` (``{port}`` is substituted) and wait until ``GET health_path`` answers 200.

    Use as a context manager; on exit the process and every process it started (it runs in a session of
    its own, e.g. vLLM's engine core) are terminated, then killed if they linger. ``log`` holds its
    stdout+stderr, shown in the error when it dies or never becomes ready.
    """

    def __init__(
        self,
        command: list[str],
        *,
        port: int | None = None,
        health_path: str = "/health",
        startup_timeout: float = 120.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.command = [c.replace("{port}", str(self.port)) for c in command]
        self.health_path = health_path
        self.startup_timeout = startup_timeout
        self.env = {**os.environ, **(env or {})}
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="awctl-server-", suffix=".log", delete=False)  # noqa: SIM115

    @classmethod
    def awctl_serve(cls, *args: str, **kwargs: Any) -> ServerProcess:
        """``awctl simulate serve --port {port} ARGS`` with this interpreter."""
        return cls(
            [sys.executable, "-m", "awctl.cli.main", "simulate", "serve", "--port", "{port}", *args], **kwargs
        )

    def _signal_group(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    @property
    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    def __enter__(self) -> ServerProcess:
        import urllib.error
        import urllib.request

        self.proc = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AwctlError(
                    f"server exited with {self.proc.returncode} before it was ready:\n{self.log[-3000:]}"
                )
            try:
                with urllib.request.urlopen(self.url + self.health_path, timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.3)
        self.__exit__(None, None, None)
        raise AwctlError(f"server not ready after {self.startup_timeout}s:\n{self.log[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=15)
            self._signal_group(signal.SIGKILL)  # whatever of the group is left (children that ignored TERM)
            self.proc.wait(timeout=15)
        self._log.close()
        if not exc or exc[0] is None:
            Path(self._log.name).unlink(missing_ok=True)
