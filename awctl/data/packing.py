"""Packing documents into fixed-length blocks with attention boundaries between documents.

A block holds several documents back to back; ``doc_ids`` numbers them within the block (``-1`` for
padding) and ``position_ids`` restart at 0 for each document, so a model given
:func:`block_attention_mask` (causal and block-diagonal) computes for each document exactly what it
would compute for that document alone. The trainer reuses :func:`block_attention_mask` and
:func:`additive_attention_mask`; ``tests/test_data_packing.py`` proves the equivalence on a real Llama.

Documents longer than a block are cut into block-sized pieces, each its own document (positions
restart); ``prep --mode sft`` never gives the packer such a document (:mod:`awctl.data.sft_fit`). Packing is
best-fit decreasing over a small buffer: pieces wait in a buffer of at most ``buffer`` pieces, which is
placed longest first, each piece into the open block it fills the most (at most ``max_open`` partly filled
blocks). Memory stays bounded (``buffer + max_open`` blocks' worth), and small documents fill the gaps
large ones leave instead of opening blocks of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from awctl.data.chat_tokens import Document

FIELDS = ("input_ids", "position_ids", "loss_weights", "doc_ids", "role_ids", "category_ids")


@dataclass(eq=False)  # identity equality: blocks hold arrays
class Block:
    """One packed block; arrays of length ``block_size``."""

    input_ids: np.ndarray
    position_ids: np.ndarray
    loss_weights: np.ndarray
    doc_ids: np.ndarray
    role_ids: np.ndarray
    category_ids: np.ndarray
    fill: int = 0
    docs: int = 0
    traj_ids: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)

    @classmethod
    def empty(cls, size: int, pad_id: int) -> Block:
        return cls(
            input_ids=np.full(size, pad_id, dtype=np.int32),
            position_ids=np.zeros(size, dtype=np.int32),
            loss_weights=np.zeros(size, dtype=np.float32),
            doc_ids=np.full(size, -1, dtype=np.int32),
            role_ids=np.zeros(size, dtype=np.uint8),
            category_ids=np.full(size, -1, dtype=np.int8),
        )

    @property
    def free(self) -> int:
        return len(self.input_ids) - self.fill

    def put(self, doc: Document, start: int, end: int) -> None:
        n = end - start
        s = slice(self.fill, self.fill + n)
        self.input_ids[s] = doc.input_ids[start:end]
        self.position_ids[s] = np.arange(n, dtype=np.int32)
        self.loss_weights[s] = doc.loss_weights[start:end]
        self.doc_ids[s] = self.docs
        self.role_ids[s] = doc.role_ids[start:end]
        self.category_ids[s] = doc.category_ids[start:end]
        self.fill += n
        self.docs += 1
        self.traj_ids.append(doc.traj_id)
        self.sources.append(doc.source)
        self.domains.append(doc.domain)


class BlockPacker:
    """Feed documents with :meth:`add`; it yields blocks as they fill; :meth:`flush` yields the rest."""

    def __init__(self, block_size: int, pad_id: int, max_open: int = 16, buffer: int = 64) -> None:
        if block_size < 2:
            raise ValueError("block_size must be at least 2")
        if max_open < 1 or buffer < 1:
            raise ValueError("max_open and buffer must be at least 1")
        self.block_size = block_size
        self.pad_id = pad_id
        self.max_open = max_open
        self.buffer = buffer
        self._open: list[Block] = []
        self._pending: list[tuple[Document, int, int]] = []
        self.split_documents = 0
        self.pieces_without_loss = 0

    def add(self, doc: Document) -> Iterator[Block]:
        """Queue ``doc`` (cut into block-sized pieces; a piece restarts its context). A piece with no loss
        weight teaches nothing (no token of it is a target, and no other piece attends to it): it is
        dropped and counted in :attr:`pieces_without_loss`."""
        n = len(doc)
        if n > self.block_size:
            self.split_documents += 1
        for start in range(0, n, self.block_size):
            end = min(n, start + self.block_size)
            if not np.any(doc.loss_weights[start:end]):
                self.pieces_without_loss += 1
                continue
            self._pending.append((doc, start, end))
        if len(self._pending) >= self.buffer:
            yield from self._drain()

    def _drain(self) -> Iterator[Block]:
        # Longest first (stable: equal lengths keep arrival order, so output is deterministic).
        pending, self._pending = self._pending, []
        pending.sort(key=lambda piece: piece[1] - piece[2])
        for doc, start, end in pending:
            yield from self._place(doc, start, end)

    def _place(self, doc: Document, start: int, end: int) -> Iterator[Block]:
        n = end - start
        # Best fit: the open block with the least room that still takes the piece (first such on ties).
        fits = [b for b in self._open if b.free >= n]
        target = min(fits, key=lambda b: b.free) if fits else None
        if target is None:
            if len(self._open) >= self.max_open:
                # Close the fullest block: it wastes the least padding.
                fullest = max(self._open, key=lambda b: b.fill)
                self._open.remove(fullest)
                yield fullest
            target = Block.empty(self.block_size, self.pad_id)
            self._open.append(target)
        target.put(doc, start, end)
        if target.free == 0:
            self._open.remove(target)
            yield target

    def flush(self) -> Iterator[Block]:
        yield from self._drain()
        blocks, self._open = self._open, []
        yield from blocks


def block_attention_mask(doc_ids: Any) -> Any:
    """Boolean ``[..., L, L]`` mask (True = may attend) for ``doc_ids`` ``[..., L]``: token i attends to
    token j iff j <= i and both belong to the same document. Padding (``-1``) only attends to padding.
    Works on torch tensors and numpy arrays."""
    if isinstance(doc_ids, np.ndarray):
        same = doc_ids[..., :, None] == doc_ids[..., None, :]
        n = doc_ids.shape[-1]
        return same & np.tril(np.ones((n, n), dtype=bool))
    import torch

    same = doc_ids.unsqueeze(-1) == doc_ids.unsqueeze(-2)
    n = doc_ids.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool, device=doc_ids.device).tril()
    return same & causal


def additive_attention_mask(doc_ids: Any, dtype: Any = None) -> Any:
    """``[B, 1, L, L]`` float mask (0 where attending, dtype's minimum elsewhere) from ``doc_ids`` ``[B, L]``,
    the 4D form Hugging Face models accept as ``attention_mask``."""
    import torch

    dtype = dtype or torch.float32
    allowed = block_attention_mask(doc_ids).unsqueeze(1)
    mask = torch.zeros(allowed.shape, dtype=dtype, device=doc_ids.device)
    return mask.masked_fill(~allowed, torch.finfo(dtype).min)


def position_ids_from_doc_ids(doc_ids: np.ndarray) -> np.ndarray:
    """Positions restarting at 0 at every document boundary (what :class:`Block` stores)."""
    out = np.zeros_like(doc_ids)
    for i in range(1, len(doc_ids)):
        out[i] = out[i - 1] + 1 if doc_ids[i] == doc_ids[i - 1] else 0
    return out
