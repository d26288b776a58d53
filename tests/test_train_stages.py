"""The sft and rl stage kinds end to end on a tiny model: rejection sampling with a teacher behind a real
OpenAI-compatible HTTP endpoint, target-turn SFT, GSPO steps with rewards, checkpoints that reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from awctl.trajectory import SystemPrompt, Trajectory, Turn, read_trajectories, write_trajectories  # noqa: E402

OBS1 = "root@sandbox:/workspace# echo 'hello world' > hello.txt\nroot@sandbox:/workspace#"
OBS2 = OBS1 + " cat hello.txt\nhello world\nroot@sandbox:/workspace#"
TINY = {"hidden": 32, "heads": 2, "head_dim": 16}


def _trajs(path: Path) -> Path:
    t = Trajectory(
        id="t1", domain="terminal", source="terminal:test",
        system=SystemPrompt(task_description="Create hello.txt", initial_state="root@sandbox:/workspace#"),
        turns=[Turn(action='[{"keystrokes": "echo \'hello world\' > hello.txt\\n", "duration": 1.0}]',
                    observation=OBS1),
               Turn(action='[{"keystrokes": "cat hello.txt\\n", "duration": 1.0}]', observation=OBS2)],
    )
    write_trajectories(path, [t])
    return path


def test_sft_stage_keeps_only_candidates_that_pass_verifiers_and_judge(tmp_path: Path) -> None:
    from awctl.eval.replay_server import ReplayServer
    from awctl.stages.standalone import run_stage

    seeds = set()

    def teacher(messages, body):  # a "strong model" that gets the cat turn right and the echo turn wrong
        seeds.add(body.get("seed"))
        if "cat hello.txt" in messages[-1]["content"]:
            return f"<think>\ncat prints the file\n</think>\n<predicted_observation>\n{OBS2}\n</predicted_observation>"
        return "<predicted_observation>\nsomething else entirely\n</predicted_observation>"

    src = _trajs(tmp_path / "t.jsonl")
    with ReplayServer(teacher) as srv:
        result = run_stage("sft", {
            "model": "tiny", "trajectories": [str(src)], "steps": 2, "tiny": TINY, "block_size": 256,
            "teacher": {"backend": "openai", "options": {"base_url": srv.base_url, "model": "replay"}, "k": 2},
        }, tmp_path / "sft", console=None)
    s = result.summary
    assert (s["targets"], s["candidates"], s["kept"], s["retention"]) == (2, 4, 2, 0.5)
    assert seeds == {0}  # one seed per chunk, so a local teacher batches the chunk's requests
    kept = list(read_trajectories(result.outputs["sft_data"]))
    assert len(kept) == 2 and all(k.turns[-1].observation == OBS2 for k in kept)
    assert kept[0].turns[-1].reasoning == "cat prints the file"
    assert kept[0].system.raw  # the exact system prompt variant the teacher saw
    assert (result.outputs["checkpoint"] / "config.json").is_file()


def test_sft_without_a_teacher_trains_on_the_recorded_observations(tmp_path: Path) -> None:
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_stage

    src = _trajs(tmp_path / "t.jsonl")
    result = run_stage("sft", {"model": "tiny", "trajectories": [str(src)], "steps": 1, "tiny": TINY,
                               "block_size": 256, "teacher": {"k": 0}, "keep_reference": True},
                       tmp_path / "sft", console=None)
    s = result.summary
    assert (s["targets"], s["candidates"], s["examples"]) == (2, 0, 2)
    assert [k.turns[-1].observation for k in read_trajectories(result.outputs["sft_data"])] == [OBS1, OBS2]
    with pytest.raises(AwctlError, match="keep_reference"):
        run_stage("sft", {"model": "tiny", "trajectories": [str(src)], "teacher": {"k": 0}}, tmp_path / "x",
                  console=None)


def test_rl_stage_runs_gspo_steps_and_resumes(tmp_path: Path, switchboard, switchboard_model) -> None:
    # The starting model solves the switchboard part of the time, so groups have reward spread.
    from awctl.stages.standalone import run_stage

    src = tmp_path / "t.jsonl"
    write_trajectories(src, switchboard.trajectories(1, "rl"))
    opts = {"model": str(switchboard_model), "trajectories": [str(src)], "steps": 2, "group_size": 4,
            "prompts_per_step": 2, "max_tokens": 8, "save_every": 1, "optim": {"lr": 1e-3}}
    result = run_stage("rl", opts, tmp_path / "rl", console=None)
    assert result.summary["prompts"] == 8 and result.summary["updates"] == 2
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    for r in records:
        assert 0.0 < r["reward"] < 1.0 and r["reward_std"] > 0 and r["grad_norm"] > 0
        assert "clip_fraction" in r and r["completion_tokens"] > 0
    # Rerunning the same stage resumes: the finished checkpoint at step 1 is found, so only step 2 runs.
    import shutil

    shutil.rmtree(tmp_path / "rl" / "train" / "final")
    again = run_stage("rl", opts, tmp_path / "rl", console=None)
    assert (again.outputs["checkpoint"] / "model.safetensors").is_file()
    records = [json.loads(x) for x in (tmp_path / "rl" / "train" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 2]


def test_lora_training_saves_merged_weights_and_resumable_adapter(tmp_path: Path, switchboard,
                                                                  switchboard_model) -> None:
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    from awctl.stages.standalone import run_stage

    src = tmp_path / "t.jsonl"
    write_trajectories(src, switchboard.trajectories(1, "rl"))
    opts = {"model": str(switchboard_model), "trajectories": [str(src)], "steps": 2, "group_size": 4,
            "prompts_per_step": 2, "max_tokens": 8, "save_every": 1, "optim": {"lr": 1e-2},
            "lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}}
    result = run_stage("rl", opts, tmp_path / "rl", console=None)
    final = result.outputs["checkpoint"]
    assert (final / "adapter" / "adapter_config.json").is_file()
    assert (tmp_path / "rl" / "train" / "checkpoints" / "step-1" / "adapter").is_dir()
    merged = AutoModelForCausalLM.from_pretrained(str(final))  # a plain model: LoRA merged in
    assert not any("lora" in n for n, _ in merged.named_parameters())
