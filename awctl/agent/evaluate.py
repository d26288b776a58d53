"""Evaluating an agent: success rate with a Wilson 95% interval, environment steps and where time went.

:func:`evaluate_agent` plays every task once per seed with the :class:`~awctl.agent.rollout.RolloutEngine`
and counts an episode as a success when its reward source (the checker, by default) says so; an episode
that timed out or crashed is a failure. :func:`select_agent_tasks` reads the task selections commands and
recipes use: a suite (``basic``), a suite slice (``basic[20:]``, ``drill[:8]``) or explicit task ids.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

from awctl.agent.episode import Episode
from awctl.agent.rollout import RolloutEngine
from awctl.domain import Domain, Task
from awctl.errors import AwctlError


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); ``(0, 1)`` when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class AgentEval:
    """``tasks``: episodes played (tasks × seeds); ``steps``: environment steps; ``env_s``: summed
    environment call time; ``policy_s``: wall time of the sampling calls; ``wall_s``: the whole evaluation."""

    tasks: int
    successes: int
    rate: float
    ci_low: float
    ci_high: float
    steps: int
    env_s: float
    policy_s: float
    wall_s: float
    episodes: list[Episode] = field(default_factory=list)
    mean_reward: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    invalid_actions: int = 0
    reward_sources: list[str] = field(default_factory=list)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (``results.json``), with one line per task and seed, without token ids."""
        per_task: dict[str, list[bool]] = {}
        for e in self.episodes:
            per_task.setdefault(e.task_id, []).append(bool(e.success))
        return {
            "episodes": self.tasks, "successes": self.successes, "success_rate": self.rate,
            "ci95": [self.ci_low, self.ci_high], "mean_reward": self.mean_reward,
            "env_steps": self.steps, "env_steps_per_s": round(self.steps_per_s, 4),
            "policy_s": round(self.policy_s, 3), "env_s": round(self.env_s, 3), "wall_s": round(self.wall_s, 3),
            "statuses": self.statuses, "invalid_actions": self.invalid_actions,
            "reward_sources": self.reward_sources,
            "per_task": {k: sum(v) / len(v) for k, v in sorted(per_task.items())},
        }


def summarize(episodes: list[Episode], *, wall_s: float, policy_s: float) -> AgentEval:
    """An :class:`AgentEval` of finished episodes."""
    n = len(episodes)
    wins = sum(1 for e in episodes if e.success)
    low, high = wilson_interval(wins, n)
    statuses: dict[str, int] = {}
    for e in episodes:
        statuses[e.status] = statuses.get(e.status, 0) + 1
    rewards = [e.reward or 0.0 for e in episodes]
    return AgentEval(tasks=n, successes=wins, rate=wins / n if n else 0.0, ci_low=low, ci_high=high,
                     steps=sum(e.steps for e in episodes), env_s=sum(e.env_s for e in episodes), policy_s=policy_s,
                     wall_s=wall_s, episodes=episodes, mean_reward=sum(rewards) / n if n else 0.0,
                     statuses=statuses, invalid_actions=sum(e.invalid_actions for e in episodes),
                     reward_sources=sorted({e.reward_source for e in episodes if e.reward_source}))


def evaluate_agent(policy: Any, env_factory: Any, tasks: list[Task], *, seeds: list[int] | None = None,
                   max_turns: int | None = None, concurrency: int = 4, step_timeout_s: float = 60.0,
                   episode_timeout_s: float = 600.0, reward: Any = None, max_context_tokens: int | None = None,
                   on_episode: Any = None, executor: Any = None) -> AgentEval:
    """Play every task once per seed (default ``[0]``) and summarise (see the module docstring)."""
    engine = RolloutEngine(policy, env_factory, max_turns=max_turns, step_timeout_s=step_timeout_s,
                           episode_timeout_s=episode_timeout_s, concurrency=concurrency, reward=reward,
                           max_context_tokens=max_context_tokens, on_episode=on_episode, executor=executor)
    t0 = time.perf_counter()
    episodes: list[Episode] = []
    policy_s = 0.0
    for seed in seeds or [0]:
        episodes += engine.run(tasks, 1, seed=seed)
        policy_s += engine.stats.policy_s
    return summarize(episodes, wall_s=time.perf_counter() - t0, policy_s=policy_s)


_SLICE = re.compile(r"^(?P<suite>[^\[\]]+)\[(?P<start>-?\d*):(?P<stop>-?\d*)\]$")


def select_agent_tasks(domain: Domain, spec: str | list[str] | None, limit: int | None = None) -> list[Task]:
    """Tasks of ``domain`` by ``spec``: ``None`` (every suite), a suite name, a suite slice ``SUITE[a:b]``
    (Python slice bounds over the suite's task order), or a list of task ids; then at most ``limit``."""
    from awctl.record import select_tasks

    if spec is None or isinstance(spec, str) and not _SLICE.match(spec):
        return select_tasks(domain, spec, limit)
    if isinstance(spec, list):
        return select_tasks(domain, None, limit, ids=spec)
    m = _SLICE.match(spec)
    assert m is not None
    tasks = select_tasks(domain, m["suite"])
    start, stop = (int(m[k]) if m[k] else None for k in ("start", "stop"))
    chosen = tasks[start:stop]
    if not chosen:
        raise AwctlError(f"task selection {spec!r} is empty ({len(tasks)} tasks in suite {m['suite']!r})",
                         hint="pick a slice inside the suite, e.g. basic[:8] or basic[8:]")
    return chosen[:limit] if limit else chosen
