"""``SimEnv``: a world model behind the same Environment contract as the real environments.

Each step builds the domain's system prompt (five sections, wording ``variant``; a scheduled
perturbation appended to the simulation instruction), renders the episode so far as chat turns in the
model's chat ``style`` (:mod:`awctl.formats.view`; AgentWorldBench's layout by default), calls the backend, parses the output
(:func:`awctl.sim.parse.parse_output`) and runs the domain's verifiers on the candidate observation.
When a verifier fails and ``resample > 0``, it samples again (at ``resample_temperature``) up to
``resample`` times, stopping at the first candidate that passes; the best candidate (fewest failed
checks, then non-empty, tagged, non-speculative, earliest) is returned.

``StepResult.info`` always has: ``turn`` (0-based), ``raw`` (the chosen raw output), ``reasoning``,
``diagnostics`` (see :class:`awctl.sim.parse.ParsedOutput`), ``verifiers`` (list of
``{check, ok, message}``), ``verified`` (all passed), ``attempts``, ``candidates`` (each attempt's
failed-check count), ``perturbation`` (its description when injected this step, else None),
``finish_reason`` and ``usage``.

Steps of many SimEnvs can share one backend call: :func:`step_many` / :func:`astep_many` batch every
environment's requests (and each resampling round) into single ``generate`` calls.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

from awctl.backend import Backend, ChatRequest, Completion
from awctl.domain import Domain, Task, run_verifiers
from awctl.env import Environment, StepResult
from awctl.errors import AwctlError
from awctl.formats.agentworldbench import OBSERVATION_MARKER, TurnCodec
from awctl.formats.view import View, style_name
from awctl.sim.parse import ParsedOutput, parse_output
from awctl.sim.perturb import PerturbationSchedule
from awctl.trajectory import SystemPrompt, Trajectory, Turn

# A step is a generator: it yields request batches and receives their completions, so one driver can
# interleave many environments' steps into shared backend calls.
StepPlan = Generator[list[ChatRequest], list[list[Completion]], StepResult]


class SimEnv(Environment):
    """A simulated environment for ``domain`` driven by ``backend``.

    ``sections`` overrides the domain's system-prompt sections for every episode.
    ``section_overrides`` replaces only the named sections (``action_space``, ``initial_state``,
    ``demonstrations``...) of the sections the domain builds for each task, e.g. an environment described by
    its tool list (``initial_state``) and a few example observations (``demonstrations``) that awctl cannot
    run: the task's own description stays the task's.
    ``max_history_turns`` keeps only the latest turns in the prompt (turn numbers stay true).
    ``max_turns`` ends the episode (``done=True``) after that many steps.
    """

    def __init__(
        self,
        domain: Domain,
        backend: Backend,
        *,
        variant: int = 0,
        task: Task | None = None,
        initial_state: str = "",
        sections: SystemPrompt | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        resample: int = 0,
        resample_temperature: float = 0.7,
        perturbation: str | None = None,
        perturbation_params: dict[str, Any] | None = None,
        perturb_every: int = 1,
        perturb_match: str | None = None,
        max_turns: int | None = None,
        max_history_turns: int | None = None,
        style: str = "agentworldbench",
        section_overrides: dict[str, str] | None = None,
    ) -> None:
        self.sim_domain: Domain = domain
        self.domain = domain.name
        self.backend: Backend = backend
        if not 0 <= variant < domain.prompt_variants:
            raise AwctlError(
                f"prompt variant {variant} does not exist for domain {domain.name!r}",
                hint=f"use 0..{domain.prompt_variants - 1}",
            )
        if resample < 0:
            raise AwctlError(f"resample must be >= 0, got {resample}")
        self.variant = variant
        self.task = task
        self.initial_state = initial_state
        self.sections_override = sections
        names = [n for n in SystemPrompt.model_fields if n != "raw"]
        bad = sorted(str(k) for k, v in (section_overrides or {}).items() if k not in names or not isinstance(v, str))
        if bad:
            raise AwctlError(
                f"section_overrides: {', '.join(bad)}: not a system-prompt section given as text",
                hint=f"give text for any of {', '.join(names)}",
            )
        self.section_overrides = dict(section_overrides or {})
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self.resample = resample
        self.resample_temperature = resample_temperature
        self.max_turns = max_turns
        self.max_history_turns = max_history_turns
        self.schedule: PerturbationSchedule | None = None
        if perturbation:
            self.set_perturbation(perturbation, perturbation_params, perturb_every, perturb_match)
        self._codec = TurnCodec(domain)
        self.view = View(domain, style_name(style))
        self.sections: SystemPrompt = SystemPrompt()
        self.history: list[Turn] = []
        self._episode_seed = seed
        self._started = False

    # ── configuration that may change mid-episode (the repl switches these live) ──
    def set_perturbation(
        self, name: str | None, params: dict[str, Any] | None = None, every: int = 1, match: str | None = None
    ) -> None:
        """Schedule perturbation ``name`` (None removes it); see :mod:`awctl.sim.perturb`."""
        self.schedule = (
            PerturbationSchedule.for_domain(self.sim_domain, name, params, every, match) if name else None
        )

    # ── Environment contract ──
    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        """Start an episode; returns the first observation, as the real environment's ``reset()`` would
        (:meth:`awctl.domain.Domain.first_observation` of the episode's sections)."""
        if task is not None:
            self.task = task
        if self.sections_override is not None:
            self.sections = self.sections_override.model_copy()
        else:
            self.sections = self.sim_domain.sections_for(self.task, self.initial_state)
        if self.section_overrides:
            self.sections = self.sections.model_copy(update=self.section_overrides)
        self.history = []
        self._episode_seed = seed if seed is not None else self.seed
        if self.schedule is not None:
            self.schedule.counted = 0
        self._started = True
        return self.sim_domain.first_observation(self.sections)

    def step(self, action: str) -> StepResult:
        return drive(self.plan_step(action), self.backend.generate)

    async def astep(self, action: str) -> StepResult:
        return await adrive(self.plan_step(action), self.backend.agenerate)

    async def areset(self, task: Task | None = None, seed: int | None = None) -> str:
        return self.reset(task, seed)  # no model call: cheap enough to run on the loop

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        """Forget the episode; the backend belongs to the caller and stays open."""
        self.history = []
        self._started = False

    # ── the step itself ──
    def messages(self, action: str, sections: SystemPrompt | None = None) -> list[dict[str, str]]:
        """The chat messages for predicting the observation of ``action`` after the current history."""
        episode = Trajectory(
            id="simenv",
            domain=self.domain,
            system=sections or self.sections,
            turns=[*self.history, Turn(action=action, observation="")],
        )
        return self.view.messages_at(episode, len(self.history), self.variant, self.max_history_turns)

    def plan_step(self, action: str) -> StepPlan:
        """The step as a generator (see :func:`drive`); records the chosen observation in the history."""
        if not self._started:
            self.reset()
        index = len(self.history)
        perturbed = self.schedule is not None and self.schedule.advance(action)
        sections = self.schedule.inject(self.sections) if perturbed and self.schedule else self.sections
        messages = self.messages(action, sections)
        best: tuple[tuple[int, ...], int, Completion, ParsedOutput, list[dict[str, Any]]] | None = None
        scores: list[int] = []
        for attempt in range(self.resample + 1):
            temperature = (
                self.temperature if attempt == 0 else max(self.temperature, self.resample_temperature)
            )
            req = ChatRequest(
                messages=messages,
                max_tokens=self.max_tokens,
                temperature=temperature,
                top_p=self.top_p,
                seed=self._request_seed(index, attempt),
            )
            completions = yield [req]
            comp = completions[0][0]
            parsed = parse_output(comp.text, comp.reasoning)
            observation = self._decode(parsed.observation)
            report = self._verify(index, action, observation)
            failed = sum(1 for r in report if not r["ok"])
            scores.append(failed)
            d = parsed.diagnostics
            d["empty"] = not observation.strip()  # judged on what the agent will see
            key = (failed, int(d["empty"]), int(not d["tagged"]), int(d["speculative"]), attempt)
            if best is None or key < best[0]:
                best = (key, attempt, comp, parsed, report)
            if failed == 0:
                break
        assert best is not None
        _, _, comp, parsed, report = best
        observation = self._decode(parsed.observation)
        self.history.append(Turn(action=action, observation=observation, reasoning=parsed.reasoning))
        done = self.max_turns is not None and len(self.history) >= self.max_turns
        info = {
            "turn": index,
            "raw": comp.text,
            "reasoning": parsed.reasoning,
            "diagnostics": parsed.diagnostics,
            "verifiers": report,
            "verified": all(r["ok"] for r in report),
            "attempts": len(scores),
            "candidates": scores,
            "perturbation": self.schedule.describe() if perturbed and self.schedule else None,
            "finish_reason": comp.finish_reason,
            "usage": {"prompt_tokens": comp.prompt_tokens, "completion_tokens": comp.completion_tokens},
        }
        return StepResult(observation=observation, done=done, info=info)

    def _decode(self, text: str) -> str:
        # Models trained on AWB targets write the response marker inside the tags; an empty body after
        # it has lost its newline to the block trimming.
        if self.view.style == "awctl":
            return text
        if text.strip() == OBSERVATION_MARKER:
            return ""
        return self._codec.decode_response(text)

    def _request_seed(self, index: int, attempt: int) -> int | None:
        if self._episode_seed is None:
            return None if attempt == 0 else index * 1009 + attempt
        return self._episode_seed + index * 1009 + attempt

    def _verify(self, index: int, action: str, observation: str) -> list[dict[str, Any]]:
        if not self.sim_domain.verifiers():
            return []
        traj = Trajectory(
            id="simenv",
            domain=self.domain,
            system=self.sections,
            turns=[*self.history, Turn(action=action, observation=observation)],
        )
        return [
            {"check": r.check, "ok": r.ok, "message": r.message}
            for r in run_verifiers(self.sim_domain, traj, index, observation)
        ]

    def to_trajectory(self, id: str = "simulated") -> Trajectory:
        """The episode so far as a trajectory (e.g. to save a repl session)."""
        return Trajectory(
            id=id, domain=self.domain, source="simenv", system=self.sections, turns=list(self.history)
        )


# ── drivers ──────────────────────────────────────────────────────────────────────────────────────────


def drive(plan: StepPlan, generate: Callable[[list[ChatRequest]], list[list[Completion]]]) -> StepResult:
    """Run one step plan to completion with a synchronous ``generate``."""
    try:
        reqs = next(plan)
        while True:
            reqs = plan.send(generate(reqs))
    except StopIteration as stop:
        return stop.value


async def adrive(plan: StepPlan, agenerate: Callable[..., Any]) -> StepResult:
    """Run one step plan to completion with an async ``agenerate``."""
    try:
        reqs = next(plan)
        while True:
            reqs = plan.send(await agenerate(reqs))
    except StopIteration as stop:
        return stop.value


def _many(plans: list[StepPlan]) -> Generator[list[ChatRequest], list[list[Completion]], list[StepResult]]:
    """Interleave step plans: each round gathers every pending request into one batch."""
    results: list[StepResult | None] = [None] * len(plans)
    pending: dict[int, list[ChatRequest]] = {}
    for i, plan in enumerate(plans):
        try:
            pending[i] = next(plan)
        except StopIteration as stop:
            results[i] = stop.value
    while pending:
        order = list(pending)
        batch = [r for i in order for r in pending[i]]
        outs = yield batch
        pos = 0
        nxt: dict[int, list[ChatRequest]] = {}
        for i in order:
            k = len(pending[i])
            try:
                nxt[i] = plans[i].send(outs[pos : pos + k])
            except StopIteration as stop:
                results[i] = stop.value
            pos += k
        pending = nxt
    return [r for r in results if r is not None]


def _shared_backend(envs: Sequence[SimEnv]) -> Backend:
    backends = {id(e.backend) for e in envs}
    if len(backends) > 1:
        raise AwctlError(
            "step_many needs environments that share one backend",
            hint="build one backend and pass it to every SimEnv",
        )
    return envs[0].backend


def step_many(envs: Sequence[SimEnv], actions: Sequence[str]) -> list[StepResult]:
    """Step every environment with its action; all requests of a round go in one backend call."""
    if len(envs) != len(actions):
        raise AwctlError(f"step_many got {len(envs)} environments but {len(actions)} actions")
    if not envs:
        return []
    backend = _shared_backend(envs)
    plan = _many([e.plan_step(a) for e, a in zip(envs, actions, strict=True)])
    try:
        reqs = next(plan)
        while True:
            reqs = plan.send(backend.generate(reqs))
    except StopIteration as stop:
        return stop.value


async def astep_many(envs: Sequence[SimEnv], actions: Sequence[str]) -> list[StepResult]:
    """Async :func:`step_many`."""
    if len(envs) != len(actions):
        raise AwctlError(f"astep_many got {len(envs)} environments but {len(actions)} actions")
    if not envs:
        return []
    backend = _shared_backend(envs)
    plan = _many([e.plan_step(a) for e, a in zip(envs, actions, strict=True)])
    try:
        reqs = next(plan)
        while True:
            reqs = plan.send(await backend.agenerate(reqs))
    except StopIteration as stop:
        return stop.value
