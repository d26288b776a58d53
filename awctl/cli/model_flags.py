"""Command-line flags generated from a pydantic options model, so a command and the stage kind that share
the model cannot disagree on an option's name, default or meaning.

Each field ``some_name`` becomes ``--some-name VALUE`` (the value read as a TOML value, or a plain string;
``none`` clears an optional field), a boolean one ``--some-name/--no-some-name``; the field's description
is the help. Only the flags given on the command line are passed on, so the model's defaults apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click
from pydantic import BaseModel

from awctl.keyvalue import parse_value


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def model_flags(model: type[BaseModel], skip: Iterable[str] = ()) -> Callable[[Any], Any]:
    """Click options for every field of ``model`` except ``skip``."""
    skipped = set(skip)

    def deco(fn: Any) -> Any:
        for name, field in reversed(list(model.model_fields.items())):
            if name in skipped:
                continue
            default = field.get_default(call_default_factory=True)
            help_text = f"{field.description or name} [default: {default}]"
            if field.annotation is bool:
                fn = click.option(f"{_flag(name)}/--no-{name.replace('_', '-')}", name, default=None,
                                  help=help_text)(fn)
            else:
                fn = click.option(_flag(name), name, default=None, metavar="VALUE", help=help_text)(fn)
        return fn

    return deco


def model_values(model: type[BaseModel], kwargs: dict[str, Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """Pop the generated flags' values from ``kwargs``: the given ones, parsed, by field name."""
    skipped = set(skip)
    out: dict[str, Any] = {}
    for name in model.model_fields:
        if name in skipped or name not in kwargs:
            continue
        value = kwargs.pop(name)
        if value is None:
            continue
        if isinstance(value, str):
            value = None if value.lower() == "none" else parse_value(value)
        out[name] = value
    return out
