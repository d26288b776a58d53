"""``awctl domains``: the registered domains with their verifiers, importers, suites and real env;
``awctl domains check NAME`` runs the conformance kit on one (:mod:`awctl.conformance`)."""

from __future__ import annotations

from pathlib import Path

import click

from awctl.cli.output import emit_json, table


class _ListByDefault(click.Group):
    """``awctl domains [--json]`` lists; ``awctl domains check NAME`` checks."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["list", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ListByDefault)
def domains() -> None:
    """List registered domains and what each provides; check one against the domain contract."""


@domains.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_domains(as_json: bool) -> None:
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


@domains.command("check")
@click.argument("name")
@click.option("--recordings", "-r", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Trajectories of the domain to check on (any format awctl reads; repeatable).")
@click.option("--no-real-env", is_flag=True, help="Do not run tasks in the real environment.")
@click.option("--limit", "--tasks", "task_limit", type=int, default=None, help="At most this many tasks per suite.")
@click.option("--examples", type=int, default=200, show_default=True, help="Generated codec inputs per codec.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(name: str, recordings: tuple[Path, ...], no_real_env: bool, task_limit: int | None, examples: int,
          as_json: bool) -> None:
    """Run the conformance kit on domain NAME: codec round trips, the judge on a perfect copy, verifiers on
    garbage and planted faults, tasks in the real environment, prompt variants, reproducible resets.
    Exits 1 when a rule fails, naming it."""
    from awctl.config import load_project_config
    from awctl.conformance import check_domain
    from awctl.formats.ingest import Record, expand_inputs, iter_records
    from awctl.plugins import get_registry

    reg = get_registry()
    domain = reg.domain(name)
    trajs = [r.trajectory for r in iter_records(expand_inputs(list(recordings)), reg.domains)
             if isinstance(r, Record)] if recordings else []
    show = None if as_json else (lambda o: click.secho(
        f"{o.status.upper():4} {o.rule}" + (f": {o.message}" if o.message else ""),
        fg={"ok": "green", "fail": "red"}.get(o.status, "yellow")))
    report = check_domain(domain, recordings=trajs, real_env=not no_real_env, task_limit=task_limit,
                          env_settings=load_project_config().domain_settings(name), examples=examples,
                          on_rule=show)
    if as_json:
        emit_json(report.to_dict())
    elif report.ok:
        click.secho(f"{name} conforms ({len(report.skipped)} rule(s) skipped)", fg="green")
    if not report.ok:
        raise SystemExit(1)
