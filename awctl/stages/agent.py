"""Stage kinds ``agent_train`` and ``agent_eval``: train an agent with RL in a real, simulated or hybrid
environment, and evaluate it on held-out tasks (see :mod:`awctl.agent`).

::

    [[stages]]
    kind = "agent_train"
    domain = "terminal"
    policy = "tiny"                    # HF dir, .gguf, pkg:<package>/<file>.gguf, "@stage.checkpoint"
    env = "real"                       # real | sim | hybrid
    tasks = "basic[:16]"               # a suite, a suite slice, or a list of task ids
    steps = 20                         # GSPO optimizer steps
    group_size = 4
    tasks_per_step = 2
    bc = { steps = 30, lr = 3e-3 }      # behaviour-cloning warm start on the reference solutions
    # env = "sim" / "hybrid" also take:
    # world_model = { backend = "transformers", options = { model = "@wm.checkpoint" } }
    # blind_spots = "@audit.audit"     # hybrid: the audit's blind-spot families go to the real env

    [[stages]]
    kind = "agent_eval"
    domain = "terminal"
    policy = "@agent_train.checkpoint"
    tasks = "basic[16:]"               # held out
    seeds = [0, 1]

``agent_train`` outputs ``checkpoint``, ``episodes`` (JSONL, one episode per line with its step),
``metrics`` and, with BC, ``bc_checkpoint`` and ``references``; ``agent_eval`` outputs ``results``
(``results.json``: success rate with a Wilson 95% interval, environment steps and steps/s, policy vs
environment time) and ``episodes``. ``awctl agent train|eval`` run these stage kinds.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from awctl.formats.view import ChatStyle
from awctl.stages import StageContext, StageResult
from awctl.stages.train import TrainStage, _model_path
from awctl.train.config import TinySpec, TrainSpec


class WorldModelSpec(BaseModel):
    """The simulator of ``env = "sim" | "hybrid"``: a registered backend and its options (``model`` may be
    ``@stage.checkpoint``), the chat ``style`` it was trained in, and ``SimEnv`` options."""

    model_config = ConfigDict(extra="forbid")

    backend: str = "transformers"
    options: dict[str, Any] = Field(default_factory=dict)
    style: ChatStyle = "agentworldbench"
    sim_options: dict[str, Any] = Field(default_factory=dict, description="SimEnv options (max_tokens, resample...)")


class JudgeSpec(BaseModel):
    """The episode judge of ``reward = "judge"``: an LLM behind a registered backend."""

    model_config = ConfigDict(extra="forbid")

    backend: str = "transformers"
    options: dict[str, Any] = Field(default_factory=dict)
    max_tokens: int = Field(256, ge=1)


class BcSpec(BaseModel):
    """Behaviour cloning on the tasks' reference solutions before GSPO."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    steps: int = Field(30, ge=1)
    lr: float = Field(3e-3, gt=0)
    batch_size: int = Field(8, ge=1, description="reference episodes per optimizer step")
    env: Literal["real", "train"] = Field("real", description="record the references in the real environment "
                                                               "or in the training one")


def known_domain(value: str, info: ValidationInfo) -> str:
    """Field validator of a ``domain`` option: a domain of the registry the validation context names."""
    known = (info.context or {}).get("domains")
    if known is not None and value not in known:
        raise ValueError(f"unknown domain {value!r}; registered: {sorted(known)}")
    return value


