"""Losses: the weighted causal LM loss over packed blocks and the GSPO policy loss.

``packed_lm_loss`` runs the model with the block-diagonal causal mask of
:func:`awctl.data.packing.additive_attention_mask` and per-document ``position_ids``, so packed
documents never see each other. Token ``t+1`` is predicted from ``t`` with weight ``loss_weights[t+1]``
(the prep's information-theoretic mask or the SFT target mask), and never across a document boundary.

``gspo_loss`` is Group Sequence Policy Optimization (Zheng et al., 2025): the importance ratio of a whole
sequence is ``exp(mean over its completion tokens of (log π_θ − log π_old))``, clipped PPO-style to
``[1 − eps_low, 1 + eps_high]``; each sequence's loss is ``−min(r·A, clip(r)·A)``, plus ``beta`` times
the masked mean of the k3 KL estimator to a reference when given; the batch loss is the mean over
sequences. ``tests/test_gspo_trl.py`` checks value and gradient against TRL's ``GRPOTrainer`` with
``importance_sampling_level="sequence"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from awctl.data.masking import CATEGORIES


@dataclass
class LossStats:
    """Weighted loss sums and weights per category (for ``loss/<category>`` metrics), summable across
    micro-batches."""

    loss_sum: float = 0.0
    weight: float = 0.0
    tokens: int = 0
    per_category: dict[str, list[float]] = field(default_factory=dict)  # name -> [loss_sum, weight]

    def add(self, other: LossStats) -> None:
        self.loss_sum += other.loss_sum
        self.weight += other.weight
        self.tokens += other.tokens
        for k, (s, w) in other.per_category.items():
            acc = self.per_category.setdefault(k, [0.0, 0.0])
            acc[0] += s
            acc[1] += w

    def metrics(self) -> dict[str, float]:
        out = {"loss": self.loss_sum / self.weight if self.weight else float("nan")}
        for k, (s, w) in sorted(self.per_category.items()):
            if w:
                out[f"loss_{k}"] = s / w
        return out


def target_weights(batch: Any) -> Any:
    """``[B, L-1]`` weights of the next-token targets: the target's loss weight, 0 across documents."""
    same_doc = (batch.doc_ids[:, 1:] == batch.doc_ids[:, :-1]) & (batch.doc_ids[:, 1:] >= 0)
    return batch.loss_weights[:, 1:] * same_doc.to(batch.loss_weights.dtype)


LM_HEADS = ("auto", "weighted", "all")
ATTENTIONS = ("documents", "causal")


def packed_lm_loss(
    model: Any, batch: Any, denom: float, *, device: Any = None, autocast: Any = None, lm_head: str = "auto",
    attention: str = "documents",
) -> tuple[Any, LossStats]:
    """``sum(weight · CE) / denom`` for one micro-batch, and its stats. ``denom`` is the total target
    weight of the whole accumulation window, so accumulated micro-batches equal one large batch.

    Models on SDPA attention run segment-wise (:mod:`awctl.train.packed_attention`: no dense mask, no
    scores across documents); any other attention implementation gets the dense 4D additive mask.

    ``lm_head``: where logits are computed. ``"weighted"``: only at positions whose next token carries
    weight in some row; ``"all"``: at every position (what a stock causal-LM loss does); ``"auto"`` (the
    trainer's choice): ``"weighted"`` when that skips at least half the block, else ``"all"``. The loss is
    the same either way. ``attention``: ``"documents"`` (the trainer's: each token sees only its own
    document, with per-document positions) or ``"causal"`` (plain causal attention over the whole block
    with positions ``0..L-1``, as an unpacking-unaware trainer sees it; a different function, for measuring
    what per-document attention costs — ``benchmarks/train.py``)."""
    if lm_head not in LM_HEADS or attention not in ATTENTIONS:
        raise ValueError(f"packed_lm_loss: lm_head must be one of {LM_HEADS}, attention one of {ATTENTIONS}")
    import contextlib

    import torch
    import torch.nn.functional as F

    from awctl.train.packed_attention import _config, packed_attention, segments_from_doc_ids

    dev = device or next(model.parameters()).device
    ids = batch.input_ids.to(dev)
    w_all = target_weights(batch).to(dev)
    # Only positions whose next token carries weight (in any row) need logits: the LM head and the
    # softmax over the vocabulary are skipped for masked-out targets (most of a CPT block).
    # Selecting costs a gather, so it is used only when it skips most positions.
    keep = torch.nonzero(w_all.sum(0) > 0).squeeze(-1)
    if keep.numel() == 0:
        keep = torch.zeros(1, dtype=torch.long, device=dev)
    sparse = lm_head == "weighted" or (lm_head == "auto" and keep.numel() * 2 < w_all.shape[1])
    kwargs: dict[str, Any] = {"input_ids": ids, "position_ids": batch.position_ids.to(dev), "use_cache": False,
                              "logits_to_keep": keep if sparse else 0}
    if attention == "causal":
        # Positions 0..L-1 too: transformers would otherwise detect the packed documents from the per-document
        # positions and build a block-diagonal mask by itself.
        kwargs["position_ids"] = torch.arange(ids.shape[1], device=dev).expand_as(ids)
        attention_ctx: Any = contextlib.nullcontext()
    elif _config(model)._attn_implementation == "sdpa":
        kwargs["awctl_segments"] = segments_from_doc_ids(batch.doc_ids)
        attention_ctx = packed_attention(model)
    else:
        from awctl.data.packing import additive_attention_mask

        kwargs["attention_mask"] = additive_attention_mask(batch.doc_ids.to(dev))
        attention_ctx = contextlib.nullcontext()
    with autocast or contextlib.nullcontext(), attention_ctx:
        logits = model(**kwargs).logits
    if not sparse:
        keep = torch.arange(w_all.shape[1], device=dev)
        logits = logits[:, :-1]
    logits = logits.float()
    targets = ids[:, 1:][:, keep]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                         reduction="none").view(ids.shape[0], -1)
    w = w_all[:, keep]
    weighted = ce * w
    loss = weighted.sum() / max(denom, 1e-12)
    stats = LossStats(tokens=batch.real_tokens)
    n = len(CATEGORIES)
    with torch.no_grad():
        # Per-category sums in two bincounts and one host sync instead of a masked pass per category;
        # uncategorised targets (id -1: SFT targets, padding) go to an extra bucket counted only in the total.
        cats = batch.category_ids[:, 1:].to(dev)[:, keep].reshape(-1).long()
        cats = torch.where((cats < 0) | (cats >= n), n, cats)
        sums = torch.stack([torch.bincount(cats, weights=weighted.detach().reshape(-1).double(), minlength=n + 1),
                            torch.bincount(cats, weights=w.reshape(-1).double(), minlength=n + 1)]).tolist()
    stats.loss_sum, stats.weight = float(sum(sums[0])), float(sum(sums[1]))
    for cid, name in enumerate(CATEGORIES):
        if sums[1][cid]:
            stats.per_category[name] = [sums[0][cid], sums[1][cid]]
    return loss, stats


