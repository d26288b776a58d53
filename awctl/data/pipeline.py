"""``run_prep``: the whole prep pipeline over a stream of inputs, for the CLI and the ``prep`` stage.

Memory stays flat in the number of records: records stream one at a time, tokenization runs in batches
of ``batch_size`` trajectories, the packer holds at most ``max_open`` blocks and ``buffer`` pieces per
split and each shard writer at most ``blocks_per_shard`` blocks. Only the dedupe index and the
source→split table grow.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import json
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from awctl.data.chat_tokens import ChatEncoder, Document
from awctl.data.clean import Filters, check_domain, check_filters
from awctl.data.config import PrepConfig, parse_shard
from awctl.data.dedupe import Deduper, content_digest
from awctl.data.masking import CATEGORIES, InfoMaskPolicy, MaskReport
from awctl.data.packing import BlockPacker
from awctl.data.sft_fit import fit_sft_document
from awctl.data.shards import MANIFEST, MANIFEST_VERSION, ShardWriter
from awctl.data.split import SourceSplitter, parse_ratios, source_key
from awctl.errors import AwctlError
from awctl.formats.ingest import Record, Rejected, expand_inputs, iter_records
from awctl.formats.view import View, prompt_variant
from awctl.trajectory import Trajectory


class Progress(Protocol):
    """What the pipeline reports while it runs; the CLI shows it as rich progress bars."""

    def phase(self, name: str) -> None: ...
    def advance(self, records: int = 0, tokens: int = 0) -> None: ...


class _NoProgress:
    def phase(self, name: str) -> None:
        pass

    def advance(self, records: int = 0, tokens: int = 0) -> None:
        pass


def _hash_unit(*parts: Any) -> int:
    return int.from_bytes(
        hashlib.blake2b("\x00".join(map(str, parts)).encode(), digest_size=8).digest(), "big"
    )


def resolve_tokenizer(config: PrepConfig, files: list[Path], domains: dict[str, Any], out: Path) -> Any:
    """Load ``config.tokenizer``, or train a BPE tokenizer for ``train:VOCAB`` on the inputs.

    Training reads the first ``tokenizer_train_docs`` valid trajectories of *all* inputs (not just this
    slice), so every slice of a fan-out trains the same tokenizer and their outputs merge.
    """
    from awctl.models.tokenizer import load_tokenizer, train_bpe_tokenizer

    spec = config.tokenizer
    if spec.startswith("train:"):
        try:
            vocab = int(spec.split(":", 1)[1])
        except ValueError:
            raise AwctlError(
                f"bad tokenizer spec {spec!r}", hint="write train:VOCAB, e.g. train:4096"
            ) from None

        def texts() -> Iterator[str]:
            n = 0
            for item in iter_records(files, domains):
                if isinstance(item, Rejected):
                    continue
                traj = item.trajectory
                yield traj.system.render()
                for t in traj.turns:
                    yield t.action
                    yield t.observation
                    if t.reasoning:
                        yield t.reasoning
                n += 1
                if n >= config.tokenizer_train_docs:
                    return

        return train_bpe_tokenizer(texts(), vocab, out / "tokenizer")
    tok = load_tokenizer(spec)
    tok.save_pretrained(str(out / "tokenizer"))
    return tok


class PrepRun:
    """One prep run; :meth:`run` returns the manifest dict (also written to ``out/manifest.json``)."""

    def __init__(self, config: PrepConfig, domains: Mapping[str, Any], progress: Progress | None = None):
        self.config = config
        self.progress = progress or _NoProgress()
        self.domains = dict(domains)
        self.out = Path(config.out)
        self.slice_index, self.slice_count = parse_shard(config.shard)
        self.splitter = SourceSplitter(parse_ratios(config.split), config.seed)
        self.filters = Filters(config.min_turns, config.max_turns, config.min_chars, config.max_chars)
        self.deduper = (
            Deduper(near_threshold=config.near_dup_threshold, seed=config.seed + 1) if config.dedupe else None
        )
        self.report = MaskReport()
        self.counts: dict[str, int] = {
            "read": 0,
            "in_slice": 0,
            "kept": 0,
            "quarantined": 0,
            "duplicates_exact": 0,
            "duplicates_near": 0,
            "documents_split_across_blocks": 0,
            "pieces_without_loss": 0,
            "sft_examples_cut": 0,
            "sft_examples_dropped": 0,
        }
        self.by_check: dict[str, int] = {}
        self.sources: dict[str, str] = {}
        self.timings: dict[str, float] = {}

    # ── helpers ──
    def _in_slice(self, key: Any) -> bool:
        return (
            self.slice_count == 1 or _hash_unit(self.config.seed, key) % self.slice_count == self.slice_index
        )

    def _quarantine(self, handle: Any, rej: Rejected) -> None:
        handle.write(json.dumps(rej.to_dict(), ensure_ascii=False) + "\n")
        self.counts["quarantined"] += 1
        self.by_check[rej.check] = self.by_check.get(rej.check, 0) + 1

    def _system_text(self, traj: Trajectory, domain: Any) -> str:
        variant = self.config.prompt_variant
        if variant == "hash":
            variants = domain.prompt_variants if domain is not None else 1
            variant = prompt_variant(self.config.seed, traj.id, variants)
        return View(domain, self.config.style).system(traj, variant)

    # ── the run ──
    def run(self) -> dict[str, Any]:
        cfg = self.config
        t_start = time.perf_counter()
        self.out.mkdir(parents=True, exist_ok=True)
        files = expand_inputs(cfg.inputs)
        self.progress.phase("tokenizer")
        tokenizer = resolve_tokenizer(cfg, files, self.domains, self.out)
        self.timings["tokenizer_s"] = round(time.perf_counter() - t_start, 3)
        pad_id = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        )
        slice_tag = f"{self.slice_index:05d}"
        packers: dict[str, BlockPacker] = {}
        writers: dict[str, ShardWriter] = {}
        batch: list[tuple[Trajectory, str, str, str]] = []  # (trajectory, system text, split, source)

        def emit(docs: list[Document], splits: list[str], spans: MaskReport) -> None:
            self.report.merge(spans)
            packed = []
            for doc, split in zip(docs, splits, strict=True):
                if cfg.mode == "sft" and len(doc) > cfg.block_size:
                    # Never split an SFT example: keep its target with the action it answers
                    # (awctl.data.sft_fit); one that cannot keep both is dropped and counted.
                    fitted = fit_sft_document(doc, cfg.block_size)
                    if fitted is None:
                        self.counts["sft_examples_dropped"] += 1
                        continue
                    self.counts["sft_examples_cut"] += 1
                    doc = fitted
                packer = packers.setdefault(split, BlockPacker(cfg.block_size, pad_id))
                writer = writers.setdefault(
                    split, ShardWriter(self.out, split, slice_tag, cfg.blocks_per_shard)
                )
                for block in packer.add(doc):
                    writer.add(block)
                packed.append(doc)
            self._count_tokens(packed)
            self.progress.advance(tokens=sum(len(d) for d in docs))

        pool = _WorkerPool(cfg, self.out / "tokenizer", self.domains) if cfg.workers > 0 else None
        in_flight: deque[tuple[Any, list[str]]] = deque()
        local_worker = _BatchWorker(cfg, tokenizer, self.domains) if pool is None else None

        def flush_batch(final: bool = False) -> None:
            if batch:
                work = [(t, s, src) for t, s, _, src in batch]
                splits = [split for _, _, split, _ in batch]
                batch.clear()
                if local_worker is not None:
                    emit(*_with_splits(local_worker(work), splits))
                else:
                    assert pool is not None
                    in_flight.append((pool.submit(work), splits))
            # Results come back in submission order, so output does not depend on worker count.
            while in_flight and (final or len(in_flight) > 2 * cfg.workers):
                result, splits = in_flight.popleft()
                emit(*_with_splits(result.get(), splits))

        self.progress.phase("prep")
        t_prep = time.perf_counter()
        with open(self.out / "quarantine.jsonl", "w", encoding="utf-8") as quarantine:
            records = iter_records(files, self.domains)
            # A batch of records is screened at once (MinHash for all of them together), then each
            # is decided in order: what is written does not depend on the batching.
            while chunk := list(itertools.islice(records, cfg.batch_size)):
                for item, screened in zip(chunk, self._screen(chunk), strict=True):
                    self.counts["read"] += 1
                    self.progress.advance(records=1)
                    if isinstance(item, Rejected):
                        if self._in_slice(f"{item.file}:{item.line}"):
                            self.counts["in_slice"] += 1
                            self._quarantine(quarantine, item)
                        continue
                    if screened is None:  # another slice's
                        continue
                    self.counts["in_slice"] += 1
                    accepted = self._clean(item, screened, quarantine)
                    if accepted is None:
                        continue
                    traj, domain = accepted
                    source = source_key(traj, item.file)
                    split = self.sources.get(source) or self.sources.setdefault(
                        source, self.splitter.assign(source)
                    )
                    batch.append((traj, self._system_text(traj, domain), split, source))
                    self.counts["kept"] += 1
                    if len(batch) >= cfg.batch_size:
                        flush_batch()
            try:
                flush_batch(final=True)
            finally:
                if pool is not None:
                    pool.close()
        for split, packer in packers.items():
            for block in packer.flush():
                writers[split].add(block)
            self.counts["documents_split_across_blocks"] += packer.split_documents
            self.counts["pieces_without_loss"] += packer.pieces_without_loss
        for writer in writers.values():
            writer.flush()
        self.timings["prep_s"] = round(time.perf_counter() - t_prep, 3)
        return self._write_manifest(tokenizer, writers)

    def _screen(self, chunk: list[Record | Rejected]) -> list[_Screened | None]:
        """What deciding each record of ``chunk`` takes that does not depend on the records before it:
        its digest, whether it is in this slice (``None`` if not, or if it was rejected on reading),
        its checks and its MinHash values (for all records that pass their checks at once)."""
        out: list[_Screened | None] = []
        for item in chunk:
            if isinstance(item, Rejected):
                out.append(None)
                continue
            digest = content_digest(item.trajectory)
            out.append(self._checks(item, digest) if self._in_slice(digest.hex()) else None)
        if self.deduper is not None and self.deduper.near_threshold is not None:
            todo = [
                (item, s) for item, s in zip(chunk, out, strict=True) if s is not None and not s.rejections
            ]
            values = self.deduper.minhashes([item.trajectory for item, _ in todo])
            for (_, screened), minhash in zip(todo, values, strict=True):
                screened.minhash = minhash
        return out

    def _checks(self, item: Record, digest: bytes) -> _Screened:
        traj = item.trajectory
        domain = self.domains.get(traj.domain)
        if domain is None and not self.config.allow_unknown_domains:
            known = ", ".join(sorted(self.domains)) or "none"
            reason = f"unknown domain {traj.domain!r} (registered: {known})"
            return _Screened(digest, domain, [Rejected(item.file, item.line, "domain", reason, traj.id)])
        failures = check_filters(traj, self.filters)
        if not failures and domain is not None:
            failures = check_domain(traj, domain, self.config.verify)
        rejections = [Rejected(item.file, item.line, f.check, f.reason, traj.id, f.turn) for f in failures]
        return _Screened(digest, domain, rejections)

    def _clean(self, item: Record, screened: _Screened, quarantine: Any) -> tuple[Trajectory, Any] | None:
        traj = item.trajectory
        if screened.rejections:
            for rejection in screened.rejections:
                self._quarantine(quarantine, rejection)
            return None
        if self.deduper is not None:
            dup = self.deduper.check(traj, screened.digest, screened.minhash)
            if dup is not None:
                kind, original = dup
                self.counts[f"duplicates_{kind}"] += 1
                self._quarantine(
                    quarantine,
                    Rejected(
                        item.file,
                        item.line,
                        f"dedupe:{kind}",
                        f"duplicate of trajectory {original!r}",
                        traj.id,
                    ),
                )
                return None
        return traj, screened.domain

    def _count_tokens(self, docs: list[Document]) -> None:
        """Add the documents' tokens and kept tokens per category to the report (a batch at once)."""
        import numpy as np

        if not docs:
            return
        cats = np.concatenate([doc.category_ids for doc in docs])
        weights = np.concatenate([doc.loss_weights for doc in docs])
        mask = cats >= 0
        if not mask.any():
            return
        n_cat = len(CATEGORIES)
        tokens = np.bincount(cats[mask], minlength=n_cat)
        kept = np.bincount(cats[mask & (weights > 0)], minlength=n_cat)
        for i, name in enumerate(CATEGORIES):
            if tokens[i]:
                self.report.add_tokens(name, int(tokens[i]), int(kept[i]))

    def _write_manifest(self, tokenizer: Any, writers: dict[str, ShardWriter]) -> dict[str, Any]:
        from awctl.models.tokenizer import tokenizer_fingerprint

        cfg = self.config
        masking = self.report.to_dict(cfg.mask.keep)
        manifest = {
            "version": MANIFEST_VERSION,
            "tokenizer": {
                "name": cfg.tokenizer,
                "path": "tokenizer",
                "sha256": tokenizer_fingerprint(tokenizer),
                "vocab_size": len(tokenizer),
                "pad_token_id": tokenizer.pad_token_id,
            },
            "config": cfg.model_dump(mode="json"),
            "slice": cfg.shard,
            "counts": self.counts,
            "quarantine": {
                "path": "quarantine.jsonl",
                "records": self.counts["quarantined"],
                "by_check": self.by_check,
            },
            "splits": {split: w.summary() for split, w in sorted(writers.items())},
            "sources": dict(sorted(self.sources.items())),
            "masking": masking,
            "timings": self.timings,
        }
        (self.out / "masking_report.json").write_text(json.dumps(masking, indent=2), encoding="utf-8")
        (self.out / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        return manifest


@dataclass
class _Screened:
    """A record's checks, done ahead of deciding it (see :meth:`PrepRun._screen`)."""

    digest: bytes
    domain: Any
    rejections: list[Rejected]  # what to quarantine (empty: it passed)
    minhash: Any = None


class _BatchWorker:
    """Masks and tokenizes one batch: ``[(trajectory, system text, source)]`` → documents + span counts.
    Runs in the main process (``workers=0``) or in each worker process."""

    def __init__(self, config: PrepConfig, tokenizer: Any, domains: Mapping[str, Any]) -> None:
        self.policy = InfoMaskPolicy(config.mask, config.seed)
        self.encoder = ChatEncoder(tokenizer, config.mode, config.sft_target, config.style, domains,
                                   config.unchanged_weight)

    def __call__(self, work: list[tuple[Trajectory, str, str]]) -> tuple[list[Document], MaskReport]:
        spans = MaskReport()
        labels = self.policy.spans_batch([(traj, system_text) for traj, system_text, _ in work])
        spans.add_rows(itertools.chain.from_iterable(itertools.chain.from_iterable(labels)))
        docs = self.encoder.encode_rows(
            [(traj, system_text, rows) for (traj, system_text, _), rows in zip(work, labels, strict=True)]
        )
        for doc, (_, _, source) in zip(docs, work, strict=True):
            doc.source = source
        return docs, spans


def _with_splits(
    result: tuple[list[Document], MaskReport], splits: list[str]
) -> tuple[list[Document], list[str], MaskReport]:
    return result[0], splits, result[1]


_WORKER: _BatchWorker | None = None


def _init_worker(config_json: str, tokenizer_dir: str, domains: Mapping[str, Any]) -> None:
    global _WORKER
    from awctl.models.tokenizer import load_tokenizer

    _WORKER = _BatchWorker(PrepConfig.model_validate_json(config_json), load_tokenizer(tokenizer_dir), domains)


def _run_worker(work: list[tuple[Trajectory, str, str]]) -> tuple[list[Document], MaskReport]:
    assert _WORKER is not None
    return _WORKER(work)


class _WorkerPool:
    """Worker processes for masking and tokenization (forked where the platform allows: no re-import)."""

    def __init__(self, config: PrepConfig, tokenizer_dir: Path, domains: Mapping[str, Any]) -> None:
        import multiprocessing as mp

        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        # Domains are only needed to render the agentworldbench style (their to_awb_* hooks).
        needed = domains if config.style == "agentworldbench" else {}
        self._pool = mp.get_context(method).Pool(
            config.workers,
            initializer=_init_worker,
            initargs=(config.model_dump_json(), str(tokenizer_dir), needed),
        )

    def submit(self, work: list[tuple[Trajectory, str, str]]) -> Any:
        return self._pool.apply_async(_run_worker, (work,))

    def close(self) -> None:
        self._pool.close()
        self._pool.join()


def run_prep(
    config: PrepConfig, domains: Mapping[str, Any], progress: Progress | None = None
) -> dict[str, Any]:
    """Run prep for ``config`` with the codecs, verifiers and hooks of ``domains``; returns the manifest."""
    with _quiet_gc():
        return PrepRun(config, domains, progress).run()


@contextlib.contextmanager
def _quiet_gc() -> Iterator[None]:
    """Prep allocates millions of short-lived objects and holds few cycles: full collections that rescan
    every imported module's objects cost more than the masking itself. Freeze what exists and collect the
    young generation less often for the run; everything is restored afterwards."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
