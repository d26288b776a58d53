"""Recipes: TOML files that name a run's stages, validated without running (or importing) anything heavy.

A recipe has a ``[recipe]`` table (``name``, ``description``, ``seed``, optional ``output_root``), optional
project-level tables that override awctl.toml for this recipe (``[defaults]``, ``[domains.<name>]``), and an
ordered array ``[[stages]]``. Each stage has ``kind`` (a kind registered through ``register_stages``), an
optional unique ``name`` (default: the kind) and its options as the remaining keys::

    [recipe]
    name = "quickstart"
    seed = 0

    [[stages]]
    kind = "record"
    domains = ["terminal"]

    [[stages]]
    kind = "verify"
    input = "@record.trajectories"      # an earlier stage's output

``key.path=value`` overrides (``recipe.seed=3``, ``stages.prep.max_turns=10`` by stage name,
``stages.0.kind=record`` by index) are applied before validation; the value is read as a TOML value when
it parses as one, else taken as a string.

:func:`validate_recipe` returns every problem at once, each as ``file: key: message (fix)``, where
``key`` uses the same dotted path an override would. It imports stage classes through the plugin
registry but never runs them, so it must stay torch-free (a test checks).
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from awctl.config import DefaultsConfig, ProjectConfig, load_project_config, validation_problems
from awctl.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPES_DIR = "recipes"
TOP_LEVEL_KEYS = ("recipe", "stages", "defaults", "domains")
STAGE_RESERVED = ("kind", "name")
_TOML_LINE = re.compile(r"at line (\d+), column (\d+)")


class RecipeMeta(BaseModel):
    """The ``[recipe]`` table."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    seed: int = 0
    output_root: str | None = None


@dataclass
class StageSpec:
    """One validated ``[[stages]]`` entry. ``options`` is the kind's ``Options`` model instance."""

    index: int
    name: str
    kind: str
    raw: dict[str, Any]
    stage_class: type
    options: BaseModel

    def options_dict(self) -> dict[str, Any]:
        """The options with defaults filled in, as JSON-compatible values."""
        # by_alias: an option spelled by its alias in TOML (e.g. ``from``) must round-trip as written.
        return self.options.model_dump(mode="json", by_alias=True)

    def make_stage(self) -> Any:
        return self.stage_class(self.options)

    def references(self) -> list[str]:
        """Stage names this stage references through ``@stage.output`` option values."""
        return sorted({ref[1:].partition(".")[0] for ref in references_in(self.raw)})


@dataclass
class ResolvedRecipe:
    """A validated recipe with overrides applied. ``project`` is awctl.toml merged with the recipe's
    project-level tables; relative paths in stage options resolve against ``project.root``."""

    path: Path
    meta: RecipeMeta
    stages: list[StageSpec]
    project: ProjectConfig
    overrides: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def seed(self) -> int:
        return self.meta.seed

    def to_dict(self) -> dict[str, Any]:
        """The resolved recipe as plain data; itself a valid recipe (``awctl run --resume`` reloads it)."""
        out: dict[str, Any] = {"recipe": self.meta.model_dump(mode="json", exclude_none=True)}
        out["defaults"] = self.project.defaults.model_dump(mode="json")
        if self.project.domains:
            out["domains"] = json.loads(json.dumps(self.project.domains, default=str))
        out["stages"] = [{"kind": s.kind, "name": s.name, **s.options_dict()} for s in self.stages]
        return out

    def to_toml(self) -> str:
        return dump_toml(self.to_dict())


# ── finding recipes ──────────────────────────────────────────────────────────────────────────────────


def recipe_dirs(project: ProjectConfig | None = None) -> list[Path]:
    """Folders searched for recipes by name: the project's ``recipes/`` then awctl's source tree's."""
    project = project or load_project_config()
    dirs = [project.resolve(RECIPES_DIR), Path(__file__).resolve().parent.parent / RECIPES_DIR]
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


# ── overrides ────────────────────────────────────────────────────────────────────────────────────────


def parse_value(text: str) -> Any:
    """A TOML value when ``text`` parses as one (``3``, ``true``, ``[1, 2]``, ``"x"``), else the string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"a.b.c=value"`` → (``["a", "b", "c"]``, parsed value). Raises ConfigError on a malformed one."""
    key, sep, value = text.partition("=")
    parts = key.strip().split(".")
    if not sep or not all(p.strip() for p in parts):
        raise ConfigError(
            [f"override {text!r}: expected key.path=value"], hint="e.g. recipe.seed=3 or stages.prep.limit=10"
        )
    return [p.strip() for p in parts], parse_value(value.strip())


def is_override(arg: str) -> bool:
    """Whether a CLI argument is a ``key=value`` override rather than a recipe name or path."""
    return "=" in arg and not Path(arg).exists() and not arg.startswith("=")


def _stage_name(entry: Any, index: int) -> str:
    if isinstance(entry, dict):
        return str(entry.get("name") or entry.get("kind") or index)
    return str(index)


