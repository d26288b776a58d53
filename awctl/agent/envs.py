"""Where an agent's episodes run: real environment pools, simulators over one batched world model, hybrids.

Every factory has the :class:`EnvFactory` shape the rollout engine takes (``kind``, ``make(task, slot)``,
``close()``) plus ``set_step(step)`` (the training step the next episodes are made for), ``tasks_for(step,
tasks)`` (the tasks a curriculum admits at that step) and ``stats()`` (JSON-ready counters).

* :func:`real_envs` — a fresh ``domain.real_env(settings)`` per episode (sandbox, MCP server, browser page),
  optionally at most ``max_live`` at once; whatever is still open at :meth:`RealEnvPool.close` is closed.
* :func:`sim_envs` — a :class:`~awctl.sim.env.SimEnv` per episode, all over **one** world-model backend
  (a local model, a vLLM engine, or any OpenAI-compatible endpoint through the ``openai`` backend). The
  backend is wrapped in :class:`SharedBackend`: episodes step from many threads at once, and their
  requests are gathered into shared backend calls by :class:`awctl.sim.batcher.BatchingBackend` (the
  batcher ``awctl simulate serve`` uses), running on an event loop of its own.
* :func:`hybrid_envs` — :class:`HybridEnv`: actions whose family (``domain.action_codec.family``) is one of
  the fidelity audit's blind spots (:func:`blind_spots_from_audit`) go to a real environment, which is
  started on the first such action and first catches up by replaying the episode's earlier actions it has
  not seen; every other action goes to the simulator, whose history takes the real observation when one
  was used.

**The controllable simulator** is :class:`SimSchedule`: per training step, which of the domain's
perturbations are injected (name, params, ``every``/``match`` within an episode, ``rate`` per due
action, ``episodes`` = share of episodes that carry it, ``start``/``stop`` steps) and which tasks are
drawn (a curriculum of stages by step: suites, tags, reference-solution length). A SimEnv made by the
factory follows the schedule of the step it was made for; its perturbation is drawn deterministically
from the schedule's seed, the step and the episode's seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from awctl.backend import Backend, ChatRequest, Completion
from awctl.domain import Domain, Task
from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, EnvironmentUnavailable, InputError
from awctl.sim.batcher import BatchingBackend
from awctl.sim.env import SimEnv
from awctl.sim.perturb import PerturbationSchedule, find_perturbation
from awctl.trajectory import Turn


class EnvFactory(Protocol):
    """Makes one environment session per episode. ``kind``: ``real`` | ``sim`` | ``hybrid``."""

    kind: str

    def make(self, task: Task, slot: int) -> Environment: ...

    def close(self) -> None: ...


def action_family(domain: Domain, action: str) -> str:
    """The action's family as the fidelity audit groups it (``unparsable`` when the codec fails on it)."""
    try:
        return str(domain.action_codec.family(action)) or "action"
    except Exception:  # an action the codec cannot read still belongs somewhere (as in the audit)
        return "unparsable"


def blind_spots_from_audit(path: str | Path, *, count: int = 5, max_score: float | None = None,
                           min_turns: int = 1) -> set[str]:
    """The blind-spot action families of a fidelity audit (``awctl audit``'s ``audit.json``, or the folder
    holding it): its ``count`` worst families that are imperfect (score below 100 or exact match below
    1), as ``report.md`` lists them; ``max_score`` keeps only families scoring below it and ``min_turns``
    those seen at least that often."""
    path = Path(path)
    if path.is_dir():
        path = path / "audit.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the audit ({exc.strerror or exc})",
                         hint="pass the audit stage's output folder or its audit.json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})",
                         hint="pass the audit.json that `awctl audit` wrote") from None
    families = data.get("families") if isinstance(data, dict) else None
    if not isinstance(families, list):
        raise InputError(f"{path}: no 'families' list (is this an audit.json?)",
                         hint="pass the audit.json that `awctl audit` wrote")
    picked: list[str] = []
    for i, fam in enumerate(families):  # the audit writes them worst first
        if not isinstance(fam, dict) or "family" not in fam:
            raise InputError(f"{path}: families[{i}] has no 'family' field",
                             hint="pass the audit.json that `awctl audit` wrote")
        score, exact = float(fam.get("score", 100.0)), float(fam.get("exact_rate", 1.0))
        if score >= 100 and exact >= 1:
            continue
        if (max_score is not None and score >= max_score) or int(fam.get("turns", 0)) < min_turns:
            continue
        picked.append(str(fam["family"]))
    return set(picked[:count])


