"""Typed errors. Library code raises these; the CLI turns them into one clear line plus a hint."""

from __future__ import annotations


class AwctlError(Exception):
    """Base error: ``message`` says what is wrong, ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class CodecError(AwctlError):
    """Text could not be parsed as an action or observation. ``where`` locates the problem."""

    def __init__(self, message: str, where: str = "", hint: str | None = None) -> None:
        super().__init__(f"{where}: {message}" if where else message, hint)
        self.where = where


class ConfigError(AwctlError):
    """One or more problems in awctl.toml or a recipe. ``problems`` lists every one found."""

    def __init__(self, problems: list[str], hint: str | None = None) -> None:
        self.problems = list(problems)
        head = f"{len(self.problems)} problem(s) in configuration"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems), hint)


class InputError(AwctlError):
    """Bad input data (a file, a line, a field)."""


class PluginError(AwctlError):
    """A plugin failed to load or registered something invalid."""


class UnknownNameError(AwctlError):
    """A domain, backend, judge or stage name that no plugin registered."""


class EnvironmentUnavailable(AwctlError):
    """A real environment cannot run on this machine (missing program, engine not started...)."""
