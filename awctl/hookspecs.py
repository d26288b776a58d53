"""The awctl plugin API — every hook a plugin may implement, in one file.

A plugin is any module (an installed package's entry point in the group ``awctl``, a name in the
``AWCTL_LOAD_PLUGINS`` allow-list, or a loose ``*.py`` file in a plugins folder) that implements one or
more of the hooks below with ``@awctl.hookimpl``::

    from awctl.hookspecs import hookimpl

    @hookimpl
    def register_domains(register):
        register(MyDomain())

Every hook receives a ``register`` callback rather than returning values, so the host can validate each
item, namespace it under the plugin's name, and refuse a name already taken (the duplicate is reported
against the plugin that tried to register it; the first registration wins). awctl's own domains,
backends, judges and stages register through these same hooks.

Hooks are grouped by lifecycle phase. An implementation may accept fewer arguments than the spec
(pluggy passes only the ones it names), so specs can grow without breaking plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("awctl")
hookimpl = pluggy.HookimplMarker("awctl")


# ── Phase 1: what exists (called once when the plugin manager starts) ────────────────────────────────


@hookspec
def register_domains(register: Callable[[Any], None]) -> None:
    """Register environment domains.

    Call ``register(domain)`` with an instance of :class:`awctl.domain.Domain`. The domain's ``name`` must
    be unique across all plugins; it is what trajectories, recipes and ``awctl domains`` refer to.
    """


@hookspec
def register_backends(register: Callable[..., None]) -> None:
    """Register generation backends (world-model or agent inference).

    Call ``register(name, factory, description="")`` where ``factory(**options)`` returns an object with
    the :class:`awctl.backend.Backend` interface. The factory is only called when a backend is used, so
    registering must not import heavy libraries (torch, vllm).
    """


@hookspec
def register_judges(register: Callable[..., None]) -> None:
    """Register rubric judges that score a predicted observation against a reference.

    Call ``register(name, factory, description="")``; ``factory(**options)`` returns a judge.
    """


@hookspec
def register_stages(register: Callable[..., None]) -> None:
    """Register stage kinds a recipe may name in ``[[stages]] kind = ...``.

    Call ``register(kind, stage_class)`` with a subclass of :class:`awctl.stages.Stage`. The class
    declares its options model (validated without running anything) and a ``run(ctx)`` method.
    """


@hookspec
def register_commands(register: Callable[..., None]) -> None:
    """Register extra CLI commands, loaded lazily.

    Call ``register(name, target, help="")`` where ``target`` is ``"package.module:command"`` naming a
    click command. The module is imported only when the command runs (``awctl --help`` lists the name
    and help text without importing it). A plugin command cannot shadow a core command.
    """
