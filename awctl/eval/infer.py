"""World-model inference over AgentWorldBench rows: ``awctl eval infer``.

Each row's messages are built as the official ``eval.py infer`` builds them
(:func:`awctl.eval.extract.inference_messages`) and sent to any backend. Rows are sent in chunks of
``chunk_size`` requests per ``generate`` call, so a backend batches them (transformers, vLLM) or runs them
concurrently (the ``openai`` backend, up to its ``concurrency``); ``workers`` > 1 keeps that many chunks in
flight at once. Each finished chunk is appended to the output and flushed, so an interrupted run loses at
most the chunks in flight.

Resume: rows of an existing output file with a non-empty ``gen`` are kept and their keys
(:func:`awctl.eval.rows.row_key`) skipped when they were asked the same messages; rows with an empty
``gen`` (failed generations) are removed from the file and generated again, and so are rows whose
messages changed under the same key (e.g. a re-recorded history). Output rows are the input rows plus
``gen`` (and ``gen_error`` when generation failed, with ``gen`` empty as the official script writes it),
in completion order.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from awctl.backend import Backend, ChatRequest
from awctl.eval.extract import inference_messages
from awctl.eval.rows import RowAppender, load_done, read_rows, row_key, write_rows_atomic


@dataclass
class InferSummary:
    total: int = 0
    skipped: int = 0
    generated: int = 0
    failed: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "skipped": self.skipped,
            "generated": self.generated,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
            "errors": self.errors[:10],
        }


def _generate_chunk(
    backend: Backend, rows: list[dict[str, Any]], max_tokens: int, temperature: float, seed: int | None
) -> list[dict[str, Any]]:
    requests = [
        ChatRequest(inference_messages(r), max_tokens=max_tokens, temperature=temperature, seed=seed)
        for r in rows
    ]
    try:
        outputs = backend.generate(requests)
        return [{**r, "gen": (c[0].text if c else "") or ""} for r, c in zip(rows, outputs, strict=True)]
    except Exception:
        # One bad request must not fail its neighbours: retry one at a time, recording each error.
        out = []
        for row, req in zip(rows, requests, strict=True):
            try:
                got = backend.generate([req])
                out.append({**row, "gen": (got[0][0].text if got and got[0] else "") or ""})
            except Exception as exc:
                out.append({**row, "gen": "", "gen_error": f"{type(exc).__name__}: {exc}"})
        return out


def _chunks(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def run_infer(
    rows: Iterable[dict[str, Any]],
    backend: Backend,
    output: Path,
    *,
    max_tokens: int = 4096,
    temperature: float = 0.6,
    seed: int | None = None,
    chunk_size: int = 32,
    workers: int = 1,
    resume: bool = True,
    limit: int | None = None,
    on_chunk: Callable[[list[dict[str, Any]]], None] | None = None,
    provenance: str | None = None,
) -> InferSummary:
    """Generate ``gen`` for every row not already done in ``output``; returns counts and timing.

    ``provenance`` (a fingerprint of the backend, model and generation settings) is stored in each new
    row as ``gen_provenance``; on resume a row is reused only when its fingerprint matches (rows made
    with other settings are generated again), and ``summary.skipped`` counts the reused rows."""
    start = time.perf_counter()
    summary = InferSummary()
    if not resume and output.exists():
        output.unlink()
    kept, done = load_done(
        output, lambda r: bool(r.get("gen")) and (provenance is None or r.get("gen_provenance") == provenance)
    )
    # What each kept row was asked: a row whose messages differ now (its history or system prompt changed
    # under the same id) is asked again and its old answer dropped.
    asked = {row_key(r): _digest(r) for r in kept}
    stale: set[str] = set()

    def pending() -> Iterator[dict[str, Any]]:
        seen: set[str] = set()
        for row in rows:
            if limit is not None and summary.total >= limit:
                return
            summary.total += 1
            key = row_key(row)
            if key in seen or key in done and asked[key] == _digest(row):
                summary.skipped += 1
                continue
            if key in done:
                stale.add(key)
            seen.add(key)
            yield row

    def record(chunk: list[dict[str, Any]]) -> None:
        if provenance is not None:
            chunk = [{**row, "gen_provenance": provenance} for row in chunk]
        sink.write(chunk)
        for row in chunk:
            if row["gen"]:
                summary.generated += 1
            else:
                summary.failed += 1
                summary.errors.append(f"{row.get('id')}: {row.get('gen_error', 'empty generation')}")
        if on_chunk:
            on_chunk(chunk)

    with RowAppender(output) as sink:
        if workers <= 1:
            for chunk in _chunks(pending(), chunk_size):
                record(_generate_chunk(backend, chunk, max_tokens, temperature, seed))
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                in_flight: set[Future[list[dict[str, Any]]]] = set()
                for chunk in _chunks(pending(), chunk_size):
                    in_flight.add(pool.submit(_generate_chunk, backend, chunk, max_tokens, temperature, seed))
                    if len(in_flight) >= workers:
                        finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                        for fut in finished:
                            record(fut.result())
                for fut in in_flight:
                    record(fut.result())
    if stale:
        _drop_first_answers(output, stale)
    summary.seconds = time.perf_counter() - start
    return summary


def _digest(row: dict[str, Any]) -> str:
    blob = json.dumps(inference_messages(row), ensure_ascii=False, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()


def _drop_first_answers(output: Path, keys: set[str]) -> None:
    """Keep only the last row of each of ``keys`` (the answer to the messages asked now)."""
    rows = read_rows(output)
    last = {row_key(r): i for i, r in enumerate(rows)}
    keep = [r for i, r in enumerate(rows) if row_key(r) not in keys or last[row_key(r)] == i]
    write_rows_atomic(output, keep)
