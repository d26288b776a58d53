"""Stage kind ``compare``: Sim vs Real. Train one agent per *arm* with equal budgets, evaluate every arm on
held-out **real** tasks before and after training, and report (see :mod:`awctl.agent.compare`).

::

    [[stages]]
    kind = "compare"
    domain = "terminal"
    policy = "tiny"                          # the shared start (HF dir, .gguf, pkg:, @stage.checkpoint, tiny)
    train_tasks = "basic[:8]"
    heldout_tasks = "basic[8:12]"            # real tasks never trained on
    seeds = [0, 1]                           # evaluation episodes per held-out task
    budget = { steps = 4, group_size = 4, tasks_per_step = 2, max_turns = 3 }
    bc = { steps = 30 }                      # the same behaviour-cloning warm start for every arm
    world_model = { backend = "transformers", options = { model = "@cpt.checkpoint" } }
    train = { max_action_tokens = 48, optim = { lr = 1e-3 } }   # any other agent_train option, every arm

    [stages.arms.real]
    kind = "real"
    [stages.arms.sim]
    kind = "sim"                             # the simulator as it is
    [stages.arms.sim_controlled]
    kind = "sim_perturbed"                   # the controllable simulator: perturbations, curriculum
    schedule = { perturbations = [{ name = "command_not_found", episodes = 0.3 }] }
    [stages.arms.hybrid]
    kind = "hybrid"
    blind_spots = "@audit.audit"             # or a list of action families
    [stages.arms.wm_warmup]
    kind = "wm_warmup"                       # the policy starts from a checkpoint that had world-model
    policy = "@cpt.checkpoint"               # training; trains where `env` says (default real)

How it runs, in the stage folder: ``starts/<start>/`` holds each distinct starting policy (``base``, and
one per ``wm_warmup`` arm): its behaviour cloning on the training tasks' reference solutions as the real
environment answers them (once, shared by the arms that start there) and its held-out real evaluation
(the arms' "before"). ``arms/<arm>/`` holds the arm's ``agent_train`` run (GSPO with ``bc`` off, from its
start's checkpoint; the same steps, group size, tasks per step, turn limit and seed for every arm), its
held-out real evaluation (``eval_real/``) and, for an arm trained in the simulator, the same evaluation in
the simulator (``eval_sim/``: the sim–real gap) whose episodes are replayed in real (``wm2real.json``).
``compare.json``, ``report.md`` and ``plots/`` sit in the stage folder; the run's report.md carries the
same report.

Resume: each start and each arm records a fingerprint of everything it depends on (options, the content
of its input models, the start it grew from); when the stage reruns in the same run directory (``awctl
run --resume`` / ``awctl compare --resume`` after a failure or an interrupt), a start or arm whose
fingerprint is unchanged and that finished is reused, and one that did not finish continues from what its
own stages kept (BC reuse, trainer checkpoints).

With ``check_invariants`` (default) the stage fails when an arm was not trained for the whole budget, when
its environment answered no step in training (every action invalid), when it was not evaluated on every
held-out episode, when the given budgets differ between arms, when a number in
``compare.json`` is not finite, or when the report is missing — the pipeline's invariants, not a tuned
outcome. Module imports stay light (no torch).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from awctl.stages import StageContext, StageResult
from awctl.stages.agent import (
    AgentEnvOptions,
    AgentEvalOptions,
    AgentTrainOptions,
    BcSpec,
    WorldModelSpec,
    known_domain,
)
from awctl.stages.train import TrainStage

ArmKind = Literal["real", "sim", "sim_perturbed", "hybrid", "wm_warmup"]
_ARM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
#: agent_train options the comparison sets itself (the same for every arm, or the arm's own).
MANAGED_KEYS = frozenset({"domain", "env", "tasks", "limit", "policy", "model", "tokenizer", "steps", "group_size",
                          "tasks_per_step", "max_turns", "bc", "world_model", "schedule", "blind_spots",
                          "blind_spot_count", "seed"})
#: agent_train options an evaluation takes too (where the environments run, limits, sampling).
_EVAL_SHARED = (set(AgentEnvOptions.model_fields) - MANAGED_KEYS - {"reward", "judge", "episode_tokens"}) | {"device"}


class BudgetSpec(BaseModel):
    """What every arm gets alike: GSPO optimizer steps, episodes per task group, groups per step, and the
    actions per episode (``None``: each task's own ``max_turns``)."""

    model_config = ConfigDict(extra="forbid")

    steps: int = Field(4, ge=1)
    group_size: int = Field(4, ge=2)
    tasks_per_step: int = Field(2, ge=1)
    max_turns: int | None = Field(None, ge=1)


class ArmSpec(BaseModel):
    """One arm: ``real`` (the real environment), ``sim`` (the simulator as it is), ``sim_perturbed`` (the
    simulator with a ``schedule`` of perturbations/curriculum), ``hybrid`` (``blind_spots`` to the real
    environment), ``wm_warmup`` (its own start ``policy``, a checkpoint that had world-model training;
    trains in ``env``, default real)."""

    model_config = ConfigDict(extra="forbid")

    kind: ArmKind
    description: str = ""
    schedule: dict[str, Any] | None = Field(None, description="sim_perturbed: SimSchedule (perturbations, curriculum)")
    blind_spots: str | list[str] | None = Field(None, description="hybrid: families, or '@audit.audit' / audit.json")
    blind_spot_count: int = Field(5, ge=1)
    policy: str | None = Field(None, description="wm_warmup: the start, e.g. '@cpt.checkpoint'")
    env: Literal["real", "sim"] | None = Field(None, description="wm_warmup: where it trains (default real)")

    @model_validator(mode="after")
    def _fields_of_kind(self) -> ArmSpec:
        if self.kind == "sim_perturbed" and not self.schedule:
            raise ValueError("an arm of kind 'sim_perturbed' needs schedule = { perturbations = [...] } "
                             "(and/or curriculum = [...])")
        if self.schedule is not None and self.kind != "sim_perturbed":
            raise ValueError(f"schedule belongs to kind 'sim_perturbed', not {self.kind!r} (kind 'sim' is the "
                             "uncontrolled simulator)")
        if self.kind == "hybrid" and not self.blind_spots:
            raise ValueError("an arm of kind 'hybrid' needs blind_spots (action families, or '@audit.audit')")
        if self.blind_spots is not None and self.kind != "hybrid":
            raise ValueError(f"blind_spots belongs to kind 'hybrid', not {self.kind!r}")
        if self.kind == "wm_warmup" and not self.policy:
            raise ValueError("an arm of kind 'wm_warmup' needs policy = a checkpoint that had world-model "
                             "training (e.g. '@cpt.checkpoint')")
        if self.kind != "wm_warmup" and (self.policy is not None or self.env is not None):
            raise ValueError(f"policy and env belong to kind 'wm_warmup'; an arm of kind {self.kind!r} starts from "
                             "the shared policy in its own environment")
        return self

    @property
    def train_env(self) -> str:
        """Where the arm trains: real | sim | hybrid."""
        return {"real": "real", "sim": "sim", "sim_perturbed": "sim", "hybrid": "hybrid"}.get(self.kind,
                                                                                              self.env or "real")


class CompareOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    domain: str
    model: str = Field("tiny", alias="policy", description="the shared start: HF dir, .gguf, pkg:, @stage.out, tiny")
    tokenizer: str | None = Field(None, description="tokenizer of a 'tiny' policy (e.g. '@prep.tokenizer')")
    train_tasks: str | list[str] = Field(description="suite, 'suite[a:b]' or task ids")
    heldout_tasks: str | list[str] = Field(description="real tasks never trained on (disjoint from train_tasks)")
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1, description="evaluation seeds")
    seed: int | None = Field(None, description="training seed of every arm (None: the run's)")
    budget: BudgetSpec = Field(default_factory=BudgetSpec)
    bc: BcSpec = Field(default_factory=BcSpec)
    world_model: WorldModelSpec | None = None
    train: dict[str, Any] = Field(default_factory=dict, description="other agent_train options, every arm alike")
    eval_temperature: float = Field(0.0, ge=0, description="0: greedy held-out evaluation")
    wm2real_episodes: int | None = Field(None, ge=1, description="simulator episodes replayed in real (None: all)")
    sim_arm: str | None = Field(None, description="the arm --fail-under gates (default: the first of kind sim)")
    real_arm: str | None = Field(None, description="the arm it is compared with (default: the first of kind real)")
    check_invariants: bool = True
    arms: dict[str, ArmSpec] = Field(min_length=1)

    _known_domain = field_validator("domain")(known_domain)

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> CompareOptions:
        bad = [n for n in self.arms if not _ARM_NAME.match(n)]
        if bad:
            raise ValueError(f"arm names must be letters, digits, '_', '.', '-': {bad}")
        managed = sorted(MANAGED_KEYS & set(self.train))
        if managed:
            raise ValueError(f"train: {managed} are set by the comparison itself (budget, bc, world_model, the "
                             "task options and the arms)")
        if self.bc.env != "real":
            raise ValueError("bc.env must be 'real': every arm gets the same warm start, from the reference "
                             "solutions as the real environment answers them")
        needs_wm = [n for n, a in self.arms.items() if a.train_env in ("sim", "hybrid")]
        if needs_wm and self.world_model is None:
            raise ValueError(f"arms {needs_wm} train in a simulator: set world_model = {{ backend = ..., "
                             "options = { model = ... } }")
        for key, kinds in (("sim_arm", ("sim", "sim_perturbed")), ("real_arm", ("real",))):
            name = getattr(self, key)
            if name is not None and (name not in self.arms or self.arms[name].kind not in kinds):
                raise ValueError(f"{key} = {name!r} must name an arm of kind {' or '.join(kinds)}")
        for name in self.arms:  # every arm's agent_train options must validate now, not after an hour
            try:
                AgentTrainOptions.model_validate(self.arm_train_options(name, "tiny", 0), context=info.context)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"arm {name!r}: {problems}") from None
        return self

    # ── what each piece runs with ──
    def gate(self) -> dict[str, str | None]:
        """The sim arm and the real arm ``--fail-under`` compares."""
        first = {k: next((n for n, a in self.arms.items() if a.kind == k), None) for k in ("sim", "real")}
        return {"sim_arm": self.sim_arm or first["sim"], "real_arm": self.real_arm or first["real"]}

    def arm_train_options(self, name: str, start: str, seed: int) -> dict[str, Any]:
        """The ``agent_train`` options of arm ``name`` starting from checkpoint ``start``."""
        arm = self.arms[name]
        opts: dict[str, Any] = {"max_draw_factor": 1, **self.train}  # 1: no arm draws extra episodes
        opts.update(domain=self.domain, policy=start, tasks=self.train_tasks, steps=self.budget.steps,
                    group_size=self.budget.group_size, tasks_per_step=self.budget.tasks_per_step,
                    max_turns=self.budget.max_turns, bc={"enabled": False}, seed=seed, env=arm.train_env)
        if arm.train_env in ("sim", "hybrid") and self.world_model is not None:
            opts["world_model"] = self.world_model.model_dump()
        if arm.schedule is not None:
            opts["schedule"] = arm.schedule
        if arm.kind == "hybrid":
            opts.update(blind_spots=arm.blind_spots, blind_spot_count=arm.blind_spot_count)
        return opts

    def bc_options(self, start: str, seed: int) -> dict[str, Any]:
        """The ``agent_train`` options behaviour cloning runs with (the shared ones, ``bc`` on)."""
        opts: dict[str, Any] = {**self.train}
        opts.update(domain=self.domain, policy=start, tasks=self.train_tasks, steps=self.budget.steps,
                    group_size=self.budget.group_size, tasks_per_step=self.budget.tasks_per_step,
                    max_turns=self.budget.max_turns, bc=self.bc.model_dump(), seed=seed, env="real")
        return opts

    def eval_options(self, policy: str, env: str) -> dict[str, Any]:
        """The ``agent_eval`` options of a held-out evaluation of ``policy`` in ``env`` (real | sim)."""
        opts = {k: v for k, v in self.train.items() if k in _EVAL_SHARED}
        opts.update(domain=self.domain, policy=policy, env=env, tasks=self.heldout_tasks, seeds=self.seeds,
                    temperature=self.eval_temperature, max_turns=self.budget.max_turns, reward="checker",
                    episode_tokens=False)
        if env == "sim" and self.world_model is not None:
            opts["world_model"] = self.world_model.model_dump()
        return opts


