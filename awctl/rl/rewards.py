"""Rewards for world-model RL: ``w_judge × normalised rubric score + w_verifier × rule verifier``.

* **Strict extraction** — a generation counts only when, after closed ``<think>…</think>`` blocks are
  removed, it holds exactly one ``<predicted_observation>`` and one ``</predicted_observation>``, in that
  order. Anything else (no tag, two blocks, an unclosed block) scores 0 in total. Only the text inside the
  tag is judged, so text outside it can never raise the reward.
* **Rubric judge** — any registered judge (``deterministic`` by default, ``llm`` for a rubric LLM judge
  over a backend) scores the five dimensions 1–5; their mean maps to ``(mean − 1) / 4`` in [0, 1].
* **Rule verifier** — 1 when every applicable domain verifier passes on the predicted observation, else 0
  (1 when none applies).

Weights default to the paper's 0.9 / 0.1 and are configurable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from awctl.prompts import OBSERVATION_TAG
from awctl.rl.expand import TurnPrompt

OPEN, CLOSE = f"<{OBSERVATION_TAG}>", f"</{OBSERVATION_TAG}>"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def extract_strict(text: str) -> str | None:
    """The observation inside exactly one closed ``<predicted_observation>`` block, else ``None``."""
    body = _THINK.sub("", text)
    if body.count(OPEN) != 1 or body.count(CLOSE) != 1:
        return None
    start, end = body.index(OPEN) + len(OPEN), body.index(CLOSE)
    if end < start:
        return None
    inner = body[start:end]
    # The tags sit on their own lines in training data: drop exactly those line breaks.
    if inner.startswith("\n"):
        inner = inner[1:]
    if inner.endswith("\n"):
        inner = inner[:-1]
    return inner


def split_reasoning(text: str) -> str | None:
    """The content of the first closed ``<think>`` block, if any (kept as the turn's reasoning)."""
    m = re.search(r"<think>\n?(.*?)\n?</think>", text, re.DOTALL)
    return m.group(1) if m else None


@dataclass
class Reward:
    total: float
    judge: float  # normalised rubric score in [0, 1]
    verifier: float  # 1.0 / 0.0
    tagged: bool
    exact: bool = False
    observation: str | None = None


def normalised(scores: Mapping[str, int]) -> float:
    valid = [v for v in scores.values() if v > 0]
    if not valid:
        return 0.0
    return (sum(valid) / len(valid) - 1) / 4


class RewardModel:
    """Scores generations for :class:`TurnPrompt` s. ``judge``: a judge object (e.g. an LLM rubric judge
    built by the registry) that rates AgentWorldBench rows; ``None`` compares with the reference directly
    (the deterministic judge's rules, without building rows)."""

    def __init__(self, domains: Mapping[str, Any], *, judge: Any = None, judge_weight: float = 0.9,
                 verifier_weight: float = 0.1) -> None:
        self.domains = domains
        self.w_judge, self.w_verifier = judge_weight, verifier_weight
        self._judge = judge

    def score(self, prompts: list[TurnPrompt], generations: list[str]) -> list[Reward]:
        """One :class:`Reward` per (prompt, generation) pair, in order."""
        from awctl.domain import run_verifiers
        from awctl.eval.deterministic import compare, decode_candidate

        observations = [extract_strict(g) for g in generations]
        # AWB-format answers carry the response marker and AWB rendering: decode them as the eval does.
        observations = [o if o is None or p.style != "agentworldbench" else decode_candidate(self.domains.get(p.trajectory.domain), o)
                        for p, o in zip(prompts, observations, strict=True)]
        judge_scores: list[float | None] = [None] * len(prompts)
        exact = [False] * len(prompts)
        if self._judge is None:
            for k, (p, obs) in enumerate(zip(prompts, observations, strict=True)):
                if obs is None:
                    continue
                j = compare(self.domains.get(p.trajectory.domain), p.reference, obs, trajectory=p.trajectory,
                            index=p.index)
                judge_scores[k] = normalised(j.scores)
                exact[k] = bool(j.details.get("exact"))
        else:
            judge_scores = self._judge_generic(prompts, observations, generations)
        out = []
        for k, (p, obs) in enumerate(zip(prompts, observations, strict=True)):
            if obs is None:
                out.append(Reward(0.0, 0.0, 0.0, False))
                continue
            domain = self.domains.get(p.trajectory.domain)
            results = run_verifiers(domain, p.trajectory, p.index, obs) if domain is not None else []
            ver = 1.0 if all(r.ok for r in results) else 0.0
            js = judge_scores[k] or 0.0
            out.append(Reward(self.w_judge * js + self.w_verifier * ver, js, ver, True, exact[k], obs))
        return out

    def _judge_generic(self, prompts: list[TurnPrompt], observations: list[str | None],
                       generations: list[str]) -> list[float | None]:
        from awctl.eval.extract import row_view
        from awctl.eval.judging import JudgeItem
        from awctl.formats.agentworldbench import TurnCodec, trajectory_to_rows

        items, where = [], []
        for k, (p, obs) in enumerate(zip(prompts, observations, strict=True)):
            if obs is None:
                continue
            row = trajectory_to_rows(p.trajectory, self.domains)[p.index]
            pred = TurnCodec(self.domains.get(p.trajectory.domain)).render_response(obs)
            items.append(JudgeItem(row=row, view=row_view(row), prediction=pred, gen=generations[k]))
            where.append(k)
        scores: list[float | None] = [None] * len(prompts)
        assert self._judge is not None
        for k, j in zip(where, self._judge.judge(items), strict=True):
            scores[k] = 0.0 if j.failed else normalised(j.scores)
        return scores
