"""Rewards for world-model RL: ``w_judge × normalised rubric score + w_verifier × rule verifier``.

* **Strict extraction** — a generation counts only when, after closed ``<think>…</think>`` blocks are
  removed, it holds exactly one ``<predicted_observation>`` and one ``</predicted_observation>``, in that
  order. Anything else (no tag, two blocks, an unclosed block) scores 0 in total. Only the text inside the
  tag is judged, so text outside it can never raise the reward.
* **Rubric judge** — the five dimensions 1–5, their mean mapped to ``(mean − 1) / 4`` in [0, 1]. With
  the built-in deterministic comparison the score is **graded**: factuality is ``1 + 4 × similarity`` (the
  line-F1/character similarity of the decoded observation to the recorded one) and consistency
  ``1 + 4 × verifier rate × metadata agreement`` instead of five coarse buckets, so a near miss ranks
  above a far one and a group of samples rarely ties. Any registered judge (e.g. ``llm``) can stand in.
* **Rule verifier** — the fraction of the verifiers that pass on the recorded observation that also pass
  on the prediction; a verifier that abstains on the prediction counts as failed, so text the verifiers
  cannot read earns no rule credit. When no verifier applies to the turn, the rule part takes the judge
  score (no free credit either way).

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
    judge: float  # normalised (graded) rubric score in [0, 1]
    verifier: float | None  # fraction of the turn's applicable verifiers passed; None: none applies
    tagged: bool
    exact: bool = False
    observation: str | None = None
    abstained: int = 0  # applicable verifiers that abstained on the prediction (counted as failed)


def normalised(scores: Mapping[str, float]) -> float:
    valid = [v for v in scores.values() if v > 0]
    if not valid:
        return 0.0
    return (sum(valid) / len(valid) - 1) / 4


def graded(judgement: Any) -> float:
    """The normalised rubric score of a deterministic comparison, with factuality and consistency graded
    continuously from its measurements (see the module docstring)."""
    scores = dict(judgement.scores)
    details = judgement.details
    if not details.get("exact") and "similarity" in details:
        scores["factuality"] = 1 + 4 * min(float(details["similarity"]), 0.99)
        scores["consistency"] = 1 + 4 * min(float(details["verifier_rate"]) * float(details["metadata"]), 0.99)
    return normalised(scores)


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
        from awctl.domain import verifier_credit
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
                judge_scores[k] = graded(j)
                exact[k] = bool(j.details.get("exact"))
        else:
            judge_scores = self._judge_generic(prompts, observations, generations)
        out = []
        for k, (p, obs) in enumerate(zip(prompts, observations, strict=True)):
            if obs is None:
                out.append(Reward(0.0, 0.0, 0.0, False))
                continue
            domain = self.domains.get(p.trajectory.domain)
            js = judge_scores[k] or 0.0
            credit = verifier_credit(domain, p.trajectory, p.index, obs, p.reference) if domain else None
            ver = credit.rate if credit is not None else None
            rule = js if ver is None else ver
            out.append(Reward(self.w_judge * js + self.w_verifier * rule, js, ver, True, exact[k], obs,
                              credit.abstained if credit is not None else 0))
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
