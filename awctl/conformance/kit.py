"""The conformance rules and the report (see :mod:`awctl.conformance` for what each rule means)."""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import Domain, Task, TurnContext
from awctl.errors import CodecError
from awctl.trajectory import Trajectory

RULES: dict[str, str] = {
    "codec.round_trip": "every recorded action and observation renders back byte for byte",
    "codec.generated_input": "on generated text a codec raises CodecError or round-trips",
    "judge.perfect_reference": "a stripped recorded observation scores 5/5 through the deterministic judge",
    "verifier.fails_garbage": "every verifier fails (not abstains) on random text where it passed the reference",
    "verifier.catches_fault": "every verifier has a planted fault and catches it on >= 3 of 4 turns",
    "task.reference_passes": "every task's reference solution passes its checker in the real environment",
    "task.noop_fails": "doing nothing fails every task's checker",
    "prompt.variants": "the prompt builder gives at least 10 distinct wordings",
    "env.reset_reproducible": "resetting with the same seed twice gives the same first observation",
    "env.first_observation": "a simulated episode starts from what the real reset shows "
                             "(first_observation(sections_for(task, reset())) == reset())",
}
MAX_LISTED = 3


@dataclass
class RuleOutcome:
    """The result of one rule: ``status`` is ``ok``, ``fail`` or ``skip``; ``message`` says what failed
    (or why the rule could not run); ``checked`` counts the items the rule looked at."""

    rule: str
    status: str  # ok | fail | skip
    message: str = ""
    checked: int = 0


