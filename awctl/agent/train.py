"""GSPO for the agent: groups of episodes of one task, the world-model RL loss, dynamic sampling.

Each optimizer step wants ``tasks_per_step`` groups. Tasks are drawn in a seeded order that is a pure
function of the position (:func:`awctl.rl.gspo.prompt_order`, as world-model RL draws prompts); the
:class:`~awctl.agent.rollout.RolloutEngine` plays ``group_size`` episodes of each with the live policy,
and each episode's reward comes from the checker (or judge) in its environment. An episode that timed
out or crashed has no reward and counts as ``failure_reward``. A group whose rewards all tie gives no
gradient: with ``dynamic_sampling`` it is dropped and more tasks are drawn, until the step is full or
``max_draw_factor × tasks_per_step`` tasks were drawn. Every step logs the reward mean and spread over all
drawn episodes, the zero-variance share, the tasks drawn, success rate, environment steps, invalid
actions, timeouts and crashes, and the policy/environment time split; a step where no group carried
signal takes no update and says so (``no_signal``); ``updates`` counts the steps that had signal.

The update is :func:`awctl.train.losses.gspo_loss` — the same loss module as world-model RL — over whole
episodes: each episode is one sequence (its :meth:`~awctl.agent.episode.Episode.token_ids`, exactly as
sampled), its importance ratio is the mean log-ratio over its action tokens only
(:meth:`~awctl.agent.episode.Episode.loss_mask`: prompt and observation tokens weigh 0), and advantages
are normalised within each group. The old log-probs are the sampler's (``old_logprobs = "sampled"``) or
the policy's own recomputed before the step (``"recomputed"``; ``"auto"`` picks the sampler's for the
transformers sampler and recomputes for vLLM, whose kernels differ); ``logprob_drift`` logs how far the
sampler's are from the policy's. Checkpoints and resume go through :class:`~awctl.train.loop.Trainer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from awctl.agent.episode import Episode
from awctl.domain import Task
from awctl.train.loop import RlResult, Trainer


@dataclass
class AgentRlSettings:
    group_size: int = 4
    tasks_per_step: int = 2
    temperature: float = 1.0
    eps_low: float = 3e-4
    eps_high: float = 4e-4
    beta: float = 0.0
    scale_advantages: bool = True
    dynamic_sampling: bool = True
    max_draw_factor: int = 4
    failure_reward: float = 0.0
    old_logprobs: str = "auto"  # auto | sampled | recomputed
    micro_batch: int = 8  # episodes per forward/backward pass


@dataclass
class AgentRlResult(RlResult):
    success: dict[int, float] = field(default_factory=dict)
    episodes: int = 0
    env_steps: int = 0
    policy_s: float = 0.0
    env_s: float = 0.0
    rollout_wall_s: float = 0.0


@dataclass
class UpdateBatch:
    """Episodes as right-padded tensors: ``input_ids`` (each row is ``Episode.token_ids()``),
    ``attention_mask``, ``loss_mask`` (1 on action tokens) and ``old_logps`` (the sampler's), ``[B, L]``."""

    input_ids: Any
    attention_mask: Any
    loss_mask: Any
    old_logps: Any


def pack_episodes(episodes: list[Episode], pad_id: int) -> UpdateBatch:
    """The update batch of ``episodes`` (their token ids unchanged, padded on the right)."""
    import torch

    width = max(1, max(len(e.token_ids()) for e in episodes))
    n = len(episodes)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    att = torch.zeros((n, width), dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.float32)
    old = torch.zeros((n, width), dtype=torch.float32)
    for i, e in enumerate(episodes):
        t = e.token_ids()
        if not t:
            continue
        ids[i, : len(t)] = torch.tensor(t, dtype=torch.long)
        att[i, : len(t)] = 1
        mask[i, : len(t)] = torch.tensor(e.loss_mask(), dtype=torch.float32)
        old[i, : len(t)] = torch.tensor(e.old_logprobs(), dtype=torch.float32)
    return UpdateBatch(ids, att, mask, old)


def action_logits(model: Any, batch: UpdateBatch, *, autocast: Any = None, device: Any = None) -> tuple[Any, Any]:
    """``(logits, cols)``: float logits ``[B, K, V]`` at the K positions ``cols`` (into ``0..L-2``) whose next
    token is an action token of some row; only those positions go through the LM head. Observation tokens
    carry no loss, and the full ``[B, L, V]`` logits of long episodes (a 49k vocabulary × thousands of
    observation tokens) would take gigabytes."""
    import contextlib

    import torch

    dev = device or next(model.parameters()).device
    ids, att = batch.input_ids.to(dev), batch.attention_mask.to(dev)
    cols = batch.loss_mask[:, 1:].to(dev).bool().any(0).nonzero().squeeze(-1)
    if cols.numel() == 0:  # no action token: one position keeps the graph
        cols = torch.tensor([ids.shape[1] - 2], device=dev)
    with autocast or contextlib.nullcontext():
        try:
            logits = model(input_ids=ids, attention_mask=att, use_cache=False, logits_to_keep=cols).logits
        except TypeError:  # a model without logits_to_keep: every position, then the ones needed
            logits = model(input_ids=ids, attention_mask=att, use_cache=False).logits[:, cols]
    return logits.float(), cols


def token_logps(model: Any, batch: UpdateBatch, *, temperature: float = 1.0, autocast: Any = None,
                device: Any = None) -> Any:
    """``[B, L-1]`` log-probs of tokens ``1..L-1`` given the ones before, from ``logits / temperature``
    (``temperature <= 0``: the plain logits, as greedy sampling kept them); 0 where no row has an action
    token (those positions carry no loss)."""
    import torch

    logits, cols = action_logits(model, batch, autocast=autocast, device=device)
    if temperature > 0:
        logits = logits / temperature
    targets = batch.input_ids.to(logits.device)[:, cols + 1]
    picked = torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    out = torch.zeros(batch.input_ids.shape[0], batch.input_ids.shape[1] - 1, dtype=picked.dtype,
                      device=picked.device)
    return out.index_copy(1, cols, picked)


def agent_loss(logps: Any, batch: UpdateBatch, advantages: Any, s: AgentRlSettings, *, old: str = "sampled",
               ref_logps: Any = None) -> tuple[Any, Any]:
    """:func:`~awctl.train.losses.gspo_loss` over episodes: the mask is the loss mask shifted to the
    targets (so only action tokens weigh), old log-probs the sampler's or ``logps`` detached."""
    from awctl.train.losses import gspo_loss

    mask = batch.loss_mask[:, 1:].to(logps.device)
    old_logps = batch.old_logps[:, 1:].to(logps.device) if old == "sampled" else logps.detach()
    return gspo_loss(logps, old_logps, advantages.to(logps.device), mask, eps_low=s.eps_low, eps_high=s.eps_high,
                     beta=s.beta, ref_logps=ref_logps)


@dataclass
class _Draw:
    episodes: list[Episode]  # the kept groups, group-major
    rewards: list[float]
    all_episodes: list[Episode]
    drawn: int
    zero_variance: int
    task_ids: list[str]
    policy_s: float = 0.0  # wall time of the sampling calls
    signal: int = 0  # kept groups whose rewards spread (a gradient to follow)


def episode_rewards(episodes: list[Episode], failure_reward: float) -> list[float]:
    return [e.reward if e.reward is not None else failure_reward for e in episodes]


def _draw(trainer: Trainer, engine: Any, tasks: list[Task], s: AgentRlSettings) -> _Draw:
    from awctl.rl.gspo import prompt_order

    G, need = s.group_size, s.tasks_per_step
    cap = need * max(1, s.max_draw_factor) if s.dynamic_sampling else need
    kept: list[Episode] = []
    kept_r: list[float] = []
    every: list[Episode] = []
    drawn = zero = 0
    ids: list[str] = []
    policy_s = 0.0
    signal = 0
    while len(kept) // G < need and drawn < cap:
        count = min(need - len(kept) // G, cap - drawn)
        start = trainer.position
        # A controllable simulator's curriculum decides which tasks this step may draw.
        tasks_for = getattr(engine.factory, "tasks_for", None)
        pool = tasks_for(trainer.step, tasks) if tasks_for is not None else tasks
        chosen = [pool[i] for i in prompt_order(len(pool), trainer.seed, start, count)]
        trainer.position += count
        drawn += count
        ids += [t.id for t in chosen]
        episodes = engine.run(chosen, G, seed=trainer.seed * 7_919 + start)
        policy_s += engine.stats.policy_s
        every += episodes
        rewards = episode_rewards(episodes, s.failure_reward)
        for g in range(count):
            group, r = episodes[g * G:(g + 1) * G], rewards[g * G:(g + 1) * G]
            spread = max(r) - min(r) > 1e-6
            if not spread:
                zero += 1
            if (spread or not s.dynamic_sampling) and any(e.trained for e in group):
                kept += group
                kept_r += r
                signal += int(spread)
    return _Draw(kept, kept_r, every, drawn, zero, ids, policy_s, signal)


def fit_agent(trainer: Trainer, engine: Any, tasks: list[Task], settings: AgentRlSettings, *,
              ref_model: Any = None, sampler_kind: str = "transformers", before_rollout: Callable[[], None] | None = None,
              on_episodes: Callable[[int, list[Episode]], None] | None = None) -> AgentRlResult:
    """Run ``trainer.spec.steps`` GSPO steps of the policy ``engine`` samples from (its policy must wrap
    ``trainer``'s module). ``before_rollout`` runs before each step's rollouts (e.g. a vLLM weight sync);
    ``on_episodes(step, episodes)`` sees every episode drawn in a step (kept or not)."""
    import torch

    from awctl.errors import AwctlError
    from awctl.train.losses import group_advantages

    if trainer.world > 1:
        raise AwctlError("agent RL runs in one training process", hint="set nproc_per_node = 1")
    s = settings
    old = s.old_logprobs if s.old_logprobs != "auto" else ("sampled" if sampler_kind == "transformers"
                                                           else "recomputed")
    spec = trainer.spec
    result = AgentRlResult(checkpoint=trainer.out / "final", steps=spec.steps, resumed_from=trainer.resumed_from)
    bar = trainer.progress(spec.steps, trainer.step)
    G = s.group_size
    pad = trainer.tokenizer.pad_token_id if trainer.tokenizer.pad_token_id is not None else 0
    while trainer.step < spec.steps:
        t0 = time.perf_counter()
        if before_rollout is not None:
            before_rollout()
        batch = _draw(trainer, engine, tasks, s)
        rollout_s = time.perf_counter() - t0
        every = batch.all_episodes
        drawn_r = np.array(episode_rewards(every, s.failure_reward), dtype=np.float64)
        statuses: dict[str, int] = {}
        for e in every:
            statuses[e.status] = statuses.get(e.status, 0) + 1
        steps = sum(e.steps for e in every)
        actions = sum(len([t for t in e.turns if not t.stop]) for e in every)
        values: dict[str, Any] = {
            "reward": float(drawn_r.mean()), "reward_std": float(drawn_r.std()),
            "success_rate": float(np.mean([bool(e.success) for e in every])),
            "tasks_drawn": batch.drawn, "task_ids": batch.task_ids, "groups_kept": len(batch.episodes) // G,
            "zero_variance_share": batch.zero_variance / batch.drawn, "episodes": len(every),
            "env_steps": steps, "invalid_actions": sum(e.invalid_actions for e in every),
            "invalid_share": sum(e.invalid_actions for e in every) / actions if actions else 0.0,
            "timeouts": statuses.get("timeout", 0), "crashed": statuses.get("crashed", 0),
            "statuses": statuses, "rollout_s": round(rollout_s, 3),
            "policy_s": round(batch.policy_s, 3),
            "env_s": round(sum(e.env_s for e in every), 3),
            "env_steps_per_s": round(steps / rollout_s, 3) if rollout_s else 0.0,
            "lr": trainer.engine.lr(),
        }
        result.episodes += len(every)
        result.env_steps += steps
        result.env_s += sum(e.env_s for e in every)
        result.policy_s += batch.policy_s
        result.rollout_wall_s += rollout_s
        loss_total, clip, norm, drift_sum, drift_n = 0.0, 0.0, None, 0.0, 0.0
        kls: list[float] = []
        if not batch.signal:
            values["no_signal"] = 1  # every group tied: zero advantage, zero gradient
        if batch.episodes:  # without dynamic sampling, tied groups are trained on too (a zero gradient)
            r = torch.tensor(batch.rewards, dtype=torch.float32)
            adv = group_advantages(r, G, scale=s.scale_advantages)
            n = len(batch.episodes)
            chunks = [c for c in np.array_split(np.arange(n), max(1, -(-n // max(1, s.micro_batch)))) if len(c)]
            for k, idx in enumerate(chunks):
                part = pack_episodes([batch.episodes[i] for i in idx], pad)
                boundary = k == len(chunks) - 1
                with trainer.engine.micro_batch(boundary):
                    logps = token_logps(trainer.model, part, temperature=s.temperature, autocast=trainer.autocast,
                                        device=trainer.device)
                    ref = None
                    if s.beta and ref_model is not None:
                        with torch.no_grad():
                            ref = token_logps(ref_model, part, temperature=s.temperature, device=trainer.device)
                    loss, st = agent_loss(logps, part, adv[torch.as_tensor(idx)], s, old=old, ref_logps=ref)
                    norm = trainer.engine.micro_backward(loss * (len(idx) / n), boundary=boundary)
                with torch.no_grad():
                    m = part.loss_mask[:, 1:].to(logps.device)
                    drift_sum += float(((logps.detach() - part.old_logps[:, 1:].to(logps.device)).abs() * m).sum())
                    drift_n += float(m.sum())
                loss_total += st.loss * len(idx) / n
                clip += st.clip_fraction * len(idx) / n
                if st.kl is not None:
                    kls.append(st.kl)
            result.updates += int(batch.signal > 0)
            values.update({"loss": loss_total, "kept_reward": float(r.mean()), "clip_fraction": clip,
                           "grad_norm": norm, "action_tokens": int(drift_n),
                           "logprob_drift": drift_sum / drift_n if drift_n else 0.0})
        trainer.step += 1
        values["seconds"] = round(time.perf_counter() - t0, 3)
        if kls:
            values["kl"] = float(np.mean(kls))
        env_stats = getattr(engine.factory, "stats", None)
        if env_stats is not None:  # pools, routing (hybrid), perturbations injected (sim)
            values["env_stats"] = env_stats()
        result.success[trainer.step] = values["success_rate"]
        if on_episodes is not None:
            on_episodes(trainer.step, every)
        trainer.end_rl_step(result, values, loss_total, bar)
    bar.close()
    result.checkpoint = trainer.save_final()
    return result
