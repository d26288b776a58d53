"""Attention over packed blocks that only computes what the block-diagonal causal mask allows.

A packed block holds several documents; each token may attend only to earlier tokens of its own document.
Expressing that as a dense ``[B, 1, L, L]`` mask makes SDPA compute every one of the ``L²`` scores and
throw most away (a masked kernel cannot skip the upper triangle either). Here each document segment runs
its own causal SDPA instead, so a block costs ``Σ lᵢ²/2`` rather than ``L²`` — never more than plain
causal attention over the whole block, which is what an unpacked trainer pays — and padding costs nothing.

The result is the same function of the inputs as the dense mask (``tests/test_train_packed_attention.py``
compares logits and gradients). Use::

    with packed_attention(model):
        model(input_ids=..., position_ids=..., awctl_segments=segments_from_doc_ids(doc_ids))

Inside the context the model's attention implementation is ``"awctl_packed"``; outside it is untouched,
so saved configs, generation and evaluation never see it. A forward without ``awctl_segments`` falls back
to ordinary SDPA.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

NAME = "awctl_packed"
Segments = list[list[tuple[int, int]]]


def segments_from_doc_ids(doc_ids: Any) -> Segments:
    """Per row, the ``(start, end)`` runs of equal non-negative document ids (padding ``-1`` is left out).

    ``doc_ids`` is ``[B, L]`` (torch tensor or numpy array); ends are exclusive."""
    arr = doc_ids.detach().cpu().numpy() if hasattr(doc_ids, "detach") else np.asarray(doc_ids)
    out: Segments = []
    for row in arr:
        # Boundaries: where the id changes; each run between boundaries is one segment.
        cuts = np.flatnonzero(row[1:] != row[:-1]) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(row)]))
        out.append([(int(s), int(e)) for s, e in zip(starts, ends, strict=True) if row[s] >= 0])
    return out


def packed_attention_forward(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                             dropout: float = 0.0, scaling: float | None = None, **kwargs: Any) -> tuple[Any, None]:
    """A Hugging Face attention function (``AttentionInterface``): ``query`` ``[B, H, L, D]``, ``key`` and
    ``value`` ``[B, KV, L, D]``; returns ``([B, L, H, D], None)``. Reads the segments from the
    ``awctl_segments`` keyword the model forwards to its attention layers."""
    import torch
    import torch.nn.functional as F

    segments: Segments | None = kwargs.get("awctl_segments")
    if segments is None or attention_mask is not None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, **kwargs)
    groups = getattr(module, "num_key_value_groups", 1)
    gqa = {"enable_gqa": True} if groups > 1 else {}
    p = dropout if module.training else 0.0
    length = query.shape[2]

    def attend(q: Any, k: Any, v: Any) -> Any:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, scale=scaling, **gqa)

    rows = []
    # unbind/split rather than indexing: their backward is one stack/cat, where slice backward would
    # zero-fill a full-size gradient per segment.
    for b, (q, k, v) in enumerate(zip(query.split(1), key.split(1), value.split(1), strict=True)):
        segs = segments[b]
        if len(segs) == 1 and segs[0] == (0, length):  # one document fills the row: a single causal call
            rows.append(attend(q, k, v))
            continue
        sizes, real, pos = [], [], 0
        for s, e in segs:
            if s > pos:  # a padding run: attends to nothing that matters; zeros keep it finite
                sizes.append(s - pos)
                real.append(False)
            sizes.append(e - s)
            real.append(True)
            pos = e
        if pos < length:
            sizes.append(length - pos)
            real.append(False)
        parts = [attend(qs, ks, vs) if r else qs.new_zeros(qs.shape)
                 for qs, ks, vs, r in zip(q.split(sizes, 2), k.split(sizes, 2), v.split(sizes, 2), real, strict=True)]
        rows.append(torch.cat(parts, dim=2) if len(parts) > 1 else parts[0])
    out = torch.cat(rows, dim=0) if len(rows) > 1 else rows[0]
    return out.transpose(1, 2).contiguous(), None


def register() -> None:
    """Make ``"awctl_packed"`` a Hugging Face attention implementation (idempotent)."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, packed_attention_forward)


def _config(model: Any) -> Any:
    """The Hugging Face config of ``model`` under DDP / DeepSpeed wrappers (DeepSpeed's engine has a
    ``config`` of its own, so look for the one that carries an attention implementation)."""
    inner = model
    while not hasattr(getattr(inner, "config", None), "_attn_implementation") and hasattr(inner, "module"):
        inner = inner.module
    return inner.config


@contextlib.contextmanager
def packed_attention(model: Any) -> Iterator[None]:
    """Run ``model`` with segment-wise attention inside the block; restores its implementation after."""
    register()
    config = _config(model)
    before = config._attn_implementation
    config._attn_implementation = NAME
    try:
        yield
    finally:
        config._attn_implementation = before