# ── the controllable simulator ───────────────────────────────────────────────────────────────────────


def _fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InputError(f"{where} must be a table, got {type(data).__name__}")
    known = {f for f in cls.__dataclass_fields__}  # type: ignore[attr-defined]
    unknown = sorted(set(data) - known)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}", hint=f"allowed: {', '.join(sorted(known))}")
    return dict(data)


@dataclass
class PerturbationRule:
    """One of the domain's perturbations (``name`` with template ``params``) and when it is injected:

    * ``start`` <= training step < ``stop`` (``None``: to the end);
    * in a share ``episodes`` of the episodes made for such a step (drawn per episode);
    * within such an episode, on every ``every``-th action matching ``match`` (a regex; ``None``: every
      action), each of those with probability ``rate``.
    """

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    every: int = 1
    match: str | None = None
    rate: float = 1.0
    episodes: float = 1.0
    start: int = 0
    stop: int | None = None

    def __post_init__(self) -> None:
        if self.every < 1:
            raise InputError(f"perturbation {self.name!r}: every must be at least 1, got {self.every}")
        for key in ("rate", "episodes"):
            value = getattr(self, key)
            if not 0.0 <= float(value) <= 1.0:
                raise InputError(f"perturbation {self.name!r}: {key} must be within 0..1, got {value}")
        if self.start < 0 or (self.stop is not None and self.stop <= self.start):
            raise InputError(f"perturbation {self.name!r}: needs 0 <= start < stop, got {self.start}..{self.stop}")

    def active(self, step: int) -> bool:
        return self.start <= step and (self.stop is None or step < self.stop)


@dataclass
class CurriculumStage:
    """The tasks drawn from training step ``start`` on (until the next stage): those of ``suites`` (any),
    carrying one of ``tags``, whose reference solution has ``min_solution``..``max_solution`` actions.
    ``None`` puts no condition."""

    start: int = 0
    suites: list[str] | None = None
    tags: list[str] | None = None
    min_solution: int | None = None
    max_solution: int | None = None

    def admits(self, task: Task) -> bool:
        n = len(task.solution)
        return ((self.suites is None or task.suite in self.suites)
                and (self.tags is None or bool(set(self.tags) & set(task.tags)))
                and (self.min_solution is None or n >= self.min_solution)
                and (self.max_solution is None or n <= self.max_solution))


class RatePerturbationSchedule(PerturbationSchedule):
    """:class:`~awctl.sim.perturb.PerturbationSchedule` whose due steps are perturbed with probability
    ``rate`` (a seeded generator, so an episode's perturbations are reproducible)."""

    def __init__(self, rule: PerturbationRule, domain: Domain, seed: int) -> None:
        super().__init__(find_perturbation(domain, rule.name), dict(rule.params), rule.every, rule.match)
        self.rate = float(rule.rate)
        self.rng = random.Random(seed)

    def advance(self, action: str) -> bool:
        due = super().advance(action)
        # Drawn for every due step even at rate 1, so the sequence depends only on the seed and the count.
        return due and self.rng.random() < self.rate

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self.rate}


