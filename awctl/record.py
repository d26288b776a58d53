"""The recorder: run a policy on a domain's tasks in its real environment and write unified trajectories.

This is where real training and held-out evaluation data comes from. The ``scripted`` policy replays each
task's reference solution, so recording needs no model. Every trajectory carries timings per turn, the
checker's verdict, and the five system-prompt sections a simulator of the same episode would get.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from awctl.domain import Domain, Task
from awctl.env import Environment
from awctl.errors import AwctlError, EnvironmentUnavailable
from awctl.trajectory import Trajectory, Turn, write_jsonl

Policy = Callable[[Task, list[Turn], str], "str | None"]
"""``policy(task, turns_so_far, last_observation)`` returns the next action text, or None to stop."""


def scripted_policy(task: Task, turns: list[Turn], last_observation: str) -> str | None:
    """Replays the task's reference solution action by action."""
    return task.solution[len(turns)] if len(turns) < len(task.solution) else None


AGENT_SYSTEM = (
    "You are an agent acting in a {domain} environment.\n\nTask: {instruction}\n\n"
    "Action space:\n{action_space}\n\nAnswer every observation with exactly one action in that format "
    "and nothing else. Answer with an empty message when the task is done."
)


class BackendPolicy:
    """An agent policy over any registered backend: the task and the action space as the system prompt,
    each observation as a user message and each earlier action as an assistant message (greedy)."""

    def __init__(self, backend: Any, domain: Domain, max_tokens: int = 512) -> None:
        self.backend, self.domain, self.max_tokens = backend, domain, max_tokens
        self._initial = ""  # the episode's first observation (the policy sees it on its first call)

    def messages(self, task: Task, turns: list[Turn], initial: str) -> list[dict[str, str]]:
        system = AGENT_SYSTEM.format(
            domain=self.domain.name, instruction=task.instruction, action_space=self.domain.action_codec.schema()
        )
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": initial}]
        for turn in turns:
            msgs += [{"role": "assistant", "content": turn.action}, {"role": "user", "content": turn.observation}]
        return msgs

    def __call__(self, task: Task, turns: list[Turn], last_observation: str) -> str | None:
        from awctl.backend import ChatRequest

        if not turns:
            self._initial = last_observation
        request = ChatRequest(self.messages(task, turns, self._initial), max_tokens=self.max_tokens)
        text = self.backend.generate([request])[0][0].text.strip()
        return text or None


def resolve_policy(
    spec: str, domain: Domain, build_backend: Callable[..., Any] | None = None, **backend_options: Any
) -> Policy:
    """``scripted`` or ``backend:NAME``: an agent model behind backend ``NAME``, built with
    ``build_backend`` (e.g. ``Registry.build_backend``) and ``backend_options`` (``model``, ``base_url``...)."""
    if spec == "scripted":
        return scripted_policy
    if spec.startswith("backend:"):
        if build_backend is None:
            raise AwctlError(f"policy {spec!r} needs a way to build backends", hint="pass build_backend")
        return BackendPolicy(build_backend(spec.partition(":")[2], **backend_options), domain)
    raise AwctlError(f"unknown policy {spec!r}", hint="use --policy scripted or --policy backend:NAME")


@dataclass
class RecordSummary:
    trajectories: int = 0
    turns: int = 0
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "trajectories": self.trajectories,
            "turns": self.turns,
            "passed": self.passed,
            "failed_checks": self.failed,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
        }


def trajectory_id(domain: Domain, task: Task, repeat: int) -> str:
    """``<task id>-r<repeat>``, the task id prefixed with the domain only when it is not already."""
    base = task.id if task.id.startswith((f"{domain.name}/", f"{domain.name}-")) else f"{domain.name}/{task.id}"
    return f"{base}-r{repeat}"


