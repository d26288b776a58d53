"""World-model RL measurably learns: a tiny model briefly SFT-ed on a deterministic task solves it part of
the time; a few GSPO steps (dynamic sampling, graded reward) raise its held-out mean reward beyond the
run-to-run noise this test measures on the starting model."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from awctl import plugins  # noqa: E402
from awctl.trajectory import SystemPrompt, Trajectory, Turn, write_trajectories  # noqa: E402

# A switchboard: each device answers with its fixed state. The mapping is the "environment".
STATES = {"lamp": "on", "fan": "off", "door": "open", "gate": "closed", "pump": "on", "oven": "off",
          "radio": "on", "tap": "closed"}

PLUGIN = '''
from awctl.domain import ActionCodec, Domain, ObservationCodec
from awctl.errors import CodecError
from awctl.hookspecs import hookimpl


class Codec(ActionCodec, ObservationCodec):
    def parse(self, text):
        if not text.strip():
            raise CodecError("empty")
        return text

    def render(self, value):
        return value


class Switchboard(Domain):
    name = "switchboard"
    action_codec = Codec()
    observation_codec = Codec()


@hookimpl
def register_domains(register):
    register(Switchboard())
'''

TINY = {"layers": 2, "hidden": 64, "heads": 2, "head_dim": 32}


def _trajectories(path: Path, copies: int, tag: str) -> Path:
    trajs = [
        Trajectory(id=f"{tag}-{device}-{k}", domain="switchboard", source=f"switchboard:{tag}{k}",
                   system=SystemPrompt(raw=f"Switchboard {tag}-{k}. Answer with the device's state."),
                   turns=[Turn(action=f"state {device}", observation=state)])
        for k in range(copies) for device, state in STATES.items()
    ]
    write_trajectories(path, trajs)
    return path


@pytest.fixture
def switchboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "switchboard.py").write_text(PLUGIN)
    monkeypatch.setenv("AWCTL_PLUGINS_DIR", str(folder))
    monkeypatch.setattr(plugins, "_REGISTRY", None)
    registry = plugins.get_registry()
    assert "switchboard" in registry.domains, registry.problems
    yield registry
    monkeypatch.setattr(plugins, "_REGISTRY", None)


def _held_out_reward(model_dir: Path, registry, prompts_file: Path, seeds: list[int], per_prompt: int = 16
                     ) -> list[float]:
    """Mean reward of sampled answers (``per_prompt`` each) on the held-out prompts, once per sampling seed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.rl.expand import expand
    from awctl.rl.rewards import RewardModel
    from awctl.rl.rollout import sample_groups
    from awctl.trajectory import read_trajectories

    model = AutoModelForCausalLM.from_pretrained(str(model_dir))
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    prompts = expand(list(read_trajectories(prompts_file)), registry.domains, style="awctl")
    rewards = RewardModel(registry.domains)
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        roll = sample_groups(model, tok, prompts, group_size=per_prompt, max_tokens=12, temperature=1.0)
        scored = rewards.score([p for p in prompts for _ in range(per_prompt)], roll.texts)
        out.append(sum(s.total for s in scored) / len(scored))
    return out


@pytest.mark.slow
def test_gspo_raises_held_out_reward_beyond_noise(tmp_path: Path, switchboard) -> None:
    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.models.tiny import default_tiny_model
    from awctl.stages.standalone import run_stage

    train = _trajectories(tmp_path / "train.jsonl", copies=6, tag="sft")
    rl_prompts = _trajectories(tmp_path / "rl.jsonl", copies=2, tag="rl")
    held_out = _trajectories(tmp_path / "held.jsonl", copies=3, tag="held")
    tok = default_tiny_model()
    run_prep(PrepConfig(inputs=[str(train)], out=str(tmp_path / "prep"), tokenizer=str(tok), mode="sft",
                        block_size=256, split="train=1", dedupe=False, style="awctl"), switchboard.domains)
    # Brief SFT: the model learns the answer format and part of the mapping.
    sft = run_stage("cpt", {"data": str(tmp_path / "prep"), "model": "tiny", "tokenizer": str(tok),
                            "tiny": TINY, "steps": 60, "batch_size": 4, "optim": {"lr": 5e-3, "warmup_steps": 2}},
                    tmp_path / "sft", console=None)
    start = sft.outputs["checkpoint"]
    seeds = [1, 2, 3, 4]
    before = _held_out_reward(start, switchboard, held_out, seeds)
    mean_before = statistics.mean(before)
    noise = statistics.stdev(before)  # run-to-run noise of the evaluation itself
    assert 0.05 < mean_before < 0.7, f"the starting model must solve the task part of the time: {before}"

    rl = run_stage("rl", {"model": str(start), "trajectories": [str(rl_prompts)], "steps": 30,
                          "group_size": 8, "prompts_per_step": 6, "max_tokens": 12, "temperature": 1.0,
                          "optim": {"lr": 1.5e-3, "warmup_steps": 0}, "exclude": [str(train)]},
                   tmp_path / "rl", console=None)
    assert rl.summary["updates"] >= 20 and rl.summary["excluded_prompts"] == 0
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert all("zero_variance_share" in r and "prompts_drawn" in r and "reward_std" in r for r in records)
    assert any(r.get("grad_norm") for r in records), "GSPO never produced a gradient"

    after = _held_out_reward(rl.outputs["checkpoint"], switchboard, held_out, seeds)
    gain = statistics.mean(after) - mean_before
    print(f"held-out reward {before} -> {after}; gain {gain:.3f}, noise {noise:.3f}")
    assert gain > max(3 * noise, 0.03), f"RL gain {gain:.3f} is within the noise {noise:.3f}: {before} -> {after}"


def test_groups_that_all_tie_are_dropped_and_reported(tmp_path: Path, switchboard) -> None:
    """A model that always answers the same thing gets tied groups: dynamic sampling draws more prompts
    (up to its cap), logs the zero-variance share, and the stage refuses to call it training."""
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_stage

    prompts = _trajectories(tmp_path / "rl.jsonl", copies=1, tag="rl")
    with pytest.raises(AwctlError, match="every group's rewards tied"):
        # Temperature ~0: every sample of a group is the same text, so every group ties.
        run_stage("rl", {"model": "tiny", "trajectories": [str(prompts)], "steps": 2, "group_size": 2,
                         "prompts_per_step": 2, "max_draw_factor": 2, "max_tokens": 4, "temperature": 1e-6,
                         "tiny": {"hidden": 32, "heads": 2, "head_dim": 16}}, tmp_path / "rl", console=None)
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["prompts_drawn"] for r in records] == [4, 4]  # the cap: max_draw_factor × prompts_per_step
    assert all(r["zero_variance_share"] == 1.0 and r["no_signal"] == 1 for r in records)
