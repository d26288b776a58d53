"""The rollout engine: many agent episodes at once against any :class:`~awctl.env.Environment`.

:meth:`RolloutEngine.run` plays ``group_size`` episodes of each task with at most ``concurrency`` alive at
a time. The policy is batched: every episode waiting for an action joins one sampling call. Environment
calls (make + reset, step, the reward's checker, close) run in a worker per episode (a daemon thread by
default), so environments step while the policy samples, and a call that never returns cannot hold up
the run or the interpreter's exit.

Limits, each recorded in the episode's ``status``:

* ``max_turns`` actions (default: the task's own ``max_turns``); an empty action ends the episode (``done``);
* ``max_context_tokens`` (and the policy's own ``context_limit``, its position embeddings): an episode
  whose next prompt would not leave room for a whole action ends (``max_tokens``);
* ``step_timeout_s`` per environment call (``reset_timeout_s`` for make + reset, ``check_timeout_s`` for
  the reward) and ``episode_timeout_s`` per episode: past it the episode ends as ``timeout``, its
  environment is closed from another thread and abandoned, and the run goes on;
* an environment or checker that raises ends its episode as ``crashed`` with the error; the others go on.

An action the domain's action codec cannot parse never reaches the environment: the codec's error message
is the observation (as a real harness answers) and the episode counts it in ``invalid_actions``.

Wall time is split: each episode's ``policy_s`` is the time of the sampling calls it waited on and
``env_s`` the time of its environment calls; :attr:`RolloutEngine.stats` has the run's totals. ``run``
returns once the environments of its finished episodes are closed (a close that hangs is left behind
after ``step_timeout_s``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from awctl.agent.episode import AgentTurn, Episode
from awctl.agent.rewards import RewardFn, RewardOutcome, checker_reward
from awctl.domain import Task
from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, CodecError


class EnvFactory(Protocol):
    """Makes one environment session per episode. ``kind``: ``real`` | ``sim`` | ``hybrid``
    (:mod:`awctl.agent.envs` builds them: real pools, simulators over one world model, hybrids)."""

    kind: str

    def make(self, task: Task, slot: int) -> Environment: ...

    def close(self) -> None: ...


# ── workers ──────────────────────────────────────────────────────────────────────────────────────────


class ThreadWorker:
    """Runs one episode's environment calls in order, in its own daemon thread."""

    def __init__(self, name: str) -> None:
        import queue

        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # reported to the engine through the future
                fut.set_exception(exc)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        self._queue.put((fut, fn, args))
        return fut

    def stop(self) -> None:
        """Let the thread end after the calls already queued (it may be stuck in one: it is a daemon)."""
        self._queue.put(None)


class ThreadExecutor:
    """The default executor: a daemon :class:`ThreadWorker` per episode."""

    def worker(self, name: str) -> ThreadWorker:
        return ThreadWorker(name)


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[bool, Any, float]:
    """``(ok, value or exception, seconds)``: the call's own duration, measured where it runs."""
    t0 = time.perf_counter()
    try:
        return True, fn(*args), time.perf_counter() - t0
    except Exception as exc:  # handed to the engine, which records the episode as crashed
        return False, exc, time.perf_counter() - t0


def _close_quietly(env: Environment | None) -> None:
    if env is None:
        return
    # An environment that fails to close must not end the run.
    with contextlib.suppress(Exception):
        env.close()


def abandon(env: Environment | None) -> None:
    """Close ``env`` from a new daemon thread without waiting (its own worker may be stuck in a call)."""
    if env is not None:
        threading.Thread(target=_close_quietly, args=(env,), name="awctl-abandon", daemon=True).start()


# ── the engine ───────────────────────────────────────────────────────────────────────────────────────


@dataclass
class RolloutStats:
    """Totals of one :meth:`RolloutEngine.run`: ``policy_s`` is the wall time of the sampling calls,
    ``env_s`` the summed time of all environment calls (they overlap each other and the policy)."""

    episodes: int = 0
    steps: int = 0
    wall_s: float = 0.0
    policy_s: float = 0.0
    env_s: float = 0.0
    sampling_calls: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0


