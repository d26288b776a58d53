"""What a domain plugin provides, and the value types it exchanges with the core.

A domain is a small library (see ``domains/terminal`` for a complete one): codecs that parse and render
actions and observations, deterministic verifiers, a system-prompt builder, importers of raw logs, task
suites with checkers, perturbations a simulator can inject, and optionally a real environment.
Subclass :class:`Domain` and override what your domain has; the defaults are safe no-ops.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt, Trajectory, Turn

if TYPE_CHECKING:
    from awctl.env import Environment


# ── codecs ───────────────────────────────────────────────────────────────────────────────────────────


class ActionCodec(ABC):
    """Parses and renders the domain's action text. ``parse`` raises :class:`awctl.errors.CodecError`.

    The conformance kit (``awctl domains check``) holds a codec to two rules: every recorded action renders
    back byte for byte (``render(parse(text)) == text``), and on any generated text ``parse`` either raises
    ``CodecError`` or round-trips. A codec raises nothing but ``CodecError`` on bad text.
    """

    @abstractmethod
    def parse(self, text: str) -> Any:
        """Structured form of an action text; raise ``CodecError(message, where=...)`` when malformed."""

    @abstractmethod
    def render(self, action: Any) -> str:
        """Canonical text of a structured action; ``parse(render(a)) == a`` and, for every recorded action
        text, ``render(parse(text)) == text``."""

    def schema(self) -> str:
        """Human-readable description of the action space, used in the prompt's action-space section."""
        return ""

    def family(self, text: str) -> str:
        """The action's family for grouping (command name, tool name, editor command, GUI action type)."""
        return "action"


class ObservationCodec(ABC):
    """Parses, renders and normalises the domain's observation text.

    The judge and the RL reward strip a prediction's leading and trailing whitespace before comparing it
    (and before running the verifiers on it), so ``parse`` must accept a recorded observation with its
    surrounding whitespace stripped: an observation that ends in a prompt such as ``sqlite> `` is judged as
    ``sqlite>``. The conformance kit checks that a stripped recorded observation scores 5/5. The round-trip
    rules of :class:`ActionCodec` hold here too, and ``parse`` raises nothing but ``CodecError``.
    """

    @abstractmethod
    def parse(self, text: str) -> Any:
        """Structured form of an observation text; raise ``CodecError`` when malformed. Must accept the
        stripped form of every observation the real environment produces."""

    @abstractmethod
    def render(self, observation: Any) -> str:
        """Canonical text of a structured observation; ``render(parse(text)) == text`` for every recorded
        observation text."""

    def normalize(self, text: str) -> str:
        """Text for exact-match comparison: volatile details (trailing spaces, timestamps...) removed. The
        default strips the text and every line's trailing spaces."""
        return "\n".join(line.rstrip() for line in text.strip().splitlines())