@dataclass
class SimSchedule:
    """The controllable simulator's plan (see the module docstring). Built from a recipe table::

        schedule = { seed = 0,
          perturbations = [ { name = "command_not_found", episodes = 0.5, every = 3, start = 10 } ],
          curriculum = [ { start = 0, max_solution = 2 }, { start = 20, tags = ["hard"] } ] }

    The shares ``episodes`` of the rules active at one step must add up to at most 1: each episode draws
    one of them (or none) in that proportion."""

    perturbations: list[PerturbationRule] = field(default_factory=list)
    curriculum: list[CurriculumStage] = field(default_factory=list)
    seed: int = 0

    def __post_init__(self) -> None:
        self.perturbations = [
            p if isinstance(p, PerturbationRule)
            else PerturbationRule(**_fields(PerturbationRule, p, f"schedule.perturbations[{i}]"))
            for i, p in enumerate(self.perturbations or [])
        ]
        self.curriculum = sorted(
            (c if isinstance(c, CurriculumStage)
             else CurriculumStage(**_fields(CurriculumStage, c, f"schedule.curriculum[{i}]"))
             for i, c in enumerate(self.curriculum or [])),
            key=lambda c: c.start,
        )
        starts = [c.start for c in self.curriculum]
        if len(set(starts)) != len(starts):
            raise InputError(f"schedule.curriculum: two stages start at the same step ({starts})")
        bounds = sorted({0, *(p.start for p in self.perturbations), *(p.stop for p in self.perturbations if p.stop)})
        for step in bounds:
            total = sum(p.episodes for p in self.perturbations if p.active(step))
            if total > 1.0 + 1e-9:
                raise InputError(f"schedule.perturbations: the episode shares active at step {step} add up to "
                                 f"{total:g} > 1", hint="lower some rule's episodes, or give the rules disjoint steps")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SimSchedule:
        return cls(**_fields(cls, data or {}, "schedule"))

    def validate(self, domain: Domain) -> None:
        """Raise naming the rule when a perturbation is not the domain's or its template misses a param."""
        for i, p in enumerate(self.perturbations):
            try:
                PerturbationSchedule.for_domain(domain, p.name, p.params, p.every, p.match)
            except AwctlError as exc:
                raise InputError(f"schedule.perturbations[{i}]: {exc.message}", hint=exc.hint) from None

    def stage(self, step: int) -> CurriculumStage | None:
        """The curriculum stage of ``step`` (the last one starting at or before it)."""
        now = [c for c in self.curriculum if c.start <= step]
        return now[-1] if now else None

    def tasks_for(self, step: int, tasks: Iterable[Task]) -> list[Task]:
        """The tasks the curriculum admits at ``step`` (all of them without a curriculum)."""
        tasks = list(tasks)
        stage = self.stage(step)
        if stage is None:
            return tasks
        kept = [t for t in tasks if stage.admits(t)]
        if not kept:
            raise InputError(f"schedule.curriculum: the stage from step {stage.start} admits none of the "
                             f"{len(tasks)} tasks ({asdict(stage)})", hint="widen the stage or add tasks")
        return kept

    def draw(self, step: int, episode_seed: int | None) -> PerturbationRule | None:
        """The perturbation of one episode made for ``step`` (``None``: unperturbed); a pure function of
        the schedule's seed, the step and the episode's seed."""
        active = [p for p in self.perturbations if p.active(step)]
        if not active:
            return None
        u = random.Random(f"{self.seed}:{step}:{episode_seed}:episode").random()
        edge = 0.0
        for rule in active:
            edge += rule.episodes
            if u < edge:
                return rule
        return None

    def for_step(self, step: int) -> dict[str, Any]:
        """What applies at ``step``: ``{"step", "perturbations": [active rules], "difficulty": stage or None}``."""
        stage = self.stage(step)
        return {"step": step, "perturbations": [asdict(p) for p in self.perturbations if p.active(step)],
                "difficulty": asdict(stage) if stage is not None else None}


# ── one world model for many episodes ─────────────────────────────────────────────────────────────────


