"""What a validated recipe is: its ``[recipe]`` table, its stages and the resolved whole."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field

from awctl.config import ProjectConfig

TOP_LEVEL_KEYS = ("recipe", "stages", "defaults", "domains")
STAGE_RESERVED = ("kind", "name")


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
    registry: Any = None  # the awctl.plugins.Registry the recipe was validated against (its stages run with it)

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




def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value if v is not None]
    return value


def dump_toml(data: dict[str, Any]) -> str:
    """Recipe-shaped data as TOML, via tomli-w (``None`` values are left out: TOML has no null)."""
    return tomli_w.dumps(_drop_none(json.loads(json.dumps(data, default=str))))