@dataclass
class _Live:
    """One episode in flight."""

    episode: Episode
    task: Task
    slot: int
    worker: Any
    started: float
    max_turns: int
    env: Environment | None = None
    state: str = "reset"  # reset | action | step | check
    future: Future[Any] | None = None
    deadline: float = 0.0
    submitted: float = 0.0
    pending_turn: AgentTurn | None = None


class RolloutEngine:
    """See the module docstring. ``reward``: called in the episode's environment after it ends normally
    (default: the task's checker, :func:`awctl.agent.rewards.checker_reward`); ``on_episode`` sees each
    finished episode."""

    def __init__(self, policy: Any, env_factory: EnvFactory, *, max_turns: int | None = None,
                 step_timeout_s: float = 60.0, episode_timeout_s: float = 600.0, concurrency: int = 4,
                 executor: Any = None, reward: RewardFn | None = None, reset_timeout_s: float | None = None,
                 check_timeout_s: float | None = None, max_context_tokens: int | None = None,
                 on_episode: Callable[[Episode], None] | None = None) -> None:
        if concurrency < 1:
            raise AwctlError(f"concurrency must be at least 1, got {concurrency}")
        self.policy, self.factory = policy, env_factory
        self.max_turns = max_turns
        self.step_timeout_s, self.episode_timeout_s = step_timeout_s, episode_timeout_s
        self.reset_timeout_s = reset_timeout_s if reset_timeout_s is not None else max(step_timeout_s, 120.0)
        self.check_timeout_s = check_timeout_s if check_timeout_s is not None else max(step_timeout_s, 120.0)
        self.concurrency = concurrency
        self.executor = executor or ThreadExecutor()
        if reward is None:
            reward = checker_reward(getattr(env_factory, "kind", "real"))
        self.reward = reward
        self.max_context_tokens = max_context_tokens
        self.on_episode = on_episode
        self.stats = RolloutStats()

    def run(self, tasks: list[Task], group_size: int = 1, seed: int = 0) -> list[Episode]:
        """``group_size`` episodes of each task (task-major: group ``i`` is ``tasks[i]``), in that order.
        Episode ``j`` samples with seed ``seed * 1_000_003 + j``. Never raises for an episode."""
        t0 = time.perf_counter()
        self.stats = RolloutStats()
        self._closing: list[Future[Any]] = []
        jobs = deque((i * group_size + g, i, task) for i, task in enumerate(tasks) for g in range(group_size))
        results: dict[int, Episode] = {}
        live: dict[int, _Live] = {}
        free = list(range(self.concurrency))[::-1]
        kind = getattr(self.factory, "kind", "")
        while jobs or live:
            while jobs and free:
                j, i, task = jobs.popleft()
                ep = Episode(task_id=task.id, domain=task.domain, group=i, seed=seed * 1_000_003 + j,
                             instruction=task.instruction, env_kind=kind)
                lv = _Live(ep, task, free.pop(), self.executor.worker(f"awctl-episode-{j}"), time.monotonic(),
                           self.max_turns or task.max_turns)
                live[j] = lv
                self._submit(lv, self._open, (lv,), self.reset_timeout_s)
            self._harvest(live, block=False)
            self._expire(live)
            waiting = [lv for lv in live.values() if lv.state == "action"]
            if waiting:
                self._act(waiting)
            else:
                self._harvest(live, block=True)
                self._expire(live)
            for j in [j for j, lv in live.items() if lv.state == "finished"]:
                lv = live.pop(j)
                free.append(lv.slot)
                results[j] = lv.episode
                self._count(lv.episode)
                if self.on_episode is not None:
                    self.on_episode(lv.episode)
        # Environments of finished episodes are closed before the run returns (their resources are free for
        # the next one); a close that hangs is left to its daemon thread after step_timeout_s.
        if self._closing:
            wait(self._closing, timeout=self.step_timeout_s)
        self.stats.wall_s = time.perf_counter() - t0
        return [results[j] for j in sorted(results)]

    # ── environment side ──
    def _open(self, lv: _Live) -> str:
        lv.env = self.factory.make(lv.task, lv.slot)
        return lv.env.reset(lv.task, seed=lv.episode.seed)

    def _submit(self, lv: _Live, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> None:
        lv.submitted = time.monotonic()
        lv.deadline = lv.submitted + timeout
        lv.future = lv.worker.submit(_timed, fn, *args)

    def _harvest(self, live: dict[int, _Live], block: bool) -> None:
        pending = {lv.future: lv for lv in live.values() if lv.future is not None}
        if not pending:
            return
        if block:
            now = time.monotonic()
            soonest = min(min(lv.deadline, lv.started + self.episode_timeout_s) for lv in pending.values())
            wait(list(pending), timeout=max(0.0, soonest - now) + 0.01, return_when=FIRST_COMPLETED)
        for fut, lv in pending.items():
            if fut.done():
                self._complete(lv, fut)

    def _complete(self, lv: _Live, fut: Future[Any]) -> None:
        ep = lv.episode
        lv.future = None
        exc = fut.exception()  # only a BaseException that is not an Exception gets here
        ok, value, elapsed = (False, exc, time.monotonic() - lv.submitted) if exc is not None else fut.result()
        ep.env_s += elapsed
        self.stats.env_s += elapsed
        what = {"reset": "reset", "step": "step", "check": "reward"}[lv.state]
        if not ok:
            self._finish(lv, "crashed", f"{what} raised {type(value).__name__}: {value}")
            return
        if lv.state == "reset":
            ep.initial_observation = str(value)
            ep.prompt_ids = self.policy.start(lv.task, ep.initial_observation)
            lv.state = "action"
            self._room(lv)
        elif lv.state == "step":
            self._stepped(lv, value, elapsed)
        else:
            out: RewardOutcome = value
            ep.reward, ep.success, ep.reward_source, ep.check_message = (float(out.reward), bool(out.success),
                                                                         out.source, out.message)
            self._close(lv)

    def _stepped(self, lv: _Live, result: StepResult, elapsed: float) -> None:
        ep, turn = lv.episode, lv.pending_turn
        assert turn is not None
        lv.pending_turn = None
        if not isinstance(result, StepResult):
            self._finish(lv, "crashed", f"step returned {type(result).__name__}, not a StepResult")
            return
        turn.env_s = elapsed
        turn.observation_text = result.observation
        turn.observation_ids = self.policy.observation_ids(result.observation, stopped=bool(turn.info.pop(
            "_stopped", True)))
        turn.info = {k: v for k, v in result.info.items() if isinstance(v, (str, int, float, bool))}
        ep.turns.append(turn)
        ep.steps += 1
        self.stats.steps += 1
        if result.done:
            self._check(lv, "done")
        elif len(ep.turns) >= lv.max_turns:
            self._check(lv, "max_turns")
        else:
            lv.state = "action"
            self._room(lv)

    def _room(self, lv: _Live) -> None:
        """End the episode (``max_tokens``) when its next prompt leaves no room for a whole action."""
        limits = [x for x in (self.max_context_tokens, getattr(self.policy, "context_limit", None)) if x]
        if not limits or lv.state != "action":
            return
        used = len(lv.episode.prompt_ids) + sum(len(t.action_ids) + len(t.observation_ids) for t in lv.episode.turns)
        if used + self.policy.max_action_tokens > min(limits):
            self._check(lv, "max_tokens")

    def _check(self, lv: _Live, status: str) -> None:
        lv.episode.status = status
        lv.state = "check"
        self._submit(lv, self.reward, (lv.env, lv.task, lv.episode), self.check_timeout_s)

    def _close(self, lv: _Live) -> None:
        self._closing.append(lv.worker.submit(_close_quietly, lv.env))
        lv.worker.stop()
        lv.state = "finished"
        lv.episode.wall_s = time.monotonic() - lv.started

    def _finish(self, lv: _Live, status: str, error: str) -> None:
        """End an episode that cannot go on (crashed, timed out): no reward, environment abandoned."""
        ep = lv.episode
        ep.status, ep.error = status, error
        ep.reward, ep.success = None, False
        if lv.pending_turn is not None:  # the action that hung or crashed is kept, without an observation
            lv.pending_turn.info.pop("_stopped", None)
            ep.turns.append(lv.pending_turn)
            lv.pending_turn = None
        if lv.future is not None and not lv.future.done():
            abandon(lv.env)  # its worker is stuck in a call: close from elsewhere, never wait
        else:
            self._closing.append(lv.worker.submit(_close_quietly, lv.env))
        lv.worker.stop()
        lv.future = None
        lv.state = "finished"
        ep.wall_s = time.monotonic() - lv.started

    def _expire(self, live: dict[int, _Live]) -> None:
        now = time.monotonic()
        for lv in live.values():
            if lv.state == "finished":
                continue
            if lv.future is not None and not lv.future.done() and now > lv.deadline:
                what = {"reset": "reset", "step": "step", "check": "reward"}[lv.state]
                limit = {"reset": self.reset_timeout_s, "step": self.step_timeout_s,
                         "check": self.check_timeout_s}[lv.state]
                lv.episode.env_s += now - lv.submitted
                self.stats.env_s += now - lv.submitted
                self._finish(lv, "timeout", f"{what} did not return within {limit:g} s")
            elif now > lv.started + self.episode_timeout_s:
                if lv.future is not None and not lv.future.done():
                    lv.episode.env_s += now - lv.submitted
                    self.stats.env_s += now - lv.submitted
                self._finish(lv, "timeout", f"episode ran past {self.episode_timeout_s:g} s")

    # ── policy side ──
    def _act(self, waiting: list[_Live]) -> None:
        prompts = [lv.episode.token_ids() for lv in waiting]
        seeds = [lv.episode.seed * 1009 + len(lv.episode.turns) for lv in waiting]
        t0 = time.perf_counter()
        samples = self.policy.sample(prompts, seeds)
        dt = time.perf_counter() - t0
        self.stats.policy_s += dt
        self.stats.sampling_calls += 1
        codec = None
        for lv, s in zip(waiting, samples, strict=True):
            ep = lv.episode
            ep.policy_s += dt
            text = s.text.strip()
            turn = AgentTurn(action_text=text, action_ids=list(s.ids), action_logprobs=list(s.logprobs),
                             policy_s=dt)
            if not text:
                turn.stop = True
                turn.observation_ids = self.policy.closing_ids(s.stopped)
                ep.turns.append(turn)
                self._check(lv, "done")
                continue
            codec = codec or self.policy.domain.action_codec
            try:
                codec.parse(text)
            except CodecError as exc:
                turn.valid = False
                turn.observation_text = str(exc)
                turn.observation_ids = self.policy.observation_ids(turn.observation_text, stopped=s.stopped)
                ep.turns.append(turn)
                ep.invalid_actions += 1
                if len(ep.turns) >= lv.max_turns:
                    self._check(lv, "max_turns")
                else:
                    self._room(lv)
                continue
            except Exception as exc:  # a codec must raise only CodecError; its bug ends this episode only
                ep.turns.append(turn)
                self._finish(lv, "crashed", f"action codec raised {type(exc).__name__}: {exc}")
                continue
            turn.info["_stopped"] = s.stopped
            lv.pending_turn = turn
            lv.state = "step"
            self._submit(lv, lv.env.step, (text,), self.step_timeout_s)  # type: ignore[union-attr]

    def _count(self, ep: Episode) -> None:
        self.stats.episodes += 1
        self.stats.statuses[ep.status] = self.stats.statuses.get(ep.status, 0) + 1
