"""``awctl domains``: the registered domains with their verifiers, importers, suites and real env."""

from __future__ import annotations

import click

from awctl.cli.output import emit_json, table


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def domains(as_json: bool) -> None:
    """List registered domains and what each provides."""
    from awctl.plugins import get_registry

    reg = get_registry()
    items = []
    for name in sorted(reg.domains):
        info = reg.domains[name].describe()
        info["plugin"] = reg.domain_plugin[name]
        items.append(info)
    if as_json:
        emit_json(items)
        return
    rows = [
        (
            d["name"],
            d["modality"],
            d["plugin"],
            len(d["verifiers"]),
            ", ".join(d["importers"]) or "-",
            ", ".join(f"{s}({n})" for s, n in d["suites"].items()) or "-",
            ("yes" if d["real_env"]["available"] else "no") + f" — {d['real_env']['detail']}",
        )
        for d in items
    ]
    table("awctl domains", ["domain", "modality", "plugin", "verifiers", "importers", "task suites", "real env"], rows)
    if reg.problems:
        click.secho(f"{len(reg.problems)} plugin problem(s); run `awctl plugins` for details", fg="yellow", err=True)
