"""A persistent bash session in a sandbox, with a real terminal screen and exact command results.

:class:`SandboxedShell` is the runtime the terminal and SWE domains share. One instance is one bash
process that lives until :meth:`SandboxedShell.close`; working directory, variables and files persist
across calls. Two ways in:

* ``send_keys`` / ``screen`` — Terminus-style keystrokes into a real terminal emulator (tmux with a
  private socket, ``rows`` x ``cols``), and the visible screen as text. Needs ``terminal=True``.
* ``run`` — one command, its exact output (stdout and stderr interleaved as written), exit code and the
  working directory afterwards. Works with or without a terminal. With a terminal the command is typed
  at the prompt (so it also shows on the screen) and its output is cut from the pane's raw byte stream
  between two invisible markers; without one, bash reads commands from a pipe.

A shell is one **jail** (how a process gets into the sandbox: :mod:`.jail`, with the backends
:mod:`.bubblewrap` and :mod:`.docker`) and one **driver** (:mod:`.terminal` or :mod:`.pipe`), put together
in :mod:`.shell`; :mod:`.protocol` holds what both sides agree on. :func:`make_shell` builds a shell from
a domain's settings.

The bubblewrap sandbox: every namespace unshared (so no network at all, a private PID namespace whose
processes all die with it), a read-only ``/usr`` and a minimal generated ``/etc``, the workspace as the
only writable host folder (plus a private tmpfs ``/tmp``), ``--die-with-parent``, the host's home and
``/root`` absent, an address-space limit (``ulimit -v``, which a process in the sandbox cannot raise)
and a wall-clock limit per ``run``. The docker sandbox gives the same in a container with no network.

The prompt is fixed per shell so observations are predictable. By default ``PROMPT`` is
``root@sandbox:<cwd># `` with the absolute working directory (never ``~``), ``PROMPT_RE`` matches it, and
``HOME`` is the mount point. A :class:`ShellIdentity` (:mod:`.identity`; settings ``prompt``, ``user``,
``hostname``, ``workdir``) gives a shell another prompt style (``debian``: ``alice@devbox:~/work$ ``,
``fedora``: ``[alice@devbox work]$ ``, ``bare``: ``bash-5.2$ ``) and makes the user, host and home it
shows real; ``SandboxedShell.prompt_re`` then matches that shell's prompt.
"""

from .identity import PROMPT_STYLES, ShellIdentity
from .protocol import CONTROL_DIR, PROMPT, PROMPT_RE, CommandResult
from .shell import BACKENDS, SandboxedShell, make_shell
from .terminal import KEY_NAME_RE, is_key_name

__all__ = [
    "BACKENDS",
    "CONTROL_DIR",
    "KEY_NAME_RE",
    "PROMPT",
    "PROMPT_RE",
    "PROMPT_STYLES",
    "CommandResult",
    "SandboxedShell",
    "ShellIdentity",
    "is_key_name",
    "make_shell",
]
