"""infer → judge → score in one folder, with a no-model baseline on the same rows: the one library call
behind ``awctl eval run`` and the ``eval`` stage.

Every evaluation reports three things side by side, so a result can fail:

* the model's AgentWorldBench scores (the official aggregation) and its exact-match rate;
* the **copy baseline** — each domain's no-knowledge rule (:meth:`awctl.domain.Domain.copy_baseline`,
  e.g. a terminal echoing the typed command and showing the prompt again) — judged by the same judge;
* both split into turns the baseline already gets exactly right (``silent``: a terminal command with no
  output) and the rest (``with_output``), where a world model has to predict something;
* the model's score minus the baseline's on the same rows with a bootstrap interval
  (:func:`versus_baseline`), so a margin the rows cannot tell from chance reads as one.

Resume is safe: predictions and judgements carry a fingerprint of what made them (backend and
generation settings; judge, its options and the domain's verifiers) and are reused only when it matches;
the summary says how many rows were reused.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from awctl.backend import Backend
from awctl.eval.judging import Judge, judge_rows
from awctl.eval.rows import RowAppender, load_done, read_rows, row_key, write_rows_atomic
from awctl.eval.score import aggregate

PREDICTIONS, JUDGED, BASELINE, SCORES = "predictions.jsonl", "judged.jsonl", "baseline.jsonl", "scores.json"


@dataclass
class EvalSettings:
    """Generation and judging settings of one evaluation."""

    max_tokens: int = 4096
    temperature: float = 0.6
    seed: int | None = None
    chunk_size: int = 32
    workers: int = 1
    limit: int | None = None
    resume: bool = True
    batch_size: int = 64
    baseline: bool = True


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-able ``parts``."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def backend_identity(name: str, options: Mapping[str, Any]) -> str:
    """What a backend's generations depend on: its name, its options and, for options that name local files
    (``model``, ``tokenizer``), those files' sizes and modification times, so a checkpoint retrained in
    place (a rerun stage writes the same path) is never taken for the one that made earlier predictions."""
    stamps = {key: _file_stamp(options[key]) for key in ("model", "tokenizer") if isinstance(options.get(key), str)}
    return fingerprint(name, dict(options), stamps)


def _file_stamp(value: str) -> list[Any] | None:
    path = Path(value)
    try:
        if path.is_file():
            return list(_size_and_time(path))
        if path.is_dir():
            return sorted([str(f.relative_to(path)), *_size_and_time(f)] for f in path.rglob("*") if f.is_file())
    except OSError:
        return None
    return None


def _size_and_time(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def domain_fingerprint(domain: Any) -> str:
    """What a domain's judgements depend on: its verifiers (names and code), codecs and version."""
    if domain is None:
        return "none"
    parts: list[str] = [str(getattr(domain, "version", "")), type(domain.observation_codec).__qualname__]
    for v in domain.verifiers():
        try:
            source = inspect.getsource(v.fn)
        except (OSError, TypeError):  # no source (a builtin or a generated function): its name stands in
            source = getattr(v.fn, "__qualname__", repr(v.fn))
        parts += [v.name, source]
    return fingerprint(parts)


def judge_fingerprint(judge_name: str, judge_options: Mapping[str, Any]) -> str:
    return fingerprint("judge", judge_name, dict(judge_options))


def _domain_of(row: dict[str, Any]) -> str:
    from awctl.formats.agentworldbench import subtask

    return subtask(str(row.get("task", "")))


# ── judging with provenance ──────────────────────────────────────────────────────────────────────────


@dataclass
class JudgeRun:
    rows: list[dict[str, Any]]
    reused: int
    judged: int


def _judged_inputs(row: dict[str, Any]) -> str:
    """What a judgement of ``row`` depends on: the generation and the row it answers (history, reference)."""
    keys = ("gen", "system_str", "prompt", "response", "current_prompt", "turn_idx")
    return json.dumps([row.get(k) for k in keys], sort_keys=True, ensure_ascii=False)


