"""What the host and the bash inside a sandbox agree on, whatever the jail and the driver.

* the prompt: by default ``PROMPT`` (matched by ``PROMPT_RE``), always the absolute working directory; a
  shell with another :class:`~.identity.ShellIdentity` shows its style's prompt instead (``SandboxedShell.
  prompt_re`` matches the prompt of any shell);
* the control folder: a host temp folder whose ``run/`` part appears read-only at ``CONTROL_DIR`` inside
  the sandbox and holds the shell's rc file and the text of long commands;
* the rc file, which puts an invisible marker before each command and one carrying the exit code and the
  working directory before each prompt;
* :class:`CommandResult`, what one command gave.
"""

from __future__ import annotations

import re
import secrets
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The prompt the sandbox shell shows by default (the ``awctl`` style), ``{cwd}`` the absolute working directory.
PROMPT = "root@sandbox:{cwd}# "
#: Matches a prompt line (group ``cwd``) followed by whatever was typed after it (group ``typed``).
PROMPT_RE = re.compile(r"^root@sandbox:(?P<cwd>/[^#\n]*)# (?P<typed>.*)$")

CONTROL_DIR = "/run/awctl"  # where the control files (rc, long commands) appear inside the sandbox


@dataclass
class CommandResult:
    """The result of :meth:`SandboxedShell.run`.

    ``output`` is exactly what the command wrote (stdout and stderr merged, ``\\r\\n`` of the terminal
    turned back into ``\\n``); ``cwd`` is the shell's working directory afterwards; ``timed_out`` is true
    when the wall-clock limit hit and the command was interrupted (``exit_code`` is then 124).
    """

    output: str
    exit_code: int
    cwd: str
    duration_s: float
    timed_out: bool


class ControlFolder:
    """One shell's control folder on the host (``path``), created now. ``run`` is what the sandbox sees
    at ``CONTROL_DIR``; the terminal driver keeps its tmux socket (``tmux_socket``), configuration and
    pane log beside it. ``nonce`` makes this shell's markers impossible to forge by accident."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="awctl-sb-"))
        self.nonce = secrets.token_hex(6)

    @property
    def run(self) -> Path:
        return self.path / "run"

    @property
    def tmux_socket(self) -> Path:
        return self.path / "tmux.sock"

    def write_rc(
        self, *, memory_mb: int, mount_point: str, terminal: bool, extra: list[str] | tuple[str, ...] = (),
        ps1: str = "root@sandbox:$PWD# ",
    ) -> None:
        """Write the rc file bash reads at start (``CONTROL_DIR/rc``); ``extra`` lines (a jail's own
        limits) come right after the memory limit; ``ps1`` is the visible prompt (bash prompt escapes,
        no single quote), drawn after the invisible marker."""
        if "'" in ps1:
            raise ValueError(f"a prompt may not hold a single quote: {ps1!r}")
        run = self.run
        run.mkdir(exist_ok=True)
        n = self.nonce
        lines = [
            f"ulimit -v {memory_mb * 1024} 2>/dev/null",
            *extra,
            "unset HISTFILE",
            # Invisible OSC markers around each command in the pane's raw byte stream: PS0 is printed
            # after a command line is read; the start of PS1 carries the exit code and cwd, so the
            # "done" marker arrives in the same write as the prompt (never long before it shows).
            f"PS0='\\e]777;{n};start\\a'",
            "PROMPT_COMMAND='__awctl_rc=$?'",
            f"PS1='\\[\\e]777;{n};done;${{__awctl_rc:-0}};$PWD\\a\\]{ps1}' PS2='> '",
            # No bracketed-paste escapes around prompts: command output stays byte-exact.
            "bind 'set enable-bracketed-paste off' 2>/dev/null",
            "export PS1 PS2",
            f"cd {shlex.quote(mount_point)}",
        ]
        if terminal:
            # Wait until the host has attached its pipe to the pane, so no marker is missed.
            lines.insert(0, f"while [ ! -e {CONTROL_DIR}/go ]; do sleep 0.01; done")
        (run / "rc").write_text("\n".join(lines) + "\n")

    def command_file(self, command: str, seq: int) -> str:
        """Write ``command`` to a control file; returns its path inside the sandbox."""
        path = self.run / f"cmd_{seq}"
        path.write_text(command if command.endswith("\n") else command + "\n")
        return f"{CONTROL_DIR}/cmd_{seq}"


def bash_argv(interactive: bool) -> list[str]:
    """The bash command line inside the sandbox: interactive (a terminal) or reading a pipe."""
    rc = f"{CONTROL_DIR}/rc"
    if interactive:
        return ["/bin/bash", "--noprofile", "--rcfile", rc, "-i"]
    return ["/bin/bash", "--noprofile", "--norc"]


def parse_done(payload: bytes) -> tuple[int, str]:
    """Exit code and working directory from a "done" marker's payload (``;<code>;<cwd>``)."""
    _, code, cwd = payload.decode("utf-8", "replace").split(";", 2)
    return int(code), cwd