# ── verifiers ────────────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of one deterministic check on one turn: ``check`` is the verifier's name, ``ok`` the
    verdict, ``message`` (on failure) names the line and what was expected there."""

    check: str
    ok: bool
    message: str = ""


@dataclass
class TurnContext:
    """What a verifier sees: the trajectory so far and the turn under test (``index``).

    ``observation`` may be a candidate (a simulator's prediction) rather than the recorded one, so
    verifiers must read it from here, not from ``trajectory.turns[index]``. ``state`` is a scratch dict
    shared by the verifiers of one turn, for replays a domain wants to compute once.
    """

    trajectory: Trajectory
    index: int
    action: str
    observation: str
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def history(self) -> list[Turn]:
        """The turns before the one under test (recorded actions and observations)."""
        return self.trajectory.turns[: self.index]

    @property
    def system(self) -> SystemPrompt:
        """The trajectory's system-prompt sections; ``system.initial_state`` is what the real environment's
        ``reset()`` returned (for recorded trajectories), the usual starting point of a replay."""
        return self.trajectory.system

    @classmethod
    def at(cls, trajectory: Trajectory, index: int, observation: str | None = None) -> TurnContext:
        """The context of turn ``index``, with ``observation`` as the candidate (default: the recorded one)."""
        turn = trajectory.turns[index]
        return cls(trajectory, index, turn.action, turn.observation if observation is None else observation)


@dataclass(frozen=True)
class Verifier:
    """A named deterministic check. ``fn`` returns ``None`` when the check does not apply to the turn.

    Rules a verifier must follow:

    * Every expectation comes from the trajectory itself (``ctx.system``: the initial state, the tool list;
      ``ctx.history``: earlier turns), never from awctl's own environment; where the trajectory does not
      establish enough, return ``None`` (abstain) rather than fail. Real recordings made by other programs
      must pass (zero false positives).
    * Read the candidate from ``ctx.observation``: it may be a prediction, already stripped of leading and
      trailing whitespace by the judge or the RL reward.
    * Decide applicability from the turn's action and history, not from the candidate alone: a verifier
      that applied to the recorded observation and abstains on a prediction counts as a **failure** in the
      judge and the reward (see :class:`VerifierCredit`), and the conformance kit requires every verifier
      to fail, not abstain, on random text where it passed the reference.
    * A failure's ``message`` names the line and what was expected. A verifier that raises is reported as
      a failed check, never propagated.
    """

    name: str
    description: str
    fn: Callable[[TurnContext], VerifyResult | bool | None]

    def __call__(self, ctx: TurnContext) -> VerifyResult | None:
        """Run the check: ``None`` (abstained) or a :class:`VerifyResult` (a ``bool`` from ``fn`` is wrapped)."""
        out = self.fn(ctx)
        if out is None or isinstance(out, VerifyResult):
            return out
        return VerifyResult(self.name, bool(out))


def verifier(name: str, description: str) -> Callable[[Callable[..., Any]], Verifier]:
    """Decorator: turn ``def check(ctx) -> VerifyResult | bool | None`` into a :class:`Verifier`."""

    def wrap(fn: Callable[..., Any]) -> Verifier:
        return Verifier(name, description, fn)

    return wrap


@dataclass(frozen=True)
class Fault:
    """A deliberate error of one kind, planted into a copy of a real turn, that ``verifier`` must catch.

    ``plant(ctx, rng)`` returns the corrupted observation for the turn ``ctx`` describes (the recorded
    observation is ``ctx.observation``), or ``None`` when this kind of fault cannot be planted in that
    turn (e.g. "cwd does not follow cd" in a turn without ``cd``). Domains list their faults so the
    conformance kit and the foreign-data tests can check that each verifier catches its kind.
    """

    name: str
    verifier: str
    description: str
    plant: Callable[[TurnContext, random.Random], str | None]


# ── importers, tasks, perturbations ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Importer:
    """Turns one raw log file of some format into trajectories (``awctl data convert``).

    ``patterns`` are glob patterns matched against the file's path (``Path.match``, e.g. ``"*.cast"``);
    ``load(path)`` yields trajectories and raises :class:`awctl.errors.InputError` naming the file, the line
    and the fix on bad input. Each trajectory should set ``source`` (one log, server or site per source):
    prep's source-level split keeps a source in one split.
    """

    name: str
    description: str
    patterns: tuple[str, ...]
    load: Callable[[Path], Iterator[Trajectory]]

    def matches(self, path: Path) -> bool:
        """Whether ``path`` matches one of ``patterns``."""
        return any(path.match(p) for p in self.patterns)


@dataclass(frozen=True)
class CheckResult:
    """A task checker's verdict: ``ok``, a ``message`` saying what was found (shown when a task fails) and
    an optional partial ``score`` in [0, 1]. The recorder stores it in the trajectory's ``metadata["check"]``."""

    ok: bool
    message: str = ""
    score: float | None = None


@dataclass
class Task:
    """An agent task with a scripted reference solution and a deterministic checker.

    * ``id``: unique within the domain; the recorded trajectory's id is built from it (prefixed with the
      domain name unless it already starts with it) and the repeat number.
    * ``solution``: the reference actions (action texts) the scripted policy replays; they must pass
      ``check`` in the real environment, and doing nothing must fail it (conformance rules
      ``task.reference_passes`` and ``task.noop_fails``).
    * ``check(env)`` runs after the episode in the same environment and interacts with it only through
      ``env.step`` (e.g. ``cat`` a file, run the tests), so the same checker judges an episode in a real
      environment or in a simulator. Its probes are not recorded.
    * ``setup``: domain-specific data the environment applies on ``reset`` (files, database rows...). One
      key is read by the core: ``setup["source"]`` becomes the recorded trajectory's ``source`` (default
      ``"<domain>:<suite>"``), and prep's source-level split sends every trajectory of one source to the
      same split, so tasks built from one origin (one repository, one server, one site) should share it.
    * ``max_turns``: the recorder stops the episode after this many actions even if the policy goes on.
    * ``tags``: added to the recorded trajectory's tags (after ``real`` and ``recorded``).
    """

    id: str
    domain: str
    suite: str
    instruction: str
    solution: list[str]
    check: Callable[[Environment], CheckResult]
    setup: dict[str, Any] = field(default_factory=dict)
    max_turns: int = 20
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Perturbation:
    """A controllable fault a simulator can be asked to inject, e.g. ``rate_limit`` or ``permission_denied``.

    ``instruction`` is the template (a ``str.format`` string; there is no separate template field) filled
    with ``defaults`` overridden by caller params; the text is added to the simulation instruction of the
    turns the perturbation applies to. Name the exact text the faulty observation takes, so a perturbed
    episode stays parseable where the real fault would be.
    """

    name: str
    description: str
    instruction: str
    defaults: dict[str, Any] = field(default_factory=dict)

    def render(self, **params: Any) -> str:
        """``instruction`` filled with ``defaults`` updated by ``params``; a missing parameter raises
        :class:`awctl.errors.AwctlError` naming it."""
        values = {**self.defaults, **params}
        try:
            return self.instruction.format(**values)
        except KeyError as exc:
            from awctl.errors import AwctlError

            raise AwctlError(
                f"perturbation {self.name!r} needs parameter {exc.args[0]!r}",
                hint=f"pass it, e.g. {exc.args[0]}=...; defaults: {self.defaults}",
            ) from None


# ── the domain ───────────────────────────────────────────────────────────────────────────────────────



def fenced_block_after(text: str, marker: str) -> str | None:
    """The body of the fenced block that follows the last ``marker`` line in ``text`` and runs to the text's
    last closing fence (e.g. the first screen a domain's initial-state section quotes after "The screen
    shows:"); ``None`` when there is none. For :meth:`Domain.first_observation` overrides."""
    at = text.rfind(marker)
    if at < 0:
        return None
    rest = text[at + len(marker):].lstrip(" ")
    if not rest.startswith("\n```"):
        return None
    body_start = rest.find("\n", 1)
    end = rest.rfind("\n```")
    if body_start < 0 or end <= body_start:
        return None
    return rest[body_start + 1:end]

class Domain:
    """Base class for a domain plugin. Override the attributes and methods your domain provides.

    ``name`` (letters, digits, ``-``, ``_``; unique across plugins), ``action_codec`` and
    ``observation_codec`` are required (set the codecs as class attributes or in ``__init__``); everything
    else has a safe default. Register an instance with the ``register_domains`` hook; keep imports of heavy
    modules inside the methods, since listing domains instantiates every one.
    """

    name: str = ""
    modality: Literal["text", "gui"] = "text"
    description: str = ""
    action_codec: ActionCodec
    observation_codec: ObservationCodec

    # ── prompts ──
    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        """Override to give the domain's own wording; the default is a generic environment simulator."""
        return PromptBuilder(domain_title=self.name)

    @property
    def prompt_variants(self) -> int:
        """How many wordings ``system_prompt`` has (the prompt builder's ``variants``)."""
        return self.prompt_builder.variants

    def system_prompt(self, sections: SystemPrompt, variant: int = 0) -> str:
        """The simulator's system prompt for ``sections`` in wording ``variant`` (0..prompt_variants-1)."""
        return self.prompt_builder.build(sections, variant)

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """The five sections for simulating an episode of ``task`` (used by the recorder and SimEnv).

        The recorder passes what the real environment's ``reset()`` returned as ``initial_state``, so that
        text becomes the trajectory's ``system.initial_state`` — the state verifiers replay from. The default
        takes the task's instruction, the action codec's ``schema()`` and the prompt builder's simulation
        instruction; override to vary them per task (e.g. the tool list a task's setup declares)."""
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state=initial_state,
            simulation_instruction=self.prompt_builder.simulation_instruction,
        )

    def first_observation(self, sections: SystemPrompt) -> str:
        """What the real environment's ``reset()`` would have returned for an episode with these sections:
        the first observation an agent sees in a simulated episode (``SimEnv.reset``), so a policy's first
        prompt is the same in simulation and in reality. The default is the initial-state section itself;
        a domain whose :meth:`sections_for` wraps the reset text in more context overrides it (terminal:
        the fenced screen)."""
        return sections.initial_state

    @property
    def judge_guidance(self) -> str:
        """What a rubric judge should check in this domain's observations: one paragraph that the LLM judge
        puts into its rubric (empty: a generic guidance for any text environment). By convention the text
        is ``JUDGE_GUIDANCE`` in the domain's ``prompts.py``."""
        return ""

    # ── checks and data ──
    def verifiers(self) -> list[Verifier]:
        """The domain's deterministic checks (see :class:`Verifier` for the rules they follow)."""
        return []

    def importers(self) -> list[Importer]:
        """Readers of raw log formats for ``awctl data convert``."""
        return []

    def suites(self) -> list[str]:
        """Names of the task suites ``tasks`` accepts (``awctl record --suite SUITE``)."""
        return []

    def tasks(self, suite: str) -> list[Task]:
        """The tasks of ``suite`` (an empty list for an unknown suite)."""
        return []

    def perturbations(self) -> list[Perturbation]:
        """Faults a simulator can be asked to inject (``awctl simulate repl --perturbation NAME``)."""
        return []

    def faults(self) -> list[Fault]:
        """Planted faults, one kind per verifier at least (see :class:`Fault`): the conformance kit plants
        each into every recorded turn where it applies and requires its verifier to fail (not abstain) on at
        least 3 of 4; the foreign-data tests do the same on other programs' recordings."""
        return []

    def transforms(self) -> dict[str, Callable[[Trajectory], Trajectory | None]]:
        """Named rewrites of a trajectory into another equally real form of the same session (e.g. a
        terminal's ``incremental`` output instead of full screens), for training on every form a source
        can produce (``awctl data convert --transform NAME``). A transform returns ``None`` when it cannot
        convert a trajectory faithfully."""
        return {}

    def copy_baseline(self, trajectory: Trajectory, index: int) -> str | None:
        """The no-knowledge prediction of turn ``index`` from what the model is shown (the history and the
        action): the rule every evaluation reports beside the models, which a world model must beat.

        The evaluation scores it on the same rows as the models. The default says "nothing changed": the
        previous observation again (the initial state for the first turn; ``None`` when there is none). A
        domain overrides it where a better rule exists, e.g. a terminal echoes the typed command and shows
        the prompt again."""
        if index > 0:
            return trajectory.turns[index - 1].observation
        return trajectory.system.initial_state or None

    def history_observation(self, trajectory: Trajectory, index: int, at: int) -> str | None:
        """What turn ``index``'s observation shows in the history a model sees when it predicts turn ``at``
        (``index < at``); ``None`` (the default): the observation as recorded. A domain whose observations
        can make earlier ones redundant returns a short stand-in for those, e.g. a terminal's earlier screen
        that the latest screen still shows: near-identical copies in a long history cost context and make
        a small model's copy of the screen wander between them. Never applied to the turns a model is
        trained to answer, nor to rows read from AgentWorldBench (their histories are the source's);
        ``awctl eval`` asks a model with the stand-ins and judges against the record."""
        return None

    # ── AgentWorldBench action/observation bodies (text under **Action:** / the observation marker) ──
    def from_awb_action(self, body: str) -> str:
        """The action text for an AgentWorldBench ``**Action:**`` body (default: unchanged)."""
        return body

    def to_awb_action(self, action: str) -> str:
        """The AgentWorldBench ``**Action:**`` body for an action text (default: unchanged); the inverse of
        ``from_awb_action``, so rows round-trip byte for byte."""
        return action

    def from_awb_observation(self, body: str) -> str:
        """The observation text for an AgentWorldBench response body (default: unchanged). The judge also
        decodes predictions in AgentWorldBench form with it."""
        return body

    def to_awb_observation(self, observation: str) -> str:
        """The AgentWorldBench response body for an observation text (default: unchanged)."""
        return observation

    # ── real environment ──
    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        """A new real environment session, or ``None`` where none can exist for this domain."""
        return None

    def real_env_status(self) -> tuple[bool, str]:
        """``(available, reason)`` for ``awctl domains`` and ``awctl doctor``; must be cheap."""
        return False, "no real environment"

    def describe(self) -> dict[str, Any]:
        """JSON-able summary for ``awctl domains --json``."""
        ok, why = self.real_env_status()
        return {
            "name": self.name,
            "modality": self.modality,
            "description": self.description,
            "verifiers": [v.name for v in self.verifiers()],
            "importers": [i.name for i in self.importers()],
            "suites": {s: len(self.tasks(s)) for s in self.suites()},
            "perturbations": [p.name for p in self.perturbations()],
            "prompt_variants": self.prompt_variants,
            "real_env": {"available": ok, "detail": why},
        }


