"""Sim vs Real: what the comparison of agent-training arms measures, and its report.

The ``compare`` stage kind (:mod:`awctl.stages.compare`) trains one policy per *arm* (real environment,
simulator, controlled simulator, hybrid, world-model warm start) with equal budgets and evaluates each on
held-out **real** tasks; this module holds the parts that are not orchestration:

* :func:`replay_in_real` — **WM2Real**: the actions of episodes a policy played in the simulator are
  replayed one by one in a fresh real environment (same task, same seed). Per episode it records whether
  the task succeeds in real too (the task's checker in the real environment); per step whether the
  simulator's observation equals the real one (the deterministic judge's exact match: the domain codec's
  normalisation, runtime metadata masked) and the judge's 0–100 score of the simulated observation
  against the real one (:func:`awctl.eval.deterministic.compare`, as the fidelity audit scores turns).
  :meth:`Wm2RealResult.summary` gives ``wm2real`` = the share of the episodes that succeeded in the
  simulator whose task still succeeds in real (``None`` when none succeeded in the simulator), with a
  Wilson 95% interval, plus the agreement of the two verdicts over every replayed episode.
* :func:`budget_problems` — the budgets every arm must share (optimizer steps, group size, tasks per
  step, turn limit, seed, behaviour-cloning steps) and the ones it actually used (episodes): a list of
  differences, empty when they are equal.
* :func:`learning_curves` — reward and success per training step from an arm's ``metrics.jsonl``.
* :func:`write_report` — ``report.md``, PNG plots (learning curves, held-out success with 95% whiskers)
  through :mod:`awctl.report`, from the ``compare.json`` document alone.
* :func:`fail_under` — the gate of ``awctl compare --fail-under RATIO``.

Episodes are read as the episode JSONL lines the agent stages write (:meth:`Episode.to_dict`, with or
without token ids) or as :class:`~awctl.agent.episode.Episode` objects.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from awctl.agent.evaluate import wilson_interval
from awctl.domain import Domain, Task

# ── WM2Real ──────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class ReplayedEpisode:
    """One simulated episode replayed in the real environment. ``steps``: actions replayed (invalid
    actions never reached the simulator and are not replayed); ``exact_steps``: steps whose simulated
    observation equals the real one; ``scores``: the judge's 0–100 score per step; ``real_success`` is
    ``None`` when the replay failed (``error``)."""

    task_id: str
    seed: int
    sim_success: bool
    real_success: bool | None
    steps: int = 0
    exact_steps: int = 0
    scores: list[float] = field(default_factory=list)
    check_message: str = ""
    error: str | None = None
    wall_s: float = 0.0


@dataclass
class Wm2RealResult:
    episodes: list[ReplayedEpisode]
    skipped: int = 0  # simulated episodes not replayed (crashed or timed out in the simulator)
    wall_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Headline numbers (every share within 0..1; ``None`` where nothing was there to count)."""
        done = [e for e in self.episodes if e.error is None]
        won = [e for e in done if e.sim_success]
        still = sum(1 for e in won if e.real_success)
        low, high = wilson_interval(still, len(won)) if won else (None, None)
        steps = sum(e.steps for e in done)
        scores = [s for e in done for s in e.scores]
        return {
            "replayed": len(done), "failed_replays": len(self.episodes) - len(done), "skipped": self.skipped,
            "sim_successes": len(won), "still_succeed": still,
            "wm2real": still / len(won) if won else None, "wm2real_ci95": [low, high] if won else None,
            "real_success": sum(1 for e in done if e.real_success) / len(done) if done else None,
            "agreement": sum(1 for e in done if bool(e.real_success) == e.sim_success) / len(done) if done else None,
            "steps": steps, "exact_steps": sum(e.exact_steps for e in done),
            "step_exact": sum(e.exact_steps for e in done) / steps if steps else None,
            "step_score": sum(scores) / len(scores) if scores else None,
            "wall_s": round(self.wall_s, 3),
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "episodes": [asdict(e) for e in self.episodes]}


