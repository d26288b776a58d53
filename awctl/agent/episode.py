"""The token-level record of one agent episode.

An :class:`Episode` holds exactly the token ids the policy saw and produced, in order: the first prompt
(``prompt_ids``), then for every turn the action ids as sampled (end-of-turn token included) and the
observation ids appended after them (the environment's answer wrapped in the chat template, ending with
the next generation prompt). :meth:`Episode.token_ids`, :meth:`Episode.loss_mask` and
:meth:`Episode.old_logprobs` are what the GSPO update trains on, so nothing is re-tokenized between
rollout and update: only action tokens carry policy-loss weight; prompt and observation tokens weigh 0.

``status`` says how the episode ended: ``done`` (the policy answered with an empty action, or the
environment said done), ``max_turns``, ``max_tokens`` (the context would exceed the policy's token
budget), ``timeout`` (a step or the whole episode ran past its limit; the environment was abandoned) or
``crashed`` (the environment or the checker raised; ``error`` says what).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("done", "max_turns", "max_tokens", "timeout", "crashed")


@dataclass
class AgentTurn:
    """One action and what came back. ``valid``: the action parsed with the domain's action codec (an
    invalid one got the codec's error message as its observation and never reached the environment)."""

    action_text: str
    action_ids: list[int]
    action_logprobs: list[float]
    observation_text: str = ""
    observation_ids: list[int] = field(default_factory=list)
    valid: bool = True
    policy_s: float = 0.0
    env_s: float = 0.0
    stop: bool = False  # the empty action that ends the episode (no observation follows)
    info: dict[str, Any] = field(default_factory=dict)  # the env's scalar StepResult.info values


@dataclass
class Episode:
    """One episode of ``task_id`` (``group``: its GSPO group, ``seed``: its sampling seed)."""

    task_id: str
    domain: str
    group: int
    seed: int
    prompt_ids: list[int] = field(default_factory=list)
    turns: list[AgentTurn] = field(default_factory=list)
    reward: float | None = None
    success: bool | None = None
    reward_source: str = ""  # "checker:real", "checker:sim", "checker:hybrid", "judge:<name>"
    status: str = "done"
    error: str | None = None
    policy_s: float = 0.0
    env_s: float = 0.0
    steps: int = 0  # environment steps taken (invalid actions and the stop action are not steps)
    invalid_actions: int = 0
    instruction: str = ""
    initial_observation: str = ""
    check_message: str = ""
    wall_s: float = 0.0
    env_kind: str = ""

    # ── the token view the update trains on ──
    def token_ids(self) -> list[int]:
        """``prompt_ids`` + for each turn ``action_ids`` + ``observation_ids``."""
        out = list(self.prompt_ids)
        for t in self.turns:
            out += t.action_ids
            out += t.observation_ids
        return out

    def loss_mask(self) -> list[int]:
        """1 on every action token, 0 on prompt and observation tokens (aligned with :meth:`token_ids`)."""
        out = [0] * len(self.prompt_ids)
        for t in self.turns:
            out += [1] * len(t.action_ids)
            out += [0] * len(t.observation_ids)
        return out

    def old_logprobs(self) -> list[float]:
        """The sampler's log-probs of the action tokens, 0.0 elsewhere (aligned with :meth:`token_ids`)."""
        out = [0.0] * len(self.prompt_ids)
        for t in self.turns:
            out += list(t.action_logprobs)
            out += [0.0] * len(t.observation_ids)
        return out

    @property
    def action_tokens(self) -> int:
        return sum(len(t.action_ids) for t in self.turns)

    @property
    def trained(self) -> bool:
        """Whether the episode has action tokens to train on."""
        return self.action_tokens > 0

    # ── reports ──
    def to_trajectory(self, domain: Any, task: Any = None) -> Any:
        """The episode as an awctl :class:`~awctl.trajectory.Trajectory` (actions and observations; the
        stop action is left out, invalid actions are kept with ``metadata["valid"] = False``), e.g. for
        reports and for replaying the actions elsewhere (WM2Real)."""
        from awctl.trajectory import SystemPrompt, Trajectory, Turn

        if task is not None:
            system = domain.sections_for(task, initial_state=self.initial_observation)
        else:
            system = SystemPrompt(task_description=self.instruction, action_space=domain.action_codec.schema(),
                                  initial_state=self.initial_observation)
        turns = [Turn(action=t.action_text, observation=t.observation_text,
                      metadata={"valid": t.valid, "policy_s": round(t.policy_s, 4), "env_s": round(t.env_s, 4),
                                **t.info})
                 for t in self.turns if not t.stop]
        return Trajectory(
            id=f"{self.task_id}-g{self.group}-s{self.seed}", domain=self.domain, source=f"agent:{self.env_kind}",
            tags=["agent", self.env_kind or "env"], system=system, turns=turns,
            metadata={"task": self.task_id, "status": self.status, "reward": self.reward, "success": self.success,
                      "reward_source": self.reward_source, "error": self.error, "check": self.check_message},
        )

    def to_dict(self, tokens: bool = True) -> dict[str, Any]:
        """JSON-able form (one line of an episodes JSONL); ``tokens=False`` leaves the token ids out."""
        data = asdict(self)
        if not tokens:
            data.pop("prompt_ids")
            for t in data["turns"]:
                for key in ("action_ids", "action_logprobs", "observation_ids"):
                    t.pop(key)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        turns = [AgentTurn(**t) for t in data.get("turns", [])]
        return cls(**{**data, "turns": turns})

    def summary(self) -> dict[str, Any]:
        """Headline numbers of the episode (no texts, no tokens)."""
        return {"task": self.task_id, "group": self.group, "seed": self.seed, "status": self.status,
                "reward": self.reward, "success": self.success, "steps": self.steps,
                "invalid_actions": self.invalid_actions, "policy_s": round(self.policy_s, 3),
                "env_s": round(self.env_s, 3), "error": self.error}
