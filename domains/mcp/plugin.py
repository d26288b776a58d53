"""Registers the ``mcp`` domain through the public plugin hook (as a third-party package would)."""

from __future__ import annotations

from typing import Any

from awctl.hookspecs import hookimpl


@hookimpl
def register_domains(register: Any) -> None:
    from .domain import McpDomain

    register(McpDomain())