def _view(episode: Any) -> dict[str, Any]:
    """An episode (object or JSONL dict) as the plain fields a replay needs."""
    data = episode if isinstance(episode, dict) else episode.to_dict(tokens=False)
    turns = [{"action": t.get("action_text", ""), "observation": t.get("observation_text", ""),
              "valid": bool(t.get("valid", True)), "stop": bool(t.get("stop", False))}
             for t in data.get("turns", [])]
    return {"task_id": data["task_id"], "seed": int(data.get("seed") or 0), "success": bool(data.get("success")),
            "status": data.get("status", "done"), "turns": turns}


def _replay_one(domain: Domain, factory: Any, task: Task, ep: dict[str, Any], holder: list[Any]) -> ReplayedEpisode:
    from awctl.eval.deterministic import compare
    from awctl.eval.score import normalize
    from awctl.trajectory import Trajectory, Turn

    out = ReplayedEpisode(ep["task_id"], ep["seed"], ep["success"], None)
    env = factory.make(task, 0)
    holder.append(env)
    initial = env.reset(task, seed=ep["seed"])
    pairs: list[tuple[str, str, str]] = []  # action, simulated observation, real observation
    for t in ep["turns"]:
        if t["stop"] or not t["valid"]:
            continue
        pairs.append((t["action"], t["observation"], env.step(t["action"]).observation))
    verdict = task.check(env)
    out.real_success, out.check_message = bool(verdict.ok), verdict.message
    real = Trajectory(id=f"wm2real-{ep['task_id']}-{ep['seed']}", domain=domain.name,
                      system=domain.sections_for(task, initial_state=initial),
                      turns=[Turn(action=a, observation=r) for a, _, r in pairs])
    for i, (_, sim_obs, real_obs) in enumerate(pairs):
        j = compare(domain, real_obs, sim_obs, trajectory=real, index=i)
        out.exact_steps += int(bool(j.details.get("exact")))
        out.scores.append(round(normalize(j.total_score), 3))
    out.steps = len(pairs)
    return out


def replay_in_real(domain: Domain, real_factory: Any, tasks: Iterable[Task], episodes: Iterable[Any], *,
                   limit: int | None = None, timeout_s: float = 600.0) -> Wm2RealResult:
    """Replay simulated ``episodes`` in real environments from ``real_factory`` (see the module docstring).

    Episodes that crashed or timed out in the simulator are skipped (counted); at most ``limit`` are
    replayed, in order. A replay that raises or runs past ``timeout_s`` is recorded with its error (its
    environment is abandoned and closed from another thread) and the others go on."""
    from awctl.agent.rollout import ThreadWorker, abandon

    by_id = {t.id: t for t in tasks}
    views = [_view(e) for e in episodes]
    usable = [v for v in views if v["status"] not in ("crashed", "timeout") and v["task_id"] in by_id]
    skipped = len(views) - len(usable)
    if limit is not None:
        usable = usable[:limit]
    t0 = time.perf_counter()
    results: list[ReplayedEpisode] = []
    for v in usable:
        start = time.perf_counter()
        holder: list[Any] = []
        worker = ThreadWorker(f"awctl-wm2real-{v['task_id']}")
        fut = worker.submit(_replay_one, domain, real_factory, by_id[v["task_id"]], v, holder)
        worker.stop()
        try:
            res = fut.result(timeout=timeout_s)
            if holder:
                _close(holder[0])
        except Exception as exc:  # one broken replay must not lose the others
            import concurrent.futures

            timed_out = isinstance(exc, concurrent.futures.TimeoutError)
            res = ReplayedEpisode(v["task_id"], v["seed"], v["success"], None,
                                  error=f"timed out after {timeout_s:g} s" if timed_out
                                  else f"{type(exc).__name__}: {exc}")
            if holder and timed_out:
                abandon(holder[0])  # its worker may be stuck in the call: close from elsewhere, never wait
            elif holder:
                _close(holder[0])
        res.wall_s = round(time.perf_counter() - start, 3)
        results.append(res)
    return Wm2RealResult(results, skipped, time.perf_counter() - t0)


def _close(env: Any) -> None:
    def close() -> None:
        with contextlib.suppress(Exception):  # a failing close must not lose the replay's result
            env.close()

    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(timeout=30)


# ── budgets and curves ───────────────────────────────────────────────────────────────────────────────

