"""Finding recipes: the project's own ``recipes/`` folder first, then the recipes shipped with awctl (the
``awctl_recipes`` package data, present in any install); ``awctl recipes cp`` copies a shipped one out."""

from __future__ import annotations

import difflib
from pathlib import Path

from awctl.config import ProjectConfig, load_project_config
from awctl.errors import ConfigError

RECIPES_DIR = "recipes"


def shipped_dir() -> Path | None:
    """The folder of the recipes shipped with awctl (``None`` when the package data is missing)."""
    import importlib.util

    spec = importlib.util.find_spec("awctl_recipes")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def recipe_dirs(project: ProjectConfig | None = None) -> list[Path]:
    """Folders searched for recipes by name: the project's ``recipes/`` then the ones shipped with awctl."""
    project = project or load_project_config()
    dirs = [project.resolve(RECIPES_DIR), *filter(None, [shipped_dir()])]
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def shipped_recipes(project: ProjectConfig | None = None) -> list[Path]:
    """Every ``*.toml`` in the recipe folders; a name found in an earlier folder hides later ones."""
    seen: dict[str, Path] = {}
    for folder in recipe_dirs(project):
        for path in sorted(folder.glob("*.toml")):
            seen.setdefault(path.stem, path)
    return list(seen.values())


def find_recipe(name_or_path: str | Path, project: ProjectConfig | None = None) -> Path:
    """A recipe file by path, or by name in the recipe folders. Raises ConfigError naming the choices."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_file():
        return candidate
    if candidate.suffix != ".toml":
        for folder in recipe_dirs(project):
            path = folder / f"{name_or_path}.toml"
            if path.is_file():
                return path
    known = [p.stem for p in shipped_recipes(project)]
    close = difflib.get_close_matches(str(name_or_path), known, n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise ConfigError(
        [f"{name_or_path}: no such recipe file or recipe name"],
        hint=f"{hint}known recipes: {', '.join(known) or 'none'} (`awctl recipes list`)",
    )


