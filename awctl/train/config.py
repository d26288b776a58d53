"""Training options shared by the ``cpt``, ``sft`` and ``rl`` stages and ``awctl train``.

Validated without importing torch, so ``awctl recipes validate`` checks a GPU recipe on a laptop.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TinySpec(BaseModel):
    """A random-init Llama declared in the recipe; its vocabulary is the tokenizer's."""

    model_config = ConfigDict(extra="forbid")

    layers: int = Field(2, ge=1)
    hidden: int = Field(64, ge=8)
    heads: int = Field(2, ge=1)
    head_dim: int = Field(32, ge=8)
    kv_heads: int | None = Field(None, ge=1)
    intermediate: int | None = Field(None, ge=8)
    max_positions: int = Field(4096, ge=16)


class LoraSpec(BaseModel):
    """Low-rank adapters (peft) for large models on small hardware; merged into the final checkpoint."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(8, ge=1)
    alpha: int = Field(16, ge=1)
    dropout: float = Field(0.0, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])


class OptimSpec(BaseModel):
    """AdamW with linear warmup then cosine decay to ``min_lr_ratio * lr``; global-norm clipping."""

    model_config = ConfigDict(extra="forbid")

    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    betas: tuple[float, float] = (0.9, 0.95)
    eps: float = Field(1e-8, gt=0)
    warmup_steps: int = Field(0, ge=0)
    min_lr_ratio: float = Field(0.1, ge=0, le=1)
    clip: float | None = Field(1.0, gt=0, description="max global grad norm; None disables clipping")


class TrainSpec(BaseModel):
    """What every training stage shares. ``model`` is a save_pretrained directory, a ``.gguf`` file,
    ``"@stage.checkpoint"``, or ``"tiny"`` (built from ``tiny`` with ``tokenizer``)."""

    model_config = ConfigDict(extra="forbid")

    model: str = "tiny"
    tokenizer: str | None = Field(
        None,
        description="tokenizer folder for a tiny model (e.g. '@prep.tokenizer'); None: the default tiny tokenizer",
    )
    tiny: TinySpec = Field(default_factory=TinySpec)
    steps: int = Field(100, ge=1, description="optimizer steps")
    batch_size: int = Field(1, ge=1, description="sequences per micro-batch")
    grad_accum: int = Field(1, ge=1, description="micro-batches per optimizer step")
    optim: OptimSpec = Field(default_factory=OptimSpec)
    seed: int | None = Field(None, description="None: the run's seed")
    bf16: Literal["auto", "on", "off"] = Field(
        "auto", description="bf16 autocast: auto = on when CUDA is used"
    )
    device: str = Field("auto", description="auto | cpu | cuda[:i]")
    gradient_checkpointing: bool = False
    attention: Literal["sdpa", "eager"] = "sdpa"
    lora: LoraSpec | None = None
    save_every: int = Field(0, ge=0, description="checkpoint every N optimizer steps (0: only at the end)")
    keep_checkpoints: int = Field(2, ge=1)
    log_every: int = Field(1, ge=1)
    launcher: Literal["python", "torchrun", "deepspeed"] = "python"
    deepspeed: str | None = Field(None, description="ZeRO JSON config (e.g. recipes/deepspeed/zero2.json)")
    nproc_per_node: int = Field(1, ge=1)
    nnodes: int = Field(1, ge=1)
    hostfile: str | None = None
    master_addr: str = "127.0.0.1"
    master_port: int = Field(29500, ge=1, le=65535)

    @model_validator(mode="after")
    def _check(self) -> TrainSpec:
        if self.launcher == "deepspeed" and not self.deepspeed:
            raise ValueError("launcher 'deepspeed' needs deepspeed = '<ZeRO config json>'")
        return self
