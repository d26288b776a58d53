"""Sim vs Real (``awctl compare``, stage kind ``compare``) on the lamps toy domain (tests/fixtures/agent_lamps):
every arm kind trains with the same budget and is evaluated on held-out real tasks before and after; the
report, compare.json and plots are written; WM2Real replays simulator episodes in the real environment; the
``--fail-under`` gate exits 0 or 1 by the numbers; finished pieces are reused when the stage reruns; and a
simulator that answers exactly as the real environment does gets WM2Real 1 with every step exact."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

LAMPS_DIR = Path(__file__).resolve().parent / "fixtures" / "agent_lamps"
LAMPS_ENV = {"AWCTL_PLUGINS_DIR": str(LAMPS_DIR)}
# Every held-out lamp appears in training only with the other target; link and notes appear with both.
TRAIN = ["lamps/all/tree-on", "lamps/all/cart-off", "lamps/all/page-on", "lamps/all/root-off",
         "lamps/all/link-on", "lamps/all/link-off", "lamps/all/notes-on", "lamps/all/notes-off"]
HELDOUT = ["lamps/all/tree-off", "lamps/all/cart-on", "lamps/all/page-off", "lamps/all/root-on"]


@pytest.fixture(scope="module")
def lamps_models(tmp_path_factory) -> tuple[Path, Path]:
    """``(agent, world model)``. The agent already knows every lamps task (behaviour cloning on all twelve
    reference solutions): the shared start, so the held-out real success is not zero and the gate can fail.
    The world model is that agent after a few CPT steps on recorded lamps trajectories: a checkpoint that had
    world-model training (the wm_warmup arm's start, and the simulator of the sim arms)."""
    import os

    from awctl import plugins
    from awctl.stages.standalone import run_standalone

    old = os.environ.get("AWCTL_PLUGINS_DIR")
    os.environ["AWCTL_PLUGINS_DIR"] = str(LAMPS_DIR)
    plugins._REGISTRY = None
    try:
        reg, out = plugins.get_registry(), tmp_path_factory.mktemp("lamps-models")
        run = run_standalone(reg, "agent_train", {
            "domain": "lamps", "policy": "tiny", "tasks": "all", "steps": 1, "group_size": 2, "tasks_per_step": 1,
            "bc": {"steps": 100, "lr": 1e-2, "batch_size": 12}, "max_action_tokens": 8, "require_signal": False,
            "optim": {"lr": 1e-9}}, out / "agent", console=None)
        agent = Path(run.outputs["bc_checkpoint"])
        rec = run_standalone(reg, "record", {"domains": ["lamps"], "policy": "scripted"}, out / "record", console=None)
        prep = run_standalone(reg, "prep", {"inputs": [str(rec.outputs["trajectories"])], "tokenizer": str(agent),
                                            "block_size": 256, "split": "train=1", "dedupe": False},
                              out / "prep", console=None)
        wm = run_standalone(reg, "cpt", {"data": str(prep.outputs["shards"]), "model": str(agent), "steps": 4,
                                         "batch_size": 4, "optim": {"lr": 1e-4}}, out / "wm", console=None)
        return agent, Path(wm.outputs["checkpoint"])
    finally:
        plugins._REGISTRY = None
        if old is None:
            os.environ.pop("AWCTL_PLUGINS_DIR", None)
        else:
            os.environ["AWCTL_PLUGINS_DIR"] = old


def _recipe(path: Path, start: Path, world_model: Path) -> Path:
    path.write_text(f"""
[recipe]
name = "lamps-compare"
seed = 0

[[stages]]
kind = "compare"
domain = "lamps"
policy = "{start}"
train_tasks = {json.dumps(TRAIN)}
heldout_tasks = {json.dumps(HELDOUT)}
seeds = [0, 1]
budget = {{ steps = 2, group_size = 2, tasks_per_step = 2, max_turns = 2 }}
bc = {{ steps = 3, lr = 1e-4 }}
world_model = {{ backend = "transformers", options = {{ model = "{world_model}" }}, sim_options = {{ max_tokens = 8 }} }}
train = {{ max_action_tokens = 8, require_signal = false, concurrency = 8, optim = {{ lr = 1e-5 }} }}

[stages.arms.real]
kind = "real"
[stages.arms.sim]
kind = "sim"
[stages.arms.sim_curriculum]
kind = "sim_perturbed"
schedule = {{ curriculum = [{{ start = 0, max_solution = 1 }}] }}
[stages.arms.hybrid]
kind = "hybrid"
blind_spots = ["action"]
[stages.arms.wm_warmup]
kind = "wm_warmup"
policy = "{world_model}"
""", encoding="utf-8")
    return path


@pytest.mark.slow
def test_compare_trains_every_arm_alike_reports_and_gates(tmp_path: Path, awctl, lamps_models) -> None:
    agent, world_model = lamps_models
    recipe = _recipe(tmp_path / "lamps-compare.toml", agent, world_model)
    runs = tmp_path / "runs"
    first = awctl("compare", str(recipe), "--output-root", str(runs), "--fail-under", "0.5", env=LAMPS_ENV,
                  timeout=900)
    assert first.returncode == 0, first.stderr[-4000:]
    assert "gate passed (compare)" in first.stdout
    [run_dir] = list(runs.iterdir())
    stage = run_dir / "stages" / "compare"
    data = json.loads((stage / "compare.json").read_text())

    # Every arm trained with the same budget and was evaluated on every held-out episode, before and after.
    assert list(data["arms"]) == ["real", "sim", "sim_curriculum", "hybrid", "wm_warmup"]
    assert data["budget_problems"] == []
    per_eval = len(HELDOUT) * 2
    budgets = {n: a["budget"] for n, a in data["arms"].items()}
    for name, b in budgets.items():
        assert (b["steps"], b["group_size"], b["tasks_per_step"], b["max_turns"], b["seed"], b["bc_steps"]) == \
            (2, 2, 2, 2, 0, 3), name
        assert b["episodes"] == 2 * 2 * 2, name  # steps × tasks per step × group size: nothing drawn extra
    assert budgets["real"]["sim_env_steps"] == 0 and budgets["sim"]["real_env_steps"] == 0
    assert budgets["hybrid"]["real_env_steps"] > 0  # the lamps codec puts every action in the family 'action'
    starts = data["starts"]
    assert set(starts) == {"base", "wm_warmup"} and starts["base"]["bc"]["bc_references"] == len(TRAIN)
    for name, arm in data["arms"].items():
        assert arm["start"] == ("wm_warmup" if name == "wm_warmup" else "base")
        assert arm["before"] == starts[arm["start"]]["before"]  # the shared start is evaluated once
        for ev in (arm["before"], arm["after"], arm["sim_eval"]):
            if ev is None:
                continue
            low, high = ev["ci95"]
            assert ev["episodes"] == per_eval and 0.0 <= low <= ev["success_rate"] <= high <= 1.0
        assert [p[0] for p in arm["curves"]["reward"]] == [1, 2] and len(arm["curves"]["success"]) == 2
        assert arm["wall_s"]["train"] > 0 and arm["wall_s"]["eval_real"] > 0

    # Arms trained in the simulator: the sim–real gap of the same policy, and WM2Real from replays in real.
    for name in ("sim", "sim_curriculum"):
        arm = data["arms"][name]
        assert arm["gap"] == pytest.approx(arm["sim_eval"]["success_rate"] - arm["after"]["success_rate"])
        w = arm["wm2real"]
        assert w["replayed"] + w["skipped"] + w["failed_replays"] == per_eval and w["failed_replays"] == 0
        for key in ("real_success", "agreement", "step_exact"):
            assert w[key] is None or 0.0 <= w[key] <= 1.0, key
        assert w["wm2real"] is None if w["sim_successes"] == 0 else 0.0 <= w["wm2real"] <= 1.0
        assert w["step_score"] is None or 0.0 <= w["step_score"] <= 100.0
        replays = json.loads((stage / "arms" / name / "wm2real.json").read_text())["episodes"]
        assert sum(r["steps"] for r in replays) == w["steps"]
    assert data["arms"]["real"]["sim_eval"] is None and data["arms"]["hybrid"]["wm2real"] is None
    assert data["speed"]["sim"]["env_steps_per_s"] and data["speed"]["real"]["env_steps_per_s"]

    # The report: its own folder and inside the run's report, with the plots it links.
    report = (stage / "report.md").read_text()
    for heading in ("Held-out real success", "Budgets", "Sim–real gap", "WM2Real", "Speed and wall time",
                    "Learning curves"):
        assert heading in report, heading
    for image in re.findall(r"\]\((plots/[^)]+\.png)\)", report):
        assert (stage / image).stat().st_size > 1000, image
    assert {"heldout-success.png", "curve-reward.png", "curve-success.png"} <= {p.name for p in (stage / "plots").iterdir()}
    run_report = (run_dir / "report.md").read_text()
    assert "WM2Real" in run_report and "](stages/compare/plots/heldout-success.png)" in run_report

    # The gate both ways, on the same finished run (reused, not retrained).
    real, sim = data["arms"]["real"]["after"]["success_rate"], data["arms"]["sim"]["after"]["success_rate"]
    assert real > 0, "the pretrained start must solve some held-out tasks, or no ratio can fail the gate"
    ratio = 1.01 * sim / real + 0.01
    failed = awctl("compare", "--resume", str(run_dir), "--fail-under", f"{ratio:.4f}", env=LAMPS_ENV, timeout=300)
    assert failed.returncode == 1, failed.stdout + failed.stderr[-2000:]
    assert f"error: --fail-under {float(f'{ratio:.4f}'):g} (compare): sim arm 'sim' held-out real success" in failed.stderr
    passed = awctl("compare", "--resume", str(run_dir), "--fail-under", f"{0.99 * sim / real:.4f}", env=LAMPS_ENV,
                   timeout=300)
    assert passed.returncode == 0, passed.stderr[-2000:]
    assert "reused" in (run_dir / "log.jsonl").read_text()


def test_wm2real_of_a_simulator_that_is_the_real_environment(lamps_registry) -> None:
    """Episodes whose observations came from the real environment replay with every step exact and every
    success kept; an episode whose recorded observation is wrong loses exactness and score."""
    from awctl.agent.compare import replay_in_real
    from awctl.agent.envs import real_envs

    domain = lamps_registry.domain("lamps")
    tasks = domain.tasks("all")[:4]
    episodes = []
    for k, task in enumerate(tasks):
        env = domain.real_env()
        env.reset(task, seed=k)
        actions = task.solution if k < 3 else ["turn link on"]  # the last one fails its task
        turns = [{"action_text": a, "observation_text": env.step(a).observation, "valid": True} for a in actions]
        turns.append({"action_text": "", "observation_text": "", "valid": True, "stop": True})
        episodes.append({"task_id": task.id, "seed": k, "success": task.check(env).ok, "status": "done",
                         "turns": turns})
    episodes.append({**episodes[0], "status": "crashed"})
    pool = real_envs(domain)
    result = replay_in_real(domain, pool, tasks, episodes)
    s = result.summary()
    assert (s["replayed"], s["skipped"], s["sim_successes"], s["still_succeed"]) == (4, 1, 3, 3)
    assert s["wm2real"] == 1.0 and s["agreement"] == 1.0 and s["step_exact"] == 1.0 and s["step_score"] == 100.0
    low, high = s["wm2real_ci95"]
    assert 0.0 < low < 1.0 == high

    wrong = json.loads(json.dumps(episodes[0]))
    wrong["turns"][0]["observation_text"] = wrong["turns"][0]["observation_text"].replace(" on", " off")
    s2 = replay_in_real(domain, pool, tasks, [wrong]).summary()
    assert s2["step_exact"] == 0.0 and s2["step_score"] < 100.0 and s2["wm2real"] == 1.0  # the task still succeeds
    pool.close()


def test_a_rerun_comparison_reuses_finished_pieces_and_reruns_a_changed_arm(tmp_path: Path, lamps_registry) -> None:
    from awctl.stages.standalone import run_standalone

    # Reuse is what is tested here, not the invariants (a two-step BC leaves the policy's actions invalid).
    options = {"domain": "lamps", "policy": "tiny", "train_tasks": TRAIN[:2], "heldout_tasks": HELDOUT[:1],
               "budget": {"steps": 1, "group_size": 2, "tasks_per_step": 1, "max_turns": 1},
               "bc": {"steps": 2}, "train": {"max_action_tokens": 4, "require_signal": False},
               "check_invariants": False,
               "arms": {"a": {"kind": "real"}, "b": {"kind": "real", "description": "same, another arm"}}}
    first = run_standalone(lamps_registry, "compare", options, tmp_path / "c", console=None)
    before = {n: (tmp_path / "c" / "arms" / n / "result.json").stat().st_mtime_ns for n in ("a", "b")}
    changed = {**options, "arms": {**options["arms"], "b": {"kind": "real", "description": "changed"}}}
    again = run_standalone(lamps_registry, "compare", changed, tmp_path / "c", console=None)
    after = {n: (tmp_path / "c" / "arms" / n / "result.json").stat().st_mtime_ns for n in ("a", "b")}
    assert after["a"] == before["a"] and after["b"] != before["b"]
    assert first.summary["a"] == again.summary["a"]
    log = (tmp_path / "c" / "log.jsonl").read_text()
    assert log.count("comparison piece reused") == 2  # the start and arm a


def test_compare_options_say_what_an_arm_misses(lamps_registry) -> None:
    from pydantic import ValidationError

    from awctl.stages.compare import CompareOptions

    ctx = {"domains": lamps_registry.domains}
    base = {"domain": "lamps", "train_tasks": "all[:8]", "heldout_tasks": "all[8:]"}
    cases = [
        ({"p": {"kind": "sim_perturbed"}}, "needs schedule"),
        ({"h": {"kind": "hybrid"}}, "needs blind_spots"),
        ({"w": {"kind": "wm_warmup"}}, "needs policy"),
        ({"r": {"kind": "real", "policy": "x"}}, "belong to kind 'wm_warmup'"),
        ({"s": {"kind": "sim"}}, "set world_model"),
        ({"bad name": {"kind": "real"}}, "arm names"),
    ]
    for arms, message in cases:
        with pytest.raises(ValidationError, match=re.escape(message)):
            CompareOptions.model_validate({**base, "arms": arms}, context=ctx)
    with pytest.raises(ValidationError, match="set by the comparison itself"):
        CompareOptions.model_validate({**base, "train": {"steps": 3}, "arms": {"r": {"kind": "real"}}}, context=ctx)
    with pytest.raises(ValidationError, match=r"arm 'r': temperature"):
        CompareOptions.model_validate({**base, "train": {"temperature": -1}, "arms": {"r": {"kind": "real"}}},
                                      context=ctx)
    ok = CompareOptions.model_validate({**base, "arms": {"s": {"kind": "sim"}, "r": {"kind": "real"}},
                                        "world_model": {"options": {"model": "tiny"}}}, context=ctx)
    assert ok.gate() == {"sim_arm": "s", "real_arm": "r"}
    assert math.isclose(ok.arm_train_options("s", "ckpt", 3)["max_draw_factor"], 1)


def test_held_out_tasks_must_not_be_training_tasks(tmp_path: Path, lamps_registry) -> None:
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_standalone

    options = {"domain": "lamps", "train_tasks": "all[:4]", "heldout_tasks": "all[3:6]", "arms": {"r": {"kind": "real"}}}
    with pytest.raises(AwctlError, match=r"1 held-out task\(s\) are also training tasks"):
        run_standalone(lamps_registry, "compare", options, tmp_path / "x", console=None)


def test_compare_command_says_what_is_missing_before_running(tmp_path: Path, awctl) -> None:
    no_compare = awctl("compare", "quickstart", "--output-root", str(tmp_path / "a"))
    assert no_compare.returncode == 2 and "has no stage of kind 'compare'" in no_compare.stderr
    recipe = tmp_path / "only-real.toml"
    recipe.write_text('[recipe]\nname = "only-real"\n\n[[stages]]\nkind = "compare"\ndomain = "lamps"\n'
                      'train_tasks = "all[:4]"\nheldout_tasks = "all[4:6]"\n\n[stages.arms.real]\nkind = "real"\n',
                      encoding="utf-8")
    gate = awctl("compare", str(recipe), "--fail-under", "0.5", "--output-root", str(tmp_path / "b"), env=LAMPS_ENV)
    assert gate.returncode == 2 and "needs an arm of kind 'sim'" in gate.stderr
    assert not (tmp_path / "b").exists()  # refused before anything ran
    bad = awctl("compare", str(recipe), "stages.compare.arms.real.kind=simulated", env=LAMPS_ENV)
    assert bad.returncode != 0 and "arms.real.kind" in bad.stderr
