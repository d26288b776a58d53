"""Stage kind ``record``: record trajectories in real environments (see :mod:`awctl.record`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from awctl.stages import Stage, StageContext, StageResult


class RecordOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domains: list[str] = Field(min_length=1, description="domains to record, in order")
    suite: str | None = Field(None, description="task suite (default: every suite of each domain)")
    limit: int | None = Field(None, ge=1, description="at most this many tasks per domain")
    tasks: list[str] | None = Field(None, description="only these task ids or id patterns such as 'terminal/drill/0[0-4]?' (e.g. held-out tasks)")
    repeats: int = Field(1, ge=1, description="episodes per task")
    workers: int = Field(1, ge=1, description="parallel environments")
    policy: str = Field("scripted", description="scripted | backend:NAME")
    policy_options: dict[str, Any] = Field(default_factory=dict, description="backend options, e.g. model")
    env_options: dict[str, Any] = Field(default_factory=dict, description="real-environment settings over "
                                        "awctl.toml [domains.<name>] for every domain recorded, e.g. "
                                        "{prompt = 'debian'} for the terminal's prompt style")
    require_pass: bool = Field(True, description="fail the stage when a reference solution fails its checker")

    @field_validator("domains")
    @classmethod
    def _known_domains(cls, value: list[str], info: ValidationInfo) -> list[str]:
        # Validated against the registry the recipe is checked with (passed as validation context).
        known = (info.context or {}).get("domains")
        unknown = [d for d in value if known is not None and d not in known]
        if unknown:
            raise ValueError(f"unknown domain(s) {unknown}; registered: {sorted(known)}")
        return value


class RecordStage(Stage):
    """Record trajectories by running a policy on task suites in real environments."""

    kind = "record"
    Options = RecordOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.errors import AwctlError
        from awctl.record import record, resolve_policy, select_tasks
        from awctl.trajectory import read_trajectories, write_jsonl

        opts: RecordOptions = self.options  # type: ignore[assignment]
        parts, summaries = [], {}
        for name in opts.domains:
            domain = ctx.registry.domain(name)
            tasks = select_tasks(domain, opts.suite, opts.limit, ids=opts.tasks)
            part = ctx.stage_dir / f"{name}.jsonl"
            policy = resolve_policy(opts.policy, domain, ctx.registry.build_backend, **opts.policy_options)
            summary = record(
                domain, tasks, part, policy=policy, repeats=opts.repeats, workers=opts.workers,
                env_settings={**ctx.project.domain_settings(name), **opts.env_options},
            )
            ctx.log.info("recorded", domain=name, **summary.to_dict())
            ctx.metric(domain=name, trajectories=summary.trajectories, passed=summary.passed, turns=summary.turns)
            if opts.require_pass and (summary.failed or summary.errors):
                problems = summary.failed + summary.errors
                raise AwctlError(
                    f"{name}: {len(problems)} episode(s) failed: {problems[0]}",
                    hint="set require_pass = false to keep failed episodes",
                )
            summaries[name] = summary.to_dict()
            parts.append(part)
        out = ctx.stage_dir / "trajectories.jsonl"
        write_jsonl(out, (t for p in parts for t in read_trajectories(p)))
        rows = "\n".join(
            f"| {d} | {s['trajectories']} | {s['turns']} | {s['passed']} | {s['seconds']} |" for d, s in summaries.items()
        )
        report = "| domain | trajectories | turns | checker passed | seconds |\n|---|---|---|---|---|\n" + rows
        total = sum(s["trajectories"] for s in summaries.values())
        return StageResult(outputs={"trajectories": out}, summary={"trajectories": total}, report=report)