class AgentEnvOptions(BaseModel):
    """What the training and the evaluation stage share: domain, tasks, environment, reward, limits."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    domain: str
    env: Literal["real", "sim", "hybrid"] = "real"
    tasks: str | list[str] | None = Field(None, description="suite, 'suite[a:b]', or task ids; None: every suite")
    limit: int | None = Field(None, ge=1)
    world_model: WorldModelSpec | None = None
    blind_spots: str | list[str] | None = Field(None, description="hybrid: action families, or '@audit.audit' / an "
                                                                   "audit.json path to take its blind spots")
    blind_spot_count: int = Field(5, ge=1, description="the audit's worst families taken as blind spots")
    schedule: dict[str, Any] | None = Field(None, description="sim: SimSchedule options (perturbations, curriculum)")
    reward: Literal["checker", "judge"] = "checker"
    judge: JudgeSpec | None = None
    max_turns: int | None = Field(None, ge=1, description="None: each task's own max_turns")
    max_action_tokens: int = Field(64, ge=1)
    max_observation_tokens: int | None = Field(512, ge=8)
    max_context_tokens: int | None = Field(None, ge=16)
    concurrency: int = Field(4, ge=1)
    step_timeout_s: float = Field(60.0, gt=0)
    episode_timeout_s: float = Field(600.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    executor: Literal["in-process", "ray"] = Field("in-process", description="where environments, the world model "
                                                                             "and the sampler run")
    executor_options: dict[str, Any] = Field(default_factory=dict, description="RayExecutor options (address, "
                                                                                "num_cpus, env_hosts...)")
    episode_tokens: bool = Field(True, description="write token ids and log-probs into episodes.jsonl")

    _known_domain = field_validator("domain")(known_domain)


class AgentTrainOptions(TrainSpec, AgentEnvOptions):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str = Field("tiny", alias="policy", description="the policy: HF dir, .gguf, pkg:, @stage.out, tiny")
    batch_size: int = Field(8, ge=1, description="episodes per forward/backward pass of the update")
    steps: int = Field(20, ge=1, description="GSPO optimizer steps")
    group_size: int = Field(4, ge=2)
    tasks_per_step: int = Field(2, ge=1)
    temperature: float = Field(1.0, gt=0)
    eps_low: float = Field(3e-4, ge=0)
    eps_high: float = Field(4e-4, ge=0)
    beta: float = Field(0.0, ge=0, description="KL coefficient to the policy GSPO starts from")
    dynamic_sampling: bool = True
    max_draw_factor: int = Field(4, ge=1)
    failure_reward: float = Field(0.0, description="reward of an episode that timed out or crashed")
    old_logprobs: Literal["auto", "sampled", "recomputed"] = "auto"
    require_signal: bool = Field(True, description="fail when no step had a group whose rewards spread (the "
                                                   "weights never moved); false: report it and keep the checkpoint")
    bc: BcSpec = Field(default_factory=BcSpec)
    generation: Literal["policy", "vllm"] = Field("policy", description="sample with transformers from the live "
                                                                         "policy, or a colocated vLLM engine")
    vllm_options: dict[str, Any] = Field(default_factory=dict)


class AgentEvalOptions(AgentEnvOptions):
    model: str = Field(alias="policy", description="the policy: HF dir, .gguf, pkg:, @stage.checkpoint, tiny")
    tokenizer: str | None = None
    tiny: TinySpec = Field(default_factory=TinySpec)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    temperature: float = Field(0.0, ge=0, description="0: greedy")
    device: str = "auto"


# ── shared pieces ───────────────────────────────────────────────────────────────────────────────────


def _resolve_model(ctx: StageContext, options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if isinstance(out.get("model"), str) and out["model"].startswith(("@", "pkg:")):
        out["model"] = _model_path(ctx, out["model"])
    return out


def blind_spot_families(ctx: StageContext, value: str | list[str] | None, count: int = 5) -> set[str]:
    """Families from a list, or the ``count`` worst imperfect families of an audit (``@stage.audit`` or an
    ``audit.json`` path; :func:`awctl.agent.envs.blind_spots_from_audit`)."""
    from awctl.agent.envs import blind_spots_from_audit

    if value is None:
        return set()
    if isinstance(value, list):
        return set(value)
    return blind_spots_from_audit(ctx.resolve_input(value), count=count)


def env_factory(ctx: StageContext, opts: AgentEnvOptions, domain: Any, executor: Any,
                stack: contextlib.ExitStack) -> Any:
    """The environment factory of ``opts.env``, placed by ``executor`` (in this process, or on Ray actors);
    what it opens is closed by ``stack``."""
    import functools

    from awctl.agent import envs
    from awctl.errors import AwctlError

    settings = ctx.project.domain_settings(opts.domain)

    def placed(factory: Any) -> Any:
        stack.callback(factory.close)
        out = executor.envs(factory)
        if out is not factory:
            stack.callback(out.close)
        return out

    if opts.env == "real":
        return placed(envs.real_envs(domain, settings))
    if opts.world_model is None:
        raise AwctlError(f"env = {opts.env!r} needs a world model",
                         hint="set world_model = { backend = ..., options = { model = ... } }")
    wm = opts.world_model
    options = _resolve_model(ctx, wm.options)
    if executor.name == "in-process":
        backend = ctx.registry.build_backend(wm.backend, **options)
    else:  # built inside the executor's world-model actor, from the plugin registry there
        from awctl.plugins import build_backend

        backend = executor.world_model(functools.partial(build_backend, wm.backend, **options))
    stack.callback(backend.close)
    sim = envs.sim_envs(domain, backend, style=wm.style, schedule=opts.schedule, sim_options=dict(wm.sim_options))
    if opts.env == "sim":
        return placed(sim)
    stack.callback(sim.close)
    real = envs.real_envs(domain, settings)
    stack.callback(real.close)
    blind = blind_spot_families(ctx, opts.blind_spots, opts.blind_spot_count)
    ctx.log.info("hybrid environment", blind_spots=sorted(blind))
    return placed(envs.hybrid_envs(domain, real, sim, blind))


def make_executor(opts: AgentEnvOptions, stack: contextlib.ExitStack) -> Any:
    from awctl.agent.executors import make_executor as make

    executor = make(opts.executor, **opts.executor_options)
    stack.callback(executor.close)
    return executor


def reward_fn(ctx: StageContext, opts: AgentEnvOptions, domain: Any, kind: str, stack: contextlib.ExitStack) -> Any:
    from awctl.agent.rewards import BackendJudge, make_reward

    if opts.reward != "judge":
        return make_reward("checker", kind)
    spec = opts.judge or JudgeSpec()
    backend = ctx.registry.build_backend(spec.backend, **_resolve_model(ctx, spec.options))
    stack.callback(backend.close)
    return make_reward("judge", kind, BackendJudge(backend, domain, spec.backend, max_tokens=spec.max_tokens))


def _episode_writer(path: Path, tokens: bool, keep_until: int = 0) -> Any:
    """``write(step, episodes)`` appending to ``path``; a resumed run keeps the lines of steps up to
    ``keep_until`` (the step it resumed from) and drops the rest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = []
    if keep_until and path.is_file():
        kept = [line for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip() and (json.loads(line).get("step") or 0) <= keep_until]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def write(step: int | None, episodes: list[Any]) -> None:
        with open(path, "a", encoding="utf-8") as handle:
            for e in episodes:
                handle.write(json.dumps({"step": step, **e.to_dict(tokens=tokens)}, ensure_ascii=False) + "\n")

    return write


