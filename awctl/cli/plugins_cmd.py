"""``awctl plugins``: every plugin found, what it registered, and the ones that failed."""

from __future__ import annotations

import click

from awctl.cli.output import emit_json, table


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(as_json: bool) -> None:
    """List loaded plugins and any that failed to load."""
    from awctl.cli.main import cli_registry

    reg = cli_registry()
    if as_json:
        emit_json([p.to_dict() for p in reg.plugins])
        return
    rows = [
        (
            p.name,
            p.origin,
            p.version or "-",
            "; ".join(f"{k}: {', '.join(v)}" for k, v in p.registered.items()) or "-",
            "ok" if p.ok else "ERROR: " + " | ".join(p.errors),
        )
        for p in reg.plugins
    ]
    table("awctl plugins", ["plugin", "origin", "version", "registered", "status"], rows)
