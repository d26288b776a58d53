"""Faults a terminal simulator can be asked to inject (added to the simulation instruction)."""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "permission_denied",
        "Access to one path fails with EACCES.",
        "Any command that reads, writes or enters {path} fails with `Permission denied`, as bash and "
        "coreutils print it (e.g. `cat: {path}: Permission denied`), and exits with status 1.",
        {"path": "/workspace"},
    ),
    Perturbation(
        "command_not_found",
        "A program is missing from PATH.",
        "The program `{command}` is not installed: running it prints `bash: {command}: command not "
        "found` and exits with status 127.",
        {"command": "git"},
    ),
    Perturbation(
        "timeout_hang",
        "A command hangs and never returns.",
        "The next command that runs `{command}` hangs: show no output and no new prompt until the agent "
        "presses C-c, which prints `^C` and a new prompt.",
        {"command": "curl"},
    ),
    Perturbation(
        "disk_full",
        "The filesystem is out of space.",
        "The filesystem holding {path} is full: any write there fails with `No space left on device` "
        "(e.g. `bash: echo: write error: No space left on device`), and `df` shows it at 100%.",
        {"path": "/workspace"},
    ),
    Perturbation(
        "slow_output",
        "Output arrives slowly.",
        "Commands print their output slowly: within the agent's wait only the first {lines} lines have "
        "appeared and no new prompt is shown yet.",
        {"lines": 3},
    ),
    Perturbation(
        "file_missing",
        "A file the agent expects is gone.",
        "The file {path} does not exist: commands that open it fail with `No such file or directory`.",
        {"path": "data.txt"},
    ),
    Perturbation(
        "nonzero_exit",
        "A tool fails for no visible reason.",
        "The next `{command}` command prints `{command}: internal error` to stderr and exits with "
        "status {status}.",
        {"command": "make", "status": 2},
    ),
)
