"""Agent RL measurably learns: a tiny policy warm-started by behaviour cloning on the toy lamps tasks
(tests/fixtures/agent_lamps: the reference solutions, recorded in the environment) solves them part of
the time; GSPO steps in the same environment raise its success rate beyond the run-to-run noise this
test measures on the starting policy."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


def _success_rates(model_dir: Path, domain, groups: int = 4, per_task: int = 8) -> list[float]:
    """Success rate over every task, ``per_task`` sampled episodes each, once per group of seeds."""
    from awctl.agent.envs import real_envs
    from awctl.agent.evaluate import evaluate_agent
    from awctl.agent.policy import AgentPolicy
    from awctl.train.model import load_for_training

    model, tok = load_for_training(model_dir)
    policy = AgentPolicy(model.eval(), tok, domain, max_action_tokens=8, temperature=1.0)
    tasks = domain.tasks("all")
    return [evaluate_agent(policy, real_envs(domain), tasks, seeds=[1000 * g + k for k in range(per_task)],
                           concurrency=32).rate for g in range(groups)]


@pytest.mark.slow
def test_bc_then_gspo_raises_success_beyond_noise(tmp_path: Path, lamps_registry) -> None:
    from awctl.stages.standalone import run_standalone

    run = run_standalone(lamps_registry, "agent_train", {
        "domain": "lamps", "policy": "tiny", "tasks": "all",
        # Behaviour cloning stops while the policy is still unsure which lamp the order names.
        "bc": {"steps": 95, "lr": 5e-3, "batch_size": 8},
        "steps": 25, "group_size": 8, "tasks_per_step": 12, "temperature": 1.0, "max_action_tokens": 8,
        "concurrency": 32, "optim": {"lr": 2e-3, "min_lr_ratio": 1.0, "warmup_steps": 0},
    }, tmp_path / "train", console=None)
    domain = lamps_registry.domain("lamps")
    before = _success_rates(run.outputs["bc_checkpoint"], domain)
    mean_before, noise = statistics.mean(before), statistics.stdev(before)
    assert 0.05 < mean_before < 0.75, f"BC must leave the policy solving the tasks part of the time: {before}"
    assert run.summary["updates"] >= 20 and run.summary["bc_references"] == 12
    records = [json.loads(x) for x in (tmp_path / "train" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert all({"zero_variance_share", "tasks_drawn", "reward_std", "logprob_drift"} <= r.keys() for r in records)
    assert max(r["logprob_drift"] for r in records) < 1e-4  # the sampler's log-probs are the update's
    after = _success_rates(run.outputs["checkpoint"], domain)
    gain = statistics.mean(after) - mean_before
    print(f"success {before} -> {after}; gain {gain:.3f}, noise {noise:.3f}")
    assert gain > max(3 * noise, 0.1), f"GSPO gain {gain:.3f} is within the noise {noise:.3f}: {before} -> {after}"