def _prepare(ctx: StageContext, spec: TrainSpec, model_path: str, out: Path, seed: int) -> bool:
    """Keep ``out`` only when it was made with the same options (else empty it); whether it already holds
    the phase's finished model."""
    import hashlib
    import shutil

    fingerprint = hashlib.sha256(f"{spec.model_dump_json()}|{model_path}|{seed}".encode()).hexdigest()
    mark = out / "options.sha256"
    if out.is_dir() and (not mark.is_file() or mark.read_text().strip() != fingerprint):
        ctx.log.info("discarding checkpoints of other options", path=str(out))
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    finished = mark.is_file() and (out / "final" / "config.json").is_file()
    mark.write_text(fingerprint + "\n")
    return finished


def _trainer(ctx: StageContext, spec: TrainSpec, model_path: str, out: Path, seed: int, phase: str,
             tokenizer: str | None) -> Any:
    """A Trainer in ``out``, resuming its checkpoints only when they were made with the same options."""
    from awctl.train.loop import Trainer

    _prepare(ctx, spec, model_path, out, seed)

    def metric(step: int | None = None, **values: Any) -> None:
        ctx.metric(step=step, phase=phase, **values)

    return Trainer(spec, model_path=model_path, out=out, seed=seed, resume=True, tokenizer=tokenizer,
                   metric=metric, log=ctx.log)


def _policy(model: Any, tokenizer: Any, domain: Any, opts: Any, temperature: float, sampler: Any = None) -> Any:
    from awctl.agent.policy import AgentPolicy

    return AgentPolicy(model, tokenizer, domain, max_action_tokens=opts.max_action_tokens, temperature=temperature,
                       top_p=opts.top_p, max_observation_tokens=opts.max_observation_tokens, sampler=sampler)


# ── agent_train ─────────────────────────────────────────────────────────────────────────────────────