def _schema_keys(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    keys = list(model.model_fields)
    keys += [f.alias for f in model.model_fields.values() if f.alias]
    return keys


def _stage_known_keys(entry: dict[str, Any], registry: Any) -> list[str]:
    keys = [*STAGE_RESERVED, *entry]
    reg = registry.stages.get(entry.get("kind")) if registry is not None else None
    if reg is not None:
        keys += _schema_keys(getattr(reg.obj, "Options", None))
    return list(dict.fromkeys(keys))


def _known_keys(container: dict[str, Any], path: list[str], registry: Any) -> list[str]:
    """Keys an override may set in ``container`` (found at ``path``): existing keys plus schema fields."""
    keys = list(container)
    if path == []:
        keys += list(TOP_LEVEL_KEYS)
    elif path == ["recipe"]:
        keys += _schema_keys(RecipeMeta)
    elif path == ["defaults"]:
        keys += _schema_keys(DefaultsConfig)
    elif len(path) == 1 and path[0] == "domains" or len(path) == 2 and path[0] == "domains":
        return ["*"]  # per-domain settings are free-form
    return list(dict.fromkeys(keys))


def apply_overrides(
    data: dict[str, Any], overrides: Sequence[str], where: str, registry: Any = None
) -> list[str]:
    """Apply ``key.path=value`` overrides to recipe ``data`` in place; return one problem per bad one.

    ``stages.<name>`` picks a stage by its name (or kind when it has no name), ``stages.<n>`` by index.
    A key that neither exists nor is a known option of its table is a problem naming close matches.
    """
    problems: list[str] = []
    for text in overrides:
        try:
            parts, value = parse_override(text)
        except ConfigError as exc:
            problems.extend(f"{where}: {p}" for p in exc.problems)
            continue
        error = _apply_one(data, parts, value, registry)
        if error:
            problems.append(f"{where}: override {text!r}: {error}")
    return problems


def _apply_one(data: dict[str, Any], parts: list[str], value: Any, registry: Any) -> str | None:
    node: Any = data
    walked: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if walked == ["stages"]:
            stages = node if isinstance(node, list) else []
            names = [_stage_name(e, n) for n, e in enumerate(stages)]
            if part.isdigit() and int(part) < len(stages):
                index = int(part)
            elif part in names:
                index = names.index(part)
            else:
                close = difflib.get_close_matches(part, names, n=3)
                return _missing("stages." + part, close, f"stages are {', '.join(names) or 'none'}")
            if last:
                if not isinstance(value, dict):
                    return "a whole stage can only be replaced by an inline table"
                stages[index] = value
                return None
            node = stages[index]
            walked.append(part)
            if not isinstance(node, dict):
                return f"stages.{part} is not a table"
            known = _stage_known_keys(node, registry)
            key = parts[i + 1]
            if key not in known:
                close = difflib.get_close_matches(key, known, n=3)
                return _missing(".".join(parts[: i + 2]), close, "")
            continue
        if not isinstance(node, dict):
            return f"{'.'.join(walked)} is not a table, so it has no key {part!r}"
        if not (len(walked) == 2 and walked[0] == "stages"):  # stage keys were checked above
            known = _known_keys(node, walked, registry)
            if "*" not in known and part not in known:
                close = difflib.get_close_matches(part, known, n=3)
                return _missing(".".join([*walked, part]), close, "")
        if last:
            node[part] = value
            return None
        if part not in node:
            node[part] = [] if walked == [] and part == "stages" else {}
        node = node[part]
        walked.append(part)
    return None


def _missing(path: str, close: list[str], extra: str) -> str:
    parts = [f"key path {path!r} does not exist"]
    if close:
        parts[0] += ";"
        parts.append(f"did you mean {', '.join(close)}?")
    if extra:
        parts.append(f"({extra})")
    return " ".join(parts)


# ── validation ───────────────────────────────────────────────────────────────────────────────────────


def references_in(value: Any) -> Iterable[str]:
    """Every ``@stage.output`` string inside an option value (lists and tables included)."""
    if isinstance(value, str):
        if value.startswith("@"):
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from references_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from references_in(v)


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
            options = stage_class.Options.model_validate(raw)
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
    return ResolvedRecipe(path, meta, specs, merged, list(overrides)), []


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


# ── TOML writing (only what recipes contain: tables, arrays of tables, scalars, arrays, inline tables) ──

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Path):
        return json.dumps(str(v), ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _table(lines: list[str], header: str, table: dict[str, Any]) -> None:
    scalars = {k: v for k, v in table.items() if v is not None and not isinstance(v, dict)}
    subtables = {k: v for k, v in table.items() if isinstance(v, dict)}
    if header and (scalars or not subtables):
        lines.append(f"[{header}]")
    lines.extend(f"{_key(k)} = {_value(v)}" for k, v in scalars.items())
    if scalars or (header and not subtables):
        lines.append("")
    for k, sub in subtables.items():
        _table(lines, f"{header}.{_key(k)}" if header else _key(k), sub)


def dump_toml(data: dict[str, Any]) -> str:
    """Write recipe-shaped data as TOML (``None`` values are left out: TOML has no null).

    Top-level tables become ``[table]`` sections, a top-level list of tables becomes ``[[array]]``
    entries whose nested tables are written inline.
    """
    lines: list[str] = []
    top_scalars = {k: v for k, v in data.items() if not isinstance(v, (dict, list)) or _is_plain_list(v)}
    lines.extend(f"{_key(k)} = {_value(v)}" for k, v in top_scalars.items() if v is not None)
    if top_scalars:
        lines.append("")
    for k, v in data.items():
        if isinstance(v, dict):
            _table(lines, _key(k), v)
    for k, v in data.items():
        if isinstance(v, list) and not _is_plain_list(v):
            for entry in v:
                lines.append(f"[[{_key(k)}]]")
                lines.extend(f"{_key(ek)} = {_value(ev)}" for ek, ev in entry.items() if ev is not None)
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _is_plain_list(v: Any) -> bool:
    return isinstance(v, list) and not (v and all(isinstance(x, dict) for x in v))
