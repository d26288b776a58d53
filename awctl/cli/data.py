"""``awctl data``: convert between trajectory formats, verify trajectories, prepare training data.

``convert`` and ``verify`` live here; ``prep`` is loaded from :mod:`awctl.cli.data_prep` only when it is
invoked, so ``awctl data --help`` never imports the data pipeline.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from awctl.cli.output import emit_json

# name -> ("module:attr", short help); imported only when the subcommand runs.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "prep": ("awctl.cli.data_prep:prep", "Clean, dedupe, split, mask and tokenize trajectories."),
}


class DataGroup(click.Group):
    """A click group whose table-listed subcommands import their module only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS:
            target = LAZY_COMMANDS[name][0]
            module, _, attr = target.partition(":")
            try:
                return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
            except (ImportError, AttributeError) as exc:
                from awctl.errors import AwctlError

                raise AwctlError(
                    f"`awctl data {name}` is not available: cannot load {target} ({exc})",
                    hint="reinstall awctl (pip install -e .) or run `awctl doctor`",
                ) from None
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, c.get_short_help_str(70)) for n, c in sorted(self.commands.items())]
        rows += [(n, help_text) for n, (_, help_text) in LAZY_COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))


@click.group(cls=DataGroup)
def data() -> None:
    """Convert, verify and prepare trajectory data."""


def _echo_err(text: str) -> None:
    click.echo(text, err=True)


@data.command()
@click.option(
    "--from",
    "from_format",
    default="awctl",
    show_default=True,
    help="Input format: awctl, agentworldbench (awb), or a domain importer's name.",
)
@click.option(
    "--to",
    "to_format",
    default="awctl",
    show_default=True,
    type=click.Choice(["awctl", "agentworldbench", "awb", "chat"]),
    help="Output format.",
)
@click.option("--domain", default=None, help="Domain whose importer to use when several share --from's name.")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output file (.jsonl, .jsonl.gz, .jsonl.zst; '-' for stdout).",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip damaged lines (not UTF-8, not JSON, invalid records, a truncated stream's end), listing each "
    "on stderr, instead of stopping at the first.",
)
@click.option("--transform", default=None,
              help="A domain transform applied to each trajectory, e.g. incremental (terminal).")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
def convert(
    from_format: str, to_format: str, domain: str | None, output: Path, skip_bad: bool, transform: str | None,
    inputs: tuple[Path, ...],
) -> None:
    """Convert INPUT files from one format into OUTPUT, streaming.

    \b
    Examples:
      awctl data convert --from agentworldbench --to awctl AWB/terminal_test.jsonl -o terminal.jsonl
      awctl data convert --from awctl --to chat terminal.jsonl -o chat.jsonl
      awctl data convert --from asciinema --domain terminal logs/*.cast -o casts.jsonl
    """
    from awctl.formats.convert import convert_files
    from awctl.plugins import get_registry

    counts = convert_files(list(inputs), output, from_format, to_format, get_registry().domains, domain,
                           _echo_err if skip_bad else None, transform)
    skipped = f"; skipped {counts['skipped']} damaged line(s)" if skip_bad else ""
    if transform:
        skipped += (f"; {transform}: {counts['transformed']} transformed, {counts['untransformable']} left out "
                    "(cannot be converted faithfully)")
    _echo_err(
        f"read {counts['trajectories']} trajectories from {len(inputs)} file(s); "
        f"wrote {counts['written']} {counts['unit']} to {output}{skipped}"
    )


@data.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option(
    "--report",
    "per_verifier",
    is_flag=True,
    help="Print per check how many turns it checked, passed, failed and abstained on.",
)
@click.option(
    "--max-failures",
    default=50,
    show_default=True,
    help="Failures listed per check (the summary always counts all).",
)
def verify(files: tuple[Path, ...], as_json: bool, per_verifier: bool, max_failures: int) -> None:
    """Check every turn of FILES with its domain's codecs and verifiers; exit 1 when any check fails.

    FILES may be awctl trajectories, AgentWorldBench rows or any raw log a domain importer reads (folders
    are walked). A damaged line fails the `read` check and reading goes on.
    """
    from awctl.formats.verify import verify_files
    from awctl.plugins import get_registry

    report = verify_files(files, get_registry().domains, max_failures=max_failures)
    if as_json:
        emit_json(report.to_dict())
    else:
        _print_report(report, per_verifier)
    if report.failed:
        raise SystemExit(1)


def _print_report(report, per_verifier: bool = False) -> None:  # type: ignore[no-untyped-def]
    from awctl.cli.output import table

    for check, failures in sorted(report.failures.items()):
        for f in failures:
            where = f["trajectory"] + (f" turn {f['turn']}" if f["turn"] is not None else "")
            click.secho(f"FAIL {check}: {where}: {f['message']}", fg="red")
        hidden = report.summary[check]["failed"] - len(failures)
        if hidden > 0:
            click.echo(f"  ... and {hidden} more {check} failure(s) (use --json or --max-failures)")
    title = f"verify {report.path}: {report.trajectories} trajectories, {report.turns} turns"
    if per_verifier:
        rows = [(c, s["passed"] + s["failed"], s["passed"], s["failed"], s["abstained"])
                for c, s in sorted(report.summary.items())]
        table(title, ["check", "checked", "passed", "failed", "abstained"], rows)
        silent = [c for c, s in sorted(report.summary.items()) if s["abstained"] and not s["passed"] + s["failed"]]
        if silent:
            click.secho(f"checked nothing on this data (abstained on every turn): {', '.join(silent)}",
                        fg="yellow")
    else:
        rows = [(c, s["passed"], s["failed"]) for c, s in sorted(report.summary.items())]
        table(title, ["check", "passed", "failed"], rows)
    click.secho(
        "all checks passed" if not report.failed else f"{report.failed} check(s) failed",
        fg="green" if not report.failed else "red",
    )