def run_bc(ctx: StageContext, opts: AgentTrainOptions, domain: Any, tasks: list[Any], factory: Any, seed: int,
           start: str, tokenizer: str | None) -> tuple[Path, dict[str, Any]]:
    """Behaviour cloning on the tasks' reference solutions; returns the BC checkpoint and its summary."""
    from awctl.agent.bc import fit_bc, record_references, reference_episodes
    from awctl.agent.envs import real_envs
    from awctl.errors import AwctlError

    refs_factory = factory if opts.bc.env == "train" else real_envs(domain, ctx.project.domain_settings(opts.domain))
    refs = record_references(refs_factory, tasks, workers=opts.concurrency, seed=seed)
    if refs_factory is not factory:
        refs_factory.close()
    failed = [r for r in refs if not r.ok]
    for r in failed:
        ctx.log.warning("reference solution left out of BC", task=r.task.id, error=r.error, check=r.message)
    if len(failed) == len(refs):
        raise AwctlError(f"BC: none of the {len(refs)} reference solutions passed its checker "
                         f"({failed[0].task.id}: {failed[0].error or failed[0].message})" if refs else
                         "BC: no task to take reference solutions from",
                         hint="check the environment with `awctl record --domain ...`, or set bc.enabled = false")
    spec = TrainSpec.model_validate(opts.model_copy(update={
        "steps": opts.bc.steps, "batch_size": opts.bc.batch_size,
        "optim": opts.optim.model_copy(update={"lr": opts.bc.lr})}).model_dump(include=set(TrainSpec.model_fields)))
    summary: dict[str, Any] = {"bc_references": sum(1 for r in refs if r.ok), "bc_references_failed": len(failed)}
    out = ctx.stage_dir / "bc"
    if _prepare(ctx, spec, start, out, seed):  # a resumed stage: this BC already finished
        ctx.log.info("behaviour cloning already done", checkpoint=str(out / "final"))
        return out / "final", {**summary, "bc_steps": spec.steps, "bc_reused": True}
    trainer = _trainer(ctx, spec, start, out, seed, "bc", tokenizer)
    episodes = reference_episodes(_policy(trainer.engine.module, trainer.tokenizer, domain, opts, 1.0), refs)
    refs_path = ctx.stage_dir / "references.jsonl"
    _episode_writer(refs_path, True)(None, episodes)
    result = fit_bc(trainer, episodes, batch_size=opts.bc.batch_size)
    summary.update({"bc_steps": result.steps, "bc_first_loss": result.first_loss, "bc_last_loss": result.last_loss})
    del trainer
    return result.checkpoint, summary


def _sampler(opts: AgentTrainOptions, trainer: Any, executor: Any, stack: contextlib.ExitStack) -> Any:
    """The policy's sampler: ``None`` (transformers on the live policy, in this process), a colocated vLLM
    engine (``generation = "vllm"``), or, with the Ray executor, a sampler actor; the last two are brought
    up to the policy's weights before every rollout (``sync``)."""
    import copy
    import functools

    from awctl.models.backends.common import stop_token_ids

    stops = stop_token_ids(trainer.tokenizer, getattr(trainer.engine.module, "generation_config", None))
    if opts.generation == "vllm":
        from awctl.agent.policy import VLLMSampler

        make: Any = functools.partial(VLLMSampler, trainer.base_model, trainer.tokenizer, stops,
                                      max_new_tokens=opts.max_action_tokens, temperature=opts.temperature,
                                      top_p=opts.top_p, options=opts.vllm_options)
    elif executor.name != "in-process":
        from awctl.agent.policy import TransformersSampler

        # The actor gets its own copy of the policy (on CPU); sync() sends the weights of every step.
        make = functools.partial(TransformersSampler, copy.deepcopy(trainer.engine.module).cpu().eval(),
                                 trainer.tokenizer, stops, max_new_tokens=opts.max_action_tokens,
                                 temperature=opts.temperature, top_p=opts.top_p)
    else:
        return None
    sampler = executor.sampler(make)
    stack.callback(sampler.close)
    return sampler


