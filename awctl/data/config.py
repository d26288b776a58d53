"""Prep's configuration, importable without numpy or tokenizers (recipes validate stage options with it).

:class:`PrepConfig` is the one description of a prep run: the ``prep`` stage's options, the flags of
``awctl data prep`` (one per field) and :func:`awctl.data.pipeline.run_prep`'s input.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from awctl.data.split import parse_ratios
from awctl.errors import AwctlError
from awctl.formats.view import ChatStyle

CATEGORIES: tuple[str, ...] = (
    "retrieval",
    "expansion",
    "action",
    "transform",
    "boilerplate",
    "echo",
    "error",
)
CATEGORY_IDS: dict[str, int] = {name: i for i, name in enumerate(CATEGORIES)}

DEFAULT_KEEP: dict[str, float] = {
    "retrieval": 1.0,
    "expansion": 1.0,
    "action": 1.0,
    "transform": 0.5,
    "boilerplate": 0.1,
    "echo": 0.05,
    "error": 1.0,
}


class MaskConfig(BaseModel):
    """Keep probabilities per category and the classification thresholds (all configurable)."""

    model_config = ConfigDict(extra="forbid")

    keep: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_KEEP))
    ngram: int = Field(3, ge=1, le=8)
    echo_jaccard: float = 0.6
    echo_length_ratio: tuple[float, float] = (0.5, 2.0)
    boilerplate_max_words: int = 12
    action_overlap: float = 0.3
    expansion_novelty: float = 0.6
    expansion_word_novelty: float = 0.25
    retrieval_overlap: float = 0.6

    @field_validator("keep")
    @classmethod
    def _full_keep(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown masking categories {sorted(unknown)}; known: {list(CATEGORIES)}")
        bad = {k: v for k, v in value.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"keep probabilities must be within [0, 1], got {bad}")
        return {**DEFAULT_KEEP, **value}


class PrepConfig(BaseModel):
    """Everything that decides a prep run's output (recorded in the manifest). This one model is the prep
    stage's options, ``awctl data prep``'s flags (one per field) and the library's configuration."""

    model_config = ConfigDict(extra="forbid")

    inputs: list[str] = Field(description="trajectory files or folders (any format prep reads)")
    out: str = Field(description="output folder")
    tokenizer: str = Field("train:4096", description="a tokenizer folder, a .gguf or pkg:<package>/<file>.gguf "
                                                     "(its embedded tokenizer), or train:VOCAB to train a BPE one")
    mode: Literal["cpt", "sft"] = Field("cpt", description="cpt: masked observation loss; sft: whole answers")
    block_size: int = Field(1024, ge=16, description="tokens per packed block")
    split: str = Field("train=0.9,val=0.05,test=0.05", description="source-level split ratios")
    seed: int = Field(0, description="seed of splits, masking draws and prompt variants")
    shard: str = Field("0/1", description="process slice i of n (i/n) for fan-out")
    mask: MaskConfig = Field(default_factory=MaskConfig, description="loss masking (keep probabilities)")
    min_turns: int = Field(1, description="drop trajectories with fewer turns")
    max_turns: int | None = Field(None, description="drop trajectories with more turns")
    min_chars: int = Field(0, description="drop shorter trajectories (actions + observations)")
    max_chars: int | None = Field(None, description="drop longer trajectories (actions + observations)")
    verify: bool = Field(True, description="run the domains' verifiers (quarantine failures)")
    dedupe: bool = Field(True, description="drop exact and near duplicates")
    near_dup_threshold: float | None = Field(0.9, description="MinHash Jaccard threshold (none: exact only)")
    allow_unknown_domains: bool = Field(False, description="keep trajectories of unregistered domains")
    prompt_variant: int | Literal["hash"] = Field("hash", description="system-prompt wording variant, or hash")
    style: ChatStyle = Field("awctl", description="chat style documents are rendered in (awctl.formats.view)")
    sft_target: Literal["all", "last"] = Field("all", description="sft mode: train every answer or the last")
    unchanged_weight: float = Field(1.0, gt=0, le=1, description="sft mode: loss weight of a target's leading "
                                    "lines that repeat the previous observation's (a redrawn screen)")
    blocks_per_shard: int = Field(1024, ge=1, description="blocks per safetensors shard")
    batch_size: int = Field(64, ge=1, description="trajectories per masking/tokenization batch")
    workers: int = Field(0, ge=0, description="worker processes for masking and tokenization (0: in-process; "
                                              "the output does not depend on it)")
    tokenizer_train_docs: int = Field(20000, ge=1, description="documents a train:VOCAB tokenizer sees")

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str) -> str:
        parse_shard(value)
        return value

    @field_validator("split")
    @classmethod
    def _split(cls, value: str) -> str:
        try:
            parse_ratios(value)
        except AwctlError as exc:
            raise ValueError(exc.message) from None
        return value


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` → ``(i, n)`` with ``0 <= i < n``."""
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise ValueError(f"bad shard {text!r}: write i/n with 0 <= i < n, e.g. --shard 0/4")
    return index, count


