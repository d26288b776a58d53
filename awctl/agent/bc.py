"""Behaviour cloning: a supervised warm start on the tasks' reference solutions, so small policies can learn.

:func:`record_references` replays each task's reference solution (``Task.solution``) in an environment
(the real one by default) and keeps the observations it returns; a reference whose checker fails is left
out and reported. :func:`reference_episodes` lays each out exactly as the policy's own episodes are laid
out (:class:`~awctl.agent.policy.AgentPolicy`: the same first prompt, each action's tokens ending with the
end-of-turn token, the same observation tokens, and a final empty action that stops), so BC and GSPO train
the same sequences. :func:`fit_bc` minimises the cross-entropy of the action tokens only (observation and
prompt tokens weigh 0), through :class:`~awctl.train.loop.Trainer` (checkpoints, resume, metrics).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from awctl.agent.episode import AgentTurn, Episode
from awctl.domain import Task
from awctl.train.loop import Trainer, TrainResult


@dataclass
class Reference:
    """One task's reference solution as the environment answered it."""

    task: Task
    initial: str
    observations: list[str]
    ok: bool
    message: str = ""
    error: str | None = None


def record_references(factory: Any, tasks: list[Task], *, workers: int = 1, seed: int = 0) -> list[Reference]:
    """Replay every task's ``solution`` in a fresh environment from ``factory`` and run its checker."""

    def one(job: tuple[int, Task]) -> Reference:
        slot, task = job
        env = None
        try:
            env = factory.make(task, slot % max(1, workers))
            initial = env.reset(task, seed=seed)
            observations = [env.step(action).observation for action in task.solution]
            verdict = task.check(env)
            return Reference(task, initial, observations, bool(verdict.ok), verdict.message)
        except Exception as exc:  # one broken reference must not lose the others
            return Reference(task, "", [], False, error=f"{type(exc).__name__}: {exc}")
        finally:
            if env is not None:
                env.close()

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, enumerate(tasks)))


def reference_episodes(policy: Any, references: list[Reference]) -> list[Episode]:
    """The passing references as token-level episodes in the policy's layout (see the module docstring)."""
    out = []
    for k, ref in enumerate(references):
        if not ref.ok:
            continue
        ep = Episode(task_id=ref.task.id, domain=ref.task.domain, group=k, seed=0, instruction=ref.task.instruction,
                     initial_observation=ref.initial, env_kind="reference", reward=1.0, success=True,
                     reward_source="reference")
        ep.prompt_ids = policy.start(ref.task, ref.initial)
        for action, obs in zip(ref.task.solution, ref.observations, strict=True):
            ids = policy.action_ids(action)
            ep.turns.append(AgentTurn(action_text=action, action_ids=ids, action_logprobs=[0.0] * len(ids),
                                      observation_text=obs, observation_ids=policy.observation_ids(obs)))
            ep.steps += 1
        stop = policy.action_ids("")
        ep.turns.append(AgentTurn(action_text="", action_ids=stop, action_logprobs=[0.0] * len(stop), stop=True))
        out.append(ep)
    return out


def bc_loss(model: Any, batch: Any, denom: float, *, autocast: Any = None, device: Any = None) -> tuple[Any, float, float]:
    """``sum over action targets of CE / denom`` for one micro-batch (an :class:`~awctl.agent.train.UpdateBatch`),
    its summed CE and the number of action targets predicted right (greedy)."""
    import torch
    import torch.nn.functional as F

    from awctl.agent.train import action_logits

    logits, cols = action_logits(model, batch, autocast=autocast, device=device)
    targets = batch.input_ids.to(logits.device)[:, cols + 1]
    w = batch.loss_mask[:, 1:].to(logits.device)[:, cols]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none").view_as(w)
    loss = (ce * w).sum() / max(denom, 1e-12)
    with torch.no_grad():
        right = float(((logits.argmax(-1) == targets).float() * w).sum())
    return loss, float((ce.detach() * w).sum()), right


def fit_bc(trainer: Trainer, episodes: list[Episode], *, batch_size: int = 8) -> TrainResult:
    """``trainer.spec.steps`` optimizer steps of action-token cross-entropy over ``episodes`` (drawn in a
    seeded order, ``batch_size`` episodes per step in ``spec.grad_accum`` micro-batches)."""
    from awctl.agent.train import pack_episodes
    from awctl.errors import AwctlError
    from awctl.rl.gspo import prompt_order

    if not episodes:
        raise AwctlError("behaviour cloning has no reference episode to learn from",
                         hint="every reference solution failed its checker or crashed; see the log")
    spec = trainer.spec
    result = TrainResult(checkpoint=trainer.out / "final", steps=spec.steps, resumed_from=trainer.resumed_from)
    pad = trainer.tokenizer.pad_token_id if trainer.tokenizer.pad_token_id is not None else 0
    bar = trainer.progress(spec.steps, trainer.step)
    while trainer.step < spec.steps:
        t0 = time.perf_counter()
        chosen = [episodes[i] for i in prompt_order(len(episodes), trainer.seed, trainer.position, batch_size)]
        trainer.position += batch_size
        chunks = [c for c in np.array_split(np.arange(len(chosen)), spec.grad_accum) if len(c)]
        denom = float(sum(e.action_tokens for e in chosen))
        total, right, norm = 0.0, 0.0, None
        for k, idx in enumerate(chunks):
            part = pack_episodes([chosen[i] for i in idx], pad)
            boundary = k == len(chunks) - 1
            with trainer.engine.micro_batch(boundary):
                loss, ce_sum, ok = bc_loss(trainer.model, part, denom, autocast=trainer.autocast, device=trainer.device)
                norm = trainer.engine.micro_backward(loss, boundary=boundary)
            total += ce_sum
            right += ok
        trainer.step += 1
        value = total / denom if denom else float("nan")
        result.losses[trainer.step] = value
        if result.first_loss is None:
            result.first_loss = value
        result.last_loss = value
        if trainer.step % spec.log_every == 0 or trainer.step == spec.steps:
            trainer.metric(trainer.step, bc_loss=value, action_token_accuracy=right / denom if denom else 0.0,
                           action_tokens=int(denom), grad_norm=norm, lr=trainer.engine.lr(),
                           seconds=round(time.perf_counter() - t0, 3))
        bar.update(1)
        bar.set_postfix(loss=f"{value:.3f}")
        if spec.save_every and trainer.step % spec.save_every == 0 and trainer.step < spec.steps:
            trainer.save(trainer.step)
    bar.close()
    result.checkpoint = trainer.save_final()
    return result