class SharedBackend(Backend):
    """One backend shared by every episode of a pool, safe to call from any number of threads (and event
    loops) at once. Concurrent requests are gathered by a :class:`~awctl.sim.batcher.BatchingBackend`
    (``max_batch``, ``window_ms``) that runs on an event loop of its own, so steps of different episodes
    share ``inner`` calls. A backend that already batches remotely (``batched_remotely = True``, e.g. a Ray
    world-model actor) is called directly. ``close`` stops the loop; ``inner`` belongs to the caller."""

    def __init__(self, inner: Backend, *, max_batch: int = 64, window_ms: float = 10.0) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "") or type(inner).__name__
        self.max_batch, self.window_ms = max_batch, window_ms
        self.direct = bool(getattr(inner, "batched_remotely", False))
        self.batching: BatchingBackend | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "model", "")

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="awctl-world-model", daemon=True)
                self._thread.start()
                self.batching = BatchingBackend(self.inner, max_batch=self.max_batch, window_ms=self.window_ms)
                self._loop = loop
            return self._loop

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        if self.direct:
            return self.inner.generate(requests)
        loop = self._running_loop()
        assert self.batching is not None
        return asyncio.run_coroutine_threadsafe(self.batching.agenerate(requests), loop).result()

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        if self.direct:
            return await self.inner.agenerate(requests)
        loop = self._running_loop()
        assert self.batching is not None
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.batching.agenerate(requests), loop))

    def stats(self) -> dict[str, Any]:
        """Batching counters: ``batches``, ``requests``, ``largest_batch``, ``mean_batch``, ``errors``."""
        if self.batching is not None:
            return self.batching.stats.to_dict()
        remote = getattr(self.inner, "stats", None)
        return remote() if callable(remote) else {}

    def close(self) -> None:
        with self._lock:
            loop, thread, self._loop = self._loop, self._thread, None
        if loop is None:
            return
        if self.batching is not None:  # the batching task ends on its loop before the loop stops
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.batching.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=30)
        if not loop.is_running():
            loop.close()


_SIMENV_OPTIONS = set(inspect.signature(SimEnv.__init__).parameters) - {"self", "domain", "backend", "task"}


class ScheduledSimEnv(SimEnv):
    """A SimEnv whose perturbation is drawn, at each ``reset``, from its factory's schedule for the
    training step it was made for (``sim_step``)."""

    def __init__(self, domain: Domain, backend: Backend, *, schedule: SimSchedule | None, sim_step: int,
                 counters: _SimCounters, **options: Any) -> None:
        super().__init__(domain, backend, **options)
        self.sim_schedule, self.sim_step, self._counters = schedule, sim_step, counters
        self.rule: PerturbationRule | None = None

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        if self.sim_schedule is not None:
            episode_seed = seed if seed is not None else self.seed
            self.rule = self.sim_schedule.draw(self.sim_step, episode_seed)
            steps_seed = random.Random(f"{self.sim_schedule.seed}:{self.sim_step}:{episode_seed}:steps").getrandbits(32)
            self.schedule = (None if self.rule is None
                             else RatePerturbationSchedule(self.rule, self.sim_domain, steps_seed))
        self._counters.episode(self.rule.name if self.rule else None)
        return super().reset(task, seed)

    def step(self, action: str) -> StepResult:
        result = super().step(action)
        self._counters.step(result.info.get("perturbation"))
        return result

    async def astep(self, action: str) -> StepResult:
        result = await super().astep(action)
        self._counters.step(result.info.get("perturbation"))
        return result


