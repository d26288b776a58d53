"""Fidelity audit: where does a simulator diverge from the real environment, by action family?

The same action sequences the real environment answered (recorded trajectories, or task reference
solutions executed live first) go through the simulator *teacher-forced*: for every turn the simulator
sees the real history (:func:`awctl.formats.chat.messages_at`) and predicts that turn's observation. Each
prediction is compared with the real observation by the deterministic judge
(:func:`awctl.eval.deterministic.compare`, which also runs the domain's verifiers), and turns are grouped
by the domain's ``action_codec.family`` (command name, tool name, editor command, GUI action type).

Per family: turns, exact-match rate, verifier pass rate (the prediction passes every verifier the real
observation passes), mean judge score (0–100, normalised like AgentWorldBench). Families are ranked by
score, then exact-match rate, lowest first: the top of the list are the simulator's blind spots.
:func:`write_report` writes ``report.md`` with PNG bar plots, ``audit.json`` and ``turns.jsonl``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from awctl.backend import Backend, ChatRequest
from awctl.domain import Domain
from awctl.eval.score import normalize
from awctl.trajectory import Trajectory


@dataclass
class TurnResult:
    trajectory_id: str
    turn: int
    family: str
    action: str
    exact: bool
    verifier_ok: bool
    score: float  # total 1-5
    scores: dict[str, int]
    prediction: str
    reference: str
    weaknesses: list[str] = field(default_factory=list)


@dataclass
class FamilyStats:
    family: str
    turns: int
    exact_rate: float
    verifier_rate: float
    score: float  # 0-100

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditResult:
    domain: str
    backend: str
    turns: list[TurnResult]

    def families(self) -> list[FamilyStats]:
        """Per-family metrics, ranked worst first (score, then exact-match rate, then name)."""
        groups: dict[str, list[TurnResult]] = defaultdict(list)
        for t in self.turns:
            groups[t.family].append(t)
        stats = [
            FamilyStats(
                family=name,
                turns=len(ts),
                exact_rate=sum(t.exact for t in ts) / len(ts),
                verifier_rate=sum(t.verifier_ok for t in ts) / len(ts),
                score=normalize(sum(t.score for t in ts) / len(ts)),
            )
            for name, ts in groups.items()
        ]
        return sorted(stats, key=lambda s: (s.score, s.exact_rate, s.family))

    def overall(self) -> dict[str, Any]:
        n = len(self.turns)
        if not n:
            return {"turns": 0, "exact_rate": None, "verifier_rate": None, "score": None}
        return {
            "turns": n,
            "exact_rate": sum(t.exact for t in self.turns) / n,
            "verifier_rate": sum(t.verifier_ok for t in self.turns) / n,
            "score": normalize(sum(t.score for t in self.turns) / n),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "backend": self.backend,
            "overall": self.overall(),
            "families": [f.to_dict() for f in self.families()],
        }


def _family(domain: Domain, action: str) -> str:
    try:
        return str(domain.action_codec.family(action)) or "action"
    except Exception:  # an action the codec cannot read still belongs somewhere
        return "unparsable"


def reference_trajectories(
    domain: Domain,
    paths: Iterable[Path],
    *,
    real: bool = False,
    suite: str | None = None,
    limit: int | None = None,
    out_dir: Path,
    env_settings: dict[str, Any] | None = None,
) -> list[Trajectory]:
    """The real trajectories to audit against: those of ``domain`` in ``paths``, plus (``real``) the task
    reference solutions executed live now in the real environment (with ``env_settings``, the project's
    ``[domains.<name>]`` table), recorded to ``out_dir/real.jsonl``."""
    from awctl.errors import InputError
    from awctl.record import record, select_tasks
    from awctl.trajectory import read_trajectories

    out = [t for path in paths for t in read_trajectories(path) if t.domain == domain.name]
    if real:
        live = out_dir / "real.jsonl"
        summary = record(domain, select_tasks(domain, suite, limit), live, env_settings=env_settings)
        if summary.errors:
            raise InputError(
                f"{domain.name}: {len(summary.errors)} reference run(s) failed: {summary.errors[0]}",
                hint="check `awctl doctor` for the domain's real environment",
            )
        out.extend(read_trajectories(live))
    if not out:
        raise InputError(
            f"no {domain.name} trajectories to audit",
            hint="pass --trajectories FILE (recorded real runs) or --real to run reference solutions",
        )
    if limit is not None and not real:
        out = out[:limit]
    return out


def run_audit(
    domain: Domain,
    trajectories: Iterable[Trajectory],
    backend: Backend,
    *,
    domains: Mapping[str, Domain] | None = None,
    max_tokens: int = 2048,
    temperature: float = 0.0,
    chunk_size: int = 32,
    style: str = "agentworldbench",
    on_progress: Callable[[str], None] | None = None,
) -> AuditResult:
    """Teacher-forced replay of every turn of ``trajectories`` through ``backend``, judged per turn. The
    model sees each turn in chat ``style`` (:mod:`awctl.formats.view`, wording variant 0).

    ``chunk_size`` turns go to the backend per ``generate`` call; after each chunk is judged,
    ``on_progress`` (when given) receives one line: ``+N turns (done/total, R turns/s)``."""
    import time

    from awctl.eval.deterministic import compare, decode_candidate
    from awctl.formats.view import messages_at, style_name
    from awctl.sim.parse import parse_output

    table = dict(domains) if domains is not None else {domain.name: domain}
    table.setdefault(domain.name, domain)
    jobs: list[tuple[Trajectory, int]] = []
    for traj in trajectories:
        if traj.domain != domain.name:
            continue
        jobs.extend((traj, t) for t in range(len(traj.turns)))
    results: list[TurnResult] = []
    began = time.perf_counter()
    for start in range(0, len(jobs), chunk_size):
        chunk = jobs[start : start + chunk_size]
        requests = [
            ChatRequest(messages_at(traj, t, table, style), max_tokens=max_tokens, temperature=temperature)
            for traj, t in chunk
        ]
        outputs = backend.generate(requests)
        for (traj, t), completions in zip(chunk, outputs, strict=True):
            c = completions[0] if completions else None
            parsed = parse_output(c.text if c else "", c.reasoning if c else None)
            candidate = (parsed.observation if style_name(style) == "awctl"
                         else decode_candidate(domain, parsed.observation))
            turn = traj.turns[t]
            j = compare(
                domain,
                turn.observation,
                candidate,
                trajectory=traj,
                index=t,
                output_diagnostics=parsed.diagnostics,
            )
            results.append(
                TurnResult(
                    trajectory_id=traj.id,
                    turn=t,
                    family=_family(domain, turn.action),
                    action=turn.action,
                    exact=bool(j.details["exact"]),
                    verifier_ok=j.details["verifier_rate"] >= 1.0,
                    score=j.total_score,
                    scores=j.scores,
                    prediction=candidate,
                    reference=turn.observation,
                    weaknesses=j.weaknesses,
                )
            )
        if on_progress is not None:
            rate = len(results) / max(time.perf_counter() - began, 1e-9)
            on_progress(f"+{len(chunk)} turns ({len(results)}/{len(jobs)}, {rate:.2f} turns/s)")
    return AuditResult(
        domain=domain.name, backend=getattr(backend, "name", "") or type(backend).__name__, turns=results
    )


def bar_plot(values: Mapping[str, float], path: Path, *, title: str, ylabel: str, ymax: float) -> Path:
    """One PNG bar chart (matplotlib Agg, imported here so the module stays cheap)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    labels = list(values)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(labels) + 2), 3.5), dpi=100)
    try:
        ax.bar(range(len(labels)), [values[k] for k in labels], color="#4c72b0")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, ymax)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def write_report(result: AuditResult, out_dir: Path, *, blind_spots: int = 5) -> Path:
    """``report.md`` (+ ``plots/*.png``, ``audit.json``, ``turns.jsonl``) in ``out_dir``; returns report.md."""
    from awctl.report.markdown import md_table

    out_dir.mkdir(parents=True, exist_ok=True)
    fams = result.families()
    (out_dir / "audit.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    with open(out_dir / "turns.jsonl", "w", encoding="utf-8") as handle:
        for t in result.turns:
            handle.write(json.dumps(asdict(t), ensure_ascii=False) + "\n")
    plots = []
    if fams:
        for key, title, ylabel, scale, ymax in (
            ("score", "Judge score by action family", "score (0-100)", 1.0, 100.0),
            ("exact_rate", "Exact-match rate by action family", "exact match (%)", 100.0, 100.0),
            ("verifier_rate", "Verifier pass rate by action family", "verifiers passed (%)", 100.0, 100.0),
        ):
            name = f"plots/{key}.png"
            bar_plot(
                {f.family: getattr(f, key) * scale for f in fams},
                out_dir / name,
                title=title,
                ylabel=ylabel,
                ymax=ymax,
            )
            plots.append((title, name))
    ov = result.overall()
    overall_score = "-" if ov["score"] is None else f"{ov['score']:.2f}"
    lines = [
        f"# Fidelity audit: {result.domain} (simulator: {result.backend})",
        "",
        f"{ov['turns']} turns replayed teacher-forced. Overall: exact match {_pct(ov['exact_rate'])}, "
        f"verifier pass {_pct(ov['verifier_rate'])}, judge score "
        f"{overall_score} / 100 (deterministic judge).",
        "",
        "## Action families, worst first",
        "",
        md_table(
            ["rank", "family", "turns", "exact match", "verifier pass", "score"],
            [
                [i + 1, f.family, f.turns, _pct(f.exact_rate), _pct(f.verifier_rate), f"{f.score:.2f}"]
                for i, f in enumerate(fams)
            ],
        ),
        "",
    ]
    spots = [f for f in fams[:blind_spots] if f.score < 100 or f.exact_rate < 1]
    if spots:
        lines += ["## Blind spots", ""]
        for f in spots:
            worst = min((t for t in result.turns if t.family == f.family), key=lambda t: t.score)
            why = "; ".join(worst.weaknesses[:2]) or "differs from the real observation"
            lines.append(
                f"- **{f.family}** — score {f.score:.2f}, exact {_pct(f.exact_rate)}; worst turn "
                f"`{worst.trajectory_id}` #{worst.turn + 1}: {why}"
            )
        lines.append("")
    for title, name in plots:
        lines += [f"![{title}]({name})", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
