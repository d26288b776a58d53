"""Who and where a sandboxed shell is: its prompt style, user, host name, home and starting directory.

A :class:`ShellIdentity` is what a recording shows of the machine behind the terminal: the prompt bash
draws (``PS1``, in one of :data:`PROMPT_STYLES`) and the user, host and home directory that prompt shows.
The sandbox makes them real rather than painting them on: the shell runs with that uid, ``HOME``,
``USER`` and host name, and the user has a passwd entry (so ``whoami``, ``ls -l``, ``cd ~`` and
``hostname`` agree with the prompt). Styles:

* ``awctl`` (the default) — ``root@sandbox:/workspace# ``: root on host ``sandbox``, the absolute working
  directory in the prompt, the workspace at ``/workspace`` is also ``$HOME``. Everything awctl recorded
  before there were styles shows this prompt, and with this style nothing about a shell has changed;
* ``debian`` — ``alice@devbox:~/work$ ``, Debian's and Ubuntu's default ``\\u@\\h:\\w\\$ `` (``~`` for
  ``$HOME``, the absolute path elsewhere);
* ``fedora`` — ``[alice@devbox work]$ ``, Red Hat's ``[\\u@\\h \\W]\\$ `` (the working directory's last
  component, ``~`` at home);
* ``bare`` — ``bash-5.2$ ``, ``\\s-\\v\\$ ``: what bash shows with no profile (the same in every directory).

For every style but ``awctl`` the settings ``user`` (default ``alice``; uid 1000, or 0 with ``#`` as the
sigil for ``root``), ``hostname`` (default ``devbox``) and ``workdir`` (where the episode starts and the
workspace is bound; default ``~/work``, ``~`` meaning the home) choose the rest. The home is
``/home/<user>`` (``/root`` for root): a private, writable tmpfs in the sandbox, holding the workspace
when ``workdir`` lies under it.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from awctl.errors import ConfigError

#: ``PS1`` (after the invisible marker) of each style. ``awctl`` spells its prompt out, exactly as before
#: styles existed, so its recordings stay byte-identical; the others are the distributions' own PS1s.
PROMPT_STYLES: dict[str, str] = {
    "awctl": "root@sandbox:$PWD# ",
    "debian": "\\u@\\h:\\w\\$ ",
    "fedora": "[\\u@\\h \\W]\\$ ",
    "bare": "\\s-\\v\\$ ",
}
#: The settings (``awctl.toml [domains.<name>]``) that choose an identity.
IDENTITY_SETTINGS = ("prompt", "user", "hostname", "workdir")

DEFAULT_USER = "alice"
DEFAULT_HOST = "devbox"
DEFAULT_WORKDIR = "~/work"
USER_UID = 1000  # the uid (and gid) of a user other than root, as a distribution's first user gets

_USER_RE = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
_HOST_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_SYSTEM_DIRS = ("/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib64", "/run", "/tmp", "/sys")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_mount_point(path: str, what: str = "mount_point") -> str:
    """``path`` normalised (no trailing ``/``); raises :class:`~awctl.errors.ConfigError` unless it is an
    absolute path outside the system folders (somewhere a sandbox can bind a folder of its own)."""
    clean = "/" + "/".join(p for p in path.split("/") if p) if path.startswith("/") else path
    if not clean.startswith("/") or clean == "/" or any(_inside(clean, d) for d in _SYSTEM_DIRS) \
            or any(p in (".", "..") for p in clean.split("/")):
        raise ConfigError([f"{what} = {path!r}: not an absolute path outside the system folders"],
                          hint="use a folder such as /workspace or /home/alice/work")
    return clean


@dataclass(frozen=True)
class ShellIdentity:
    """A shell's prompt ``style`` (a key of :data:`PROMPT_STYLES`), ``user`` and its ``uid``, ``host``
    name, ``home`` directory and ``workdir``, the directory an episode starts in (where the workspace is
    bound). Build one with :meth:`awctl_default` or :meth:`from_settings`."""

    style: str = "awctl"
    user: str = "root"
    uid: int = 0
    host: str = "sandbox"
    home: str = "/workspace"
    workdir: str = "/workspace"

    @classmethod
    def awctl_default(cls, mount_point: str = "/workspace") -> ShellIdentity:
        """The ``awctl`` style: root on ``sandbox``, home and start at ``mount_point``."""
        return cls("awctl", "root", 0, "sandbox", mount_point, mount_point)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ShellIdentity:
        """The identity ``settings`` choose (``prompt``, ``user``, ``hostname``, ``workdir``; see the module
        docstring). Raises :class:`~awctl.errors.ConfigError` naming every bad setting."""
        style = str(settings.get("prompt", "awctl"))
        if style not in PROMPT_STYLES:
            raise ConfigError([f"prompt = {style!r}: unknown prompt style"],
                              hint=f"use one of {', '.join(PROMPT_STYLES)}")
        given = [k for k in ("user", "hostname", "workdir") if k in settings]
        if style == "awctl":
            if given:
                raise ConfigError([f"{k} = {settings[k]!r}: the awctl prompt is always root@sandbox in /workspace"
                                   for k in given], hint="choose prompt = 'debian', 'fedora' or 'bare' to set "
                                                         "the user, host name or working directory")
            return cls.awctl_default()
        problems = []
        user = str(settings.get("user", DEFAULT_USER))
        if not _USER_RE.fullmatch(user):
            problems.append(f"user = {user!r}: not a user name (lower-case letters, digits, _ and -)")
        host = str(settings.get("hostname", DEFAULT_HOST))
        if not _HOST_RE.fullmatch(host):
            problems.append(f"hostname = {host!r}: not a host name (letters, digits and -)")
        home = "/root" if user == "root" else f"/home/{user}"
        raw = str(settings.get("workdir", DEFAULT_WORKDIR))
        workdir = home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        try:
            workdir = check_mount_point(workdir, "workdir")
        except ConfigError as exc:
            problems += exc.problems
        if not problems and _inside(home, workdir) and home != workdir:
            problems.append(f"workdir = {raw!r}: the home directory {home} may not lie inside it")
        if problems:
            raise ConfigError(problems, hint="see awctl.envs.sandbox.identity for the sandbox's identity settings")
        return cls(style, user, 0 if user == "root" else USER_UID, host, home, workdir)

    # ── what the shell shows ─────────────────────────────────────────────────────────────────────────

    @property
    def ps1(self) -> str:
        """The prompt part of ``PS1`` (bash prompt escapes), shown after the sandbox's invisible marker."""
        return PROMPT_STYLES[self.style]

    @property
    def sigil(self) -> str:
        return "#" if self.uid == 0 else "$"

    @property
    def home_is_separate(self) -> bool:
        """Whether the home is a folder of its own (a private tmpfs) rather than the workspace itself."""
        return self.home != self.workdir

    def shown_path(self, cwd: str) -> str | None:
        """The directory as the prompt shows it in ``cwd`` (``None`` for a style that shows none)."""
        if self.style == "awctl":
            return cwd
        if self.style == "bare":
            return None
        tilde = cwd == self.home or _inside(cwd, self.home) and self.home != "/"
        if self.style == "debian":
            return "~" + cwd[len(self.home):] if tilde else cwd
        if cwd == self.home:
            return "~"
        return cwd.rstrip("/").rsplit("/", 1)[-1] or "/"

    def prompt(self, cwd: str | None = None, bash_version: str | None = None) -> str:
        """The prompt (trailing space included) bash shows in ``cwd`` (default: :attr:`workdir`);
        ``bash_version`` (``5.2``) is what ``\\v`` shows, by default the host's bash's."""
        path = self.shown_path(cwd or self.workdir)
        if self.style == "awctl":
            return f"root@sandbox:{path}# "
        if self.style == "debian":
            return f"{self.user}@{self.host}:{path}{self.sigil} "
        if self.style == "fedora":
            return f"[{self.user}@{self.host} {path}]{self.sigil} "
        return f"bash-{bash_version or host_bash_version()}{self.sigil} "

    @property
    def prompt_re(self) -> re.Pattern[str]:
        """Matches a line holding this shell's prompt (group ``path``: the directory as shown, absent for
        ``bare``) followed by what was typed after it (group ``typed``), any bash version for ``bare``."""
        user, host, sigil = re.escape(self.user), re.escape(self.host), re.escape(self.sigil)
        if self.style == "awctl":
            return re.compile(r"^root@sandbox:(?P<path>/[^#\n]*)# (?P<typed>.*)$")
        if self.style == "debian":
            return re.compile(rf"^{user}@{host}:(?P<path>[~/][^\n]*?){sigil} (?P<typed>.*)$")
        if self.style == "fedora":
            return re.compile(rf"^\[{user}@{host} (?P<path>[^\]\n]+)\]{sigil} (?P<typed>.*)$")
        return re.compile(rf"^bash-\d+(?:\.\d+)*{sigil} (?P<typed>.*)$")

    def shows_prompt(self, line: str, cwd: str | None = None) -> bool:
        """Whether a screen line (trailing spaces stripped, nothing typed) is this shell's prompt in
        ``cwd`` (default: :attr:`workdir`)."""
        m = self.prompt_re.match(line.rstrip() + " ")
        if m is None or m.group("typed"):
            return False
        return "path" not in m.groupdict() or m.group("path") == self.shown_path(cwd or self.workdir)

    # ── what the sandbox generates for it ────────────────────────────────────────────────────────────

    def passwd(self) -> str:
        """``/etc/passwd`` for the sandbox: root, this user (when not root) and nobody."""
        root_home = self.home if self.user == "root" else "/root"
        lines = [f"root:x:0:0:root:{root_home}:/bin/bash"]
        if self.user != "root":
            lines.append(f"{self.user}:x:{self.uid}:{self.uid}:{self.user}:{self.home}:/bin/bash")
        lines.append("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin")
        return "\n".join(lines) + "\n"

    def group(self) -> str:
        """``/etc/group`` for the sandbox: root, this user's own group (when not root) and nogroup."""
        lines = ["root:x:0:"]
        if self.user != "root":
            lines.append(f"{self.user}:x:{self.uid}:")
        lines.append("nogroup:x:65534:")
        return "\n".join(lines) + "\n"


def identity_from_settings(settings: Mapping[str, Any]) -> ShellIdentity | None:
    """The identity a domain's settings choose, ``None`` when they name none (a shell then uses the
    ``awctl`` identity at its mount point)."""
    if not any(k in settings for k in IDENTITY_SETTINGS):
        return None
    return ShellIdentity.from_settings(settings)


@functools.lru_cache(maxsize=1)
def host_bash_version() -> str:
    """``major.minor`` of the host's bash (what ``\\v`` shows in a bubblewrap sandbox, which runs it)."""
    bash = shutil.which("bash")
    if bash is None:
        return "5.2"
    out = subprocess.run([bash, "-c", 'echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}"'], capture_output=True,
                         text=True, timeout=10).stdout.strip()
    return out if re.fullmatch(r"\d+\.\d+", out) else "5.2"
