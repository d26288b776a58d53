"""``awctl compare RECIPE [key=value ...] [--fail-under RATIO]``: run a recipe that holds a ``compare`` stage
(Sim vs Real, :mod:`awctl.stages.compare`) like ``awctl run`` does, print each comparison's headline numbers
and, with ``--fail-under``, exit non-zero when the sim arm's held-out real success is below RATIO × the real
arm's. The run directory, resume and overrides are ``awctl run``'s (:mod:`awctl.runner`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from awctl.cli.run import rerun_option


@click.command(context_settings={"show_default": True})
@click.argument("recipe", required=False)
@click.argument("overrides", nargs=-1)
@click.option("--fail-under", "fail_under", type=click.FloatRange(min=0.0), default=None,
              help="Exit 1 when the sim arm's held-out real success is below RATIO × the real arm's.")
@click.option("--output-root", type=click.Path(file_okay=False, path_type=Path),
              help="Create the run directory here (default: the recipe's output_root, else awctl.toml's).")
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path),
              help="Continue in this run directory (finished stages, starts and arms are reused).")
@rerun_option
@click.option("--quiet", "-q", is_flag=True, help="No log lines on stderr (log.jsonl is still written).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparisons' compare.json documents as JSON.")
def compare(recipe: str | None, overrides: tuple[str, ...], fail_under: float | None, output_root: Path | None,
            resume: Path | None, rerun: tuple[str, ...], quiet: bool, as_json: bool) -> None:
    """Run the Sim-vs-Real comparison of RECIPE (a name from recipes/ or a path) and report it.

    \b
    Examples:
      awctl compare ci-sim-vs-real
      awctl compare ci-sim-vs-real stages.compare.budget.steps=1 --fail-under 0.8
      awctl compare --resume runs/ci-sim-vs-real-20260101-120000 --fail-under 0.8
    """
    from awctl.cli.run import exit_on_failure, resolve_recipe
    from awctl.runner import run_recipe

    resolved = resolve_recipe(recipe, overrides, resume, command="compare")
    stages = [s for s in resolved.stages if s.kind == "compare"]
    if not stages:
        raise click.UsageError(f"{resolved.path} has no stage of kind 'compare' (use `awctl run` for other recipes)")
    if fail_under is not None:
        for spec in stages:  # say it now, not after an hour of training
            gate = spec.options.gate()  # type: ignore[attr-defined]
            if not gate["sim_arm"] or not gate["real_arm"]:
                raise click.UsageError(f"--fail-under: stage {spec.name!r} needs an arm of kind 'sim' and one of kind "
                                       "'real' (or sim_arm / real_arm naming them)")
    outcome = run_recipe(resolved, resume=resume, output_root=output_root, console=None if quiet else sys.stderr,
                         rerun=rerun)
    if outcome.status != "done":
        exit_on_failure(outcome)
    documents = {spec.name: _document(outcome.run_dir, spec.name) for spec in stages}
    if as_json:
        from awctl.cli.output import emit_json

        emit_json({"run_dir": str(outcome.run_dir), "report": str(outcome.report), "comparisons": documents})
    else:
        click.echo(f"run done: {outcome.run_dir}  (report: {outcome.report})")
        for name, data in documents.items():
            _print(name, data, outcome.run_dir)
    if fail_under is not None:
        from awctl.agent.compare import fail_under as gate_check

        failed = False
        for name, data in documents.items():
            ok, line = gate_check(data, fail_under)
            if ok:
                click.echo(f"gate passed ({name}): {line}", err=as_json)
            else:
                click.secho(f"error: --fail-under {fail_under:g} ({name}): {line}", fg="red", err=True)
                failed = True
        if failed:
            sys.exit(1)


def _document(run_dir: Path, stage: str) -> dict[str, Any]:
    from awctl.errors import AwctlError

    path = run_dir / "stages" / stage / "compare.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AwctlError(f"{path}: cannot read the comparison ({exc})", hint="rerun with --resume") from None


def _print(name: str, data: dict[str, Any], run_dir: Path) -> None:
    def pct(value: Any) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    click.echo(f"\n{name}: {data['domain']}, {len(data['heldout_tasks'])} held-out real tasks × {len(data['seeds'])} "
               f"seeds; report {run_dir / 'stages' / name / 'report.md'}")
    for arm, a in data["arms"].items():
        b, f = a["before"], a["after"]
        line = (f"  {arm:<18} {a['env']:<6} before {pct(b['success_rate'])} [{pct(b['ci95'][0])}, {pct(b['ci95'][1])}]"
                f"  after {pct(f['success_rate'])} [{pct(f['ci95'][0])}, {pct(f['ci95'][1])}]"
                f"  episodes {a['budget']['episodes']}, env steps {a['budget']['env_steps']}")
        if a.get("wm2real"):
            w = a["wm2real"]
            line += (f"  | sim {pct(a['sim_eval']['success_rate'])} (gap {100 * a['gap']:+.1f} pts), WM2Real "
                     f"{pct(w['wm2real']) if w['wm2real'] is not None else 'n/a'}, steps exact {pct(w['step_exact'])}")
        click.echo(line)
    if data.get("budget_problems"):
        click.echo("  budgets differ: " + "; ".join(data["budget_problems"]))