@dataclass
class ConformanceReport:
    """Every rule's outcome for one domain, in :data:`RULES` order."""

    domain: str
    outcomes: list[RuleOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No rule failed (skipped rules say why in :attr:`skipped`)."""
        return not self.failures

    @property
    def failures(self) -> list[tuple[str, str]]:
        """``(rule, message)`` of every failed rule."""
        return [(o.rule, o.message) for o in self.outcomes if o.status == "fail"]

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """``(rule, reason)`` of every rule that could not run."""
        return [(o.rule, o.message) for o in self.outcomes if o.status == "skip"]

    def text(self) -> str:
        """One line per rule, for a terminal or an assertion message."""
        lines = [f"conformance of domain {self.domain!r}:"]
        for o in self.outcomes:
            lines.append(f"  {o.status.upper():4} {o.rule}" + (f": {o.message}" if o.message else ""))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``awctl domains check --json``)."""
        return {"domain": self.domain, "ok": self.ok,
                "rules": [{"rule": o.rule, "status": o.status, "message": o.message, "checked": o.checked}
                          for o in self.outcomes]}


def _listed(items: list[str]) -> str:
    more = f" (and {len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return "; ".join(items[:MAX_LISTED]) + more


# ── recordings ───────────────────────────────────────────────────────────────────────────────────────


@dataclass
class _Run:
    task: Task
    trajectory: Trajectory | None = None
    error: str | None = None
    noop_ok: bool | None = None
    noop_error: str | None = None


def _tasks(domain: Domain, task_limit: int | None) -> list[Task]:
    out: dict[str, Task] = {}
    for suite in domain.suites():
        tasks = domain.tasks(suite)
        for task in tasks[:task_limit] if task_limit else tasks:
            out.setdefault(task.id, task)
    return list(out.values())


def _run_tasks(domain: Domain, tasks: list[Task], env_settings: dict[str, Any] | None) -> list[_Run]:
    from awctl.record import record_episode, scripted_policy

    runs = []
    for task in tasks:
        run = _Run(task)
        try:
            env = domain.real_env(env_settings)
            if env is None:
                run.error = "real_env() returned None"
            else:
                with env:
                    run.trajectory = record_episode(domain, env, task, scripted_policy)
                env = domain.real_env(env_settings)
                with env:
                    env.reset(task, seed=0)
                    verdict = task.check(env)
                    run.noop_ok = bool(verdict.ok)
        except Exception as exc:  # a task or env that breaks is a finding of the rules below
            if run.trajectory is None:
                run.error = f"{type(exc).__name__}: {exc}"
            else:
                run.noop_error = f"{type(exc).__name__}: {exc}"
        runs.append(run)
    return runs


# ── the rules ────────────────────────────────────────────────────────────────────────────────────────


def _round_trip(codec: Any, text: str) -> str | None:
    """``None`` when ``text`` round-trips; else what went wrong."""
    try:
        rendered = codec.render(codec.parse(text))
    except CodecError as exc:
        return f"does not parse ({exc})"
    except Exception as exc:
        return f"raised {type(exc).__name__} (codecs may raise only CodecError): {exc}"
    return None if rendered == text else f"renders back as {rendered[:60]!r} instead of {text[:60]!r}"


def rule_round_trip(domain: Domain, trajs: list[Trajectory]) -> RuleOutcome:
    problems, checked = [], 0
    for traj in trajs:
        for i, turn in enumerate(traj.turns):
            for what, codec, text in (("action", domain.action_codec, turn.action),
                                      ("observation", domain.observation_codec, turn.observation)):
                checked += 1
                why = _round_trip(codec, text)
                if why:
                    problems.append(f"{traj.id} turn {i} {what} {why}")
    if not checked:
        return RuleOutcome("codec.round_trip", "skip", "no recordings")
    return RuleOutcome("codec.round_trip", "fail" if problems else "ok", _listed(problems), checked)


def _mutations(samples: list[str], rng: random.Random, count: int) -> Iterable[str]:
    alphabet = string.printable + "é→\u3000"
    for k in range(count):
        base = samples[k % len(samples)] if samples else ""
        kind = k % 5
        if kind == 0 or not base:
            yield "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        elif kind == 1:
            cut = rng.randint(0, len(base))
            yield base[:cut]
        elif kind == 2:
            pos = rng.randint(0, len(base))
            yield base[:pos] + rng.choice(alphabet) + base[pos:]
        elif kind == 3:
            a, b = sorted(rng.randint(0, len(base)) for _ in range(2))
            yield base[:a] + base[b:]
        else:
            yield base + "\n" + rng.choice(samples)


def rule_generated_input(domain: Domain, trajs: list[Trajectory], examples: int, seed: int) -> RuleOutcome:
    """Generated text: random strings and mutated recordings (cut, spliced, one character inserted)."""
    rng = random.Random(seed)
    problems, checked = [], 0
    for what, codec, samples in (
        ("action", domain.action_codec, [t.action for tr in trajs for t in tr.turns]),
        ("observation", domain.observation_codec, [t.observation for tr in trajs for t in tr.turns]),
    ):
        for text in _mutations(samples, rng, examples):
            checked += 1
            why = _round_trip(codec, text)
            if why and not why.startswith("does not parse"):
                problems.append(f"{what} {text[:40]!r} {why}")
    return RuleOutcome("codec.generated_input", "fail" if problems else "ok", _listed(problems), checked)


def rule_perfect_reference(domain: Domain, domains: dict[str, Domain], trajs: list[Trajectory]) -> RuleOutcome:
    from awctl.eval.deterministic import DeterministicJudge
    from awctl.eval.judging import judge_rows
    from awctl.formats.agentworldbench import TurnCodec, trajectory_to_rows, turn_index
    from awctl.prompts import OBSERVATION_TAG

    problems, checked = [], 0
    judge = DeterministicJudge(domains)
    codec = TurnCodec(domain)
    for traj in trajs:
        # Rows may cover only some turns (AgentWorldBench files often hold the first, a middle and the last):
        # each row is answered with the real observation of the turn it evaluates.
        rows = [r for r in trajectory_to_rows(traj, domains) if turn_index(r) < len(traj.turns)]
        preds = []
        for row in rows:
            body = codec.render_response(traj.turns[turn_index(row)].observation.strip())
            preds.append({**row, "gen": f"<{OBSERVATION_TAG}>\n{body}\n</{OBSERVATION_TAG}>"})
        for row, judged in zip(rows, judge_rows(preds, judge), strict=True):
            i = turn_index(row)
            checked += 1
            dims = {k: judged.get(k) for k in ("format", "factuality", "consistency", "realism", "quality")}
            if judged.get("failed") or any(v != 5 for v in dims.values()):
                weak = "; ".join(judged.get("weaknesses") or []) or judged.get("error_message", "")
                problems.append(f"{traj.id} turn {i}: {dims} ({weak})")
    if not checked:
        return RuleOutcome("judge.perfect_reference", "skip", "no recordings")
    return RuleOutcome("judge.perfect_reference", "fail" if problems else "ok", _listed(problems), checked)


def _garbage(rng: random.Random, length: int) -> str:
    alphabet = string.ascii_letters + string.digits + " .,;:-_/"
    return "".join(rng.choice(alphabet) for _ in range(max(8, length)))


def rule_fails_garbage(domain: Domain, trajs: list[Trajectory], seed: int) -> RuleOutcome:
    rng = random.Random(seed)
    passed_on: dict[str, list[str]] = {}
    checked = 0
    for traj in trajs:
        for i, turn in enumerate(traj.turns):
            ctx_ref = TurnContext.at(traj, i)
            for garbage in (_garbage(rng, 80), _garbage(rng, len(turn.observation))):
                ctx_bad = TurnContext.at(traj, i, garbage)
                for v in domain.verifiers():
                    ref = _safe(v, ctx_ref)
                    if ref is None or not ref.ok:
                        continue
                    checked += 1
                    got = _safe(v, ctx_bad)
                    if got is None or got.ok:
                        how = "abstains" if got is None else "passes"
                        passed_on.setdefault(v.name, []).append(f"{how} on {traj.id} turn {i}")
    problems = [f"{name} {_listed(where)}" for name, where in passed_on.items()]
    if not checked:
        return RuleOutcome("verifier.fails_garbage", "skip", "no verifier passed on any recorded turn")
    return RuleOutcome("verifier.fails_garbage", "fail" if problems else "ok",
                       _listed(problems) + (" on random text" if problems else ""), checked)


def _safe(verifier: Any, ctx: TurnContext) -> Any:
    from awctl.domain import VerifyResult

    try:
        return verifier(ctx)
    except Exception as exc:
        return VerifyResult(verifier.name, False, f"raised {type(exc).__name__}")


def rule_catches_fault(domain: Domain, trajs: list[Trajectory], seed: int) -> RuleOutcome:
    from awctl.conformance.faults import plant_faults

    tallies = plant_faults(domain, trajs, seed=seed)
    targeted = {t.verifier for t in tallies.values()}
    problems = [f"verifier {v.name!r} has no planted fault (add one to Domain.faults())"
                for v in domain.verifiers() if v.name not in targeted]
    names = {v.name for v in domain.verifiers()}
    problems += [f"fault {t.fault!r} targets {t.verifier!r}, which is not one of the domain's verifiers"
                 for t in tallies.values() if t.verifier not in names]
    checked = 0
    for t in tallies.values():
        checked += t.planted
        if t.verifier not in names:
            continue
        if t.planted == 0:
            problems.append(f"fault {t.fault!r} could not be planted in any recorded turn (no turn where "
                            f"{t.verifier!r} applies: pass recordings that have one, -r FILE or recordings=)")
        elif t.caught * 4 < t.planted * 3:
            why = ", ".join(f"{m['trajectory']} turn {m['turn']} ({m['why']})" for m in t.missed[:2])
            problems.append(f"{t.verifier!r} caught fault {t.fault!r} on {t.caught}/{t.planted} turns: {why}")
    if not trajs:
        return RuleOutcome("verifier.catches_fault", "skip", "no recordings")
    return RuleOutcome("verifier.catches_fault", "fail" if problems else "ok", _listed(problems), checked)


def rule_tasks(runs: list[_Run]) -> list[RuleOutcome]:
    ref = [f"{r.task.id}: {r.error}" for r in runs if r.error]
    ref += [f"{r.task.id}: checker says {r.trajectory.metadata['check']['message'] or 'not ok'}"
            for r in runs if r.trajectory is not None and not r.trajectory.metadata["check"]["ok"]]
    noop = [f"{r.task.id} passes with no action" for r in runs if r.noop_ok]
    noop += [f"{r.task.id}: {r.noop_error}" for r in runs if r.noop_error]
    return [
        RuleOutcome("task.reference_passes", "fail" if ref else "ok", _listed(ref), len(runs)),
        RuleOutcome("task.noop_fails", "fail" if noop else "ok", _listed(noop), len(runs)),
    ]


def rule_variants(domain: Domain) -> RuleOutcome:
    sections = domain.sections_for(None, "initial state")
    try:
        texts = [domain.system_prompt(sections, v) for v in range(domain.prompt_variants)]
    except Exception as exc:
        return RuleOutcome("prompt.variants", "fail", f"system_prompt raised {type(exc).__name__}: {exc}")
    distinct = len(set(texts))
    if distinct < 10:
        return RuleOutcome("prompt.variants", "fail",
                           f"{distinct} distinct wordings of {len(texts)} variants; at least 10 are needed "
                           "(PromptBuilder(roles=...) with 10 role sentences)", len(texts))
    return RuleOutcome("prompt.variants", "ok", f"{distinct} wordings", len(texts))


def rule_reset(domain: Domain, tasks: list[Task], env_settings: dict[str, Any] | None) -> list[RuleOutcome]:
    from awctl.eval.deterministic import comparable

    problems, unlike = [], []
    for task in tasks[:3]:
        firsts = []
        for _ in range(2):
            env = domain.real_env(env_settings)
            if env is None:
                return [RuleOutcome(rule, "fail", "real_env() returned None")
                        for rule in ("env.reset_reproducible", "env.first_observation")]
            with env:
                firsts.append(env.reset(task, seed=7))
        if comparable(domain, firsts[0]) != comparable(domain, firsts[1]):
            problems.append(f"{task.id}: {firsts[0][:50]!r} then {firsts[1][:50]!r}")
        # SimEnv.reset returns first_observation(sections): an agent's first prompt must be the real one.
        sim = domain.first_observation(domain.sections_for(task, firsts[0]))
        if comparable(domain, sim.strip()) != comparable(domain, firsts[0].strip()):  # ends as the judge strips
            unlike.append(f"{task.id}: the real reset shows {firsts[0][:50]!r}, a simulated episode would start "
                          f"from {sim[:50]!r} (override Domain.first_observation to undo sections_for)")
    n = len(tasks[:3])
    return [RuleOutcome("env.reset_reproducible", "fail" if problems else "ok", _listed(problems), n),
            RuleOutcome("env.first_observation", "fail" if unlike else "ok", _listed(unlike), n)]


# ── the whole check ──────────────────────────────────────────────────────────────────────────────────


def check_domain(
    domain: Domain,
    *,
    recordings: Iterable[Trajectory] | None = None,
    real_env: bool = True,
    task_limit: int | None = None,
    env_settings: dict[str, Any] | None = None,
    examples: int = 200,
    seed: int = 0,
    on_rule: Callable[[RuleOutcome], None] | None = None,
) -> ConformanceReport:
    """Run every rule on ``domain`` and return the report.

    ``recordings``: trajectories of this domain to check codecs, the judge, verifiers and faults on (any
    source: the domain's own fixtures, foreign data). With ``real_env`` and an available real environment,
    the reference solution of every task (``task_limit`` per suite) is also recorded now, and the task and
    reset rules run; otherwise those rules are skipped with the reason.
    """
    report = ConformanceReport(domain.name)

    def add(outcome: RuleOutcome) -> None:
        report.outcomes.append(outcome)
        if on_rule:
            on_rule(outcome)

    trajs = [t for t in (recordings or []) if t.domain == domain.name]
    tasks = _tasks(domain, task_limit)
    available, why = domain.real_env_status() if real_env else (False, "real environment not requested")
    runs: list[_Run] = []
    if available and tasks:
        runs = _run_tasks(domain, tasks, env_settings)
        trajs += [r.trajectory for r in runs if r.trajectory is not None]
    domains = {domain.name: domain}
    add(rule_round_trip(domain, trajs))
    add(rule_generated_input(domain, trajs, examples, seed))
    add(rule_perfect_reference(domain, domains, trajs))
    add(rule_fails_garbage(domain, trajs, seed))
    add(rule_catches_fault(domain, trajs, seed))
    if runs:
        for outcome in rule_tasks(runs):
            add(outcome)
    else:
        reason = "the domain has no tasks" if not tasks else f"no real environment: {why}"
        add(RuleOutcome("task.reference_passes", "skip", reason))
        add(RuleOutcome("task.noop_fails", "skip", reason))
    add(rule_variants(domain))
    if available and tasks:
        for outcome in rule_reset(domain, tasks, env_settings):
            add(outcome)
    else:
        for rule in ("env.reset_reproducible", "env.first_observation"):
            add(RuleOutcome(rule, "skip", "the domain has no tasks" if not tasks else f"no real environment: {why}"))
    return report
