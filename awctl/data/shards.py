"""Writing packed blocks to safetensors shards, the manifest, and merging manifests of prep slices.

Layout of an output directory::

    manifest.json                 counts, hashes, tokenizer, config, splits, sources, masking report
    masking_report.json           per-category tokens and kept shares (also inside the manifest)
    quarantine.jsonl              one JSON object per rejected record: file, line, check, reason
    tokenizer/                    the tokenizer used (save_pretrained), so shards are self-describing
    <split>/part-<slice>-<k>.safetensors
    <split>/part-<slice>-<k>.index.jsonl   per document of each block: trajectory id, source, domain

Each shard holds ``[blocks, block_size]`` tensors: ``input_ids`` (int32), ``position_ids`` (int32),
``loss_weights`` (float32), ``doc_ids`` (int32, -1 = padding), ``role_ids`` (uint8, see
:data:`awctl.data.chat_tokens.ROLES`) and ``category_ids`` (int8, see
:data:`awctl.data.masking.CATEGORIES`, -1 = none). ``load_shard`` reads one back as numpy arrays.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from awctl.data.masking import MaskReport
from awctl.data.packing import FIELDS, Block
from awctl.errors import AwctlError

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class ShardWriter:
    """Buffers up to ``blocks_per_shard`` blocks of one split, then writes them as one shard."""

    out_dir: Path
    split: str
    slice_tag: str
    blocks_per_shard: int = 1024
    shards: list[dict[str, Any]] = field(default_factory=list)
    _buffer: list[Block] = field(default_factory=list)
    blocks: int = 0
    documents: int = 0
    tokens: int = 0
    loss_tokens: int = 0

    def add(self, block: Block) -> None:
        self._buffer.append(block)
        if len(self._buffer) >= self.blocks_per_shard:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        from safetensors.numpy import save_file

        folder = self.out_dir / self.split
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part-{self.slice_tag}-{len(self.shards):05d}.safetensors"
        tensors = {name: np.stack([getattr(b, name) for b in self._buffer]) for name in FIELDS}
        n_docs = sum(b.docs for b in self._buffer)
        n_tokens = int(sum(b.fill for b in self._buffer))
        n_loss = int((tensors["loss_weights"] > 0).sum())
        # One metadata key: safetensors writes several in hash-map order, which would make the bytes
        # (and the manifest's sha256) differ between identical runs.
        meta = json.dumps({"split": self.split, "documents": n_docs}, sort_keys=True)
        save_file(tensors, str(path), metadata={"awctl": meta})
        # Provenance: which trajectory (and source) each document of each block came from.
        index = path.with_suffix(".index.jsonl")
        with open(index, "w", encoding="utf-8") as handle:
            for b_index, block in enumerate(self._buffer):
                docs = zip(block.traj_ids, block.sources, block.domains, strict=True)
                for d_index, (tid, src, dom) in enumerate(docs):
                    row = {"block": b_index, "doc": d_index, "trajectory": tid, "source": src, "domain": dom}
                    handle.write(json.dumps(row) + "\n")
        self.shards.append(
            {
                "path": str(path.relative_to(self.out_dir)),
                "blocks": len(self._buffer),
                "documents": n_docs,
                "tokens": n_tokens,
                "loss_tokens": n_loss,
                "sha256": sha256_file(path),
                "index": str(index.relative_to(self.out_dir)),
            }
        )
        self.blocks += len(self._buffer)
        self.documents += n_docs
        self.tokens += n_tokens
        self.loss_tokens += n_loss
        self._buffer = []

    def summary(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "documents": self.documents,
            "tokens": self.tokens,
            "loss_tokens": self.loss_tokens,
            "shards": self.shards,
        }


def load_shard(path: str | Path) -> dict[str, np.ndarray]:
    """The tensors of one shard as numpy arrays (see the module docstring for names and dtypes)."""
    from safetensors.numpy import load_file

    return load_file(str(path))


def read_manifest(out_dir: str | Path) -> dict[str, Any]:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        raise AwctlError(
            f"{path}: no prep manifest here", hint="pass directories written by `awctl data prep`"
        )
    return json.loads(path.read_text(encoding="utf-8"))


# Keys of the config that must agree for manifests to merge (inputs and the slice may differ).
_MERGE_KEYS = ("mode", "block_size", "split", "seed", "mask", "style", "sft_target", "unchanged_weight")


def merge_outputs(dirs: list[Path], out: Path) -> dict[str, Any]:
    """Combine prep outputs (typically the slices of one ``--shard i/n`` fan-out) into ``out``.

    Shards are hard-linked (copied across file systems), quarantine files concatenated, counts and
    masking reports summed. Refuses to merge outputs made with different tokenizers or settings, and
    checks that no source landed in two splits.
    """
    if not dirs:
        raise AwctlError("nothing to merge", hint="pass the output directories of the prep slices")
    manifests = [read_manifest(d) for d in dirs]
    first = manifests[0]
    problems = []
    for d, m in zip(dirs, manifests, strict=True):
        if m["tokenizer"]["sha256"] != first["tokenizer"]["sha256"]:
            problems.append(f"{d}: different tokenizer ({m['tokenizer']['name']})")
        for key in _MERGE_KEYS:
            if m["config"].get(key) != first["config"].get(key):
                problems.append(
                    f"{d}: config {key}={m['config'].get(key)!r} differs from {first['config'].get(key)!r}"
                )
    if problems:
        raise AwctlError("cannot merge: " + "; ".join(problems), hint="merge only slices of one prep run")
    out.mkdir(parents=True, exist_ok=True)
    splits: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    counts: dict[str, int] = {}
    report = MaskReport()
    with open(out / "quarantine.jsonl", "w", encoding="utf-8") as quarantine:
        for d, m in zip(dirs, manifests, strict=True):
            for split, info in m["splits"].items():
                agg = splits.setdefault(
                    split, {"blocks": 0, "documents": 0, "tokens": 0, "loss_tokens": 0, "shards": []}
                )
                for key in ("blocks", "documents", "tokens", "loss_tokens"):
                    agg[key] += info[key]
                for shard in info["shards"]:
                    src = Path(d) / shard["path"]
                    dst = out / shard["path"]
                    if dst.exists():
                        raise AwctlError(
                            f"{dst}: two slices wrote the same shard name", hint="merge slices of one run"
                        )
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    for a, b in ((src, dst), (Path(d) / shard["index"], out / shard["index"])):
                        try:
                            os.link(a, b)
                        except OSError:
                            shutil.copy2(a, b)
                    agg["shards"].append(shard)
            for source, split in m["sources"].items():
                if sources.setdefault(source, split) != split:
                    raise AwctlError(
                        f"source {source!r} is in split {sources[source]!r} and {split!r}",
                        hint="slices were made with different --split or --seed",
                    )
            for key, value in m["counts"].items():
                counts[key] = counts.get(key, 0) + value
            report.merge(MaskReport.from_dict(m["masking"]))
            q = Path(d) / "quarantine.jsonl"
            if q.is_file():
                with open(q, encoding="utf-8") as handle:
                    shutil.copyfileobj(handle, quarantine)
    tok_src = Path(dirs[0]) / "tokenizer"
    if tok_src.is_dir() and not (out / "tokenizer").exists():
        shutil.copytree(tok_src, out / "tokenizer")
    keep = first["config"].get("mask", {}).get("keep")
    merged = {
        **{k: first[k] for k in ("version", "tokenizer")},
        "config": {
            **first["config"],
            "inputs": sorted({i for m in manifests for i in m["config"]["inputs"]}),
        },
        "slice": None,
        "merged_from": [str(d) for d in dirs],
        "counts": counts,
        "splits": splits,
        "sources": dict(sorted(sources.items())),
        "masking": report.to_dict(keep),
        "quarantine": {"path": "quarantine.jsonl", "records": counts.get("quarantined", 0)},
    }
    (out / "masking_report.json").write_text(json.dumps(merged["masking"], indent=2), encoding="utf-8")
    (out / MANIFEST).write_text(json.dumps(merged, indent=2), encoding="utf-8")
    return merged