def sequence_logps(
    model: Any, input_ids: Any, attention_mask: Any, completion_len: int, *, autocast: Any = None
) -> Any:
    """Per-token log-probs ``[B, completion_len]`` of the last ``completion_len`` tokens of each row
    (left-padded prompt + right-padded completion, ``attention_mask`` 1 on real tokens)."""
    import contextlib

    import torch

    position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
    with autocast or contextlib.nullcontext():
        logits = model(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False
        ).logits
    logits = logits[:, -completion_len - 1 : -1].float()
    targets = input_ids[:, -completion_len:]
    return torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def group_advantages(rewards: Any, group_size: int, *, scale: bool = True, eps: float = 1e-4) -> Any:
    """Advantages normalised within each group of ``group_size`` consecutive samples of one prompt:
    ``(r − mean_group)``, divided by ``(std_group + eps)`` when ``scale`` (unbiased std, as TRL)."""
    grouped = rewards.view(-1, group_size)
    adv = grouped - grouped.mean(dim=1, keepdim=True)
    if scale:
        adv = adv / (grouped.std(dim=1, keepdim=True) + eps)
    return adv.reshape(-1)


@dataclass
class GspoStats:
    loss: float
    mean_ratio: float
    clip_fraction: float
    kl: float | None


def gspo_loss(
    logps: Any,
    old_logps: Any,
    advantages: Any,
    mask: Any,
    *,
    eps_low: float = 3e-4,
    eps_high: float = 4e-4,
    beta: float = 0.0,
    ref_logps: Any = None,
) -> tuple[Any, GspoStats]:
    """GSPO loss over ``[B, T]`` per-token log-probs (current, behaviour), ``[B]`` advantages and a
    ``[B, T]`` completion mask (see the module docstring). Default clip range is GSPO's (3e-4, 4e-4)."""
    import torch

    mask = mask.to(logps.dtype)
    lengths = mask.sum(-1).clamp(min=1.0)
    log_ratio = ((logps - old_logps) * mask).sum(-1) / lengths
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    seq_loss = -torch.min(ratio * advantages, clipped * advantages)
    kl_mean = None
    if beta != 0.0:
        if ref_logps is None:
            raise ValueError("gspo_loss: beta != 0 needs ref_logps")
        diff = ref_logps - logps
        kl = torch.exp(diff) - diff - 1
        kl_seq = (kl * mask).sum(-1) / lengths
        seq_loss = seq_loss + beta * kl_seq
        kl_mean = float(kl_seq.mean().detach())
    loss = seq_loss.mean()
    with torch.no_grad():
        clip_frac = float(
            (((ratio < 1 - eps_low) & (advantages < 0)) | ((ratio > 1 + eps_high) & (advantages > 0)))
            .float()
            .mean()
        )
    return loss, GspoStats(float(loss.detach()), float(ratio.mean().detach()), clip_frac, kl_mean)
