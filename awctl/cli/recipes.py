"""``awctl recipes list|show|validate|cp``: the recipes, one resolved, validation, a copy to edit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from awctl.cli.output import emit_json, table


@click.group()
def recipes() -> None:
    """List, show, validate and copy recipes."""


def _split(args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    from awctl.recipe import is_override

    targets = [a for a in args if not is_override(a)]
    return targets, [a for a in args if is_override(a)]


def _describe(path: Path) -> dict:
    from awctl.recipe import load_recipe_data

    data, problems = load_recipe_data(path)
    meta = (data or {}).get("recipe", {}) if isinstance((data or {}).get("recipe"), dict) else {}
    stages = (data or {}).get("stages", [])
    stages = stages if isinstance(stages, list) else []
    return {
        "name": meta.get("name", path.stem),
        "description": meta.get("description", ""),
        "path": str(path),
        "stages": [
            {"name": s.get("name") or s.get("kind"), "kind": s.get("kind")}
            for s in stages
            if isinstance(s, dict)
        ],
        "readable": not problems,
    }


@recipes.command("list")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_recipes(paths: tuple[Path, ...], as_json: bool) -> None:
    """List the recipes (the project's recipes/ folder, then those shipped with awctl) and any PATHS given."""
    from awctl.recipe import shipped_recipes

    items = [_describe(p) for p in [*shipped_recipes(), *paths]]
    if as_json:
        emit_json(items)
        return
    rows = [
        (i["name"], " → ".join(s["name"] or "?" for s in i["stages"]) or "-", i["description"], i["path"])
        for i in items
    ]
    table("awctl recipes", ["recipe", "stages", "description", "path"], rows)


@recipes.command("show")
@click.argument("recipe")
@click.argument("overrides", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of TOML.")
def show(recipe: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Print RECIPE (name or path) resolved: overrides applied, every option with its default."""
    from awctl.recipe import load_recipe

    resolved = load_recipe(recipe, list(overrides))
    if as_json:
        emit_json(resolved.to_dict())
    else:
        click.echo(resolved.to_toml(), nl=False)


@recipes.command("validate")
@click.argument("args", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def validate(args: tuple[str, ...], as_json: bool) -> None:
    """Validate recipes (names or paths; every shipped recipe when none is given) with optional
    key.path=value overrides. Prints every problem with its file and key; exits 1 if there is any."""
    from awctl.config import load_project_config
    from awctl.errors import ConfigError
    from awctl.recipe import find_recipe, shipped_recipes, validate_recipe

    project = load_project_config()
    targets, overrides = _split(args)
    results = []
    if targets:
        paths: list[Path | None] = []
        for t in targets:
            try:
                paths.append(find_recipe(t, project))
            except ConfigError as exc:
                results.append({"recipe": t, "path": None, "ok": False, "problems": exc.problems})
                paths.append(None)
    else:
        paths = list(shipped_recipes(project))
        if not paths:
            raise click.UsageError("no recipes found in recipes/; name a recipe file to validate")
    for path in paths:
        if path is None:
            continue
        _, problems = validate_recipe(path, overrides, project)
        results.append({"recipe": path.stem, "path": str(path), "ok": not problems, "problems": problems})
    if as_json:
        emit_json(results)
    else:
        for r in results:
            if r["ok"]:
                click.secho(f"ok  {r['recipe']}  ({r['path']})", fg="green")
            else:
                click.secho(f"FAIL {r['recipe']}: {len(r['problems'])} problem(s)", fg="red")
                for p in r["problems"]:
                    click.echo(f"  - {p}")
    if any(not r["ok"] for r in results):
        sys.exit(1)


@recipes.command("cp")
@click.argument("name")
@click.argument("dest", required=False, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
def cp(name: str, dest: Path | None, force: bool) -> None:
    """Copy the shipped recipe NAME to DEST (default: recipes/NAME.toml in the current project) to edit it.

    Files the recipe names under recipes/ (e.g. DeepSpeed configs) are copied beside it, so its paths
    stay valid."""
    import re
    import shutil

    from awctl.config import load_project_config
    from awctl.errors import InputError
    from awctl.recipe import RECIPES_DIR, shipped_dir

    folder = shipped_dir()
    source = folder / f"{name}.toml" if folder else None
    if source is None or not source.is_file():
        known = sorted(p.stem for p in folder.glob("*.toml")) if folder else []
        raise InputError(f"no shipped recipe {name!r}", hint=f"shipped recipes: {', '.join(known) or 'none'}")
    project = load_project_config()
    target = dest or project.resolve(RECIPES_DIR) / source.name
    text = source.read_text(encoding="utf-8")
    extras = sorted(set(re.findall(rf'"{RECIPES_DIR}/([^"]+)"', text)))
    copies = [(source, target)] + [(folder / rel, target.parent / rel) for rel in extras if (folder / rel).is_file()]
    clash = [str(t) for _, t in copies if t.exists()]
    if clash and not force:
        raise InputError(f"{', '.join(clash)} already exist(s)", hint="pass --force to overwrite, or another DEST")
    for src, dst in copies:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        click.echo(f"copied {src.name} -> {dst}")
