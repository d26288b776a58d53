"""Shared CLI output helpers: JSON for ``--json`` and rich tables for people.

With ``--json`` stdout carries the JSON document alone: while the command runs, anything else written to
stdout (a library's log line, e.g. DeepSpeed's accelerator warning) goes to stderr
(:func:`json_stdout`), and :func:`emit_json` writes to the real stdout.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

import click

_json_out: TextIO | None = None


@contextlib.contextmanager
def json_stdout() -> Iterator[None]:
    """Route stdout to stderr for the duration; :func:`emit_json` still writes to the real stdout."""
    global _json_out
    _json_out = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _json_out = None


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str), file=_json_out)


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