def judge_file(
    predictions: Iterable[dict[str, Any]],
    output: Path,
    judge: Judge,
    judge_id: str,
    domains: Mapping[str, Any],
    *,
    batch_size: int = 64,
    resume: bool = True,
) -> JudgeRun:
    """Judge prediction rows into ``output`` (official judged keys plus ``judge_provenance``).

    A row already in ``output`` is reused only when it was judged (a failed judge call is retried), it
    judged the generation and the row (history, reference) ``predictions`` now hold, and its provenance —
    ``judge_id`` and the fingerprint of its domain's verifiers — matches; rows judged by another judge,
    other options or other verifiers, rows whose prediction was generated again (another model) and rows
    whose reference changed under the same id are judged again."""
    cache: dict[str, str] = {}

    def provenance(row: dict[str, Any]) -> str:
        name = _domain_of(row)
        if name not in cache:
            cache[name] = f"{judge_id}/{domain_fingerprint(domains.get(name))}"
        return cache[name]

    if not resume and output.exists():
        output.unlink()
    predictions = list(predictions)
    judged_now = {row_key(r): _judged_inputs(r) for r in predictions}

    def finished(r: dict[str, Any]) -> bool:
        # A judge call that failed is retried; a row without a generation stays failed.
        done = "failed" in r and (r["failed"] == 0.0 or r.get("error_message") == "No model generation")
        same = _judged_inputs(r) == judged_now.get(row_key(r))
        return done and same and r.get("judge_provenance") == provenance(r)

    kept, done = load_done(output, finished)
    todo = [r for r in predictions if row_key(r) not in done]
    with RowAppender(output) as sink:
        judged = [
            {**row, "judge_provenance": provenance(row)}
            for row in judge_rows(todo, judge, batch_size=batch_size)
        ]
        sink.write(judged)
    return JudgeRun(kept + judged, reused=len(kept), judged=len(judged))


# ── baseline, exact match, splits ────────────────────────────────────────────────────────────────────


