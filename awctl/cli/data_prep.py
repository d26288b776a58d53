"""``awctl data prep``: trajectories → masked, packed training shards; ``awctl data prep merge`` combines
the outputs of ``--shard i/n`` slices.

::

    awctl data prep data/*.jsonl data/casts/ -o out/prep --tokenizer train:4096 --mode cpt \\
        --block-size 1024 --split train=0.9,val=0.05,test=0.05 --seed 0 --shard 0/4
    awctl data prep merge out/prep-0 out/prep-1 out/prep-2 out/prep-3 -o out/prep

``prep INPUT...`` is short for ``prep run INPUT...``. See docs/masking.md for the loss masking.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from awctl.cli.model_flags import model_flags, model_values
from awctl.cli.output import emit_json, table
from awctl.data.config import PrepConfig

# Not flags: the inputs and output are arguments; masking is --keep CATEGORY=P.
_SKIP = ("inputs", "out", "mask")


class _DefaultRunGroup(click.Group):
    """``prep ARGS`` runs ``prep run ARGS`` unless ARGS starts with a subcommand name or ``--help``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        elif not args:
            args = ["run"]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultRunGroup, context_settings={"help_option_names": ["-h", "--help"]})
def prep() -> None:
    """Clean, dedupe, split, mask and tokenize trajectories into training shards.

    \b
    awctl data prep [run] INPUT... -o OUT [options]   prepare (see `awctl data prep run --help`)
    awctl data prep merge DIR... -o MERGED            merge the outputs of --shard slices
    """


class RichProgress:
    """Progress bars with rates for the pipeline's phases (records/s and tokens/s while prepping)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task: Any = None
        self._t0 = time.perf_counter()
        self.records = 0
        self.tokens = 0

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._refresh(force=True)
        self._progress.stop()

    def phase(self, name: str) -> None:
        if self._task is not None:
            self._refresh(force=True)
        label = {"tokenizer": "loading/training tokenizer", "prep": "prepping"}.get(name, name)
        self._task = self._progress.add_task(label, total=None, stats="")
        self._t0 = time.perf_counter()
        self._last = 0.0

    def advance(self, records: int = 0, tokens: int = 0) -> None:
        self.records += records
        self.tokens += tokens
        self._refresh()

    def _refresh(self, force: bool = False) -> None:
        now = time.perf_counter()
        if self._task is None or (not force and now - self._last < 0.2):
            return
        self._last = now
        dt = max(now - self._t0, 1e-9)
        stats = (
            f"{self.records:,} records ({self.records / dt:,.0f}/s)  "
            f"{self.tokens:,} tokens ({self.tokens / dt:,.0f}/s)"
        )
        self._progress.update(self._task, stats=stats)


def _summary(manifest: dict[str, Any], out: Path) -> None:
    rows = [
        (split, s["blocks"], s["documents"], s["tokens"], s["loss_tokens"], len(s["shards"]))
        for split, s in manifest["splits"].items()
    ]
    table("splits", ["split", "blocks", "documents", "tokens", "loss tokens", "shards"], rows)
    counts = manifest["counts"]
    by_check = manifest["quarantine"].get("by_check", {})
    table(
        "records",
        ["what", "count"],
        [(k, v) for k, v in counts.items()] + [(f"quarantined: {k}", v) for k, v in sorted(by_check.items())],
    )
    cats = manifest["masking"]["categories"]
    table(
        "loss masking (observation tokens)",
        ["category", "tokens", "share", "kept", "kept share", "target"],
        [
            (
                k,
                c["tokens"],
                f"{c['token_share']:.1%}",
                c["kept_tokens"],
                "-" if c["kept_share"] is None else f"{c['kept_share']:.1%}",
                f"{c.get('target', 0):.0%}",
            )
            for k, c in cats.items()
        ],
    )
    click.echo(f"wrote {out / 'manifest.json'} (quarantine: {out / 'quarantine.jsonl'})", err=True)


@prep.command("run")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output folder."
)
@click.option(
    "--keep",
    multiple=True,
    metavar="CATEGORY=P",
    help="Keep probability of a masking category, e.g. --keep transform=0.5 (repeatable).",
)
@model_flags(PrepConfig, skip=_SKIP)
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON instead of tables.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
def run_cmd(inputs: tuple[Path, ...], out: Path, keep: tuple[str, ...], as_json: bool, quiet: bool,
            **flags: Any) -> None:
    """Prepare INPUT files/folders (unified JSONL, AgentWorldBench JSONL, domain raw logs; .gz/.zst).

    Every option is a field of the prep stage's options (awctl.data.config.PrepConfig)."""
    from pydantic import ValidationError

    from awctl.data.pipeline import run_prep
    from awctl.errors import AwctlError
    from awctl.keyvalue import parse_assignments
    from awctl.plugins import get_registry

    values = model_values(PrepConfig, flags, skip=_SKIP)
    if keep:
        values["mask"] = {"keep": parse_assignments(keep, "--keep", "CATEGORY=P")}
    try:
        config = PrepConfig.model_validate({**values, "inputs": [str(p) for p in inputs], "out": str(out)})
    except ValidationError as exc:
        from awctl.trajectory import format_validation_error

        raise AwctlError(f"invalid prep options: {format_validation_error(exc)}", hint="see --help") from None
    domains = get_registry().domains
    if quiet or as_json:
        manifest = run_prep(config, domains)
    else:
        with RichProgress() as progress:
            manifest = run_prep(config, domains, progress)
    if as_json:
        emit_json({k: v for k, v in manifest.items() if k != "sources"})
    else:
        _summary(manifest, out)


@prep.command("merge")
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def merge_cmd(dirs: tuple[Path, ...], out: Path, as_json: bool) -> None:
    """Merge prep outputs (the slices of one --shard i/n fan-out) into OUT."""
    from awctl.data.shards import merge_outputs

    manifest = merge_outputs(list(dirs), out)
    if as_json:
        emit_json({k: v for k, v in manifest.items() if k != "sources"})
    else:
        _summary(manifest, out)
