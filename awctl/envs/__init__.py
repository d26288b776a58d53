"""Real-environment runtimes shared by domains.

* :mod:`awctl.envs.sandbox` — :class:`SandboxedShell`, a persistent bash session in a sandbox with a real
  terminal screen (tmux) and exact command results, in bubblewrap or (:mod:`awctl.envs.sandbox.docker`)
  a Docker container (``network_mode="none"``); ``make_shell`` picks the backend from settings.
* :mod:`awctl.envs.dockerd` — a private Docker engine for tests and CI (``--bridge=none``).

Importing this package is cheap: the docker SDK is imported only when the docker backend is used.
"""

from awctl.envs.sandbox import PROMPT, PROMPT_RE, CommandResult, SandboxedShell, is_key_name, make_shell

__all__ = ["PROMPT", "PROMPT_RE", "CommandResult", "SandboxedShell", "is_key_name", "make_shell"]
