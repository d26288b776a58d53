"""Stage kinds ``eval`` (infer → judge → score) and ``audit`` (per-family fidelity of a simulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from awctl.formats.view import ChatStyle
from awctl.stages import Stage, StageContext, StageResult


class EvalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    inputs: list[str] = Field(min_length=1, description="AWB JSONL files/folders or trajectory JSONL")
    backend: str = "transformers"
    backend_options: dict[str, Any] = Field(
        default_factory=dict, description="e.g. {model = '@sft.checkpoint'}"
    )
    judge: str = Field("deterministic", description="a registered judge: deterministic | llm | a plugin's")
    judge_options: dict[str, Any] = Field(
        default_factory=dict,
        description="the judge factory's options, e.g. for llm {backend_name = 'openai', backend_options = "
                    "{base_url = '...', model = '...'}, max_tokens = 4096}",
    )
    max_tokens: int = Field(1024, ge=1)
    temperature: float = Field(0.6, ge=0)
    seed: int | None = None
    chunk_size: int = Field(32, ge=1)
    workers: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=1)
    batch_size: int = Field(64, ge=1, description="rows per judge call")
    baseline: bool = Field(True, description="also judge the domains' copy baseline on the same rows")
    resume: bool = True
    fail_under: float | None = Field(None, description="fail the stage when the pooled score is below this")


def _resolve_model(ctx: StageContext, options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if isinstance(out.get("model"), str) and out["model"].startswith("@"):
        out["model"] = str(ctx.resolve_input(out["model"]))
    return out


def run_eval(
    registry: Any,
    opts: EvalOptions,
    out_dir: Path,
    backend_options: dict[str, Any],
    on_progress: Any = None,
) -> dict[str, Any]:
    """The evaluation ``awctl eval run`` and the ``eval`` stage both run: build the backend and the judge
    from ``registry``, then :func:`awctl.eval.pipeline.evaluate` on ``opts.inputs``."""
    from awctl.eval.pipeline import EvalSettings, backend_identity, evaluate, judge_fingerprint
    from awctl.eval.rows import iter_input_rows

    settings = EvalSettings(max_tokens=opts.max_tokens, temperature=opts.temperature, seed=opts.seed,
                            chunk_size=opts.chunk_size, workers=opts.workers, limit=opts.limit,
                            resume=opts.resume, batch_size=opts.batch_size, baseline=opts.baseline)
    rows = iter_input_rows(opts.inputs, registry.domains)
    judge = registry.build_judge(opts.judge, **opts.judge_options)
    try:
        with registry.build_backend(opts.backend, **backend_options) as backend:
            return evaluate(rows, registry.domains, backend, judge, out_dir,
                            backend_id=backend_identity(opts.backend, backend_options),
                            judge_id=judge_fingerprint(opts.judge, opts.judge_options),
                            settings=settings, on_progress=on_progress)
    finally:
        judge.close()


class EvalStage(Stage):
    """AgentWorldBench-compatible evaluation with the copy baseline beside the model: predictions.jsonl,
    judged.jsonl, baseline.jsonl and scores.json."""

    kind = "eval"
    Options = EvalOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.errors import AwctlError
        from awctl.eval.pipeline import JUDGED, PREDICTIONS, SCORES, format_summary
        from awctl.eval.score import format_table

        opts: EvalOptions = self.options  # type: ignore[assignment]
        opts = opts.model_copy(update={"inputs": [str(ctx.resolve_input(i)) for i in opts.inputs]})
        result = run_eval(ctx.registry, opts, ctx.stage_dir, _resolve_model(ctx, opts.backend_options),
                          on_progress=lambda m: ctx.log.info(m))
        summary = _headline(result)
        ctx.metric(**{k: v for k, v in summary.items() if isinstance(v, (int, float)) and v is not None})
        if opts.fail_under is not None and (result["overall"] or -1e9) < opts.fail_under:
            raise AwctlError(
                f"eval score {result['overall']} is below fail_under {opts.fail_under}",
                hint=f"see {ctx.stage_dir / JUDGED} for per-row judgements",
            )
        base = result.get("baseline")
        return StageResult(
            outputs={"predictions": ctx.stage_dir / PREDICTIONS, "judged": ctx.stage_dir / JUDGED,
                     "scores": ctx.stage_dir / SCORES},
            summary=summary,
            report="```\n" + format_table(result) + "\n```\n\n" + format_summary(result)
            + ("" if base else "\n\nNo copy baseline: the domains of these rows define none."),
        )


def _headline(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers a run's metrics and report keep for one evaluation (model, baseline, splits)."""
    out: dict[str, Any] = {"overall": result["overall"], "overall_domain_mean": result["overall_domain_mean"],
                           "valid": result["valid"], "failed": result["failed"],
                           "exact": result["exact"]["count"], "exact_rate": result["exact"]["rate"],
                           "rows": result["exact"]["of"]}
    for split, sub in (result.get("splits") or {}).items():
        out[f"{split}_rows"], out[f"{split}_exact"] = sub["rows"], sub["exact"]
        out[f"{split}_overall"] = sub["overall"]
    base = result.get("baseline")
    if base:
        out["baseline_overall"], out["baseline_exact"] = base["overall"], base["exact"]["count"]
        for split, sub in (base.get("splits") or {}).items():
            out[f"baseline_{split}_exact"] = sub["exact"]
    for split, d in (result.get("vs_baseline") or {}).items():
        for k in ("mean", "low", "high"):
            out[f"{split}_vs_baseline_{k}"] = d[k]
    return out


class AuditOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    trajectories: list[str] = Field(default_factory=list, description="recorded real trajectories")
    real: bool = Field(False, description="run the task reference solutions live first")
    suite: str | None = None
    limit: int | None = Field(None, ge=1)
    backend: str = "transformers"
    backend_options: dict[str, Any] = Field(default_factory=dict)
    max_tokens: int = Field(1024, ge=1)
    temperature: float = Field(0.0, ge=0)
    chunk_size: int = Field(32, ge=1, description="requests per backend call")
    style: ChatStyle = Field("agentworldbench", description="the chat style the simulator was trained in")
    fail_under: float | None = Field(None, description="fail the stage when the overall score is below this")


class AuditStage(Stage):
    """Teacher-forced fidelity audit per action family; report.md with plots in the stage folder."""

    kind = "audit"
    Options = AuditOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.errors import AwctlError
        from awctl.eval.audit import reference_trajectories, run_audit, write_report

        opts: AuditOptions = self.options  # type: ignore[assignment]
        domain = ctx.registry.domain(opts.domain)
        paths = [Path(ctx.resolve_input(p)) for p in opts.trajectories]
        trajs = reference_trajectories(
            domain, paths, real=opts.real, suite=opts.suite, limit=opts.limit, out_dir=ctx.stage_dir,
            env_settings=ctx.project.domain_settings(opts.domain),
        )
        with ctx.registry.build_backend(opts.backend, **_resolve_model(ctx, opts.backend_options)) as backend:
            result = run_audit(
                domain,
                trajs,
                backend,
                domains=ctx.domains,
                max_tokens=opts.max_tokens,
                temperature=opts.temperature,
                chunk_size=opts.chunk_size,
                style=opts.style,
                on_progress=lambda m: ctx.log.info(m),
            )
        report = write_report(result, ctx.stage_dir)
        overall = result.overall()
        ctx.metric(**{k: v for k, v in overall.items() if v is not None})
        if opts.fail_under is not None and (overall["score"] is None or overall["score"] < opts.fail_under):
            raise AwctlError(
                f"audit score {overall['score']} is below fail_under {opts.fail_under}", hint=f"see {report}"
            )
        return StageResult(
            outputs={"report": report, "audit": ctx.stage_dir / "audit.json"},
            summary=overall,
            report=report.read_text(encoding="utf-8").split("\n", 1)[1],
        )