class _SimCounters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.episodes = 0
        self.steps = 0
        self.perturbed_episodes: dict[str, int] = {}
        self.perturbed_steps: dict[str, int] = {}

    def episode(self, rule: str | None) -> None:
        with self.lock:
            self.episodes += 1
            if rule:
                self.perturbed_episodes[rule] = self.perturbed_episodes.get(rule, 0) + 1

    def step(self, perturbation: Any) -> None:
        with self.lock:
            self.steps += 1
            if isinstance(perturbation, dict):
                name = str(perturbation.get("name"))
                self.perturbed_steps[name] = self.perturbed_steps.get(name, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        with self.lock:
            return {"episodes": self.episodes, "steps": self.steps,
                    "perturbed_episodes": dict(self.perturbed_episodes), "perturbed_steps": dict(self.perturbed_steps)}


class SimEnvFactory:
    """:class:`ScheduledSimEnv` sessions over one :class:`SharedBackend` (see :func:`sim_envs`)."""

    kind = "sim"

    def __init__(self, domain: Domain, backend: Backend, *, style: str = "agentworldbench",
                 schedule: SimSchedule | None = None, sim_options: dict[str, Any] | None = None,
                 max_batch: int = 64, window_ms: float = 10.0) -> None:
        options = dict(sim_options or {})
        unknown = sorted(set(options) - _SIMENV_OPTIONS)
        if unknown:
            raise InputError(f"unknown simulator option(s) {', '.join(unknown)}",
                             hint=f"SimEnv takes: {', '.join(sorted(_SIMENV_OPTIONS - {'style'}))}")
        if schedule is not None and options.get("perturbation"):
            raise InputError("give the simulator a fixed perturbation or a schedule, not both",
                             hint="move the perturbation into schedule.perturbations")
        if schedule is not None:
            schedule.validate(domain)
        options.setdefault("style", style)
        self.domain, self.backend, self.schedule, self.options = domain, backend, schedule, options
        self.max_batch, self.window_ms = max_batch, window_ms
        self.shared = SharedBackend(backend, max_batch=max_batch, window_ms=window_ms)
        self.step = 0
        self.counters = _SimCounters()

    def set_step(self, step: int) -> None:
        """Episodes made from now on follow the schedule of training step ``step``."""
        self.step = int(step)

    def tasks_for(self, step: int, tasks: Iterable[Task]) -> list[Task]:
        """The tasks the schedule's curriculum admits at ``step``."""
        return self.schedule.tasks_for(step, tasks) if self.schedule is not None else list(tasks)

    def make(self, task: Task, slot: int) -> ScheduledSimEnv:
        return ScheduledSimEnv(self.domain, self.shared, task=task, schedule=self.schedule, sim_step=self.step,
                               counters=self.counters, **self.options)

    def stats(self) -> dict[str, Any]:
        return {**self.counters.to_dict(), "step": self.step, "backend": self.shared.stats(),
                "schedule": self.schedule.for_step(self.step) if self.schedule is not None else None}

    def close(self) -> None:
        """Stop the shared batching loop (the backend itself belongs to the caller). Safe to call twice."""
        self.shared.close()

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to another process (a Ray environment actor): the batching loop is rebuilt there.
        state = dict(self.__dict__)
        state["shared"] = None
        state["counters"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.shared = SharedBackend(self.backend, max_batch=self.max_batch, window_ms=self.window_ms)
        self.counters = _SimCounters()


def sim_envs(domain: Domain, backend: Backend, *, style: str = "agentworldbench",
             schedule: SimSchedule | dict[str, Any] | None = None, sim_options: dict[str, Any] | None = None,
             max_batch: int = 64, window_ms: float = 10.0) -> SimEnvFactory:
    """SimEnv sessions of ``domain`` sharing one batched world-model ``backend`` (any awctl backend:
    ``transformers``, ``vllm``, ``openai`` against a vLLM server or any OpenAI-compatible endpoint).
    ``style`` is the chat layout the world model was trained in; ``sim_options`` are SimEnv options
    (``max_tokens``, ``temperature``, ``resample``, ``max_history_turns``...); ``schedule`` makes it a
    controllable simulator (:class:`SimSchedule`, or its table)."""
    if isinstance(schedule, dict):
        schedule = SimSchedule.from_dict(schedule)
    return SimEnvFactory(domain, backend, style=style, schedule=schedule, sim_options=sim_options,
                         max_batch=max_batch, window_ms=window_ms)


# ── real environments ────────────────────────────────────────────────────────────────────────────────


class PooledEnv(Environment):
    """A real environment handed out by a :class:`RealEnvPool`; closing it gives its place back. Every
    other attribute is the inner environment's (``env.shell`` of a terminal session, ...)."""

    def __init__(self, pool: RealEnvPool, inner: Environment) -> None:
        self._pool, self.inner = pool, inner
        self.domain = inner.domain
        self._closed = False

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        return self.inner.reset(task, seed)

    def step(self, action: str) -> StepResult:
        return self.inner.step(action)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.inner.close()
        finally:
            self._pool._release(self)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class RealEnvPool:
    """Real environments of ``domain`` (``domain.real_env(settings)``), a fresh one per episode, at most
    ``max_live`` open at once (``make`` waits for a place; ``None``: no cap)."""

    kind = "real"

    def __init__(self, domain: Domain, settings: dict[str, Any] | None = None, *, max_live: int | None = None,
                 check: bool = True) -> None:
        if check:
            ok, why = domain.real_env_status()
            if not ok:
                raise EnvironmentUnavailable(f"domain {domain.name!r} has no usable real environment here: {why}",
                                             hint="`awctl doctor` lists what each real environment needs")
        if max_live is not None and max_live < 1:
            raise AwctlError(f"max_live must be at least 1, got {max_live}")
        self.domain, self.settings, self.max_live = domain, settings, max_live
        self._sem = threading.BoundedSemaphore(max_live) if max_live else None
        self._live: set[PooledEnv] = set()
        self._lock = threading.Lock()
        self.made = 0
        self._closed = False

    def set_step(self, step: int) -> None:
        """Nothing to follow: a real environment cannot be scheduled."""

    def tasks_for(self, step: int, tasks: Iterable[Task]) -> list[Task]:
        return list(tasks)

    def make(self, task: Task, slot: int) -> PooledEnv:
        if self._closed:
            raise AwctlError("this real environment pool was closed")
        if self._sem is not None:
            self._sem.acquire()
        try:
            inner = self.domain.real_env(self.settings)
            if inner is None:
                raise AwctlError(f"domain {self.domain.name!r} returned no real environment")
        except BaseException:
            if self._sem is not None:
                self._sem.release()
            raise
        env = PooledEnv(self, inner)
        with self._lock:
            self._live.add(env)
            self.made += 1
        return env

    def _release(self, env: PooledEnv) -> None:
        with self._lock:
            if env not in self._live:
                return
            self._live.discard(env)
        if self._sem is not None:
            self._sem.release()

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to another process (a Ray environment actor): a pool of its own there, empty.
        state = {k: v for k, v in self.__dict__.items() if k not in ("_sem", "_live", "_lock")}
        state["made"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sem = threading.BoundedSemaphore(self.max_live) if self.max_live else None
        self._live, self._lock = set(), threading.Lock()

    @property
    def live(self) -> int:
        with self._lock:
            return len(self._live)

    def stats(self) -> dict[str, Any]:
        return {"made": self.made, "live": self.live, "max_live": self.max_live}

    def close(self) -> None:
        """Close every environment still open (an abandoned episode's, say). Safe to call twice."""
        self._closed = True
        with self._lock:
            left = list(self._live)
        for env in left:
            with contextlib.suppress(Exception):
                env.close()


def real_envs(domain: Domain, settings: dict[str, Any] | None = None, *, max_live: int | None = None) -> RealEnvPool:
    """Real environments of ``domain`` with the project's ``[domains.<name>]`` ``settings`` (see
    :class:`RealEnvPool`); raises :class:`~awctl.errors.EnvironmentUnavailable` when this machine has none."""
    return RealEnvPool(domain, settings, max_live=max_live)


# ── hybrid ───────────────────────────────────────────────────────────────────────────────────────────


class HybridEnv(Environment):
    """One episode split between a simulator and a real environment (see the module docstring).

    ``step`` info adds ``routed`` (``real`` | ``sim``), ``family`` and, for a real step, ``replayed``
    (earlier actions the real environment caught up on first). :meth:`catch_up` hands out the real
    environment with every action of the episode applied (for a real checker, or WM2Real)."""

    def __init__(self, domain: Domain, sim: SimEnv, make_real: Callable[[], Environment],
                 blind_families: set[str]) -> None:
        self.domain = domain.name
        self.sim_domain, self.sim, self._make_real = domain, sim, make_real
        self.blind = set(blind_families)
        self.real: Environment | None = None
        self.actions: list[str] = []
        self.real_seen = 0  # how many of self.actions the real environment has been given
        self.routed = {"real": 0, "sim": 0, "replayed": 0}
        self._task: Task | None = None
        self._seed: int | None = None

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self._close_real()
        self._task, self._seed = task, seed
        self.actions, self.real_seen = [], 0
        return self.sim.reset(task, seed)

    def catch_up(self) -> Environment:
        """The real environment, started if needed, after replaying every action it has not seen."""
        if self.real is None:
            real = self._make_real()
            try:
                real.reset(self._task, seed=self._seed)
            except BaseException:
                with contextlib.suppress(Exception):
                    real.close()
                raise
            self.real = real
        while self.real_seen < len(self.actions):
            self.real.step(self.actions[self.real_seen])
            self.real_seen += 1
            self.routed["replayed"] += 1
        return self.real

    def step(self, action: str) -> StepResult:
        family = action_family(self.sim_domain, action)
        if family in self.blind:
            before = self.routed["replayed"]
            real = self.catch_up()
            result = real.step(action)
            self.real_seen += 1
            # The simulator goes on from what really happened.
            self.sim.history.append(Turn(action=action, observation=result.observation))
            self.routed["real"] += 1
            info = {**result.info, "routed": "real", "family": family, "replayed": self.routed["replayed"] - before}
            done = result.done or (self.sim.max_turns is not None and len(self.sim.history) >= self.sim.max_turns)
            result = StepResult(result.observation, done, info)
        else:
            result = self.sim.step(action)
            self.routed["sim"] += 1
            result.info.update({"routed": "sim", "family": family})
        self.actions.append(action)
        return result

    def _close_real(self) -> None:
        real, self.real = self.real, None
        if real is not None:
            real.close()

    def close(self) -> None:
        try:
            self.sim.close()
        finally:
            self._close_real()


class HybridEnvFactory:
    """:class:`HybridEnv` sessions over a simulator factory and a real one (see :func:`hybrid_envs`)."""

    kind = "hybrid"

    def __init__(self, domain: Domain, real: Any, sim: Any, blind_families: set[str]) -> None:
        families = {str(f) for f in blind_families}
        self.domain, self.real, self.sim, self.blind = domain, real, sim, families
        self._lock = threading.Lock()
        self.routed = {"real_steps": 0, "sim_steps": 0, "replayed_steps": 0, "episodes": 0, "episodes_with_real": 0}

    def set_step(self, step: int) -> None:
        for f in (self.sim, self.real):
            set_step = getattr(f, "set_step", None)
            if set_step is not None:
                set_step(step)

    def tasks_for(self, step: int, tasks: Iterable[Task]) -> list[Task]:
        tasks_for = getattr(self.sim, "tasks_for", None)
        return tasks_for(step, tasks) if tasks_for is not None else list(tasks)

    def make(self, task: Task, slot: int) -> HybridEnv:
        sim = self.sim.make(task, slot)
        env = _CountedHybridEnv(self, self.domain, sim, lambda: self.real.make(task, slot), self.blind)
        with self._lock:
            self.routed["episodes"] += 1
        return env

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _add(self, env: HybridEnv) -> None:
        with self._lock:
            for k in ("real", "sim", "replayed"):
                self.routed[f"{k}_steps"] += env.routed[k]
            if env.routed["real"] or env.routed["replayed"]:
                self.routed["episodes_with_real"] += 1

    def stats(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {"blind_spots": sorted(self.blind), **self.routed}
        for name, f in (("sim", self.sim), ("real", self.real)):
            stats = getattr(f, "stats", None)
            if stats is not None:
                out[name] = stats()
        return out

    def close(self) -> None:
        for f in (self.sim, self.real):
            with contextlib.suppress(Exception):
                f.close()


class _CountedHybridEnv(HybridEnv):
    def __init__(self, factory: HybridEnvFactory, *args: Any) -> None:
        super().__init__(*args)
        self._factory = factory
        self._counted = False

    def close(self) -> None:
        if not self._counted:
            self._counted = True
            self._factory._add(self)
        super().close()


def hybrid_envs(domain: Domain, real: Any, sim: Any, blind_families: Iterable[str]) -> HybridEnvFactory:
    """Episodes whose blind-spot actions (families in ``blind_families``, e.g. from
    :func:`blind_spots_from_audit`) run in ``real``'s environments and the rest in ``sim``'s."""
    return HybridEnvFactory(domain, real, sim, set(blind_families))
