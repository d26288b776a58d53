"""Stage kind ``simulate``: teacher-forced batch replay of recorded data through a world model
(:func:`awctl.sim.batch.simulate_batch`, the same call as ``awctl simulate batch``)::

    [[stages]]
    kind = "simulate"
    input = "@heldout.trajectories"
    backend_options = { model = "@sft.checkpoint" }
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from awctl.formats.view import ChatStyle
from awctl.stages import Stage, StageContext, StageResult


class SimulateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str = Field(description="trajectory JSONL or AgentWorldBench rows")
    format: Literal["auto", "trajectories", "awb"] = "auto"
    backend: str = "transformers"
    backend_options: dict[str, Any] = Field(default_factory=dict, description="e.g. {model = '@sft.checkpoint'}")
    style: ChatStyle = "agentworldbench"
    batch_size: int = Field(32, ge=1)
    limit: int | None = Field(None, ge=1)
    max_tokens: int = Field(1024, ge=1)
    temperature: float = Field(0.0, ge=0)
    seed: int | None = None


class SimulateStage(Stage):
    """Predict every turn of recorded data from its true history: predictions.jsonl."""

    kind: ClassVar[str] = "simulate"
    Options: ClassVar[type[BaseModel]] = SimulateOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.sim.batch import read_input, simulate_batch

        opts: SimulateOptions = self.options  # type: ignore[assignment]
        source = ctx.resolve_input(opts.input)
        backend_options = dict(opts.backend_options)
        if isinstance(backend_options.get("model"), str) and backend_options["model"].startswith("@"):
            backend_options["model"] = str(ctx.resolve_input(backend_options["model"]))
        out = ctx.stage_dir / "predictions.jsonl"
        with ctx.registry.build_backend(opts.backend, **backend_options) as backend:
            summary = simulate_batch(read_input(source, opts.format, ctx.domains), ctx.domains, backend, out,
                                     style=opts.style, batch_size=opts.batch_size, limit=opts.limit,
                                     max_tokens=opts.max_tokens, temperature=opts.temperature, seed=opts.seed,
                                     source=str(source), fmt=opts.format)
        ctx.metric(predictions=summary.predictions, empty_extractions=summary.empty_extractions)
        return StageResult(outputs={"predictions": out}, summary=summary.to_dict(),
                           report=f"{summary.predictions} predictions ({summary.empty_extractions} with an empty "
                                  f"extraction) in {summary.seconds}s.")
