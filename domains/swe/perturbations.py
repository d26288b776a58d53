"""Faults a simulator can be told to inject into SWE observations."""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "permission_denied",
        "writing or reading a path fails with EACCES",
        "Any action that writes to or reads {path} fails: bash commands print "
        "\"{path}: Permission denied\" and exit 1; the editor prints "
        "\"Ran into [Errno 13] Permission denied: '{path}' while trying to write to {path}\".",
        {"path": "/testbed/setup.py"},
    ),
    Perturbation(
        "test_timeout",
        "the test run hangs until the command's time limit",
        "The next command that runs the tests produces no further output after collecting tests and is killed "
        "after {seconds} seconds: its trailer is \"[exit_code: 124] [cwd: DIR] [timed_out]\".",
        {"seconds": 60},
    ),
    Perturbation(
        "flaky_test",
        "one test fails intermittently",
        "When the tests run, {test} fails on this run with \"AssertionError: {message}\" although the code "
        "is unchanged; a later run may pass.",
        {"test": "the first test", "message": "timing-dependent result"},
    ),
    Perturbation(
        "disk_full",
        "the file system has no space left",
        "Writes fail with ENOSPC: the editor prints \"Ran into [Errno 28] No space left on device: '{path}' "
        "while trying to write to {path}\" for the file it edits, and commands that write print "
        "\"No space left on device\" and exit 1.",
        {"path": "the edited file"},
    ),
    Perturbation(
        "git_lock",
        "a stale git index lock blocks git commands that write",
        "Git commands that write (add, commit, checkout, stash) fail with \"fatal: Unable to create "
        "'/testbed/.git/index.lock': File exists.\" and exit 128; read-only git commands work.",
        {},
    ),
    Perturbation(
        "missing_module",
        "a python dependency is not installed",
        "Python imports of {module} fail with \"ModuleNotFoundError: No module named '{module}'\" and exit 1.",
        {"module": "requests"},
    ),
)
