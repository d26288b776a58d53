"""Aggregating judged rows into AgentWorldBench scores, following the official ``eval.py score`` rules.

Rules (checked against a reimplementation of the official aggregation in ``tests/test_eval_score.py``):

* rows are grouped by domain: ``task.split("/")[-1]``;
* a row is *valid* when ``failed == 0.0``; a row without ``failed`` counts as failed;
* per domain and dimension (``format``, ``factuality``, ``consistency``, ``realism``, ``quality``,
  ``total_score``): the mean over valid rows of the values that are not ``0`` (the invalid marker; a
  missing key counts as ``0``), normalised as ``(mean - 1) / 4 * 100``; with no such value the mean is
  taken as ``0`` (normalised ``-25``), as the official script prints it;
* a domain without valid rows has no scores and does not enter either overall number;
* **pooled overall** (the official ``Overall``): the normalised mean of every non-zero ``total_score`` of
  every valid row, pooled across domains;
* **domain-mean overall**: the mean of the domains' normalised ``total_score``.

``null`` values are treated like ``0`` (the official script would crash on them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import mean
from typing import Any

from awctl.eval import SCORE_DIMENSIONS
from awctl.formats.agentworldbench import subtask

INVALID_VALUE = 0
DIMENSIONS_AND_TOTAL: tuple[str, ...] = (*SCORE_DIMENSIONS, "total_score")
DISPLAY_NAMES = {
    "mcp": "MCP",
    "search": "Search",
    "terminal": "Terminal",
    "swe": "SWE",
    "android": "Android",
    "web": "Web",
    "os": "OS",
}


def normalize(raw: float) -> float:
    """A 1–5 judge score on a 0–100 scale."""
    return (raw - 1) / 4 * 100


def is_valid(row: dict[str, Any]) -> bool:
    return row.get("failed", 1.0) == 0.0


def _values(rows: list[dict[str, Any]], key: str) -> list[float]:
    out = []
    for row in rows:
        value = row.get(key, INVALID_VALUE)
        if value is None or value == INVALID_VALUE or isinstance(value, bool):
            continue
        out.append(float(value))
    return out


def aggregate(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Scores of judged rows as a JSON-able dict::

        {"domains": {name: {"samples", "valid", "failed", "scores": {dim: 0-100}, "raw": {dim: 1-5}}},
         "overall": pooled 0-100 or None, "overall_domain_mean": 0-100 or None,
         "samples", "valid", "failed"}

    ``scores``/``raw`` are absent for a domain without valid rows. ``valid`` at the top level counts the
    pooled ``total_score`` values, as the official summary line does.
    """
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    total = 0
    for row in rows:
        by_domain[subtask(str(row.get("task", "mcp")))].append(row)
        total += 1
    domains: dict[str, Any] = {}
    pooled: list[float] = []
    for name in sorted(by_domain):
        group = by_domain[name]
        valid = [r for r in group if is_valid(r)]
        entry: dict[str, Any] = {
            "samples": len(group),
            "valid": len(valid),
            "failed": len(group) - len(valid),
        }
        if valid:
            raw: dict[str, float] = {}
            for dim in DIMENSIONS_AND_TOTAL:
                values = _values(valid, dim)
                raw[dim] = mean(values) if values else 0.0
                if dim == "total_score":
                    pooled.extend(values)
            entry["raw"] = raw
            entry["scores"] = {dim: normalize(v) for dim, v in raw.items()}
        domains[name] = entry
    domain_totals = [d["scores"]["total_score"] for d in domains.values() if "scores" in d]
    return {
        "domains": domains,
        "overall": normalize(mean(pooled)) if pooled else None,
        "overall_domain_mean": mean(domain_totals) if domain_totals else None,
        "samples": total,
        "valid": len(pooled),
        "failed": total - len(pooled),
    }


def format_table(result: dict[str, Any]) -> str:
    """A plain-text table: one row per domain (scores with two decimals), then both overall numbers."""
    head = ["domain", "valid", "failed", *DIMENSIONS_AND_TOTAL]
    lines = [head]
    for name, entry in result["domains"].items():
        scores = entry.get("scores")
        cells = (
            [f"{scores[d]:.2f}" for d in DIMENSIONS_AND_TOTAL]
            if scores
            else ["-"] * len(DIMENSIONS_AND_TOTAL)
        )
        lines.append(
            [
                DISPLAY_NAMES.get(name, name.capitalize()),
                f"{entry['valid']}/{entry['samples']}",
                str(entry["failed"]),
                *cells,
            ]
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    text = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in lines
    ]
    text.insert(1, "  ".join("-" * w for w in widths))

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    text.append("")
    text.append(f"Overall (pooled, official): {fmt(result['overall'])}")
    text.append(f"Overall (mean of domains):  {fmt(result['overall_domain_mean'])}")
    text.append(f"Samples: {result['samples']}, valid: {result['valid']}, failed: {result['failed']}")
    return "\n".join(text)
