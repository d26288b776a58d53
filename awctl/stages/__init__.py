"""The stage contract: what a recipe's ``[[stages]]`` entries run.

A stage kind is a :class:`Stage` subclass registered through ``register_stages``. Its ``Options`` model
validates the stage's table from the recipe without running anything (so ``awctl recipes validate``
never imports torch); ``run(ctx)`` does the work inside the run directory and returns named outputs that
later stages reference as ``"@<stage name>.<output>"``.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class StageResult:
    """``outputs``: named files/dirs the runner hashes into the manifest; ``summary``: headline numbers;
    ``report``: a markdown fragment the runner puts in report.md (may reference images in the stage dir)."""

    outputs: dict[str, Path] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    report: str = ""


@dataclass
class StageContext:
    """What a running stage may use. ``artifacts`` maps earlier stage names to their outputs; ``registry``
    is the run's :class:`awctl.plugins.Registry` (domains, backends, judges), passed in by the runner."""

    name: str
    run_dir: Path
    stage_dir: Path
    project: Any  # awctl.config.ProjectConfig
    recipe: dict[str, Any]
    log: Any  # structlog BoundLogger
    registry: Any  # awctl.plugins.Registry
    artifacts: dict[str, dict[str, Path]] = field(default_factory=dict)
    seed: int = 0
    _metrics_path: Path | None = None

    @property
    def domains(self) -> dict[str, Any]:
        return self.registry.domains

    def judge(self, name: str, options: dict[str, Any]) -> Any:
        """The judge ``name`` built with ``options``, or ``None`` for ``deterministic`` (reward and
        rejection sampling compare with the reference directly, the same rules without building rows)."""
        return None if name == "deterministic" else self.registry.build_judge(name, **options)

    def metric(self, step: int | None = None, **values: Any) -> None:
        """Append one record to the run's metrics.jsonl, tagged with this stage."""
        path = self._metrics_path or self.run_dir / "metrics.jsonl"
        record = {"stage": self.name, "time": round(time.time(), 3), "step": step, **values}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=str) + "\n")

    def resolve_input(self, value: str | Path) -> Path:
        """``@stage.output`` → that stage's output path; anything else is a path relative to the project."""
        text = str(value)
        if text.startswith("@"):
            stage, _, key = text[1:].partition(".")
            try:
                return self.artifacts[stage][key]
            except KeyError:
                from awctl.errors import AwctlError

                known = {s: sorted(o) for s, o in self.artifacts.items()}
                raise AwctlError(
                    f"stage {self.name!r}: reference {text!r} names no earlier stage output",
                    hint=f"earlier outputs: {known}",
                ) from None
        return self.project.resolve(text)


class Stage(ABC):
    """Base class of stage kinds. Subclasses set ``kind`` and ``Options`` and implement ``run``."""

    kind: ClassVar[str] = ""
    Options: ClassVar[type[BaseModel]] = NoOptions

    def __init__(self, options: BaseModel) -> None:
        self.options = options

    def input_refs(self) -> list[str]:
        """Option values naming inputs (paths or ``@stage.output``); their content decides resume."""
        refs = []
        for key, value in self.options.model_dump().items():
            if key.startswith(("input", "data", "model", "trajectories", "shards")):
                values = value if isinstance(value, list) else [value]
                refs.extend(str(v) for v in values if isinstance(v, str) and v)
        return refs

    @abstractmethod
    def run(self, ctx: StageContext) -> StageResult:
        """Do the stage's work; write only under ``ctx.stage_dir``; return named outputs."""
