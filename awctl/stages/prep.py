"""Stage kind ``prep``: ``awctl data prep`` as a recipe stage.

::

    [[stages]]
    name = "prep"
    kind = "prep"
    inputs = ["@record.trajectories", "data/awb/terminal_test.jsonl"]
    tokenizer = "train:4096"        # or a local tokenizer folder, "@other_stage.tokenizer", a .gguf file
                                    # or "pkg:<package>/<file>.gguf" (a model file shipped in a package)
    mode = "cpt"                    # cpt | sft
    block_size = 1024
    split = "train=0.9,val=0.05,test=0.05"
    mask = { keep = { transform = 0.5, boilerplate = 0.1 } }

Outputs: ``shards`` (the output folder ``<stage dir>/prep``: ``<split>/*.safetensors``), ``manifest``, ``quarantine``,
``masking_report`` and ``tokenizer`` (a ``save_pretrained`` folder later stages can load).
Module-level imports stay light: the pipeline (numpy, tokenizers) loads only when the stage runs.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from awctl.data.config import PrepConfig
from awctl.stages import Stage, StageContext, StageResult


class PrepOptions(PrepConfig):
    """The prep stage's options: :class:`~awctl.data.pipeline.PrepConfig`, whose ``out`` is the stage's own
    folder and whose ``seed`` defaults to the run's."""

    out: str = Field("", description="set by the stage (its prep/ folder)")
    seed: int | None = Field(None, description="seed of splits, masking and variants (default: the run's)")  # type: ignore[assignment]


class PrepStage(Stage):
    """Clean, dedupe, split, mask and tokenize trajectories into packed training shards."""

    kind: ClassVar[str] = "prep"
    Options: ClassVar[type[BaseModel]] = PrepOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.data.pipeline import run_prep

        opts: PrepOptions = self.options  # type: ignore[assignment]
        tokenizer = opts.tokenizer
        if tokenizer.startswith("pkg:"):  # the tokenizer embedded in a packaged model file (GGUF)
            from awctl.models.paths import package_file

            tokenizer = package_file(tokenizer)
        elif not tokenizer.startswith("train:"):
            tokenizer = str(ctx.resolve_input(tokenizer))
        config = PrepConfig.model_validate({
            **opts.model_dump(),
            "inputs": [str(ctx.resolve_input(p)) for p in opts.inputs],
            "out": str(ctx.stage_dir / "prep"),  # a sub-folder: the runner owns stage_dir/manifest.json
            "tokenizer": tokenizer,
            "seed": ctx.seed if opts.seed is None else opts.seed,
        })
        manifest = run_prep(config, ctx.domains)
        counts = manifest["counts"]
        ctx.log.info("prepped", **counts)
        splits = manifest["splits"]
        ctx.metric(
            kept=counts["kept"],
            quarantined=counts["quarantined"],
            tokens=sum(s["tokens"] for s in splits.values()),
            loss_tokens=sum(s["loss_tokens"] for s in splits.values()),
        )
        lines = ["| split | blocks | documents | tokens | loss tokens |", "|---|---:|---:|---:|---:|"]
        lines += [
            f"| {k} | {s['blocks']} | {s['documents']} | {s['tokens']} | {s['loss_tokens']} |"
            for k, s in splits.items()
        ]
        lines += ["", "| category | tokens | kept share | target |", "|---|---:|---:|---:|"]
        for k, c in manifest["masking"]["categories"].items():
            share = "-" if c["kept_share"] is None else f"{c['kept_share']:.1%}"
            lines.append(f"| {k} | {c['tokens']} | {share} | {c.get('target', 0):.0%} |")
        out = ctx.stage_dir / "prep"
        return StageResult(
            outputs={
                "shards": out,
                "manifest": out / "manifest.json",
                "quarantine": out / "quarantine.jsonl",
                "masking_report": out / "masking_report.json",
                "tokenizer": out / "tokenizer",
            },
            summary={**counts, "splits": {k: s["blocks"] for k, s in splits.items()}},
            report=f"Prepared {counts['kept']} trajectories ({counts['quarantined']} quarantined) in "
            f"`{opts.mode}` mode.\n\n" + "\n".join(lines),
        )
