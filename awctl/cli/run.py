"""``awctl run RECIPE [key=value ...]``: run a recipe's stages in a run directory (see awctl.runner)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

rerun_option = click.option(
    "--rerun", multiple=True, metavar="STAGE",
    help="With --resume: run this stage afresh (its folder emptied) even if nothing it records changed, e.g. "
         "after a code change; later stages that use it rerun too. Repeatable.",
)


@click.command(context_settings={"show_default": True})
@click.argument("recipe", required=False)
@click.argument("overrides", nargs=-1)
@click.option(
    "--resume",
    type=click.Path(file_okay=False, path_type=Path),
    help="Continue in this run directory: reuse done stages whose options, inputs and outputs are unchanged.",
)
@click.option(
    "--output-root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Create the run directory here (default: the recipe's output_root, else awctl.toml's).",
)
@rerun_option
@click.option("--quiet", "-q", is_flag=True, help="No log lines on stderr (log.jsonl is still written).")
def run(
    recipe: str | None, overrides: tuple[str, ...], resume: Path | None, output_root: Path | None,
    rerun: tuple[str, ...], quiet: bool,
) -> None:
    """Run RECIPE (a name from recipes/ or a path) with optional key.path=value overrides.

    \b
    Examples:
      awctl run quickstart
      awctl run quickstart recipe.seed=3 stages.record.limit=2
      awctl run --resume runs/quickstart-20260101-120000
      awctl run --resume runs/quickstart-20260101-120000 --rerun sft
    """
    from awctl.runner import run_recipe

    resolved = resolve_recipe(recipe, overrides, resume, command="run")
    outcome = run_recipe(
        resolved, resume=resume, output_root=output_root, console=None if quiet else sys.stderr, rerun=rerun
    )
    if outcome.status != "done":
        exit_on_failure(outcome)
    click.echo(f"run done: {outcome.run_dir}  (report: {outcome.report})")


def resolve_recipe(recipe: str | None, overrides: tuple[str, ...], resume: Path | None, *, command: str) -> Any:
    """The recipe ``awctl <command> RECIPE [key=value ...] [--resume DIR]`` names, overrides applied. A first
    argument that is an override is one; without a recipe, ``--resume``'s own resolved config is rerun."""
    from awctl.config import load_project_config
    from awctl.errors import AwctlError
    from awctl.recipe import find_recipe, is_override, load_recipe

    args = list(overrides)
    if recipe is not None and is_override(recipe):
        args.insert(0, recipe)
        recipe = None
    if recipe is None:
        if resume is None:
            raise click.UsageError("name a recipe (see `awctl recipes list`), or pass --resume RUN_DIR")
        recipe_path = resume / "config.resolved.toml"
        if not recipe_path.is_file():
            raise AwctlError(f"{resume} has no config.resolved.toml",
                             hint=f"pass the recipe too: awctl {command} RECIPE --resume DIR")
    else:
        recipe_path = find_recipe(recipe, load_project_config())
    return load_recipe(recipe_path, args)


def exit_on_failure(outcome: Any) -> NoReturn:
    """Print a run that did not finish (error and hint) and exit with its code."""
    color = "yellow" if outcome.status == "interrupted" else "red"
    click.secho(f"error: {outcome.error}", fg=color, err=True)
    if outcome.hint:
        click.echo(f"hint: {outcome.hint}", err=True)
    sys.exit(outcome.exit_code)
