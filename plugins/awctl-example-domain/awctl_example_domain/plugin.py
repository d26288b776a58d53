"""Entry point named in pyproject.toml: registers the domain through the public hook.

Only the hook lives here; the domain module is imported when the hook runs, so importing the plugin
(which ``awctl --help`` does for every installed plugin) costs nothing.
"""

from __future__ import annotations

from awctl.hookspecs import hookimpl


@hookimpl
def register_domains(register):  # type: ignore[no-untyped-def]
    from .domain import CalcDomain

    register(CalcDomain())