class CompareStage(TrainStage):
    """Sim vs Real: arms with equal budgets, held-out real success before/after, WM2Real, report."""

    kind: ClassVar[str] = "compare"
    Options: ClassVar[type[BaseModel]] = CompareOptions

    def input_refs(self) -> list[str]:
        opts: CompareOptions = self.options  # type: ignore[assignment]
        refs = super().input_refs()
        if opts.tokenizer:
            refs.append(opts.tokenizer)
        for arm in opts.arms.values():
            for value in (arm.policy, arm.blind_spots):
                # An absolute path names a cluster location (e.g. /models/...) that need not exist where the
                # recipe is validated (as TrainStage treats `model`); the stage checks it when it runs.
                if isinstance(value, str) and _pathlike(value) and not value.startswith("pkg:") \
                        and not Path(value).is_absolute():
                    refs.append(value)
        return list(dict.fromkeys(refs))

    def run(self, ctx: StageContext) -> StageResult:
        return run_compare(ctx, self.options)  # type: ignore[arg-type]


def _pathlike(value: str) -> bool:
    return value.startswith("@") or "/" in value or Path(value).suffix != ""


# ── running it ───────────────────────────────────────────────────────────────────────────────────────


def _sub(ctx: StageContext, folder: Path, name: str) -> StageContext:
    """A context for a piece of the comparison: its own folder and metrics file, the run's inputs."""
    folder.mkdir(parents=True, exist_ok=True)
    return StageContext(name=name, run_dir=ctx.run_dir, stage_dir=folder, project=ctx.project, recipe=ctx.recipe,
                        log=ctx.log.bind(piece=name), registry=ctx.registry, artifacts=ctx.artifacts, seed=ctx.seed,
                        _metrics_path=folder / "metrics.jsonl")


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _content(ctx: StageContext, value: str | None) -> str | None:
    """The content hash of a model/tokenizer/audit reference (``None`` for ``tiny``, lists, plain names)."""
    from awctl.models.paths import package_file

    if not isinstance(value, str) or value == "tiny":
        return None
    try:
        path = Path(package_file(value)) if value.startswith("pkg:") else ctx.resolve_input(value)
    except Exception:  # not resolvable here: the piece that uses it reports it when it runs
        return None
    if not path.exists():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()):
        digest.update(f"{file.relative_to(path).as_posix() if path.is_dir() else ''}\0".encode())
        with open(file, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def _piece(ctx: StageContext, folder: Path, fingerprint: str, what: str, fn: Callable[[], dict[str, Any]]) -> dict:
    """Run ``fn`` for ``folder`` unless it finished before with the same fingerprint (then its result is
    reused); a folder left by other options is emptied first, one left unfinished by the same options kept."""
    from awctl.report.markdown import write_atomic

    done, mark = folder / "result.json", folder / "fingerprint"
    if done.is_file():
        try:
            old = json.loads(done.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = {}
        if old.get("fingerprint") == fingerprint:
            ctx.log.info("comparison piece reused", piece=what)
            return old["result"]
    if folder.exists() and (not mark.is_file() or mark.read_text().strip() != fingerprint):
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    mark.write_text(fingerprint + "\n")
    done.unlink(missing_ok=True)
    ctx.log.info("comparison piece started", piece=what)
    result = fn()
    write_atomic(done, json.dumps({"fingerprint": fingerprint, "result": result}, indent=2, default=str) + "\n")
    return result


def _rel(path: Path | str, base: Path) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(p)


def _abs(text: str, base: Path) -> str:
    p = Path(text)
    return str(p if p.is_absolute() or text == "tiny" else base / p)


def _evaluate(ctx: StageContext, opts: CompareOptions, folder: Path, policy: str, env: str) -> dict[str, Any]:
    from awctl.stages.agent import run_agent_eval

    ectx = _sub(ctx, folder, f"{ctx.name}.eval_{env}")
    eopts = AgentEvalOptions.model_validate(opts.eval_options(policy, env), context={"domains": ctx.domains})
    t0 = time.perf_counter()
    _, results, _ = run_agent_eval(ectx, eopts)
    data = json.loads(results.read_text(encoding="utf-8"))
    data["wall_s"] = round(time.perf_counter() - t0, 3)  # the whole evaluation, loading the policy included
    data["episodes_file"] = _rel(folder / "episodes.jsonl", ctx.stage_dir)
    # The environment's own speed: each step's duration as the rollout measured it (resets and the
    # checker's probes left out), summed over the evaluation's steps.
    step_s = 0.0
    for line in (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            step_s += sum(float(t.get("env_s") or 0.0) for t in json.loads(line).get("turns", [])
                          if t.get("valid", True) and not t.get("stop"))
    data["step_s"] = step_s
    return data


def run_compare(ctx: StageContext, opts: CompareOptions) -> StageResult:
    """What the ``compare`` stage runs (see the module docstring)."""
    from awctl.agent.compare import budget_problems, write_report
    from awctl.agent.evaluate import select_agent_tasks
    from awctl.errors import AwctlError

    domain = ctx.registry.domain(opts.domain)
    train_tasks = select_agent_tasks(domain, opts.train_tasks)
    heldout = select_agent_tasks(domain, opts.heldout_tasks)
    overlap = sorted({t.id for t in train_tasks} & {t.id for t in heldout})
    if overlap:
        raise AwctlError(f"compare: {len(overlap)} held-out task(s) are also training tasks: {overlap[:5]}",
                         hint="make heldout_tasks disjoint from train_tasks, e.g. basic[:8] and basic[8:12]")
    seed = ctx.seed if opts.seed is None else opts.seed
    t_all = time.perf_counter()
    shared = opts.model_dump(mode="json", exclude={"arms", "sim_arm", "real_arm", "wm2real_episodes", "world_model",
                                                   "check_invariants"})
    ids = {"train": [t.id for t in train_tasks], "heldout": [t.id for t in heldout]}

    # ── the starts: behaviour cloning once per distinct starting policy, and its held-out evaluation ──
    starts: dict[str, str] = {"base": opts.model}
    arm_start: dict[str, str] = {}
    for name, arm in opts.arms.items():
        key = "base"
        if arm.kind == "wm_warmup":
            assert arm.policy is not None
            key = next((k for k, p in starts.items() if p == arm.policy and k != "base"), name)
            starts.setdefault(key, arm.policy)
        arm_start[name] = key
    used = set(arm_start.values())
    start_results: dict[str, dict[str, Any]] = {}
    for key, policy in starts.items():
        if key not in used:
            continue
        folder = ctx.stage_dir / "starts" / key
        tokenizer = opts.tokenizer if key == "base" else None
        fp = _fingerprint("start", shared, ids, seed, policy, _content(ctx, policy), tokenizer,
                          _content(ctx, tokenizer), ctx.project.domain_settings(opts.domain))

        def start(key: str = key, policy: str = policy, folder: Path = folder, tokenizer: str | None = tokenizer
                  ) -> dict[str, Any]:
            return _run_start(ctx, opts, domain, train_tasks, key, policy, tokenizer, folder, seed)

        start_results[key] = {**_piece(ctx, folder, fp, f"start {key}", start), "fingerprint": fp}

    # ── the arms ──
    arms: dict[str, dict[str, Any]] = {}
    for name, arm in opts.arms.items():
        st = start_results[arm_start[name]]
        folder = ctx.stage_dir / "arms" / name
        wm = opts.world_model.model_dump(mode="json") if opts.world_model is not None else None
        fp = _fingerprint("arm", st["fingerprint"], arm.model_dump(mode="json"), shared, seed,
                          wm if arm.train_env in ("sim", "hybrid") else None,
                          _content(ctx, (wm or {}).get("options", {}).get("model")),
                          _content(ctx, arm.blind_spots if isinstance(arm.blind_spots, str) else None),
                          opts.wm2real_episodes, ctx.project.domain_settings(opts.domain))

        def run_arm(name: str = name, st: dict[str, Any] = st, folder: Path = folder) -> dict[str, Any]:
            return _run_arm(ctx, opts, domain, heldout, name, st, folder, seed)

        result = _piece(ctx, folder, fp, f"arm {name}", run_arm)
        arms[name] = {**result, "before": st["before"], "start": arm_start[name]}

    # ── the document, the report, the invariants ──
    sim_evals = [a["sim_eval"] for a in arms.values() if a.get("sim_eval")]
    real_evals = [a["after"] for a in arms.values() if a.get("sim_eval")]

    def speed(evals: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not evals:
            return None
        steps, step_s = sum(e["env_steps"] for e in evals), sum(e["step_s"] for e in evals)
        wall = sum(e["wall_s"] for e in evals)
        return {"env_steps": steps, "step_s": step_s, "env_steps_per_s": steps / step_s if step_s else None,
                "wall_s": round(wall, 3), "env_steps_per_wall_s": steps / wall if wall else None}

    configured = {n: {k: a["budget"][k] for k in ("steps", "group_size", "tasks_per_step", "max_turns", "seed",
                                                  "bc_steps", "episodes")} for n, a in arms.items()}
    data: dict[str, Any] = {
        "domain": opts.domain, "policy": opts.model, "world_model": opts.world_model.model_dump(mode="json")
        if opts.world_model else None, "train_tasks": ids["train"], "heldout_tasks": ids["heldout"],
        "seeds": opts.seeds, "seed": seed, "eval_temperature": opts.eval_temperature,
        "reward": opts.train.get("reward", "checker"), "budget": opts.budget.model_dump(), "bc": opts.bc.model_dump(),
        "starts": {k: {kk: vv for kk, vv in v.items() if kk != "fingerprint"} for k, v in start_results.items()},
        "arms": arms, "gate": opts.gate(), "budget_problems": budget_problems(configured),
        "speed": {"sim": speed(sim_evals), "real": speed(real_evals)}, "wall_s": round(time.perf_counter() - t_all, 3),
    }
    prefix = _rel(ctx.stage_dir, ctx.run_dir) + "/" if ctx.stage_dir.resolve() != ctx.run_dir.resolve() else ""
    report_path, fragment = write_report(data, ctx.stage_dir, fragment_prefix=prefix)
    if opts.check_invariants:
        problems = _invariant_problems(opts, data, len(heldout) * len(opts.seeds), report_path)
        if problems:
            raise AwctlError("compare: pipeline invariants broken: " + "; ".join(problems),
                             hint=f"see {report_path} and the arms' folders under {ctx.stage_dir / 'arms'}")
    # Headline per arm: held-out real success before → after; sim arms add the gap and WM2Real.
    summary: dict[str, Any] = {"heldout_episodes": len(heldout) * len(opts.seeds)}
    for name, arm in arms.items():
        line = f"{arm['before']['success_rate']:.3f}→{arm['after']['success_rate']:.3f}"
        if arm.get("wm2real"):
            w = arm["wm2real"]["wm2real"]
            line += f" (gap {arm['gap']:+.3f}, WM2Real {'n/a' if w is None else f'{w:.3f}'})"
        summary[name] = line
    outputs = {"report": report_path, "compare": ctx.stage_dir / "compare.json", "arms": ctx.stage_dir / "arms",
               "starts": ctx.stage_dir / "starts"}
    if (ctx.stage_dir / "plots").is_dir():
        outputs["plots"] = ctx.stage_dir / "plots"
    return StageResult(outputs=outputs, summary=summary, report=fragment)


def _run_start(ctx: StageContext, opts: CompareOptions, domain: Any, train_tasks: list[Any], key: str, policy: str,
               tokenizer: str | None, folder: Path, seed: int) -> dict[str, Any]:
    from awctl.stages.agent import _model_path, run_bc
    from awctl.train.config import TinySpec
    from awctl.train.model import build_tiny

    sctx = _sub(ctx, folder, f"{ctx.name}.start.{key}")
    t0 = time.perf_counter()
    path = _model_path(ctx, policy)
    tok = str(ctx.resolve_input(tokenizer)) if tokenizer else None
    if path == "tiny":  # built once here, so every arm starting here starts from the very same weights
        path = str(build_tiny(tok, TinySpec.model_validate(opts.train.get("tiny", {})), folder / "init", seed))
        tok = None
    bc: dict[str, Any] = {"bc_steps": 0}
    checkpoint = path
    if opts.bc.enabled:
        topts = AgentTrainOptions.model_validate(opts.bc_options(path, seed), context={"domains": ctx.domains})
        ckpt, bc = run_bc(sctx, topts, domain, train_tasks, None, seed, path, tok)
        checkpoint = str(ckpt)
    bc_s = time.perf_counter() - t0
    before = _evaluate(ctx, opts, folder / "eval_real", checkpoint, "real")
    return {"policy": policy, "checkpoint": _rel(checkpoint, ctx.stage_dir), "bc": bc,
            "before": before, "wall_s": {"bc": round(bc_s, 3), "eval_real": before["wall_s"]}}


def _run_arm(ctx: StageContext, opts: CompareOptions, domain: Any, heldout: list[Any], name: str,
             start: dict[str, Any], folder: Path, seed: int) -> dict[str, Any]:
    from awctl.agent.compare import learning_curves, replay_in_real
    from awctl.agent.envs import real_envs
    from awctl.stages.agent import run_agent_train

    arm = opts.arms[name]
    actx = _sub(ctx, folder, f"{ctx.name}.{name}")
    begun = time.perf_counter()
    checkpoint = _abs(start["checkpoint"], ctx.stage_dir)
    topts = AgentTrainOptions.model_validate(opts.arm_train_options(name, checkpoint, seed),
                                             context={"domains": ctx.domains})
    result = run_agent_train(actx, topts)
    wall: dict[str, Any] = {"train": round(time.perf_counter() - begun, 3)}
    trained = str(result.outputs["checkpoint"])
    after = _evaluate(ctx, opts, folder / "eval_real", trained, "real")
    wall["eval_real"] = after["wall_s"]
    s = result.summary
    budget: dict[str, Any] = {"steps": s["steps"], "updates": s["updates"], "group_size": opts.budget.group_size,
                              "tasks_per_step": opts.budget.tasks_per_step, "max_turns": opts.budget.max_turns,
                              "seed": seed, "bc_steps": start["bc"].get("bc_steps", 0), "episodes": s["episodes"],
                              "env_steps": s["env_steps"]}
    env = arm.train_env
    if env == "real":
        budget.update(real_env_steps=s["env_steps"], sim_env_steps=0)
    elif env == "sim":
        budget.update(real_env_steps=0, sim_env_steps=s["env_steps"])
    else:  # hybrid: as the router counted them (the checker's probes and catch-up replays included)
        stats = _last_env_stats(folder / "metrics.jsonl")
        budget.update(real_env_steps=stats.get("real_steps", 0) + stats.get("replayed_steps", 0),
                      sim_env_steps=stats.get("sim_steps", 0))
    out: dict[str, Any] = {"kind": arm.kind, "env": env, "description": arm.description, "budget": budget,
                           "train": {k: v for k, v in s.items() if not isinstance(v, (dict, list))},
                           "after": after, "checkpoint": _rel(trained, ctx.stage_dir),
                           "curves": learning_curves(folder / "train" / "metrics.jsonl"),
                           "sim_eval": None, "gap": None, "wm2real": None}
    if env == "sim":
        sim_eval = _evaluate(ctx, opts, folder / "eval_sim", trained, "sim")
        wall["eval_sim"] = sim_eval["wall_s"]
        episodes = [json.loads(x) for x in (folder / "eval_sim" / "episodes.jsonl").read_text(encoding="utf-8")
                    .splitlines() if x.strip()]
        real = real_envs(domain, ctx.project.domain_settings(opts.domain))
        try:
            replay = replay_in_real(domain, real, heldout, episodes, limit=opts.wm2real_episodes,
                                    timeout_s=float(opts.train.get("episode_timeout_s", 600.0)))
        finally:
            real.close()
        (folder / "wm2real.json").write_text(json.dumps(replay.to_dict(), indent=2) + "\n", encoding="utf-8")
        wall["wm2real"] = round(replay.wall_s, 3)
        out.update(sim_eval=sim_eval, gap=sim_eval["success_rate"] - after["success_rate"], wm2real=replay.summary())
    wall["total"] = round(time.perf_counter() - begun, 3)
    out["wall_s"] = wall
    return out


def _last_env_stats(metrics: Path) -> dict[str, Any]:
    last: dict[str, Any] = {}
    if metrics.is_file():
        for line in metrics.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("env_stats"), dict):
                last = rec["env_stats"]
    return last


def _invariant_problems(opts: CompareOptions, data: dict[str, Any], per_eval: int, report: Path) -> list[str]:
    from awctl.agent.compare import budget_problems, non_finite

    problems = []
    for key, st in data["starts"].items():
        if st["before"]["episodes"] != per_eval:
            problems.append(f"start {key}: evaluated {st['before']['episodes']} of {per_eval} held-out episodes")
    for name, arm in data["arms"].items():
        if arm["budget"]["steps"] != opts.budget.steps:
            problems.append(f"arm {name}: trained {arm['budget']['steps']} of {opts.budget.steps} steps")
        if not arm["budget"]["env_steps"]:
            problems.append(f"arm {name}: its environment answered no step in training (every action was "
                            "invalid or a stop): the arm compared nothing; warm-start the policy with bc")
        if arm["after"]["episodes"] != per_eval:
            problems.append(f"arm {name}: evaluated {arm['after']['episodes']} of {per_eval} held-out episodes")
        if arm["env"] == "sim" and not (arm.get("sim_eval") and arm.get("wm2real")):
            problems.append(f"arm {name}: trained in the simulator but has no sim evaluation or WM2Real")
    given = {n: {k: a["budget"][k] for k in ("steps", "group_size", "tasks_per_step", "max_turns", "seed", "bc_steps")}
             for n, a in data["arms"].items()}
    problems += [f"budgets: {p}" for p in budget_problems(given) if not p.startswith("episodes")]
    problems += [f"not finite: {p}" for p in non_finite(data)]
    if not report.is_file() or not report.read_text(encoding="utf-8").strip():
        problems.append(f"report not written: {report}")
    return problems