def baseline_predictions(rows: Iterable[dict[str, Any]], domains: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Prediction rows whose ``gen`` is the domain's copy baseline (rows without one are left out)."""
    from awctl.formats.agentworldbench import TurnCodec, rows_to_trajectories
    from awctl.prompts import OBSERVATION_TAG

    out = []
    for row in rows:
        domain = domains.get(_domain_of(row))
        if domain is None:
            continue
        clean = {k: v for k, v in row.items() if k not in ("gen", "gen_provenance", "gen_error")}
        try:
            (traj,) = rows_to_trajectories([clean], domains)
            t = max(int(row.get("turn_idx", 1)) - 1, 0)
            guess = domain.copy_baseline(traj, t) if t < len(traj.turns) else None
        except Exception:  # a row the domain cannot read has no baseline
            guess = None
        if guess is None:
            continue
        body = TurnCodec(domain).render_response(guess)
        out.append({**clean, "gen": f"<{OBSERVATION_TAG}>\n{body}\n</{OBSERVATION_TAG}>"})
    return out


def row_exact(row: dict[str, Any], domains: Mapping[str, Any]) -> bool:
    """Whether a judged row's prediction equals its reference (codec normalisation, metadata masked)."""
    from awctl.eval.deterministic import comparable, decode_candidate
    from awctl.eval.extract import extract_prediction, row_view

    if not row.get("gen"):
        return False
    domain = domains.get(_domain_of(row))
    view = row_view(row)
    reference = decode_candidate(domain, view.ground_truth_raw)
    prediction = decode_candidate(domain, extract_prediction(row["gen"]))
    return comparable(domain, prediction) == comparable(domain, reference)


def summarize(
    rows: list[dict[str, Any]], domains: Mapping[str, Any], silent: set[str] | None = None
) -> dict[str, Any]:
    """The official aggregation plus ``exact`` (count, rate) and, with ``silent`` (row keys the baseline
    gets exactly right), the same per split (``silent`` / ``with_output``)."""
    result = aggregate(rows)
    exact = [row_exact(r, domains) for r in rows]
    result["exact"] = {"count": sum(exact), "of": len(rows), "rate": sum(exact) / len(rows) if rows else None}
    if silent is not None:
        splits = {}
        for name, keep in (("silent", True), ("with_output", False)):
            part = [(r, e) for r, e in zip(rows, exact, strict=True) if (row_key(r) in silent) == keep]
            sub = aggregate([r for r, _ in part])
            n = sum(e for _, e in part)
            splits[name] = {"rows": len(part), "overall": sub["overall"], "exact": n,
                            "exact_rate": n / len(part) if part else None}
        result["splits"] = splits
    return result


def versus_baseline(
    model_rows: list[dict[str, Any]],
    baseline_rows: list[dict[str, Any]],
    silent: set[str],
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """The model's score minus the baseline's on the same rows, per split (``all``/``silent``/
    ``with_output``): ``rows`` (judged validly by both), ``mean`` (0-100 points), a 95% percentile
    bootstrap interval over rows (``low``/``high``, seeded) and how many rows the model scores ``better``,
    ``equal`` or ``worse``. An interval that holds 0 says the rows cannot tell the two apart."""
    import random

    from awctl.eval.score import is_valid, normalize

    base = {row_key(r): r for r in baseline_rows if is_valid(r)}
    diffs: list[tuple[str, float]] = []
    for row in model_rows:
        key = row_key(row)
        if is_valid(row) and key in base:
            points = normalize(float(row["total_score"])) - normalize(float(base[key]["total_score"]))
            diffs.append((key, points))
    out = {}
    rng = random.Random(seed)
    for name, keep in (("all", None), ("silent", True), ("with_output", False)):
        d = [x for key, x in diffs if keep is None or (key in silent) == keep]
        if not d:
            continue
        means = sorted(sum(rng.choices(d, k=len(d))) / len(d) for _ in range(resamples))
        out[name] = {"rows": len(d), "mean": sum(d) / len(d), "low": means[int(0.025 * resamples)],
                     "high": means[int(0.975 * resamples) - 1], "better": sum(x > 0 for x in d),
                     "equal": sum(x == 0 for x in d), "worse": sum(x < 0 for x in d)}
    return out


# ── the whole evaluation ─────────────────────────────────────────────────────────────────────────────


def evaluate(
    rows: Iterable[dict[str, Any]],
    domains: Mapping[str, Any],
    backend: Backend,
    judge: Judge,
    out_dir: Path,
    *,
    backend_id: str,
    judge_id: str,
    settings: EvalSettings | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the evaluation of ``rows`` in ``out_dir``; returns (and writes to ``scores.json``) the summary:
    the model's scores, exact match and splits, the baseline's, and how many rows resume reused."""
    from awctl.eval.infer import run_infer

    s = settings or EvalSettings()
    say = on_progress or (lambda _: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    if s.limit is not None:
        rows = rows[: s.limit]
    gen_id = fingerprint(backend_id, s.max_tokens, s.temperature, s.seed)
    infer = run_infer(rows, backend, out_dir / PREDICTIONS, max_tokens=s.max_tokens, temperature=s.temperature,
                      seed=s.seed, chunk_size=s.chunk_size, workers=s.workers, resume=s.resume,
                      provenance=gen_id, on_chunk=lambda c: say(f"+{len(c)} predictions"))
    say(f"predictions: {infer.generated} generated, {infer.skipped} reused, {infer.failed} failed")
    judged = judge_file(read_rows(out_dir / PREDICTIONS), out_dir / JUDGED, judge, judge_id, domains,
                        batch_size=s.batch_size, resume=s.resume)
    say(f"judgements: {judged.judged} judged, {judged.reused} reused")
    silent: set[str] | None = None
    base_summary = None
    if s.baseline:
        base_rows = baseline_predictions(rows, domains)
        base = judge_file(base_rows, out_dir / BASELINE, judge, judge_id, domains,
                          batch_size=s.batch_size, resume=s.resume)
        silent = {row_key(r) for r in base.rows if row_exact(r, domains)}
        base_summary = summarize(base.rows, domains, silent) if base.rows else None
    keys = {row_key(r) for r in rows}
    model_rows = [r for r in judged.rows if row_key(r) in keys]
    result = summarize(model_rows, domains, silent if base_summary is not None else None)
    result["baseline"] = base_summary
    if base_summary is not None:
        result["vs_baseline"] = versus_baseline(model_rows, base.rows, silent or set())
    result["reused"] = {"predictions": infer.skipped, "judgements": judged.reused}
    result["generation"] = infer.to_dict()
    write_rows_atomic(out_dir / JUDGED, judged.rows)
    (out_dir / SCORES).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def format_summary(result: dict[str, Any]) -> str:
    """A short text table: model and baseline, overall score and exact match, per split."""
    def cell(v: Any, pct: bool = False) -> str:
        if v is None:
            return "-"
        return f"{100 * v:.1f}%" if pct else f"{v:.2f}"

    lines = ["| | rows | score | exact |", "|---|---:|---:|---:|"]
    for label, res in (("model", result), ("copy baseline", result.get("baseline"))):
        if not res:
            continue
        ex = res["exact"]
        lines.append(f"| {label} | {res['samples']} | {cell(res['overall'])} | "
                     f"{ex['count']}/{ex['of']} ({cell(ex['rate'], True)}) |")
        for split, sub in (res.get("splits") or {}).items():
            lines.append(f"| {label}, {split.replace('_', ' ')} | {sub['rows']} | {cell(sub['overall'])} | "
                         f"{sub['exact']}/{sub['rows']} ({cell(sub['exact_rate'], True)}) |")
    for split, d in (result.get("vs_baseline") or {}).items():
        where = "all turns" if split == "all" else split.replace("_", " ") + " turns"
        lines.append(f"\nModel minus copy baseline, {where}: {d['mean']:+.1f} points (95% bootstrap interval "
                     f"{d['low']:+.1f} to {d['high']:+.1f}; better on {d['better']}, equal on {d['equal']}, "
                     f"worse on {d['worse']} of {d['rows']} rows).")
    return "\n".join(lines)
