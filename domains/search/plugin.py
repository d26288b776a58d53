"""Registers the built-in search domain (light imports only: codecs and the Domain class)."""

from __future__ import annotations

from awctl.hookspecs import hookimpl


@hookimpl
def register_domains(register):  # type: ignore[no-untyped-def]
    from .domain import SearchDomain

    register(SearchDomain())