def run_agent_train(ctx: StageContext, opts: AgentTrainOptions) -> StageResult:
    """What ``agent_train`` runs (see the module docstring)."""
    import gc

    from awctl.agent.evaluate import select_agent_tasks
    from awctl.agent.rollout import RolloutEngine
    from awctl.agent.train import AgentRlSettings, fit_agent
    from awctl.errors import AwctlError

    domain = ctx.registry.domain(opts.domain)
    tasks = select_agent_tasks(domain, opts.tasks, opts.limit)
    seed = ctx.seed if opts.seed is None else opts.seed
    tokenizer = str(ctx.resolve_input(opts.tokenizer)) if opts.tokenizer else None
    start = _model_path(ctx, opts.model)
    outputs: dict[str, Path] = {}
    summary: dict[str, Any] = {"env": opts.env, "tasks": len(tasks)}
    with contextlib.ExitStack() as stack:
        executor = make_executor(opts, stack)
        factory = env_factory(ctx, opts, domain, executor, stack)
        kind = getattr(factory, "kind", opts.env)
        if opts.bc.enabled:
            bc_ckpt, bc_summary = run_bc(ctx, opts, domain, tasks, factory, seed, start, tokenizer)
            gc.collect()
            start, tokenizer = str(bc_ckpt), None
            outputs.update(bc_checkpoint=bc_ckpt, references=ctx.stage_dir / "references.jsonl")
            summary.update(bc_summary)
        spec = TrainSpec.model_validate(opts.model_dump(include=set(TrainSpec.model_fields)))
        trainer = _trainer(ctx, spec, start, ctx.stage_dir / "train", seed, "gspo", tokenizer)
        sampler = _sampler(opts, trainer, executor, stack)
        policy = _policy(trainer.engine.module, trainer.tokenizer, domain, opts, opts.temperature, sampler)
        engine = RolloutEngine(policy, factory, max_turns=opts.max_turns, step_timeout_s=opts.step_timeout_s,
                               episode_timeout_s=opts.episode_timeout_s, concurrency=opts.concurrency,
                               reward=reward_fn(ctx, opts, domain, kind, stack),
                               max_context_tokens=opts.max_context_tokens, executor=executor)
        ref = None
        if opts.beta:
            from awctl.train.model import load_for_training

            ref, _ = load_for_training(trainer.base_model, attention=opts.attention)
            ref.eval().requires_grad_(False).to(trainer.device)
        settings = AgentRlSettings(group_size=opts.group_size, tasks_per_step=opts.tasks_per_step,
                                   temperature=opts.temperature, eps_low=opts.eps_low, eps_high=opts.eps_high,
                                   beta=opts.beta, dynamic_sampling=opts.dynamic_sampling,
                                   max_draw_factor=opts.max_draw_factor, failure_reward=opts.failure_reward,
                                   old_logprobs=opts.old_logprobs, micro_batch=opts.batch_size)
        episodes_path = ctx.stage_dir / "episodes.jsonl"
        write = _episode_writer(episodes_path, opts.episode_tokens, keep_until=trainer.step)

        def before_rollout() -> None:
            set_step = getattr(factory, "set_step", None)  # a controllable simulator's schedule follows the step
            if set_step is not None:
                set_step(trainer.step)
            if sampler is not None:
                sampler.sync(trainer.engine.module, trainer.step)

        result = fit_agent(trainer, engine, tasks, settings, ref_model=ref,
                           sampler_kind=getattr(sampler, "kind", "transformers"),
                           before_rollout=before_rollout, on_episodes=write)
    if result.steps and not result.updates and opts.require_signal:
        raise AwctlError(
            f"agent RL: in all {result.steps} steps every group's rewards tied (zero advantage, zero gradient): "
            "the weights did not move",
            hint="draw tasks the policy solves some of the time (warm start with bc, a task slice of the right "
                 "difficulty), raise temperature, group_size or max_draw_factor")
    if not result.updates:
        ctx.log.warning("no GSPO step had a group with reward spread: the policy is the starting one",
                        steps=result.steps)
    rs, ss = list(result.rewards.values()), list(result.success.values())
    zero = list(result.zero_variance_share.values())
    summary.update({
        "steps": result.steps, "updates": result.updates, "episodes": result.episodes, "env_steps": result.env_steps,
        "env_steps_per_s": round(result.env_steps / result.rollout_wall_s, 4) if result.rollout_wall_s else 0.0,
        "policy_s": round(result.policy_s, 3), "env_s": round(result.env_s, 3),
        "rollout_s": round(result.rollout_wall_s, 3),
        "first_reward": rs[0] if rs else None, "last_reward": rs[-1] if rs else None,
        "first_success": ss[0] if ss else None, "last_success": ss[-1] if ss else None,
        "zero_variance_share": sum(zero) / len(zero) if zero else None,
        "reward": opts.reward, "env_kind": kind,
    })
    outputs.update(checkpoint=result.checkpoint, episodes=episodes_path, metrics=trainer.out / "metrics.jsonl")
    report = (f"Agent RL (GSPO) in the {kind} environment on {len(tasks)} {opts.domain} tasks: {result.updates} of "
              f"{result.steps} steps updated the policy; {result.episodes} episodes, {result.env_steps} environment "
              f"steps; mean reward per step {rs[0] if rs else '-'} → {rs[-1] if rs else '-'}; rollout time "
              f"{result.rollout_wall_s:.1f} s (policy {result.policy_s:.1f} s).")
    return StageResult(outputs=outputs, summary=summary, report=report)


