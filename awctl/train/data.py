"""Packed prep shards as training batches, in an order that is a pure function of (seed, position).

All blocks of a split are loaded once (prep shards are small per run; a streaming reader can replace this
without changing the trainer). Epoch ``e`` visits the blocks in the permutation drawn from
``numpy.random.default_rng((seed, e))``, so the micro-batch at any position can be rebuilt after a restart
from the position alone: checkpoints store just that counter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from awctl.data.shards import load_shard, read_manifest
from awctl.errors import AwctlError


@dataclass
class Batch:
    """One micro-batch of packed blocks as torch tensors ``[B, L]`` (int64 ids, float32 weights)."""

    input_ids: Any
    position_ids: Any
    doc_ids: Any
    loss_weights: Any
    category_ids: Any

    @property
    def real_tokens(self) -> int:
        return int((self.doc_ids >= 0).sum())


class PackedBlocks:
    """The blocks of one split of a prep output folder (``manifest.json`` + ``<split>/*.safetensors``)."""

    def __init__(self, prep_dir: str | Path, split: str = "train", seed: int = 0) -> None:
        self.dir = Path(prep_dir)
        manifest = read_manifest(self.dir)
        info = manifest.get("splits", {}).get(split)
        if not info or not info.get("shards"):
            have = sorted(manifest.get("splits", {}))
            raise AwctlError(
                f"{self.dir}: prep output has no {split!r} split", hint=f"splits present: {have}"
            )
        parts = [load_shard(self.dir / s["path"]) for s in info["shards"]]
        self.arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        self.manifest = manifest
        self.seed = seed
        self.block_size = int(self.arrays["input_ids"].shape[1])
        if len(self) == 0:
            raise AwctlError(f"{self.dir}: split {split!r} has no blocks", hint="prep more data")
        self._perm: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return int(self.arrays["input_ids"].shape[0])

    def index_at(self, position: int) -> int:
        """The block index used at global sample ``position`` (epochs reshuffle with their own seed)."""
        epoch, offset = divmod(position, len(self))
        perm = self._perm.get(epoch)
        if perm is None:
            perm = np.random.default_rng((self.seed, epoch)).permutation(len(self))
            self._perm = {epoch: perm}  # one epoch cached is enough: positions only move forward
        return int(perm[offset])

    def batch(self, position: int, size: int, *, rank: int = 0, world: int = 1) -> Batch:
        """Samples ``position .. position+size*world`` strided by ``world``: rank ``r`` gets every world-th."""
        import torch

        idx = [self.index_at(position + i * world + rank) for i in range(size)]
        a = self.arrays
        return Batch(
            input_ids=torch.from_numpy(a["input_ids"][idx].astype(np.int64)),
            position_ids=torch.from_numpy(a["position_ids"][idx].astype(np.int64)),
            doc_ids=torch.from_numpy(a["doc_ids"][idx].astype(np.int64)),
            loss_weights=torch.from_numpy(a["loss_weights"][idx].astype(np.float32)),
            category_ids=torch.from_numpy(a["category_ids"][idx].astype(np.int64)),
        )

    def packing_efficiency(self) -> float:
        """Share of block slots holding real tokens (not padding)."""
        return float((self.arrays["doc_ids"] >= 0).mean())