def record_episode(
    domain: Domain, env: Environment, task: Task, policy: Policy, repeat: int = 0
) -> Trajectory:
    """Run one episode of ``task`` in ``env`` and return it as a trajectory (with the checker's verdict)."""
    t0 = time.perf_counter()
    initial = env.reset(task, seed=repeat)
    turns: list[Turn] = []
    last = initial
    for _ in range(task.max_turns):
        action = policy(task, turns, last)
        if action is None:
            break
        s0 = time.perf_counter()
        result = env.step(action)
        meta: dict[str, Any] = {"duration_s": round(time.perf_counter() - s0, 4)}
        meta.update({k: v for k, v in result.info.items() if isinstance(v, (str, int, float, bool))})
        turns.append(Turn(action=action, observation=result.observation, metadata=meta))
        last = result.observation
        if result.done:
            break
    # The checker probes through env.step too; its probes are not part of the trajectory.
    verdict = task.check(env)
    return Trajectory(
        id=trajectory_id(domain, task, repeat),
        domain=domain.name,
        source=str(task.setup.get("source") or f"{domain.name}:{task.suite}"),
        tags=["real", "recorded", *task.tags],
        system=domain.sections_for(task, initial_state=initial),
        turns=turns,
        metadata={
            "task": task.id,
            "suite": task.suite,
            "repeat": repeat,
            "check": {"ok": verdict.ok, "message": verdict.message, "score": verdict.score},
            "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "episode_s": round(time.perf_counter() - t0, 3),
        },
    )


def record(
    domain: Domain,
    tasks: list[Task],
    output: Path,
    *,
    policy: Policy = scripted_policy,
    repeats: int = 1,
    workers: int = 1,
    env_settings: dict[str, Any] | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
) -> RecordSummary:
    """Record ``repeats`` episodes of every task with ``workers`` parallel environments into ``output``.

    ``policy``: :func:`scripted_policy` (the reference solutions) or one from :func:`resolve_policy`. A
    task whose episode raises is reported in ``summary.errors`` and skipped; the others are kept.
    """
    pol = policy
    if isinstance(pol, BackendPolicy):
        workers = 1  # the policy keeps per-episode state and one backend serves one episode at a time
    ok, why = domain.real_env_status()
    if not ok:
        raise EnvironmentUnavailable(
            f"domain {domain.name!r} has no usable real environment here: {why}",
            hint="`awctl doctor` lists what each real environment needs",
        )
    summary = RecordSummary()
    t0 = time.perf_counter()
    jobs = [(task, r) for r in range(repeats) for task in tasks]

    def run_one(job: tuple[Task, int]) -> Trajectory | str:
        task, rep = job
        env = domain.real_env(env_settings)
        if env is None:
            return f"{task.id}: domain returned no real environment"
        try:
            with env:
                return record_episode(domain, env, task, pol, rep)
        except Exception as exc:  # one broken episode must not lose the others
            return f"{task.id} (repeat {rep}): {type(exc).__name__}: {exc}"

    def results() -> Iterator[Trajectory]:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for out in pool.map(run_one, jobs):
                if isinstance(out, str):
                    summary.errors.append(out)
                    continue
                summary.trajectories += 1
                summary.turns += len(out.turns)
                if out.metadata["check"]["ok"]:
                    summary.passed += 1
                else:
                    summary.failed.append(f"{out.id}: {out.metadata['check']['message']}")
                if on_episode:
                    on_episode(out)
                yield out

    output.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(output, results())
    summary.seconds = time.perf_counter() - t0
    return summary


def select_tasks(domain: Domain, suite: str | None, limit: int | None = None, ids: list[str] | None = None) -> list[Task]:
    """Tasks of ``suite`` (every suite when None), optionally filtered by ids or id patterns (``fnmatch``)
    and cut to ``limit``."""
    suites = [suite] if suite else domain.suites()
    unknown = [s for s in suites if s not in domain.suites()]
    if unknown:
        raise AwctlError(
            f"domain {domain.name!r} has no task suite {unknown[0]!r}",
            hint=f"suites: {', '.join(domain.suites()) or 'none'}",
        )
    # Suites may overlap (an "all" suite repeating the others): each task id is kept once.
    tasks = list({t.id: t for s in suites for t in domain.tasks(s)}.values())
    if ids:
        # An entry is a task id or a shell-style pattern ("terminal/drill/0[0-4]?"); each must match a task.
        from fnmatch import fnmatchcase

        missing = [i for i in ids if not any(fnmatchcase(t.id, i) for t in tasks)]
        if missing:
            raise AwctlError(f"no task matches {missing[0]!r} in {domain.name}",
                             hint="`awctl domains --json` lists suites; patterns use *, ? and [0-9]")
        tasks = [t for t in tasks if any(fnmatchcase(t.id, i) for i in ids)]
    return tasks[:limit] if limit else tasks
