"""The reward of an agent episode: the task's checker in the episode's environment, or a judge.

* ``checker`` (default): ``task.check(env)`` runs in the environment the episode ran in, after its last
  action. The checker talks only through ``env.step``, so in a real environment its probes are real
  commands, and in a simulator (``SimEnv``) the simulator answers them. Reward: 1 when the check passes,
  else the checker's partial ``score`` (0 when it gives none). Source: ``checker:<env kind>``.
* ``judge``: an :class:`EpisodeJudge` reads the task and the episode's actions and observations and says
  whether the task was done (no probe runs). Source: ``judge:<name>``. :class:`BackendJudge` asks any
  generation backend (an LLM) for a JSON verdict; an answer it cannot read scores 0 and says so.

Every finished episode records which one decided (``Episode.reward_source``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from awctl.agent.episode import Episode
from awctl.domain import Domain, Task
from awctl.env import Environment


@dataclass
class RewardOutcome:
    """What a reward function says about a finished episode; ``source`` names who decided."""

    reward: float
    success: bool
    source: str
    message: str = ""


RewardFn = Callable[[Environment, Task, Episode], RewardOutcome]


def checker_reward(env_kind: str = "real") -> RewardFn:
    """A reward function running the task's checker in the episode's environment."""

    def reward(env: Environment, task: Task, episode: Episode) -> RewardOutcome:
        verdict = task.check(env)
        value = 1.0 if verdict.ok else float(verdict.score or 0.0)
        return RewardOutcome(value, bool(verdict.ok), f"checker:{env_kind}", verdict.message)

    return reward


@dataclass
class JudgeVerdict:
    score: float  # in [0, 1]
    success: bool
    message: str = ""


class EpisodeJudge(Protocol):
    """Decides from the transcript whether an episode did its task."""

    name: str

    def judge_episode(self, task: Task, episode: Episode) -> JudgeVerdict: ...


def judge_reward(judge: EpisodeJudge) -> RewardFn:
    """A reward function asking ``judge`` (no probe runs in the environment)."""

    def reward(env: Environment, task: Task, episode: Episode) -> RewardOutcome:
        v = judge.judge_episode(task, episode)
        return RewardOutcome(max(0.0, min(1.0, float(v.score))), bool(v.success), f"judge:{judge.name}", v.message)

    return reward


def episode_reward(episode_env: Environment, task: Task, mode: str = "checker", judge: EpisodeJudge | None = None,
                   *, episode: Episode | None = None, env_kind: str = "real") -> tuple[float, bool, str]:
    """``(reward, success, source)`` of a finished episode (see the module docstring)."""
    if mode == "checker":
        out = checker_reward(env_kind)(episode_env, task, episode or Episode(task.id, task.domain, 0, 0))
    elif mode == "judge":
        if judge is None:
            from awctl.errors import AwctlError

            raise AwctlError("reward mode 'judge' needs a judge", hint="pass judge=..., or use mode='checker'")
        out = judge_reward(judge)(episode_env, task, episode or Episode(task.id, task.domain, 0, 0))
    else:
        from awctl.errors import AwctlError

        raise AwctlError(f"unknown reward mode {mode!r}", hint="use 'checker' or 'judge'")
    return out.reward, out.success, out.source


def make_reward(mode: str, env_kind: str, judge: EpisodeJudge | None = None) -> RewardFn:
    """The reward function for ``mode`` (``checker`` | ``judge``)."""
    if mode == "judge":
        if judge is None:
            from awctl.errors import AwctlError

            raise AwctlError("reward = 'judge' needs a judge backend", hint="set judge = { backend = ..., ... }")
        return judge_reward(judge)
    return checker_reward(env_kind)


# ── an LLM judge over any backend ───────────────────────────────────────────────────────────────────

JUDGE_SYSTEM = (
    "You review the transcript of an agent working in a {domain} environment and decide whether it "
    "completed its task. Judge only from the observations shown; an action that was rejected as malformed "
    "did nothing. Answer with one JSON object and nothing else: "
    '{{"success": true or false, "score": a number from 0 to 1, "reason": "one sentence"}}.'
)


def parse_verdict(text: str) -> JudgeVerdict | None:
    """The verdict in a judge's answer: the last JSON object with a boolean ``success`` (``score``
    defaults to it), after any closed ``<think>`` block; ``None`` when there is none."""
    body = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    starts = [i for i, ch in enumerate(body) if ch == "{"]
    decoder = json.JSONDecoder()
    for i in reversed(starts):
        try:
            obj, _ = decoder.raw_decode(body[i:])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("success"), bool):
            score = obj.get("score", 1.0 if obj["success"] else 0.0)
            try:
                value = float(score)
            except (TypeError, ValueError):
                value = 1.0 if obj["success"] else 0.0
            return JudgeVerdict(max(0.0, min(1.0, value)), obj["success"], str(obj.get("reason", "")))
    return None


class BackendJudge:
    """An :class:`EpisodeJudge` over a generation backend (greedy, ``max_tokens``); long observations are
    cut to ``max_observation_chars`` (head and tail) in the transcript."""

    def __init__(self, backend: Any, domain: Domain, name: str = "llm", *, max_tokens: int = 256,
                 max_observation_chars: int = 2000) -> None:
        self.backend, self.domain, self.name = backend, domain, name
        self.max_tokens, self.max_observation_chars = max_tokens, max_observation_chars

    def messages(self, task: Task, episode: Episode) -> list[dict[str, str]]:
        cut = self.max_observation_chars

        def short(text: str) -> str:
            return text if len(text) <= cut else text[: cut // 2] + "\n[...]\n" + text[-cut // 2:]

        lines = [f"Task: {task.instruction}", "", "Initial observation:", short(episode.initial_observation)]
        for k, t in enumerate([t for t in episode.turns if not t.stop], 1):
            lines += ["", f"Action {k}:{'' if t.valid else ' (rejected: malformed)'}", t.action_text,
                      f"Observation {k}:", short(t.observation_text)]
        lines += ["", f"The episode ended: {episode.status}. Did the agent complete the task?"]
        return [{"role": "system", "content": JUDGE_SYSTEM.format(domain=self.domain.name)},
                {"role": "user", "content": "\n".join(lines)}]

    def judge_episode(self, task: Task, episode: Episode) -> JudgeVerdict:
        from awctl.backend import ChatRequest

        request = ChatRequest(self.messages(task, episode), max_tokens=self.max_tokens, temperature=0.0)
        text = self.backend.generate([request])[0][0].text
        verdict = parse_verdict(text)
        if verdict is None:
            return JudgeVerdict(0.0, False, f"judge answer has no JSON verdict: {text[:200]!r}")
        return verdict

    def close(self) -> None:
        close: Callable[[], None] | None = getattr(self.backend, "close", None)
        if close is not None:
            close()
