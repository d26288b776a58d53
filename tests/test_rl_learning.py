"""World-model RL measurably learns: a tiny model briefly SFT-ed on a deterministic task (the switchboard,
see tests/conftest.py) solves it part of the time; GSPO steps with dynamic sampling and the graded reward
raise its held-out mean reward beyond the run-to-run noise this test measures on the starting model."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from awctl.trajectory import write_trajectories  # noqa: E402


def _held_out_reward(model_dir: Path, domains, trajectories, seeds: list[int], per_prompt: int = 16) -> list[float]:
    """Mean reward of sampled answers (``per_prompt`` each) on the held-out prompts, once per sampling seed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.rl.expand import expand
    from awctl.rl.rewards import RewardModel
    from awctl.rl.rollout import sample_groups

    model = AutoModelForCausalLM.from_pretrained(str(model_dir))
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    prompts = expand(trajectories, domains, style="awctl")
    rewards = RewardModel(domains)
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        roll = sample_groups(model, tok, prompts, group_size=per_prompt, max_tokens=12, temperature=1.0)
        scored = rewards.score([p for p in prompts for _ in range(per_prompt)], roll.texts)
        out.append(sum(s.total for s in scored) / len(scored))
    return out


@pytest.mark.slow
def test_gspo_raises_held_out_reward_beyond_noise(tmp_path: Path, switchboard, switchboard_model) -> None:
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_stage

    domains = get_registry().domains
    rl_prompts, sft_data = tmp_path / "rl.jsonl", tmp_path / "sft.jsonl"
    write_trajectories(rl_prompts, switchboard.trajectories(2, "rl"))
    write_trajectories(sft_data, switchboard.trajectories(6, "sft"))  # what the start model was SFT-ed on
    held_out = switchboard.trajectories(3, "held")  # system prompts neither SFT nor RL saw
    seeds = [1, 2, 3, 4]
    before = _held_out_reward(switchboard_model, domains, held_out, seeds)
    mean_before = statistics.mean(before)
    noise = statistics.stdev(before)  # run-to-run noise of the evaluation itself
    assert 0.05 < mean_before < 0.7, f"the starting model must solve the task part of the time: {before}"

    rl = run_stage("rl", {"model": str(switchboard_model), "trajectories": [str(rl_prompts)], "steps": 30,
                          "group_size": 8, "prompts_per_step": 6, "max_tokens": 12, "temperature": 1.0,
                          "optim": {"lr": 1.5e-3, "warmup_steps": 0}, "exclude": [str(sft_data)]},
                   tmp_path / "rl", console=None)
    assert rl.summary["updates"] >= 20 and rl.summary["excluded_prompts"] == 0
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert all("zero_variance_share" in r and "prompts_drawn" in r and "reward_std" in r for r in records)
    assert any(r.get("grad_norm") for r in records), "GSPO never produced a gradient"

    after = _held_out_reward(rl.outputs["checkpoint"], domains, held_out, seeds)
    gain = statistics.mean(after) - mean_before
    print(f"held-out reward {before} -> {after}; gain {gain:.3f}, noise {noise:.3f}")
    assert gain > max(3 * noise, 0.03), f"RL gain {gain:.3f} is within the noise {noise:.3f}: {before} -> {after}"


def test_groups_that_all_tie_are_dropped_and_reported(tmp_path: Path, switchboard) -> None:
    """A model whose samples of a prompt are all alike gets tied groups: dynamic sampling draws more prompts
    (up to its cap), logs the zero-variance share, and the stage refuses to call it training."""
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_stage

    prompts = tmp_path / "rl.jsonl"
    write_trajectories(prompts, switchboard.trajectories(1, "rl"))
    with pytest.raises(AwctlError, match="every group's rewards tied"):
        # Temperature ~0: every sample of a group is the same text, so every group ties.
        run_stage("rl", {"model": "tiny", "trajectories": [str(prompts)], "steps": 2, "group_size": 2,
                         "prompts_per_step": 2, "max_draw_factor": 2, "max_tokens": 4, "temperature": 1e-6,
                         "tiny": {"hidden": 32, "heads": 2, "head_dim": 16}}, tmp_path / "rl", console=None)
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["prompts_drawn"] for r in records] == [4, 4]  # the cap: max_draw_factor × prompts_per_step
    assert all(r["zero_variance_share"] == 1.0 and r["no_signal"] == 1 for r in records)


def test_rl_never_trains_on_turns_it_was_told_to_exclude(tmp_path: Path, switchboard) -> None:
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_stage

    same = tmp_path / "same.jsonl"
    write_trajectories(same, switchboard.trajectories(1, "sft"))
    with pytest.raises(AwctlError, match="no prompts left"):
        run_stage("rl", {"model": "tiny", "trajectories": [str(same)], "exclude": [str(same)], "steps": 1,
                         "tiny": {"hidden": 32, "heads": 2, "head_dim": 16}}, tmp_path / "rl", console=None)