def verifier_outcomes(
    domain: Domain, trajectory: Trajectory, index: int, observation: str | None = None
) -> list[tuple[str, VerifyResult | None]]:
    """``(verifier name, result)`` for every verifier of ``domain`` on turn ``index`` (optionally with a
    candidate observation); ``None`` means the verifier abstained (the check does not apply, or the
    trajectory does not establish enough to check it).

    A verifier that raises is reported as a failed check naming the exception, never propagated.
    """
    ctx = TurnContext.at(trajectory, index, observation)
    out: list[tuple[str, VerifyResult | None]] = []
    for v in domain.verifiers():
        try:
            res = v(ctx)
        except Exception as exc:  # a verifier bug must not take down a data run
            res = VerifyResult(v.name, False, f"verifier raised {type(exc).__name__}: {exc}")
        out.append((v.name, res))
    return out


def run_verifiers(
    domain: Domain, trajectory: Trajectory, index: int, observation: str | None = None
) -> list[VerifyResult]:
    """Every applicable verifier's result for turn ``index`` (see :func:`verifier_outcomes`)."""
    return [res for _, res in verifier_outcomes(domain, trajectory, index, observation) if res is not None]


@dataclass
class VerifierCredit:
    """How a prediction fares on the verifiers that apply to the recorded observation of its turn.

    ``applicable`` counts the verifiers that pass on the reference; a prediction earns credit only for
    those it also passes. A verifier that applied to the reference and abstains on the prediction counts
    as a failure (``abstained``), so text the verifiers cannot even read earns nothing.
    """

    applicable: int = 0
    passed: int = 0
    abstained: int = 0
    failed: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        """Fraction of the applicable verifiers the prediction passes; ``None`` when none applies."""
        return self.passed / self.applicable if self.applicable else None


def verifier_credit(
    domain: Domain, trajectory: Trajectory, index: int, prediction: str, reference: str | None = None
) -> VerifierCredit:
    """:class:`VerifierCredit` of ``prediction`` for turn ``index`` (``reference``: the recorded
    observation unless given)."""
    on_ref = verifier_outcomes(domain, trajectory, index, reference)
    on_pred = dict(verifier_outcomes(domain, trajectory, index, prediction))
    credit = VerifierCredit()
    for name, ref in on_ref:
        if ref is None or not ref.ok:
            continue
        credit.applicable += 1
        got = on_pred.get(name)
        if got is None:
            credit.abstained += 1
            credit.failed.append(name)
        elif got.ok:
            credit.passed += 1
        else:
            credit.failed.append(name)
    return credit
