"""``report.md`` of a run directory, built only from what the run wrote (resolved config, stage manifests,
metrics.jsonl), so it can be rebuilt at any time: after a failure, an interrupt or a resume.

Small helpers (:func:`md_table`, :func:`fmt_duration`) are shared with other reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from awctl.report.plots import plot_metrics


def md_escape(value: Any) -> str:
    """A value safe inside a markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(md_escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _summary_text(summary: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in summary.items()) or "-"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file and rename, so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _columns(evals: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The copy baseline (from the first evaluation that has one) then every evaluated model."""
    cols: dict[str, dict[str, Any]] = {}
    base = next((r["baseline"] for r in evals.values() if r.get("baseline")), None)
    if base:
        cols["copy baseline"] = base
    cols.update(evals)
    return cols


def _comparison_table(evals: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, res in _columns(evals).items():
        splits = res.get("splits") or {}
        ex = res.get("exact") or {}
        cell = [name, res.get("samples"), "-" if res.get("overall") is None else f"{res['overall']:.2f}",
                f"{ex.get('count', '-')}/{ex.get('of', '-')}"]
        for split in ("silent", "with_output"):
            sub = splits.get(split)
            cell.append("-" if not sub else f"{sub['exact']}/{sub['rows']}")
        sub = splits.get("with_output")
        cell.append("-" if not sub or sub.get("overall") is None else f"{sub['overall']:.2f}")
        d = (res.get("vs_baseline") or {}).get("with_output")
        cell.append("-" if not d else f"{d['mean']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]")
        rows.append(cell)
    return md_table(["", "rows", "score", "exact", "exact, silent turns", "exact, turns with output",
                     "score, turns with output", "minus baseline, turns with output [95% interval]"], rows)


def _comparison(evals: dict[str, dict[str, Any]], path: Path) -> Path | None:
    """Exact-match rate per split (all / silent / with output) for the baseline and each model."""
    from awctl.report.plots import bar_chart

    groups: dict[str, dict[str, float | None]] = {"all turns": {}, "silent": {}, "with output": {}}
    for name, res in _columns(evals).items():
        groups["all turns"][name] = (res.get("exact") or {}).get("rate")
        for split, label in (("silent", "silent"), ("with_output", "with output")):
            sub = (res.get("splits") or {}).get(split)
            groups[label][name] = sub["exact_rate"] if sub else None
    if not any(v is not None for g in groups.values() for v in g.values()):
        return None
    return bar_chart(groups, path, title="held-out exact match", ylabel="exact-match rate", ymax=1.0)


def build_run_report(
    run_dir: Path,
    status: str | None = None,
    error: str | None = None,
    this_run: dict[str, str] | None = None,
) -> Path:
    """Write ``run_dir/report.md`` (and PNG plots under ``run_dir/plots/``) and return its path.

    The report has the recipe, the overall ``status`` (and ``error`` line) when given, a table of every
    stage's status, duration and summary, each stage's own report fragment, and a plot per metric
    series. ``this_run`` (stage name → done | reused | failed | interrupted | not run) marks stages
    whose manifest is left from an earlier run of a resumed directory. Missing matplotlib or a broken metrics line never stops the report from being written.
    """
    config = _read_json(run_dir / "config.resolved.json") or {}
    meta = config.get("recipe", {})
    stage_names = [s.get("name") or s.get("kind") for s in config.get("stages", [])]
    manifests = {name: _read_json(run_dir / "stages" / name / "manifest.json") for name in stage_names}

    out = [f"# Run report: {meta.get('name', run_dir.name)}", ""]
    if meta.get("description"):
        out += [meta["description"], ""]
    out.append(f"- run directory: `{run_dir}`")
    out.append(f"- seed: {meta.get('seed', 0)}")
    if status:
        out.append(f"- status: **{status}**")
    if error:
        out.append(f"- error: {md_escape(error)}")
    out += ["", "## Stages", ""]
    rows = []
    for name in stage_names:
        m = manifests.get(name)
        if m is None:
            rows.append((name, "-", "not run", "-", "-"))
            continue
        state = m.get("status", "?")
        now = (this_run or {}).get(name)
        if now == "reused":
            state += " (reused)"
        elif now == "not run":
            state += " (from an earlier run; not run now)"
        rows.append(
            (
                name,
                m.get("kind", "-"),
                state,
                fmt_duration(m.get("duration_s")),
                _summary_text(m.get("summary") or {}),
            )
        )
    out += [md_table(["stage", "kind", "status", "duration", "summary"], rows), ""]

    for name in stage_names:
        m = manifests.get(name)
        if not m:
            continue
        fragment = (m.get("report") or "").strip()
        if not fragment and not m.get("error"):
            continue
        out += [f"### {name}", ""]
        if m.get("error"):
            out += [f"**{m.get('status')}:** {md_escape(m['error'])}", ""]
        if fragment:
            # Fragments may reference files in their stage dir by relative path; report.md sits two up.
            out += [fragment, ""]

    evals = {name: _read_json(run_dir / m["outputs"]["scores"]["path"]) for name, m in manifests.items()
             if m and m.get("kind") == "eval" and m.get("status") == "done" and "scores" in (m.get("outputs") or {})}
    evals = {k: v for k, v in evals.items() if v}
    try:
        plots = plot_metrics(run_dir / "metrics.jsonl", run_dir / "plots")
        comparison = _comparison(evals, run_dir / "plots" / "evaluation.png") if evals else None
    except ImportError:
        plots, comparison = None, None
    if evals:
        out += ["## Evaluation: copy baseline vs models", "", _comparison_table(evals), ""]
        if comparison is not None:
            out += [f"![exact match by split]({comparison.relative_to(run_dir).as_posix()})", ""]
    if plots is None:
        out += ["## Training curves", "", "_plots unavailable: install matplotlib_", ""]
    elif plots:
        out += ["## Training curves", ""]
        for plot in plots:
            rel = Path(plot["path"]).relative_to(run_dir).as_posix()
            out += [f"![{plot['stage']}: {', '.join(plot['keys'])}]({rel})", ""]
    path = run_dir / "report.md"
    write_atomic(path, "\n".join(out).rstrip() + "\n")
    return path
