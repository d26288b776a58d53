"""``awctl audit``: per-action-family fidelity of a simulator against the real environment (the ``audit``
stage kind run outside a recipe)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from awctl.cli.options import backend_flags, backend_spec, pop_backend


@click.command()
@click.option("--domain", "-d", "domain_name", required=True, help="Domain to audit.")
@click.option(
    "--trajectories",
    "-t",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Recorded real trajectories (repeatable).",
)
@click.option(
    "--real", is_flag=True, help="Run the domain's task reference solutions live in the real env first."
)
@click.option("--suite", "--tasks", "suite", default=None, help="Task suite for --real (default: every suite).")
@click.option("--limit", type=int, default=None, help="At most this many tasks / trajectories.")
@backend_flags("sim", "Simulator")
@click.option("--style", type=click.Choice(["agentworldbench", "awctl"]), default="agentworldbench",
              show_default=True, help="Chat style the simulator was trained in.")
@click.option("--max-tokens", type=int, default=2048, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--chunk-size", type=int, default=32, show_default=True, help="Requests per backend call.")
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("audit"),
    show_default=True,
    help="Folder for report.md, plots, audit.json and turns.jsonl.",
)
@click.option(
    "--fail-under",
    type=float,
    default=None,
    help="Exit 1 when the overall judge score (0-100) is below this (for CI).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the audit summary as JSON.")
def audit(
    domain_name: str,
    trajectories: tuple[Path, ...],
    real: bool,
    suite: str | None,
    limit: int | None,
    style: str,
    max_tokens: int,
    temperature: float,
    chunk_size: int,
    out_dir: Path,
    fail_under: float | None,
    as_json: bool,
    **flags: Any,
) -> None:
    """Replay real action sequences through a simulator, teacher-forced, and rank its blind spots."""
    from awctl.cli.output import emit_json
    from awctl.errors import AwctlError
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_standalone

    name, options = backend_spec(pop_backend(flags, "sim"), flag_prefix="sim")
    stage_options = {
        "domain": domain_name, "trajectories": [str(p.resolve()) for p in trajectories], "real": real, "suite": suite,
        "limit": limit, "backend": name, "backend_options": options, "max_tokens": max_tokens,
        "temperature": temperature, "chunk_size": chunk_size, "style": style, "fail_under": fail_under,
    }
    failed = None
    try:
        # Progress per chunk goes to stderr through the stage's log (as `awctl eval run` shows it).
        run_standalone(get_registry(), "audit", stage_options, out_dir, console=None if as_json else sys.stderr)
    except AwctlError as exc:
        if "below fail_under" not in exc.message:
            raise
        failed = exc.message
    summary = json.loads((out_dir / "audit.json").read_text(encoding="utf-8"))
    summary.update(report=str(out_dir / "report.md"), fail_under=fail_under, passed=failed is None)
    score = summary["overall"]["score"]
    if as_json:
        emit_json(summary)
    else:
        ov = summary["overall"]
        click.echo(
            f"{ov['turns']} turns; score {score if score is None else round(score, 2)}; "
            f"report: {summary['report']}"
        )
        for f in summary["families"][:5]:
            click.echo(
                f"  {f['family']:<24} score {f['score']:6.2f}  exact {100 * f['exact_rate']:5.1f}%  "
                f"verifiers {100 * f['verifier_rate']:5.1f}%  ({f['turns']} turns)"
            )
    if failed:
        click.secho(f"audit score {score} is below --fail-under {fail_under}", fg="red", err=True)
        raise SystemExit(1)
