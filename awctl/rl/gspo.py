"""The world-model RL loop: sample G observations per one-turn prompt, reward them, take a GSPO step.

Each optimizer step uses ``prompts_per_step`` prompts (in a seeded order that is a pure function of the
position, like the packed data), samples ``group_size`` completions for each from the live policy,
scores them with :class:`~awctl.rl.rewards.RewardModel`, normalises advantages within each group, and
minimises :func:`~awctl.train.losses.gspo_loss` (old log-probs are the sampling policy's, i.e. the current
weights before the step; an optional frozen reference adds the KL term). Checkpoints go through the
same :class:`~awctl.train.loop.Trainer` as CPT/SFT, so ``--resume`` continues exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from awctl.rl.expand import TurnPrompt
from awctl.rl.rewards import RewardModel
from awctl.train.loop import Trainer, TrainResult


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


@dataclass
class RlResult(TrainResult):
    rewards: dict[int, float] = field(default_factory=dict)


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
        chosen = [prompts[i] for i in prompt_order(len(prompts), trainer.seed, trainer.position,
                                                   settings.prompts_per_step)]
        module = trainer.engine.module
        roll = _sample(module, trainer, chosen, settings, sampler)
        expanded = [p for p in chosen for _ in range(G)]
        scored = rewards.score(expanded, roll.texts)
        r = torch.tensor([s.total for s in scored], dtype=torch.float32)
        adv = group_advantages(r, G, scale=settings.scale_advantages)
        n = r.shape[0]
        chunks = np.array_split(np.arange(n), spec.grad_accum)
        norm, loss_total, clip = None, 0.0, 0.0
        kls = []
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
            loss, st = gspo_loss(logps, logps.detach(), adv[sel].to(trainer.device), cm, eps_low=settings.eps_low,
                                 eps_high=settings.eps_high, beta=settings.beta, ref_logps=ref)
            # Each chunk's mean is weighted by its share of sequences: the window equals one batch.
            norm = trainer.engine.micro_backward(loss * (len(idx) / n), boundary=k == len(chunks) - 1)
            loss_total += st.loss * len(idx) / n
            clip += st.clip_fraction * len(idx) / n
            if st.kl is not None:
                kls.append(st.kl)
        trainer.position += settings.prompts_per_step
        trainer.step += 1
        mean_r = float(r.mean())
        result.losses[trainer.step] = loss_total
        result.rewards[trainer.step] = mean_r
        if result.first_loss is None:
            result.first_loss = loss_total
        result.last_loss = loss_total
        values = {
            "loss": loss_total, "reward": mean_r,
            "judge": float(np.mean([s.judge for s in scored])),
            "verifier": float(np.mean([s.verifier for s in scored])),
            "tagged": float(np.mean([s.tagged for s in scored])),
            "exact": float(np.mean([s.exact for s in scored])),
            "clip_fraction": clip, "lr": trainer.engine.lr(), "grad_norm": norm,
            "completion_tokens": float(roll.completion_mask.sum(1).float().mean()),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        if kls:
            values["kl"] = float(np.mean(kls))
        if trainer.step % spec.log_every == 0 or trainer.step == spec.steps:
            trainer.metric(trainer.step, **values)
        bar.update(1)
        bar.set_postfix(reward=f"{mean_r:.3f}")
        if spec.save_every and trainer.step % spec.save_every == 0 and trainer.step < spec.steps:
            trainer.save(trainer.step)
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
