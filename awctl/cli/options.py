"""Option sets shared by commands: one spelling for every backend a command talks to.

``backend_flags(prefix)`` adds, for the world model (no prefix) or another model (``judge``, ``sim``,
``policy``)::

    --[PREFIX-]backend NAME        transformers | vllm | openai | a plugin's (default: awctl.toml
                                   [defaults] backend, itself "transformers" unless set)
    --[PREFIX-]model MODEL         HF directory, .gguf file, pkg:<package>/<file>.gguf, "tiny", or the
                                   served model's name
    --[PREFIX-]base-url URL        OpenAI-compatible endpoint (openai backend)
    --[PREFIX-]api-key KEY         its API key
    --[PREFIX-]backend-opt K=V     any other backend option (a TOML value or a plain string), repeatable

The world model's flags also have the short forms ``-b``, ``-m`` and ``-O``. :func:`backend_spec` turns
the parsed flags into ``(name, options)`` with the project defaults applied, the same way for every
command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from awctl.keyvalue import parse_assignments

LOCAL_BACKENDS = ("transformers", "vllm")


def _names(prefix: str) -> tuple[str, str]:
    return (f"{prefix}-", f"{prefix}_") if prefix else ("", "")


def backend_flags(prefix: str = "", what: str = "World-model") -> Callable[[Any], Any]:
    """Click options for one backend (see the module docstring)."""
    p, u = _names(prefix)
    short = not prefix

    def deco(fn: Any) -> Any:
        options = [
            click.option(f"--{p}backend", *(["-b"] if short else []), f"{u}backend", default=None,
                         help=f"{what} backend: transformers | vllm | openai | a plugin's "
                              "(default: awctl.toml [defaults] backend)."),
            click.option(f"--{p}model", *(["-m"] if short else []), f"{u}model", default=None,
                         help=f"{what} model: HF dir, .gguf, pkg:<package>/<file>.gguf, 'tiny', or a served "
                              "model's name."),
            click.option(f"--{p}base-url", f"{u}base_url", default=None,
                         help=f"{what} OpenAI-compatible base URL (openai backend)."),
            click.option(f"--{p}api-key", f"{u}api_key", default=None, help=f"{what} API key (openai backend)."),
            click.option(f"--{p}backend-opt", *(["-O"] if short else []), f"{u}backend_opt", multiple=True,
                         metavar="KEY=VALUE", help=f"Other {what.lower()} backend option (TOML value); repeatable."),
        ]
        for opt in reversed(options):
            fn = opt(fn)
        return fn

    return deco


def pop_backend(kwargs: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Remove the flags :func:`backend_flags` added from a command's ``kwargs``; return them by short
    name (``backend``, ``model``, ``base_url``, ``api_key``, ``backend_opt``)."""
    _, u = _names(prefix)
    return {k: kwargs.pop(f"{u}{k}") for k in ("backend", "model", "base_url", "api_key", "backend_opt")}


def backend_spec(flags: dict[str, Any], project: Any = None, flag_prefix: str = "") -> tuple[str, dict[str, Any]]:
    """``(backend name, options)`` from :func:`pop_backend` output, with awctl.toml's ``[defaults]``:
    the backend name, and for a local backend the model, seed and device when not given."""
    from awctl.config import load_project_config

    defaults = (project or load_project_config()).defaults
    p, _ = _names(flag_prefix)
    options = parse_assignments(flags.get("backend_opt") or (), f"--{p}backend-opt")
    for key in ("model", "base_url", "api_key"):
        if flags.get(key) is not None:
            options[key] = flags[key]
    name = flags.get("backend") or defaults.backend
    if name in LOCAL_BACKENDS:
        options.setdefault("model", defaults.model)
        options.setdefault("seed", defaults.seed)
    if name == "transformers":
        options.setdefault("device", defaults.device)
    return name, options


def given(flags: dict[str, Any]) -> bool:
    """Whether any backend flag was given on the command line."""
    return any(v not in (None, ()) for v in flags.values())
