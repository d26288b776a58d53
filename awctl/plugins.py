"""Plugin discovery and the registry of everything plugins register.

Where plugins come from, in load order:

1. built-ins (``BUILTIN_PLUGINS``): awctl's own stages, backends, judges and the built-in domains;
2. installed distributions' entry points in the group ``awctl``;
3. loose ``*.py`` files in the plugin folders (``[plugins] dirs`` in awctl.toml, default ``plugins/``,
   plus ``AWCTL_PLUGINS_DIR``).

``AWCTL_LOAD_PLUGINS=a,b`` is an allow-list: when set, only the named entry-point and loose plugins load
(an empty value loads none). ``AWCTL_BLOCK_PLUGINS=a,b`` blocks plugins by name, built-ins included.
``AWCTL_TRACE_PLUGINS=1`` (or ``awctl --trace-plugins``) prints every hook call to stderr.

A plugin that raises while importing or while registering, or that registers a name already taken, is
recorded in :attr:`Registry.plugins` with its error; everything else keeps working.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from awctl import hookspecs
from awctl.errors import UnknownNameError

ENTRY_POINT_GROUP = "awctl"

BUILTIN_PLUGINS: tuple[str, ...] = (
    "awctl.builtins",
    "awctl_domains.terminal.plugin",
    "awctl_domains.swe.plugin",
    "awctl_domains.mcp.plugin",
    "awctl_domains.search.plugin",
    "awctl_domains.os.plugin",
    "awctl_domains.web.plugin",
    "awctl_domains.android.plugin",
)

KINDS = ("domains", "backends", "judges", "stages", "commands")


@dataclass
class PluginInfo:
    """One plugin as ``awctl plugins`` reports it."""

    name: str
    origin: str  # builtin | entrypoint | local
    module: str
    version: str | None = None
    hooks: list[str] = field(default_factory=list)
    registered: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.origin,
            "module": self.module,
            "version": self.version,
            "hooks": self.hooks,
            "registered": self.registered,
            "ok": self.ok,
            "errors": self.errors,
        }


@dataclass
class Registered:
    """A named factory (backend, judge) or class (stage) with the plugin that registered it."""

    name: str
    obj: Any
    plugin: str
    description: str = ""


@dataclass
class CommandSpec:
    name: str
    target: str
    help: str
    plugin: str


class Registry:
    """Everything registered by the loaded plugins."""

    def __init__(self) -> None:
        self.domains: dict[str, Any] = {}
        self.domain_plugin: dict[str, str] = {}
        self.backends: dict[str, Registered] = {}
        self.judges: dict[str, Registered] = {}
        self.stages: dict[str, Registered] = {}
        self.commands: dict[str, CommandSpec] = {}
        self.plugins: list[PluginInfo] = []

    # ── lookups with helpful errors ──
    def domain(self, name: str) -> Any:
        if name not in self.domains:
            raise UnknownNameError(
                f"unknown domain {name!r}",
                hint=f"known domains: {', '.join(sorted(self.domains)) or 'none'}; "
                "`awctl plugins` shows plugins that failed to load",
            )
        return self.domains[name]

    def _named(self, table: dict[str, Registered], kind: str, name: str) -> Registered:
        if name not in table:
            raise UnknownNameError(
                f"unknown {kind} {name!r}", hint=f"known {kind}s: {', '.join(sorted(table)) or 'none'}"
            )
        return table[name]

    def backend(self, name: str) -> Registered:
        return self._named(self.backends, "backend", name)

    def judge(self, name: str) -> Registered:
        return self._named(self.judges, "judge", name)

    def stage(self, kind: str) -> Registered:
        return self._named(self.stages, "stage kind", kind)

    def reserve_commands(self, names: Iterable[str]) -> None:
        """Refuse registered commands that would shadow ``names`` (the host's own commands); each refusal
        is reported against the plugin that registered it. Idempotent."""
        reserved = set(names)
        for name in [n for n in self.commands if n in reserved]:
            spec = self.commands.pop(name)
            for info in self.plugins:
                if info.name == spec.plugin:
                    info.errors.append(f"command {name!r} would shadow a core command")
                    if name in info.registered.get("commands", []):
                        info.registered["commands"].remove(name)

    # ── building what was registered (the one place that turns names into objects) ──
    def build_backend(self, name: str, **options: Any) -> Any:
        """A new backend ``name`` with ``options`` (its factory's keyword arguments)."""
        return self.backend(name).obj(**options)

    def build_judge(self, name: str, **options: Any) -> Any:
        """A new judge ``name``. Besides ``options``, its factory receives the context it asks for by
        parameter name: ``domains`` (the registered domains) and ``build_backend`` (to build a backend
        by name, e.g. for a judge that calls a model)."""
        factory = self.judge(name).obj
        context = {"domains": self.domains, "build_backend": self.build_backend}
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):  # a builtin or C callable: options only
            params = {}
        return factory(**{k: v for k, v in context.items() if k in params and k not in options}, **options)

    @property
    def problems(self) -> list[str]:
        return [f"{p.name}: {e}" for p in self.plugins for e in p.errors]


def _csv_env(name: str) -> set[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _trace(msg: str) -> None:
    if os.environ.get("AWCTL_TRACE_PLUGINS"):
        print(f"[awctl plugins] {msg}", file=sys.stderr)


def _load_loose_file(path: Path) -> ModuleType:
    module_name = f"awctl_local_plugins.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _error_text(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _discover(plugin_dirs: list[Path]) -> list[tuple[PluginInfo, Callable[[], ModuleType]]]:
    blocked = _csv_env("AWCTL_BLOCK_PLUGINS") or set()
    allowed = _csv_env("AWCTL_LOAD_PLUGINS")
    found: list[tuple[PluginInfo, Callable[[], ModuleType]]] = []

    for mod in BUILTIN_PLUGINS:
        name = mod.split(".")[-2] if mod.endswith(".plugin") else mod.split(".")[0]
        if name not in blocked:
            found.append((PluginInfo(name, "builtin", mod), lambda m=mod: importlib.import_module(m)))

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in blocked or (allowed is not None and ep.name not in allowed):
            continue
        dist = getattr(ep, "dist", None)
        info = PluginInfo(ep.name, "entrypoint", ep.value, version=dist.version if dist else None)
        found.append((info, ep.load))

    for folder in plugin_dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_") or path.stem in blocked:
                continue
            if allowed is not None and path.stem not in allowed:
                continue
            found.append((PluginInfo(path.stem, "local", str(path)), lambda p=path: _load_loose_file(p)))
    return found


def build_registry(plugin_dirs: list[Path] | None = None) -> Registry:
    """Load every plugin and collect what it registers. Never raises for a plugin's fault."""
    if plugin_dirs is None:
        from awctl.config import load_project_config

        plugin_dirs = load_project_config().plugin_dirs()
    env_dir = os.environ.get("AWCTL_PLUGINS_DIR")
    if env_dir:
        plugin_dirs = [*plugin_dirs, *(Path(p) for p in env_dir.split(os.pathsep) if p)]

    pm = pluggy.PluginManager("awctl")
    pm.add_hookspecs(hookspecs)
    registry = Registry()
    loaded: list[tuple[PluginInfo, ModuleType]] = []
    seen_modules: set[str] = set()

    for info, load in _discover(plugin_dirs):
        t0 = time.perf_counter()
        try:
            module = load()
        except BaseException as exc:  # noqa: BLE001 - report SystemExit/KeyboardInterrupt-free errors too
            if isinstance(exc, KeyboardInterrupt):
                raise
            info.errors.append(f"failed to load: {_error_text(exc)}")
            registry.plugins.append(info)
            continue
        _trace(f"loaded {info.name} ({info.origin}) in {1000 * (time.perf_counter() - t0):.1f} ms")
        if module.__name__ in seen_modules:  # e.g. an entry point naming a built-in module
            continue
        seen_modules.add(module.__name__)
        try:
            pm.register(module, name=info.name)
        except Exception as exc:  # pluggy validation errors: bad hook signature or unknown hook
            info.errors.append(f"invalid plugin: {exc}")
            registry.plugins.append(info)
            continue
        info.hooks = sorted(
            hc.name for hc in pm.get_hookcallers(module) or [] if hc.name in hookspecs.__dict__
        )
        # A hook implementation whose name matches no hookspec (e.g. "register_domain") would never be
        # called: a plugin problem, not a silent no-op (pluggy keeps such hooks pending).
        for name in sorted(_unknown_hooks(pm, module)):
            known = [n for n in vars(hookspecs) if n.startswith("register_")]
            close = difflib.get_close_matches(name, known, n=1)
            info.errors.append(f"hook {name!r} matches no awctl hook" + (f"; did you mean {close[0]!r}?" if close
                                                                      else f" (hooks: {', '.join(known)})"))
        loaded.append((info, module))
        registry.plugins.append(info)

    by_module = {id(module): info for info, module in loaded}
    for hook_name, kind in (
        ("register_domains", "domains"),
        ("register_backends", "backends"),
        ("register_judges", "judges"),
        ("register_stages", "stages"),
        ("register_commands", "commands"),
    ):
        caller = getattr(pm.hook, hook_name)
        # Registration order (built-ins first), so built-ins win name clashes and later plugins are reported.
        for impl in caller.get_hookimpls():
            info = by_module[id(impl.plugin)]
            register = _make_register(registry, kind, info)
            _trace(f"call {hook_name} of {info.name}")
            try:
                impl.function(**{a: register for a in impl.argnames if a == "register"})
            except Exception as exc:
                info.errors.append(f"{hook_name} raised {_error_text(exc)}")
    return registry


def _unknown_hooks(pm: pluggy.PluginManager, module: ModuleType) -> set[str]:
    return {hc.name for hc in pm.get_hookcallers(module) or [] if not hc.has_spec()}


def _make_register(registry: Registry, kind: str, info: PluginInfo) -> Callable[..., None]:
    def owner(table: dict[str, Any], name: str) -> str | None:
        if kind == "domains":
            return registry.domain_plugin.get(name)
        item = table.get(name)
        return item.plugin if item else None

    def register(*args: Any, **kwargs: Any) -> None:
        table: dict[str, Any] = getattr(registry, kind)
        if kind == "domains":
            domain = args[0] if args else kwargs["domain"]
            name = getattr(domain, "name", "")
            problem = _check_domain(domain)
        else:
            name = args[0] if args else kwargs.get("name", kwargs.get("kind", ""))
            problem = None if isinstance(name, str) and name else "registered an empty name"
        if problem is None and name in table:
            problem = f"{kind[:-1]} {name!r} is already registered by plugin {owner(table, name)!r}"
        if problem:
            info.errors.append(problem)
            _trace(f"refused from {info.name}: {problem}")
            return
        if kind == "domains":
            table[name] = domain
            registry.domain_plugin[name] = info.name
        elif kind == "commands":
            target = args[1] if len(args) > 1 else kwargs["target"]
            help_text = args[2] if len(args) > 2 else kwargs.get("help", "")
            table[name] = CommandSpec(name, target, help_text, info.name)
        else:
            obj = args[1] if len(args) > 1 else kwargs.get("factory", kwargs.get("stage_class"))
            desc = args[2] if len(args) > 2 else kwargs.get("description", "")
            if not desc and kind == "stages":
                desc = (getattr(obj, "__doc__", "") or "").strip().split("\n")[0]
            table[name] = Registered(name, obj, info.name, desc)
        info.registered.setdefault(kind, []).append(name)
        _trace(f"{info.name} registered {kind[:-1]} {name!r}")

    return register


def _check_domain(domain: Any) -> str | None:
    from awctl.domain import Domain

    if not isinstance(domain, Domain):
        return f"register_domains passed {type(domain).__name__}, not an awctl.domain.Domain"
    if not domain.name or not domain.name.replace("_", "").replace("-", "").isalnum():
        return f"domain name {domain.name!r} must be non-empty letters, digits, '-' or '_'"
    for attr in ("action_codec", "observation_codec"):
        if not hasattr(domain, attr):
            return f"domain {domain.name!r} has no {attr}"
    return None


_REGISTRY: Registry | None = None


def get_registry(refresh: bool = False) -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None or refresh:
        _REGISTRY = build_registry()
    return _REGISTRY


def get_domain(name: str) -> Any:
    return get_registry().domain(name)


def build_backend(name: str, **options: Any) -> Any:
    """:meth:`Registry.build_backend` on the process registry (for the CLI, scripts and tests; library code
    gets backends or a registry passed in)."""
    return get_registry().build_backend(name, **options)
