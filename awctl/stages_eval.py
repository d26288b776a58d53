"""Stage kinds ``eval`` (infer → judge → score) and ``audit`` (per-family fidelity of a simulator)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from awctl.stages import Stage, StageContext, StageResult


class EvalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    inputs: list[str] = Field(min_length=1, description="AWB JSONL files/folders or trajectory JSONL")
    backend: str = "transformers"
    backend_options: dict[str, Any] = Field(
        default_factory=dict, description="e.g. {model = '@sft.checkpoint'}"
    )
    judge: str = Field("deterministic", description="deterministic | llm | a plugin's judge")
    judge_backend: str = "openai"
    judge_backend_options: dict[str, Any] = Field(default_factory=dict)
    max_tokens: int = Field(1024, ge=1)
    temperature: float = Field(0.6, ge=0)
    chunk_size: int = Field(32, ge=1)
    workers: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=1)
    max_retries: int = Field(3, ge=1)
    fail_under: float | None = Field(None, description="fail the stage when the pooled score is below this")


def exact_match(rows: list[Any]) -> tuple[int, int] | None:
    """``(exact, judged)``: rows whose ``judge_details.exact`` is true, among the rows whose judge reported
    an ``exact`` field (the deterministic judge does; an LLM judge does not: ``None`` then)."""
    flags = [bool(d["exact"]) for r in rows
             if isinstance(d := (r.get("judge_details") if isinstance(r, dict) else None), dict) and "exact" in d]
    return (sum(flags), len(flags)) if flags else None


def _resolve_model(ctx: StageContext, options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if isinstance(out.get("model"), str) and out["model"].startswith("@"):
        out["model"] = str(ctx.resolve_input(out["model"]))
    return out


class EvalStage(Stage):
    """AgentWorldBench-compatible evaluation: predictions.jsonl, judged.jsonl and scores.json."""

    kind = "eval"
    Options = EvalOptions

    def run(self, ctx: StageContext) -> StageResult:
        import json

        from awctl.backend import build_backend
        from awctl.errors import AwctlError
        from awctl.eval.infer import run_infer
        from awctl.eval.judging import judge_rows
        from awctl.eval.rows import iter_input_rows, read_rows, write_rows_atomic
        from awctl.eval.score import aggregate, format_table
        from awctl.plugins import get_registry

        opts: EvalOptions = self.options  # type: ignore[assignment]
        inputs = [ctx.resolve_input(i) for i in opts.inputs]
        preds, judged, scores = (
            ctx.stage_dir / n for n in ("predictions.jsonl", "judged.jsonl", "scores.json")
        )
        with build_backend(opts.backend, **_resolve_model(ctx, opts.backend_options)) as backend:
            summary = run_infer(
                iter_input_rows(inputs),
                backend,
                preds,
                max_tokens=opts.max_tokens,
                temperature=opts.temperature,
                chunk_size=opts.chunk_size,
                workers=opts.workers,
                limit=opts.limit,
                seed=ctx.seed,
            )
        ctx.log.info("inferred", **summary.to_dict())
        factory = get_registry().judge(opts.judge).obj
        judge = (
            factory(
                backend_name=opts.judge_backend,
                backend_options=opts.judge_backend_options,
                max_retries=opts.max_retries,
            )
            if opts.judge == "llm"
            else factory()
        )
        try:
            rows = list(judge_rows(read_rows(preds), judge))
        finally:
            judge.close()
        write_rows_atomic(judged, rows)
        result = aggregate(rows)
        exact = exact_match(rows)
        exact_fields = {} if exact is None else {"exact": exact[0], "exact_rate": round(exact[0] / exact[1], 4)}
        scores.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        ctx.metric(
            overall=result["overall"],
            overall_domain_mean=result["overall_domain_mean"],
            valid=result["valid"],
            failed=result["failed"],
            **exact_fields,
        )
        if opts.fail_under is not None and (result["overall"] or -1e9) < opts.fail_under:
            raise AwctlError(
                f"eval score {result['overall']} is below fail_under {opts.fail_under}",
                hint=f"see {judged} for per-row judgements",
            )
        return StageResult(
            outputs={"predictions": preds, "judged": judged, "scores": scores},
            summary={
                "overall": result["overall"],
                "overall_domain_mean": result["overall_domain_mean"],
                "valid": result["valid"],
                "failed": result["failed"],
                **exact_fields,
            },
            report="```\n" + format_table(result) + "\n```"
            + ("" if exact is None else f"\n\nExact match: {exact[0]}/{exact[1]} ({exact[0] / exact[1]:.1%}) "
                                        "of the judged rows (`judge_details.exact`)."),
        )


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
    fail_under: float | None = Field(None, description="fail the stage when the overall score is below this")


class AuditStage(Stage):
    """Teacher-forced fidelity audit per action family; report.md with plots in the stage folder."""

    kind = "audit"
    Options = AuditOptions

    def run(self, ctx: StageContext) -> StageResult:
        from pathlib import Path

        from awctl.backend import build_backend
        from awctl.cli.audit import load_reference_trajectories
        from awctl.errors import AwctlError
        from awctl.eval.audit import run_audit, write_report
        from awctl.plugins import get_registry

        opts: AuditOptions = self.options  # type: ignore[assignment]
        reg = get_registry()
        domain = reg.domain(opts.domain)
        paths = tuple(Path(ctx.resolve_input(p)) for p in opts.trajectories)
        trajs = load_reference_trajectories(
            opts.domain, paths, opts.real, opts.suite, opts.limit, ctx.stage_dir
        )
        with build_backend(opts.backend, **_resolve_model(ctx, opts.backend_options)) as backend:
            result = run_audit(
                domain,
                trajs,
                backend,
                domains=reg.domains,
                max_tokens=opts.max_tokens,
                temperature=opts.temperature,
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
