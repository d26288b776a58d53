"""Validating a recipe: every problem at once, each ``file: key: message (fix)``, nothing run."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from awctl.config import ProjectConfig, load_project_config, validation_problems
from awctl.errors import ConfigError
from awctl.recipe.find import find_recipe
from awctl.recipe.overrides import _stage_name, apply_overrides
from awctl.recipe.spec import (
    STAGE_RESERVED,
    TOP_LEVEL_KEYS,
    RecipeMeta,
    ResolvedRecipe,
    StageSpec,
    references_in,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_TOML_LINE = re.compile(r"at line (\d+), column (\d+)")


def _option_problems(exc: ValidationError, path: Path, label: str) -> list[str]:
    """Like :func:`awctl.config.validation_problems`, plus the offending value, so the fix is obvious."""
    out = []
    for line, err in zip(validation_problems(exc, path, label), exc.errors(), strict=True):
        if err["type"] not in ("missing", "extra_forbidden"):
            line += f" (got {err.get('input')!r})"
        out.append(line)
    return out


def _looks_like_path(ref: str) -> bool:
    # input_refs() also returns model names such as "tiny"; only values that look like paths must exist.
    return "/" in ref or "\\" in ref or bool(Path(ref).suffix) or ref.startswith(("~", "."))


def load_recipe_data(path: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """The recipe's TOML as data, or None and a ``file:line: ...`` problem on a syntax error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror or exc}"]
    try:
        return tomllib.loads(text), []
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        where = f"{path}:{match.group(1)}" if match else str(path)
        return None, [f"{where}: invalid TOML: {exc} (fix the syntax on that line)"]


def validate_recipe(
    path: str | Path,
    overrides: Sequence[str] = (),
    project: ProjectConfig | None = None,
    registry: Any = None,
) -> tuple[ResolvedRecipe | None, list[str]]:
    """Validate a recipe with overrides applied. Returns ``(resolved, [])`` or ``(None | partial, problems)``.

    Every problem found is listed, each ``file: key: message`` with a fix: TOML syntax (file:line),
    unknown top-level keys, a stage without ``kind``, an unknown kind (with close matches), duplicate
    stage names, each stage's option errors (by field path), ``@stage.output`` references to a missing or
    later stage, and input paths that do not exist. Nothing is run.
    """
    path = Path(path)
    if registry is None:
        from awctl.plugins import get_registry

        registry = get_registry()
    project = project or load_project_config()
    data, problems = load_recipe_data(path)
    if data is None:
        return None, problems
    problems += apply_overrides(data, overrides, str(path), registry)

    for key in data:
        if key not in TOP_LEVEL_KEYS:
            close = difflib.get_close_matches(key, TOP_LEVEL_KEYS, n=1)
            fix = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(TOP_LEVEL_KEYS)}"
            problems.append(f"{path}: {key}: unknown top-level key ({fix})")

    meta: RecipeMeta | None = None
    recipe_table = data.get("recipe")
    if not isinstance(recipe_table, dict):
        problems.append(f'{path}: recipe: missing [recipe] table (add [recipe] with name = "...")')
    else:
        try:
            meta = RecipeMeta.model_validate(recipe_table)
        except ValidationError as exc:
            problems += validation_problems(exc, path, "recipe")

    merged = project
    overlay = {k: data[k] for k in ("defaults", "domains") if k in data}
    if overlay:
        base = project.model_dump(mode="json")
        base["defaults"] = {**base["defaults"], **overlay.get("defaults", {})}
        for dname, settings in overlay.get("domains", {}).items():
            base["domains"][dname] = {**base["domains"].get(dname, {}), **(settings or {})}
        try:
            merged = ProjectConfig.model_validate(base)
            merged.root, merged.path = project.root, project.path
        except ValidationError as exc:
            problems += validation_problems(exc, path)

    stages_data = data.get("stages", [])
    specs: list[StageSpec] = []
    if not isinstance(stages_data, list) or not all(isinstance(s, dict) for s in stages_data):
        problems.append(f"{path}: stages: must be an array of tables (write [[stages]] entries)")
        stages_data = []
    elif not stages_data:
        problems.append(f"{path}: stages: a recipe needs at least one [[stages]] entry")

    order: dict[str, int] = {}
    for index, entry in enumerate(stages_data):
        name = _stage_name(entry, index)
        label = f"stages.{name}"
        kind = entry.get("kind")
        if name in order:
            problems.append(
                f"{path}: {label}: duplicate stage name (stages {order[name]} and {index}; "
                'give one a unique name = "...")'
            )
        else:
            order[name] = index
        if not kind:
            problems.append(
                f'{path}: stages.{index}.kind: missing (add kind = "..."; known kinds: '
                f"{', '.join(sorted(registry.stages)) or 'none'})"
            )
            continue
        if kind not in registry.stages:
            known = sorted(registry.stages)
            close = difflib.get_close_matches(str(kind), known, n=3)
            mean = f"did you mean {', '.join(close)}? " if close else ""
            problems.append(
                f"{path}: {label}.kind: unknown stage kind {kind!r} ({mean}known kinds: "
                f"{', '.join(known) or 'none'}; `awctl plugins` lists plugins that failed to load)"
            )
            continue
        stage_class = registry.stages[kind].obj
        raw = {k: v for k, v in entry.items() if k not in STAGE_RESERVED}
        try:
            options = stage_class.Options.model_validate(raw, context={"domains": registry.domains})
        except ValidationError as exc:
            problems += _option_problems(exc, path, label)
            options = None
        for ref in references_in(raw):
            target, dot, output = ref[1:].partition(".")
            if not dot or not output:
                problems.append(f"{path}: {label}: reference {ref!r} must be @<stage name>.<output>")
            elif target not in order or order[target] == index:
                later = [i for i, e in enumerate(stages_data) if _stage_name(e, i) == target and i > index]
                why = "comes later" if later else "does not exist"
                earlier = [n for n, i in order.items() if i < index]
                problems.append(
                    f"{path}: {label}: reference {ref!r} names a stage that {why} "
                    f"(reference one of the earlier stages: {', '.join(earlier) or 'none'})"
                )
        if options is None:
            continue
        spec = StageSpec(index, name, kind, raw, stage_class, options)
        try:
            refs = spec.make_stage().input_refs()
        except Exception as exc:  # a stage's own code: report, do not crash validation
            problems.append(f"{path}: {label}: cannot list inputs: {type(exc).__name__}: {exc}")
            refs = []
        for ref in refs:
            if ref.startswith("@") or not _looks_like_path(ref):
                continue
            resolved = merged.resolve(ref)
            if not resolved.exists():
                problems.append(
                    f"{path}: {label}: input path {ref!r} does not exist ({resolved}; "
                    "create it, fix the path, or reference an earlier stage as @stage.output)"
                )
        specs.append(spec)

    if problems or meta is None:
        return None, problems
    return ResolvedRecipe(path, meta, specs, merged, list(overrides), registry), []


def load_recipe(
    name_or_path: str | Path, overrides: Sequence[str] = (), project: ProjectConfig | None = None
) -> ResolvedRecipe:
    """Find and validate a recipe; raise ConfigError listing every problem."""
    project = project or load_project_config()
    path = find_recipe(name_or_path, project)
    resolved, problems = validate_recipe(path, overrides, project)
    if resolved is None:
        raise ConfigError(problems, hint=f"fix the recipe {path} or the overrides, then rerun")
    return resolved


