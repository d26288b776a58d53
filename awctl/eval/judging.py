"""The judge interface and the loop that turns prediction rows into judged rows.

A judge (registered through ``register_judges``; built-ins ``llm`` and ``deterministic``) implements
:class:`Judge`: ``judge(items) -> judgements``, one :class:`Judgement` per :class:`JudgeItem`, in order.
:func:`judge_rows` does what the official ``eval.py judge`` does around the judge call: a row with an
empty ``gen`` fails with ``"No model generation"``; otherwise the prediction is extracted from ``gen``
and the judgement is written into the row under the official keys.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from awctl.eval import SCORE_DIMENSIONS
from awctl.eval.extract import RowView, clean_marker, extract_prediction, row_view


@dataclass
class JudgeItem:
    """One prediction to judge: the row, its view, the extracted prediction and the raw generation."""

    row: dict[str, Any]
    view: RowView
    prediction: str  # extracted from ``gen`` (reasoning and tags removed), marker not yet cleaned
    gen: str = ""

    @property
    def domain(self) -> str:
        return self.view.domain

    @property
    def prediction_clean(self) -> str:
        return clean_marker(self.prediction)


@dataclass
class Judgement:
    """Scores 1–5 per dimension (0 = invalid), ``total_score`` = mean of the positive ones.

    ``failed`` judgements carry ``error``; ``details`` holds judge-specific evidence (e.g. the
    deterministic judge's signals) and is written to the row under ``judge_details``.
    """

    scores: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SCORE_DIMENSIONS, 0))
    strengths: list[str] = field(default_factory=list)
    weaknesses: list[str] = field(default_factory=list)
    raw_output: str = ""
    failed: bool = False
    error: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def total_score(self) -> float:
        positive = [v for v in self.scores.values() if v > 0]
        return sum(positive) / len(positive) if positive else 0.0

    @classmethod
    def failure(cls, error: str, raw_output: str = "") -> Judgement:
        return cls(failed=True, error=error, raw_output=raw_output)


class Judge(ABC):
    """Scores predictions against references on the five AgentWorldBench dimensions."""

    name: str = ""

    @abstractmethod
    def judge(self, items: list[JudgeItem]) -> list[Judgement]:
        """One judgement per item, in order. Must not raise for a bad prediction (fail the item)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release a backend or other resources."""


def make_item(row: dict[str, Any]) -> JudgeItem | None:
    """The judge input for a prediction row, or ``None`` when it has no generation."""
    gen = row.get("gen") or ""
    if not gen:
        return None
    return JudgeItem(row=row, view=row_view(row), prediction=extract_prediction(gen), gen=gen)


def apply_judgement(row: dict[str, Any], item: JudgeItem, j: Judgement) -> dict[str, Any]:
    """``row`` updated with the official judged keys (plus ``judge_details`` when the judge gave any)."""
    out = dict(row)
    if j.failed:
        out.update(
            total_score=0,
            failed=1.0,
            error_message=j.error or "Judge scoring failed",
            extracted_output=item.prediction,
        )
        if j.raw_output:
            out["judge_raw_output"] = j.raw_output
        return out
    out.update(total_score=j.total_score, **{d: j.scores.get(d, 0) for d in SCORE_DIMENSIONS})
    out.update(
        failed=0.0,
        strengths=j.strengths,
        weaknesses=j.weaknesses,
        extracted_output=item.prediction,
        judge_raw_output=j.raw_output,
    )
    if j.details:
        out["judge_details"] = j.details
    return out


def judge_rows(
    rows: Iterable[dict[str, Any]],
    judge: Judge,
    batch_size: int = 64,
    on_batch: Callable[[list[dict[str, Any]]], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Judged rows in input order, judging ``batch_size`` predictions per judge call."""
    pending: list[tuple[dict[str, Any], JudgeItem | None]] = []

    def flush() -> list[dict[str, Any]]:
        items = [it for _, it in pending if it is not None]
        verdicts = iter(judge.judge(items)) if items else iter(())
        out = []
        for row, item in pending:
            if item is None:
                out.append({**row, "failed": 1.0, "error_message": "No model generation"})
            else:
                out.append(apply_judgement(row, item, next(verdicts)))
        pending.clear()
        if on_batch:
            on_batch(out)
        return out

    for row in rows:
        pending.append((row, make_item(row)))
        if len(pending) >= batch_size:
            yield from flush()
    if pending:
        yield from flush()