#: What every arm is given alike; ``episodes`` is what it actually used (dynamic sampling may draw more).
BUDGET_KEYS = ("steps", "group_size", "tasks_per_step", "max_turns", "seed", "bc_steps")


def budget_problems(budgets: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Differences between the arms' budgets (``{arm: {key: value}}``): one line per key of
    :data:`BUDGET_KEYS` or ``episodes`` whose value is not the same in every arm."""
    problems = []
    for key in (*BUDGET_KEYS, "episodes"):
        values = {arm: b.get(key) for arm, b in budgets.items()}
        if len(set(map(json.dumps, values.values()))) > 1:
            problems.append(f"{key} differs: " + ", ".join(f"{a}={v}" for a, v in values.items()))
    return problems


def learning_curves(metrics_path: Path) -> dict[str, list[list[float]]]:
    """``{"reward": [[step, value], ...], "success": [...]}`` from an agent trainer's ``metrics.jsonl``
    (the last record of each step counts: a resumed run may have written a step twice)."""
    by_step: dict[int, dict[str, Any]] = {}
    if metrics_path.is_file():
        for line in metrics_path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("step"), int) and "reward" in rec:
                by_step[rec["step"]] = rec
    out: dict[str, list[list[float]]] = {"reward": [], "success": []}
    for step in sorted(by_step):
        rec = by_step[step]
        for key, src in (("reward", "reward"), ("success", "success_rate")):
            value = rec.get(src)
            if isinstance(value, (int, float)) and math.isfinite(value):
                out[key].append([step, float(value)])
    return out


def non_finite(value: Any, path: str = "") -> list[str]:
    """Paths of every NaN or infinite number inside ``value`` (dicts and lists walked)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path or "(value)"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{path}[{i}]")]
    return []


# ── the gate ─────────────────────────────────────────────────────────────────────────────────────────


def fail_under(data: Mapping[str, Any], ratio: float) -> tuple[bool, str]:
    """``(passed, one line)``: whether the sim arm's held-out real success is at least ``ratio`` × the
    real arm's (the arms named in ``data["gate"]``)."""
    from awctl.errors import AwctlError

    gate = data.get("gate") or {}
    sim, real = gate.get("sim_arm"), gate.get("real_arm")
    if not sim or not real:
        raise AwctlError("--fail-under needs a sim arm and a real arm in the comparison",
                         hint="add arms of kind 'sim' and 'real' (or name them with sim_arm / real_arm)")
    arms = data["arms"]
    s, r = arms[sim]["after"]["success_rate"], arms[real]["after"]["success_rate"]
    need = ratio * r
    ok = s >= need - 1e-12
    line = (f"sim arm {sim!r} held-out real success {s:.3f} {'>=' if ok else '<'} {ratio:g} × real arm "
            f"{real!r} {r:.3f} = {need:.3f}")
    return ok, line


# ── the report ───────────────────────────────────────────────────────────────────────────────────────


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ci(ev: Mapping[str, Any] | None) -> str:
    if not ev:
        return "-"
    low, high = ev["ci95"]
    return f"{ev['successes']}/{ev['episodes']} = {_pct(ev['success_rate'])} [{_pct(low)}, {_pct(high)}]"


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def make_plots(data: Mapping[str, Any], out_dir: Path) -> dict[str, Path]:
    """Learning curves (reward, success vs step, one line per arm) and held-out success before/after with
    95% whiskers, as PNGs in ``out_dir``. Raises ImportError without matplotlib."""
    from awctl.report.plots import bar_chart, line_plot

    arms = data["arms"]
    made: dict[str, Path] = {}
    for key, label in (("reward", "mean reward per step"), ("success", "success rate per step")):
        series = {name: [tuple(p) for p in arm["curves"][key]] for name, arm in arms.items() if arm["curves"][key]}
        if series:
            made[f"curve_{key}"] = line_plot(series, out_dir / f"curve-{key}.png", title=f"training: {label}",
                                             ylabel=label)
    groups = {name: {"before": arm["before"]["success_rate"], "after": arm["after"]["success_rate"]}
              for name, arm in arms.items()}
    errors = {name: {"before": tuple(arm["before"]["ci95"]), "after": tuple(arm["after"]["ci95"])}
              for name, arm in arms.items()}
    made["heldout"] = bar_chart(groups, out_dir / "heldout-success.png", errors=errors, ymax=1.0,
                                title="held-out real success (95% CI)", ylabel="success rate")
    return made


def render_report(data: Mapping[str, Any], plots: Mapping[str, Path] | None, image_prefix: str = "",
                  shift: int = 0) -> str:
    """The comparison as markdown; images are linked as ``image_prefix + <file name>``; headings go
    ``shift`` levels deeper (for a fragment inside another report)."""
    from awctl.report.markdown import fmt_duration, md_table

    arms = data["arms"]
    wm = data.get("world_model") or {}
    lines = [f"# Sim vs Real: {data['domain']}", "",
             f"- policy: `{data['policy']}`; world model: `{wm.get('backend', '-')}` "
             f"`{(wm.get('options') or {}).get('model', '-')}`",
             f"- training tasks: {len(data['train_tasks'])}; held-out real tasks: {len(data['heldout_tasks'])} × "
             f"seeds {data['seeds']} = {len(data['heldout_tasks']) * len(data['seeds'])} episodes per evaluation "
             f"(temperature {data['eval_temperature']})",
             f"- rewards in training: {data['reward']}; held-out success: the task checker in the real environment",
             ""]
    lines += ["## Held-out real success (Wilson 95% interval)", ""]
    rows = []
    for name, arm in arms.items():
        b, a = arm["before"], arm["after"]
        rows.append([name, arm["kind"], arm["env"], arm["start"], _ci(b), _ci(a),
                     f"{100 * (a['success_rate'] - b['success_rate']):+.1f} pts"])
    lines += [md_table(["arm", "kind", "trained in", "start", "before", "after", "change"], rows), ""]
    if plots and "heldout" in plots:
        lines += [f"![held-out success]({image_prefix}{plots['heldout'].name})", ""]
    gate = data.get("gate") or {}
    if gate.get("sim_arm") and gate.get("real_arm"):
        s, r = (arms[gate[k]]["after"]["success_rate"] for k in ("sim_arm", "real_arm"))
        ratio = f"{s / r:.2f}" if r else "- (the real arm solved none)"
        lines += [f"Sim arm `{gate['sim_arm']}` / real arm `{gate['real_arm']}` held-out success: {ratio} "
                  "(`awctl compare --fail-under RATIO` fails below RATIO).", ""]

    lines += ["## Budgets", "",
              "Every arm gets the same optimizer steps, group size, tasks per step, turn limit, seed and "
              "behaviour-cloning warm start; the table shows what each actually used.", ""]
    rows = []
    for name, arm in arms.items():
        bud = arm["budget"]
        rows.append([name, bud["steps"], bud["updates"], bud["group_size"], bud["tasks_per_step"],
                     bud["max_turns"] if bud["max_turns"] is not None else "task's", bud["seed"], bud["bc_steps"],
                     bud["episodes"], bud["env_steps"], bud.get("real_env_steps", "-"), bud.get("sim_env_steps", "-")])
    lines += [md_table(["arm", "optimizer steps", "steps with signal", "group size", "tasks/step", "max turns",
                        "seed", "BC steps", "episodes", "env steps", "real env steps", "sim env steps"], rows), ""]
    problems = data.get("budget_problems") or []
    lines += ["Budgets equal: **yes**." if not problems else
              "Budgets equal: **no** — " + "; ".join(problems), ""]

    sim_arms = {n: a for n, a in arms.items() if a.get("sim_eval")}
    if sim_arms:
        lines += ["## Sim–real gap", "",
                  "The same trained policy on the same held-out tasks and seeds, in the simulator (its checker's "
                  "probes answered by the world model) and in the real environment.", ""]
        rows = [[n, _ci(a["sim_eval"]), _ci(a["after"]), f"{100 * a['gap']:+.1f} pts"] for n, a in sim_arms.items()]
        lines += [md_table(["arm", "success in sim", "success in real", "gap (sim − real)"], rows), ""]
        lines += ["## WM2Real", "",
                  "The simulator episodes above, replayed action by action in a fresh real environment: WM2Real "
                  "is the share of those that succeeded in the simulator whose task still succeeds in real; "
                  "agreement compares the two verdicts over all replayed episodes; per step, how often the "
                  "simulator's observation was exactly the real one and the judge's 0–100 score of it.", ""]
        rows = []
        for n, a in sim_arms.items():
            w = a["wm2real"]
            ci = w.get("wm2real_ci95")
            rows.append([n, w["replayed"], w["sim_successes"],
                         "n/a (no simulator success)" if w["wm2real"] is None else
                         f"{w['still_succeed']}/{w['sim_successes']} = {_pct(w['wm2real'])} [{_pct(ci[0])}, "
                         f"{_pct(ci[1])}]",
                         _pct(w["agreement"]), _pct(w["real_success"]), _pct(w["step_exact"]), _num(w["step_score"], 1)])
        lines += [md_table(["arm", "replayed", "sim successes", "WM2Real", "verdicts agree", "replays succeeding "
                            "in real", "steps exact", "step score"], rows), ""]

    lines += ["## Speed and wall time", "",
              "Training: environment steps per second of rollout wall time, and per second of environment "
              "time (every environment call of an episode summed: make + reset, steps, the checker); wall "
              "time of each phase.", ""]
    rows = []
    for n, a in arms.items():
        t = a["train"]
        per_env = t["env_steps"] / t["env_s"] if t.get("env_s") else None
        rows.append([n, a["env"], t["env_steps"], _num(t.get("env_steps_per_s")), _num(per_env),
                     fmt_duration(a["wall_s"]["train"]), fmt_duration(a["wall_s"]["eval_real"]),
                     fmt_duration(a["wall_s"].get("eval_sim")), fmt_duration(a["wall_s"].get("wm2real")),
                     fmt_duration(a["wall_s"]["total"])])
    lines += [md_table(["arm", "trained in", "env steps", "steps/s (rollout wall)", "steps per env-second",
                        "train", "real eval", "sim eval", "WM2Real", "total"], rows), ""]
    speed = data.get("speed") or {}
    if speed.get("sim") and speed.get("real"):
        s, r = speed["sim"], speed["real"]
        lines += ["Held-out evaluations of the same policies on the same tasks (the arms trained in the "
                  "simulator), environment steps per second of step time (each step's own duration; resets and "
                  "the checker's probes left out; simulator steps of concurrent episodes share batched calls):", "",
                  md_table(["environment", "env steps", "steps per step-second", "steps/s (evaluation wall)"],
                           [["simulator", s["env_steps"], _num(s["env_steps_per_s"]), _num(s["env_steps_per_wall_s"])],
                            ["real", r["env_steps"], _num(r["env_steps_per_s"]), _num(r["env_steps_per_wall_s"])]]),
                  ""]
    curves = {k[len("curve_"):]: f for k, f in (plots or {}).items() if k.startswith("curve_")}
    if curves:
        lines += ["## Learning curves", "", "Mean reward and success rate of each GSPO step's episodes, per arm "
                  "(in the arm's own training environment).", ""]
        lines += [line for k, f in curves.items() for line in (f"![{k} per step]({image_prefix}{f.name})", "")]
    elif plots is None:
        lines += ["_plots unavailable: install matplotlib_", ""]
    if shift:
        lines = [("#" * shift + line) if line.startswith("#") else line for line in lines]
    return "\n".join(lines).rstrip() + "\n"


def write_report(data: Mapping[str, Any], out_dir: Path, *, fragment_prefix: str = "") -> tuple[Path, str]:
    """Write ``out_dir/compare.json``, ``out_dir/plots/*.png`` and ``out_dir/report.md``; returns the
    report's path and the same report as a fragment for a run's report.md (which sits elsewhere): images
    linked through ``fragment_prefix + "plots/"``, headings two levels deeper."""
    from awctl.report.markdown import write_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "compare.json", json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    try:
        plots: dict[str, Path] | None = make_plots(data, out_dir / "plots")
    except ImportError:
        plots = None
    path = out_dir / "report.md"
    write_atomic(path, render_report(data, plots, "plots/"))
    return path, render_report(data, plots, f"{fragment_prefix}plots/", shift=2)
