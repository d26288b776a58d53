"""Registers the ``os`` domain through the public plugin hook (as a third-party package would)."""

from __future__ import annotations

from awctl.hookspecs import hookimpl


@hookimpl
def register_domains(register):  # type: ignore[no-untyped-def]
    from .domain import OsDomain

    register(OsDomain())
