"""PNG line plots of metric series: one figure per (stage, metric key), or any series a caller builds
(training curves, sim-vs-real comparisons).

matplotlib is imported lazily with the Agg backend, so importing this module is cheap and works on
machines without a display.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Point = tuple[float, float]
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# Keys of a metrics record that identify it rather than measure something.
RESERVED_KEYS = ("stage", "time", "step")


def safe_name(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return _SAFE.sub("_", text).strip("_") or "plot"


def read_metric_series(metrics_path: Path) -> dict[str, dict[str, list[Point]]]:
    """``metrics.jsonl`` → ``{stage: {key: [(x, value), ...]}}`` for every numeric value.

    ``x`` is the record's ``step`` when set, else its position among that stage's records. Lines that are
    not JSON objects (e.g. a line cut by a crash) are skipped.
    """
    series: dict[str, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    counters: dict[str, int] = defaultdict(int)
    if not metrics_path.is_file():
        return {}
    with open(metrics_path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            stage = str(record.get("stage") or "run")
            step = record.get("step")
            x = (
                float(step)
                if isinstance(step, (int, float)) and not isinstance(step, bool)
                else counters[stage]
            )
            counters[stage] += 1
            for key, value in record.items():
                if key in RESERVED_KEYS or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if math.isfinite(value):
                    series[stage][key].append((x, float(value)))
    return {s: dict(keys) for s, keys in series.items()}


def line_plot(
    series: Mapping[str, Sequence[Point]],
    path: Path,
    *,
    title: str = "",
    xlabel: str = "step",
    ylabel: str = "",
) -> Path:
    """Draw one PNG with a line per named series (a single point is drawn as a marker). Returns ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    try:
        for label, points in series.items():
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o" if len(points) < 30 else None, markersize=3, label=label)
        if all(float(x).is_integer() for pts in series.values() for x, _ in pts):
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are counts: no 0.25 ticks
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize="small")
        fig.tight_layout()
        tmp = path.with_name(path.name + ".tmp.png")
        fig.savefig(tmp, format="png")
        tmp.replace(path)
    finally:
        plt.close(fig)
    return path


# What a reader compares across training steps; anything else in metrics.jsonl (learning rate, seconds,
# token counts) stays in the file.
CURVE_KEYS = ("loss", "reward", "reward_std", "zero_variance_share", "judge", "verifier", "exact", "retention")


def curves_plot(stage: str, curves: Mapping[str, Sequence[Point]], path: Path) -> Path:
    """One PNG for a stage: a small panel per curve (each with its own scale)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    n = len(curves)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 2.8), dpi=100, squeeze=False)
    try:
        for ax, (key, points) in zip(axes[0], curves.items(), strict=True):
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, marker="o" if len(points) < 30 else None, markersize=3)
            ax.set_title(key, fontsize="medium")
            ax.set_xlabel("step")
            ax.grid(True, alpha=0.3)
        fig.suptitle(stage)
        fig.tight_layout()
        tmp = path.with_name(path.name + ".tmp.png")
        fig.savefig(tmp, format="png")
        tmp.replace(path)
    finally:
        plt.close(fig)
    return path


def plot_metrics(metrics_path: Path, out_dir: Path) -> list[dict[str, Any]]:
    """One PNG of training curves per stage of ``metrics.jsonl`` that has any (:data:`CURVE_KEYS` with at
    least two points; a single point is a number, not a curve, and stays in the stage's summary).

    Returns ``[{"stage", "keys", "path"}]`` in stage order of first appearance. Raises ImportError when
    matplotlib is not installed (callers may treat plots as optional).
    """
    made = []
    for stage, keys in read_metric_series(metrics_path).items():
        curves = {k: keys[k] for k in CURVE_KEYS if len(keys.get(k, ())) >= 2}
        if not curves:
            continue
        file = out_dir / f"{safe_name(stage)}--curves.png"
        curves_plot(stage, curves, file)
        made.append({"stage": stage, "keys": list(curves), "path": file})
    return made


def bar_chart(groups: Mapping[str, Mapping[str, float | None]], path: Path, *, title: str, ylabel: str,
              ymax: float | None = None,
              errors: Mapping[str, Mapping[str, tuple[float, float]]] | None = None) -> Path:
    """Grouped bars: ``groups[group][series] = value`` (e.g. split → model → exact-match rate).
    ``errors[group][series] = (low, high)`` draws that interval as a whisker on the bar (e.g. a 95% CI)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    series = list(dict.fromkeys(name for g in groups.values() for name in g))
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(groups) * max(1, len(series)) / 2), 3.5), dpi=100)
    try:
        for k, name in enumerate(series):
            xs = [i + k * width for i in range(len(groups))]
            ys = [(groups[g].get(name) or 0.0) for g in groups]
            bars = ax.bar(xs, ys, width, label=name)
            if errors is not None:
                spans = [(errors.get(g) or {}).get(name) for g in groups]
                wx = [x for x, s in zip(xs, spans, strict=True) if s is not None]
                wy = [y for y, s in zip(ys, spans, strict=True) if s is not None]
                lo = [max(0.0, y - s[0]) for y, s in zip(ys, spans, strict=True) if s is not None]
                hi = [max(0.0, s[1] - y) for y, s in zip(ys, spans, strict=True) if s is not None]
                if wx:
                    ax.errorbar(wx, wy, yerr=[lo, hi], fmt="none", ecolor="black", elinewidth=1, capsize=3)
            for bar, g in zip(bars, groups, strict=True):
                value = groups[g].get(name)
                ax.annotate("-" if value is None else f"{value:.2f}", (bar.get_x() + bar.get_width() / 2,
                            bar.get_height()), ha="center", va="bottom", fontsize="x-small")
        ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(groups))], list(groups))
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if ymax is not None:
            ax.set_ylim(0, ymax * 1.1)
        ax.legend(fontsize="small")
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        tmp = path.with_name(path.name + ".tmp.png")
        fig.savefig(tmp, format="png")
        tmp.replace(path)
    finally:
        plt.close(fig)
    return path
