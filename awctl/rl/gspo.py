"""The world-model RL loop: sample G observations per one-turn prompt, reward them, take a GSPO step.

Each optimizer step wants ``prompts_per_step`` groups. Prompts are drawn in a seeded order that is a pure
function of the position (like the packed data); ``group_size`` completions of each are sampled from the
live policy and scored with :class:`~awctl.rl.rewards.RewardModel`. A group whose rewards all tie has
zero advantage everywhere and so no gradient: with ``dynamic_sampling`` such groups are dropped and more
prompts drawn until the batch is full or ``max_draw_factor × prompts_per_step`` prompts were drawn. Every
step logs the share of zero-variance groups, the mean and spread of the rewards and the prompts drawn;
a step where no group carried signal takes no optimizer update and says so (``no_signal``).

Advantages are normalised within each group and :func:`~awctl.train.losses.gspo_loss` is minimised (old
log-probs are the sampling policy's, i.e. the current weights before the step; an optional frozen
reference adds the KL term). Checkpoints go through the same :class:`~awctl.train.loop.Trainer` as
CPT/SFT, so ``--resume`` continues exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from awctl.rl.expand import TurnPrompt
from awctl.rl.rewards import RewardModel
from awctl.train.loop import RlResult, Trainer


@dataclass
class RlSettings:
    group_size: int = 4
    prompts_per_step: int = 2
    max_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    eps_low: float = 3e-4
    eps_high: float = 4e-4
    beta: float = 0.0
    scale_advantages: bool = True
    max_prompt_tokens: int | None = None
    dynamic_sampling: bool = True
    max_draw_factor: int = 4


@dataclass
class Batch:
    """The groups one step trains on, and what it took to find them."""

    rollouts: Any
    scored: list[Any]
    rewards: Any  # tensor [groups × G]
    drawn: int
    zero_variance: int
    all_rewards: list[float]


def _draw(trainer: Trainer, prompts: list[TurnPrompt], rewards: RewardModel, s: RlSettings,
          sampler: Any) -> Batch:
    """Draw prompts until ``prompts_per_step`` groups with reward spread are found (dynamic sampling) or the
    draw cap is reached; without dynamic sampling, exactly ``prompts_per_step`` prompts."""
    import torch

    from awctl.rl.rollout import merge_rollouts

    G, need = s.group_size, s.prompts_per_step
    cap = need * max(1, s.max_draw_factor) if s.dynamic_sampling else need
    parts, scored_all, kept_r = [], [], []
    drawn = zero = 0
    all_rewards: list[float] = []
    while sum(len(p.prompts) for p in parts) < need and drawn < cap:
        count = min(need - sum(len(p.prompts) for p in parts), cap - drawn)
        chosen = [prompts[i] for i in prompt_order(len(prompts), trainer.seed, trainer.position, count)]
        trainer.position += count
        drawn += count
        roll = _sample(trainer.engine.module, trainer, chosen, s, sampler)
        scored = rewards.score([p for p in chosen for _ in range(G)], roll.texts)
        totals = [x.total for x in scored]
        all_rewards += totals
        keep = []
        for g in range(count):
            group = totals[g * G:(g + 1) * G]
            if max(group) - min(group) > 1e-6 or not s.dynamic_sampling:
                keep.append(g)
            if max(group) - min(group) <= 1e-6:
                zero += 1
        if keep:
            parts.append(roll.groups(keep))
            for g in keep:
                scored_all += scored[g * G:(g + 1) * G]
                kept_r += totals[g * G:(g + 1) * G]
    merged = merge_rollouts(parts, trainer.tokenizer.pad_token_id) if parts else None
    return Batch(merged, scored_all, torch.tensor(kept_r, dtype=torch.float32), drawn, zero, all_rewards)


def prompt_order(n: int, seed: int, position: int, count: int) -> list[int]:
    out = []
    for p in range(position, position + count):
        epoch, offset = divmod(p, n)
        out.append(int(np.random.default_rng((seed, epoch)).permutation(n)[offset]))
    return out


def fit_rl(trainer: Trainer, prompts: list[TurnPrompt], rewards: RewardModel, settings: RlSettings,
           ref_model: Any = None, sampler: Any = None) -> RlResult:
    """``sampler``: a :class:`~awctl.rl.vllm_sync.VLLMSampler` to generate through (``generation =
    "vllm"``); ``None`` samples from the live policy with transformers."""
    import torch

    from awctl.train.losses import group_advantages, gspo_loss, sequence_logps

    spec = trainer.spec
    result = RlResult(checkpoint=trainer.out / "final", steps=spec.steps, resumed_from=trainer.resumed_from)
    bar = trainer.progress(spec.steps, trainer.step)
    G = settings.group_size
    while trainer.step < spec.steps:
        t0 = time.perf_counter()
        batch = _draw(trainer, prompts, rewards, settings, sampler)
        drawn_r = np.array(batch.all_rewards, dtype=np.float64)
        values: dict[str, Any] = {
            "reward": float(drawn_r.mean()), "reward_std": float(drawn_r.std()),
            "prompts_drawn": batch.drawn, "groups_kept": len(batch.scored) // G,
            "zero_variance_share": batch.zero_variance / batch.drawn,
            "lr": trainer.engine.lr(),
        }
        loss_total, clip, norm = 0.0, 0.0, None
        kls: list[float] = []
        if batch.rollouts is None:
            # Every drawn group tied: zero advantage, zero gradient. Nothing to learn from this step.
            values["no_signal"] = 1
        else:
            roll, scored, r = batch.rollouts, batch.scored, batch.rewards
            adv = group_advantages(r, G, scale=settings.scale_advantages)
            n = r.shape[0]
            chunks = [c for c in np.array_split(np.arange(n), spec.grad_accum) if len(c)]
            for k, idx in enumerate(chunks):
                sel = torch.as_tensor(idx)
                ids = roll.input_ids[sel].to(trainer.device)
                att = roll.attention_mask[sel].to(trainer.device)
                cm = roll.completion_mask[sel].to(trainer.device)
                logps = sequence_logps(trainer.model, ids, att, roll.completion_len, autocast=trainer.autocast)
                ref = None
                if settings.beta and ref_model is not None:
                    with torch.no_grad():
                        ref = sequence_logps(ref_model, ids, att, roll.completion_len)
                loss, st = gspo_loss(logps, logps.detach(), adv[sel].to(trainer.device), cm,
                                     eps_low=settings.eps_low, eps_high=settings.eps_high, beta=settings.beta,
                                     ref_logps=ref)
                # Each chunk's mean is weighted by its share of sequences: the window equals one batch.
                norm = trainer.engine.micro_backward(loss * (len(idx) / n), boundary=k == len(chunks) - 1)
                loss_total += st.loss * len(idx) / n
                clip += st.clip_fraction * len(idx) / n
                if st.kl is not None:
                    kls.append(st.kl)
            result.updates += 1
            values.update({
                "loss": loss_total, "kept_reward": float(r.mean()),
                "judge": float(np.mean([x.judge for x in scored])),
                "verifier": float(np.mean([x.verifier for x in scored if x.verifier is not None] or [0.0])),
                "tagged": float(np.mean([x.tagged for x in scored])),
                "exact": float(np.mean([x.exact for x in scored])),
                "clip_fraction": clip, "grad_norm": norm,
                "completion_tokens": float(roll.completion_mask.sum(1).float().mean()),
            })
        trainer.step += 1
        values["seconds"] = round(time.perf_counter() - t0, 3)
        if kls:
            values["kl"] = float(np.mean(kls))
        trainer.end_rl_step(result, values, loss_total, bar)
    bar.close()
    result.checkpoint = trainer.save_final()
    return result


def _sample(module: Any, trainer: Trainer, chosen: list[TurnPrompt], s: RlSettings, sampler: Any = None) -> Any:
    from awctl.rl.rollout import sample_groups

    if sampler is not None:  # generation = "vllm": the engine is synced to the policy's current step first
        return sampler.sample(module, trainer.step, chosen, group_size=s.group_size, max_tokens=s.max_tokens,
                              temperature=s.temperature, top_p=s.top_p, max_prompt_tokens=s.max_prompt_tokens)

    return sample_groups(module, trainer.tokenizer, chosen, group_size=s.group_size, max_tokens=s.max_tokens,
                         temperature=s.temperature, top_p=s.top_p, max_prompt_tokens=s.max_prompt_tokens)
