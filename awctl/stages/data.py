"""Stage kinds ``convert`` and ``verify``: the ``awctl data`` commands as recipe stages.

::

    [[stages]]
    name = "import"
    kind = "convert"
    inputs = ["data/awb/terminal_test.jsonl"]
    from = "agentworldbench"
    to = "awctl"                 # output "trajectories" -> stage_dir/trajectories.jsonl

    [[stages]]
    name = "check"
    kind = "verify"
    input = "@import.trajectories"
    fail_on_error = true
"""

from __future__ import annotations

import json
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from awctl.stages import Stage, StageContext, StageResult


class ConvertOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    inputs: list[str] = Field(min_length=1)
    from_format: str = Field("awctl", alias="from")
    to: str = "awctl"
    output: str = "trajectories.jsonl"
    domain: str | None = None
    transform: str | None = Field(None, description="a domain transform applied to each trajectory, e.g. "
                                                    "'incremental' (terminal: incremental output)")

    @field_validator("to")
    @classmethod
    def _known_output(cls, value: str) -> str:
        from awctl.formats import ALIASES, FORMATS

        fmt = FORMATS.get(ALIASES.get(value, value))
        if fmt is None or fmt.write is None:
            writable = ", ".join(sorted(n for n, f in FORMATS.items() if f.write))
            raise ValueError(f"unknown output format {value!r} (use one of: {writable})")
        return value

    @field_validator("output")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if "/" in value or "\\" in value or value in ("", ".", ".."):
            raise ValueError("output is a file name inside the stage directory, not a path")
        return value


class ConvertStage(Stage):
    """Convert trajectory files between formats (awctl, agentworldbench, chat, domain importers)."""

    kind: ClassVar[str] = "convert"
    Options: ClassVar[type[BaseModel]] = ConvertOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.formats.convert import convert_files

        opts: ConvertOptions = self.options  # type: ignore[assignment]
        out = ctx.stage_dir / opts.output
        inputs = [ctx.resolve_input(p) for p in opts.inputs]
        counts = convert_files(inputs, out, opts.from_format, opts.to, ctx.domains, opts.domain,
                               transform=opts.transform)
        ctx.log.info("converted", **counts, output=str(out))
        ctx.metric(trajectories=counts["trajectories"], written=counts["written"])
        name = (
            "chat"
            if opts.to == "chat"
            else ("rows" if opts.to in ("agentworldbench", "awb") else "trajectories")
        )
        return StageResult(
            outputs={name: out},
            summary=counts,
            report=f"Converted {counts['trajectories']} trajectories from `{opts.from_format}` to "
            f"`{opts.to}` ({counts['written']} {counts['unit']}).",
        )


class VerifyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str
    fail_on_error: bool = True
    max_failures: int = Field(50, ge=0)


class VerifyStage(Stage):
    """Check trajectories with their domain's codecs and verifiers; optionally fail the run."""

    kind: ClassVar[str] = "verify"
    Options: ClassVar[type[BaseModel]] = VerifyOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.errors import AwctlError
        from awctl.formats.verify import verify_files

        opts: VerifyOptions = self.options  # type: ignore[assignment]
        report = verify_files([ctx.resolve_input(opts.input)], ctx.domains, opts.max_failures)
        out = ctx.stage_dir / "verify.json"
        out.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
        ctx.metric(trajectories=report.trajectories, turns=report.turns, failed_checks=report.failed)
        lines = ["| check | passed | failed | abstained |", "|---|---:|---:|---:|"]
        lines += [f"| {c} | {s['passed']} | {s['failed']} | {s['abstained']} |"
                  for c, s in sorted(report.summary.items())]
        if report.failed and opts.fail_on_error:
            worst = max(report.summary.items(), key=lambda kv: kv[1]["failed"])
            raise AwctlError(
                f"stage {ctx.name!r}: {report.failed} check(s) failed on {report.path} "
                f"(most: {worst[0]} x{worst[1]['failed']})",
                hint=f"details in {out}; set fail_on_error = false to continue anyway",
            )
        return StageResult(
            outputs={"report": out},
            summary={"trajectories": report.trajectories, "turns": report.turns, "failed": report.failed},
            report=f"Verified {report.trajectories} trajectories ({report.turns} turns).\n\n"
            + "\n".join(lines),
        )
