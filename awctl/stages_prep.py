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
    keep = { transform = 0.5, boilerplate = 0.1 }

Outputs: ``shards`` (the output folder ``<stage dir>/prep``: ``<split>/*.safetensors``), ``manifest``, ``quarantine``,
``masking_report`` and ``tokenizer`` (a ``save_pretrained`` folder later stages can load).
Module-level imports stay light: the pipeline (numpy, tokenizers) loads only when the stage runs.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from awctl.formats.view import ChatStyle
from awctl.stages import Stage, StageContext, StageResult


class PrepOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    inputs: list[str] = Field(min_length=1)
    tokenizer: str = "train:4096"
    mode: Literal["cpt", "sft"] = "cpt"
    block_size: int = Field(1024, ge=16)
    split: str = "train=0.9,val=0.05,test=0.05"
    seed: int | None = None  # None: the run's seed
    shard: str = "0/1"
    keep: dict[str, float] = Field(default_factory=dict)
    min_turns: int = 1
    max_turns: int | None = None
    max_chars: int | None = None
    verify: bool = True
    dedupe: bool = True
    near_dup_threshold: float | None = 0.9
    allow_unknown_domains: bool = False
    sft_target: Literal["all", "last"] = "all"
    style: ChatStyle = "awctl"
    blocks_per_shard: int = Field(1024, ge=1)
    workers: int = Field(0, ge=0)


class PrepStage(Stage):
    """Clean, dedupe, split, mask and tokenize trajectories into packed training shards."""

    kind: ClassVar[str] = "prep"
    Options: ClassVar[type[BaseModel]] = PrepOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.data.masking import MaskConfig
        from awctl.data.pipeline import PrepConfig, run_prep

        opts: PrepOptions = self.options  # type: ignore[assignment]
        tokenizer = opts.tokenizer
        if tokenizer.startswith("pkg:"):  # the tokenizer embedded in a packaged model file (GGUF)
            from awctl.stages_train import package_file

            tokenizer = package_file(tokenizer)
        elif not tokenizer.startswith("train:"):
            tokenizer = str(ctx.resolve_input(tokenizer))
        config = PrepConfig(
            inputs=[str(ctx.resolve_input(p)) for p in opts.inputs],
            # A sub-folder: the runner owns stage_dir/manifest.json.
            out=str(ctx.stage_dir / "prep"),
            tokenizer=tokenizer,
            mode=opts.mode,
            block_size=opts.block_size,
            split=opts.split,
            seed=ctx.seed if opts.seed is None else opts.seed,
            shard=opts.shard,
            mask=MaskConfig(keep=opts.keep) if opts.keep else MaskConfig(),
            min_turns=opts.min_turns,
            max_turns=opts.max_turns,
            max_chars=opts.max_chars,
            verify=opts.verify,
            dedupe=opts.dedupe,
            near_dup_threshold=opts.near_dup_threshold,
            allow_unknown_domains=opts.allow_unknown_domains,
            sft_target=opts.sft_target,
            style=opts.style,
            blocks_per_shard=opts.blocks_per_shard,
            workers=opts.workers,
        )
        manifest = run_prep(config)
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
