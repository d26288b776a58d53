"""Rejection sampling for SFT: a teacher writes candidates, verifiers and a judge decide which to keep.

For every target turn (one-turn expansion, :mod:`awctl.rl.expand`), the teacher backend — any
backend: an OpenAI-compatible endpoint serving a strong model, or a local model — is asked for ``k``
candidates (reasoning + ``<predicted_observation>``) under a system prompt drawn from the domain's wording
variants. A candidate is kept when strict tag extraction succeeds, every applicable domain verifier passes
(``require_verifiers``) and its normalised judge score is at least ``threshold`` — the same scoring as the
RL reward (:class:`awctl.rl.rewards.RewardModel`). Each kept candidate becomes a trajectory ending at the
target turn, with the system prompt it was generated under (``system.raw``) and the teacher's reasoning,
ready for ``prep --mode sft --sft-target last`` (loss on the target turn only).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from awctl.trajectory import Trajectory, write_trajectories

if TYPE_CHECKING:
    from awctl.backend import Backend


def rejection_sample(
    trajectories: list[Trajectory],
    domains: Mapping[str, Any],
    *,
    out: Path,
    teacher: Backend | None,
    k: int = 4,
    temperature: float = 0.8,
    max_tokens: int = 256,
    judge: Any = None,
    threshold: float = 0.6,
    require_verifiers: bool = True,
    keep_reference: bool = False,
    turns: str = "all",
    max_targets: int | None = None,
    seed: int = 0,
    chunk: int = 16,
    style: str = "awctl",
) -> dict[str, Any]:
    """Write kept examples to ``out`` (trajectory JSONL); return counts and the retention rate
    (kept teacher candidates / teacher candidates; reference examples are not counted as candidates).
    ``teacher`` is any backend; ``judge`` a judge object for :class:`~awctl.rl.rewards.RewardModel`
    (``None``: the deterministic comparison). ``teacher=None`` or ``k=0``: no candidates are sampled, only the
    recorded observations are kept (``keep_reference`` must be set)."""
    from awctl.backend import ChatRequest
    from awctl.rl.expand import expand
    from awctl.rl.rewards import RewardModel, split_reasoning

    prompts = expand(trajectories, domains, seed=seed, turns=turns, style=style)
    if max_targets:
        prompts = prompts[:max_targets]
    scorer = RewardModel(domains, judge=judge)
    kept: list[Trajectory] = []
    candidates = accepted = 0
    if (teacher is None or k == 0) and not keep_reference:
        raise ValueError("without a teacher (k = 0) only the recorded observations can be kept: set keep_reference")
    for start in range(0, len(prompts), chunk):
        part = prompts[start : start + chunk]
        if teacher is None or k == 0:
            kept.extend(_example(p, p.reference, None, "ref") for p in part)
            continue
        # One seed per chunk: requests with equal sampling settings share one batched generate
        # call (a seed per request would make a local backend generate them one at a time).
        requests = [ChatRequest(messages=p.messages, max_tokens=max_tokens, temperature=temperature, n=k,
                                seed=seed + start) for p in part]
        completions = teacher.generate(requests)
        flat = [(p, c) for p, cs in zip(part, completions, strict=True) for c in cs]
        texts = [(f"<think>\n{c.reasoning}\n</think>\n" if c.reasoning else "") + c.text for _, c in flat]
        scores = scorer.score([p for p, _ in flat], texts)
        for j, ((p, _), text, s) in enumerate(zip(flat, texts, scores, strict=True)):
            candidates += 1
            if not s.tagged or s.judge < threshold or (require_verifiers and s.verifier is not None and s.verifier < 1.0):
                continue
            accepted += 1
            kept.append(_example(p, s.observation or "", split_reasoning(text), f"c{j}"))
        if keep_reference:
            kept.extend(_example(p, p.reference, None, "ref") for p in part)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_trajectories(out, kept)
    return {"targets": len(prompts), "candidates": candidates, "kept": accepted,
            "retention": accepted / candidates if candidates else 0.0, "examples": len(kept)}


def _example(p: Any, observation: str, reasoning: str | None, tag: str) -> Trajectory:
    """The training trajectory for one kept answer: the prefix up to the target turn, whose observation
    (and reasoning) is the answer, under the system prompt it was generated with (``system.raw``). Prep
    renders it in the run's chat style, as the prompt was (:mod:`awctl.formats.view`)."""
    traj = p.trajectory
    turns = [t.model_copy() for t in traj.turns[: p.index + 1]]
    turns[-1] = turns[-1].model_copy(update={"observation": observation, "reasoning": reasoning})
    system = traj.system.model_copy(update={"raw": p.system})
    return traj.model_copy(update={"id": f"{traj.id}-t{p.index}-{tag}", "turns": turns, "system": system})
