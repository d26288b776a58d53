"""``key=value`` text, parsed one way everywhere: recipe overrides, backend/judge/session options, train
options and REPL parameters.

A value is read as a TOML value when it is one (``3``, ``0.5``, ``true``, ``"quoted"``, ``[1, 2]``,
``{a = 1}``) and kept as a plain string otherwise (``http://127.0.0.1:8000/v1``, ``runs/x``). A key may be
a dotted path (``optim.lr=1e-4``) that builds nested tables.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from awctl.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def parse_value(text: str) -> Any:
    """A TOML value when ``text`` parses as one, else the string itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignment(text: str, what: str = "option", form: str = "KEY=VALUE") -> tuple[list[str], Any]:
    """``"a.b.c=value"`` → (``["a", "b", "c"]``, parsed value). Raises :class:`InputError` naming ``what``
    (e.g. ``--backend-opt``) and the expected ``form`` when ``text`` is not ``key=value``."""
    key, sep, value = text.partition("=")
    parts = [p.strip() for p in key.split(".")]
    if not sep or not all(parts):
        raise InputError(f"{what} {text!r} is not {form}", hint=f"write {what} {form}")
    return parts, parse_value(value.strip())


def parse_assignments(pairs: Iterable[str], what: str = "option", form: str = "KEY=VALUE") -> dict[str, Any]:
    """Many ``key=value`` texts as one (nested) dict; later keys win."""
    out: dict[str, Any] = {}
    for pair in pairs:
        path, value = parse_assignment(pair, what, form)
        set_path(out, path, value)
    return out


def set_path(data: dict[str, Any], path: list[str], value: Any) -> None:
    """``data[path[0]][path[1]]... = value``, creating tables on the way."""
    node = data
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value