class AgentTrainStage(TrainStage):
    """Agent RL: behaviour cloning on reference solutions, then GSPO on episodes in real/sim/hybrid envs."""

    kind: ClassVar[str] = "agent_train"
    Options: ClassVar[type[BaseModel]] = AgentTrainOptions

    def run(self, ctx: StageContext) -> StageResult:
        return run_agent_train(ctx, self.options)  # type: ignore[arg-type]


# ── agent_eval ──────────────────────────────────────────────────────────────────────────────────────


def load_policy_model(ctx: StageContext, opts: AgentEvalOptions) -> tuple[Any, Any]:
    """The policy model (eval mode, on ``opts.device``) and its tokenizer."""
    import torch

    from awctl.train.model import build_tiny, load_for_training

    path = _model_path(ctx, opts.model)
    if path == "tiny":
        tok = str(ctx.resolve_input(opts.tokenizer)) if opts.tokenizer else None
        path = str(build_tiny(tok, opts.tiny, ctx.stage_dir / "init", ctx.seed))
    model, tokenizer = load_for_training(path)
    device = opts.device if opts.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval()
    return model, tokenizer


def run_agent_eval(ctx: StageContext, opts: AgentEvalOptions) -> tuple[Any, Path, Path]:
    """Evaluate the policy; returns the :class:`~awctl.agent.evaluate.AgentEval`, ``results.json`` and the
    episodes JSONL."""
    from awctl.agent.evaluate import evaluate_agent, select_agent_tasks

    domain = ctx.registry.domain(opts.domain)
    tasks = select_agent_tasks(domain, opts.tasks, opts.limit)
    model, tokenizer = load_policy_model(ctx, opts)
    episodes_path = ctx.stage_dir / "episodes.jsonl"
    write = _episode_writer(episodes_path, opts.episode_tokens)
    with contextlib.ExitStack() as stack:
        executor = make_executor(opts, stack)
        factory = env_factory(ctx, opts, domain, executor, stack)
        kind = getattr(factory, "kind", opts.env)
        policy = _policy(model, tokenizer, domain, opts, opts.temperature)
        result = evaluate_agent(policy, factory, tasks, seeds=opts.seeds, max_turns=opts.max_turns,
                                concurrency=opts.concurrency, step_timeout_s=opts.step_timeout_s,
                                episode_timeout_s=opts.episode_timeout_s,
                                reward=reward_fn(ctx, opts, domain, kind, stack),
                                max_context_tokens=opts.max_context_tokens, on_episode=lambda e: write(None, [e]),
                                executor=executor)
    data = {"domain": opts.domain, "env": kind, "policy": opts.model, "tasks": [t.id for t in tasks],
            "seeds": opts.seeds, "temperature": opts.temperature, **result.to_dict()}
    results_path = ctx.stage_dir / "results.json"
    results_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return result, results_path, episodes_path


class AgentEvalStage(TrainStage):
    """Held-out evaluation of an agent policy: success rate (Wilson 95% CI), env steps, time split."""

    kind: ClassVar[str] = "agent_eval"
    Options: ClassVar[type[BaseModel]] = AgentEvalOptions

    def run(self, ctx: StageContext) -> StageResult:
        opts: AgentEvalOptions = self.options  # type: ignore[assignment]
        result, results_path, episodes_path = run_agent_eval(ctx, opts)
        ctx.metric(success_rate=result.rate, ci_low=result.ci_low, ci_high=result.ci_high, env_steps=result.steps)
        summary = {k: v for k, v in result.to_dict().items() if k != "per_task"}
        report = (f"Agent evaluation ({opts.env}, {result.tasks} episodes): success {result.successes}/{result.tasks}"
                  f" = {result.rate:.1%} (95% CI {result.ci_low:.1%}–{result.ci_high:.1%}); {result.steps} env steps "
                  f"({result.steps_per_s:.2f}/s); policy {result.policy_s:.1f} s, env {result.env_s:.1f} s, wall "
                  f"{result.wall_s:.1f} s.")
        return StageResult(outputs={"results": results_path, "episodes": episodes_path}, summary=summary,
                           report=report)
