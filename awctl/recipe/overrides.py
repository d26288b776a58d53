"""``key.path=value`` overrides of a recipe (``recipe.seed=3``, ``stages.prep.max_turns=10`` by stage name,
``stages.0.kind=record`` by index), applied to the raw data before validation."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from awctl.config import DefaultsConfig
from awctl.errors import AwctlError, ConfigError
from awctl.keyvalue import parse_assignment
from awctl.recipe.spec import STAGE_RESERVED, TOP_LEVEL_KEYS, RecipeMeta


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"a.b.c=value"`` → (``["a", "b", "c"]``, parsed value). Raises ConfigError on a malformed one."""
    try:
        return parse_assignment(text, "override")
    except AwctlError:
        raise ConfigError(
            [f"override {text!r}: expected key.path=value"], hint="e.g. recipe.seed=3 or stages.prep.limit=10"
        ) from None


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


