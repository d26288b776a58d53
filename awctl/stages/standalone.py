"""Running one stage kind outside a recipe: what every ``awctl`` command that does a stage's work calls.

``awctl eval run``, ``awctl data prep``, ``awctl audit``, ``awctl record``, ``awctl train`` (through its
launcher worker) and the recipe runner all execute the same ``Stage.run``, so a command and its stage kind
cannot drift apart: the command only turns its flags into the stage's ``Options``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from awctl.stages import StageContext, StageResult


def run_standalone(
    registry: Any,
    kind: str,
    options: dict[str, Any],
    out: Path,
    *,
    seed: int = 0,
    project: Any = None,
    console: Any = sys.stderr,
    name: str | None = None,
) -> StageResult:
    """Run stage ``kind`` with ``options`` (validated by its ``Options`` model) in folder ``out``.

    ``out`` is both the run and the stage folder: outputs, ``log.jsonl`` and ``metrics.jsonl`` go there.
    Paths in ``options`` are relative to ``project`` (default: the project found from the current folder).
    """
    from pydantic import ValidationError

    from awctl.config import load_project_config, validation_problems
    from awctl.errors import ConfigError
    from awctl.runlog import make_run_logger

    cls = registry.stage(kind).obj
    try:
        opts = cls.Options.model_validate(options, context={"domains": registry.domains})
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, f"{kind} options"),
                          hint=f"`awctl recipes show` lists the options of stage kind {kind!r}") from None
    out.mkdir(parents=True, exist_ok=True)
    log, sink = make_run_logger(out / "log.jsonl", console, stage=name or kind)
    try:
        ctx = StageContext(name=name or kind, run_dir=out, stage_dir=out,
                           project=project if project is not None else load_project_config(), recipe={},
                           log=log, registry=registry, seed=seed, _metrics_path=out / "metrics.jsonl")
        return cls(opts).run(ctx)
    finally:
        sink.close()


def run_stage(kind: str, options: dict[str, Any], out: Path, seed: int = 0, console: Any = sys.stderr) -> StageResult:
    """:func:`run_standalone` with the process's plugin registry (for commands, scripts and tests)."""
    from awctl.plugins import get_registry

    return run_standalone(get_registry(), kind, options, out, seed=seed, console=console)
