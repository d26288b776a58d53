"""Shared CLI output helpers: JSON for ``--json`` and rich tables for people."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title, show_lines=False)
    for col in columns:
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*(escape(str(c)) for c in row))
    Console().print(t)
