"""How a process gets into the sandbox: the :class:`Jail` interface a backend implements.

A jail is told what to build (:class:`JailSpec`) when it is created, and is then used in this order:
``check_available`` (raises :class:`~awctl.errors.EnvironmentUnavailable` with the fix), ``prepare``
(create what the shell runs in), ``shell_argv`` (the host command line that starts bash inside, any number
of times), ``kill_children`` (when a command in a pipe-driven shell times out) and ``teardown``.
Implementations: :mod:`.bubblewrap` and :mod:`.docker`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from .identity import ShellIdentity


@dataclass(frozen=True)
class JailSpec:
    """What the sandbox holds: ``workspace`` (a host folder) bound read-write at ``mount_point``, the
    control folder ``control`` bound read-only at ``CONTROL_DIR``, extra ``env``, an address-space limit
    ``memory_mb``, whether the shell gets a ``terminal``, an ``image`` for jails that run one, ``label``,
    unique to this shell, and the shell's ``identity`` (user, uid, host, home; default: root on
    ``sandbox`` with ``HOME`` at the mount point). ``identity.workdir`` is the mount point."""

    workspace: Path
    mount_point: str
    control: Path
    label: str
    terminal: bool = True
    memory_mb: int = 1024
    env: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    identity: ShellIdentity | None = None

    def __post_init__(self) -> None:
        if self.identity is None:
            object.__setattr__(self, "identity", ShellIdentity.awctl_default(self.mount_point))

    @property
    def who(self) -> ShellIdentity:
        """The shell's identity (never ``None`` once built)."""
        assert self.identity is not None
        return self.identity


class Jail(ABC):
    """One sandbox for one shell. See the module docstring for the order of calls."""

    def __init__(self, spec: JailSpec) -> None:
        self.spec = spec

    @property
    def image(self) -> str | None:
        """The image the sandbox runs (``None`` where the jail uses the host's own system)."""
        return self.spec.image

    @abstractmethod
    def check_available(self) -> None:
        """Raise :class:`~awctl.errors.EnvironmentUnavailable`, naming the fix, when this jail cannot run."""

    @abstractmethod
    def prepare(self) -> None:
        """Create what the shell runs in."""

    @abstractmethod
    def shell_argv(self, interactive: bool) -> list[str]:
        """The host command line that starts bash inside the sandbox (interactive: for a terminal)."""

    @abstractmethod
    def kill_children(self, host_pid: int, shell_nspid: int) -> None:
        """Kill every process the shell started, not the shell: ``host_pid`` is the process the host
        started (``shell_argv``), ``shell_nspid`` the shell's pid inside the sandbox (0 when unknown)."""

    @abstractmethod
    def teardown(self) -> None:
        """Remove what :meth:`prepare` created. Safe to call when it created nothing."""

    def rc_lines(self) -> list[str]:
        """Extra lines for the top of the shell's rc file (e.g. a limit the shell sets on itself); called
        after :meth:`check_available`."""
        return []

    def shell_env(self) -> dict[str, str]:
        """The shell's whole environment inside the sandbox."""
        return {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": self.spec.who.home,
            "USER": self.spec.who.user,
            "LOGNAME": self.spec.who.user,
            "TERM": "tmux-256color" if self.spec.terminal else "dumb",
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            **self.spec.env,
        }
