"""The agent stage kinds wire the environments, rewards and executors together: a simulated terminal
(a tiny world model) rewards with the checker's probes answered by the simulator and follows its
perturbation schedule; a hybrid sends the blind-spot families to the real terminal; a judge reward says
so in every episode; a run whose groups all tie fails unless told otherwise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def tiny_path() -> str:
    from awctl.models.tiny import default_tiny_model

    return str(default_tiny_model())


def _terminal_or_skip() -> None:
    for tool in ("bwrap", "tmux"):
        if shutil.which(tool) is None:
            pytest.skip(f"the real terminal needs {tool} (apt-get install -y bubblewrap tmux)")


TERMINAL_RUN = {"domain": "terminal", "policy": "tiny", "tasks": "basic[:2]", "steps": 1, "group_size": 2,
                "tasks_per_step": 1, "max_turns": 2, "max_action_tokens": 16, "bc": {"enabled": False},
                "require_signal": False}


def test_sim_training_rewards_through_the_simulator_and_follows_its_schedule(tmp_path: Path, tiny_path) -> None:
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_standalone

    options = {**TERMINAL_RUN, "env": "sim",
               "world_model": {"backend": "transformers", "options": {"model": tiny_path},
                               "sim_options": {"max_tokens": 8}},
               "schedule": {"perturbations": [{"name": "command_not_found", "episodes": 1.0}]}}
    result = run_standalone(get_registry(), "agent_train", options, tmp_path / "sim", console=None)
    assert result.summary["env_kind"] == "sim"
    episodes = _lines(result.outputs["episodes"])
    assert episodes and all(e["reward_source"] == "checker:sim" for e in episodes if e["status"] != "crashed")
    [metrics] = [m for m in _lines(tmp_path / "sim" / "metrics.jsonl") if m.get("phase") == "gspo"]
    stats = metrics["env_stats"]
    # Every episode was made perturbed, and the checker's probes went to the world model (steps > 0).
    assert stats["perturbed_episodes"] == {"command_not_found": len(episodes)}
    assert stats["backend"]["requests"] >= len(episodes)


def test_hybrid_training_sends_blind_spot_families_to_the_real_terminal(tmp_path: Path, tiny_path) -> None:
    from awctl.plugins import get_registry
    from awctl.stages.standalone import run_standalone

    _terminal_or_skip()
    # The basic tasks' checkers read files with `cat`: a blind spot here, so every check runs for real.
    options = {**TERMINAL_RUN, "env": "hybrid", "blind_spots": ["cat"],
               "world_model": {"backend": "transformers", "options": {"model": tiny_path},
                               "sim_options": {"max_tokens": 8}}}
    result = run_standalone(get_registry(), "agent_train", options, tmp_path / "hybrid", console=None)
    episodes = _lines(result.outputs["episodes"])
    assert all(e["reward_source"] == "checker:hybrid" for e in episodes if e["status"] != "crashed")
    [metrics] = [m for m in _lines(tmp_path / "hybrid" / "metrics.jsonl") if m.get("phase") == "gspo"]
    stats = metrics["env_stats"]
    assert stats["blind_spots"] == ["cat"]
    assert stats["real_steps"] >= sum(1 for e in episodes if e["status"] != "crashed")
    assert stats["episodes_with_real"] >= 1


def test_a_judge_reward_is_recorded_in_every_episode(tmp_path: Path, lamps_registry, tiny_path) -> None:
    from awctl.stages.standalone import run_standalone

    options = {"domain": "lamps", "policy": "tiny", "tasks": "all[:2]", "steps": 1, "group_size": 2,
               "tasks_per_step": 2, "max_action_tokens": 6, "bc": {"enabled": False}, "require_signal": False,
               "reward": "judge", "judge": {"backend": "transformers", "options": {"model": tiny_path},
                                            "max_tokens": 8}}
    result = run_standalone(lamps_registry, "agent_train", options, tmp_path / "judge", console=None)
    episodes = _lines(result.outputs["episodes"])
    assert episodes and {e["reward_source"] for e in episodes} == {"judge:transformers"}
    assert all("no JSON verdict" in e["check_message"] for e in episodes)  # a random judge decides nothing


def test_a_run_where_every_group_ties_fails_unless_told_otherwise(tmp_path: Path, lamps_registry) -> None:
    from awctl.errors import AwctlError
    from awctl.stages.standalone import run_standalone

    options = {"domain": "lamps", "policy": "tiny", "tasks": "all[:2]", "steps": 1, "group_size": 2,
               "tasks_per_step": 1, "max_draw_factor": 2, "max_action_tokens": 4, "bc": {"enabled": False}}
    with pytest.raises(AwctlError, match="every group's rewards tied"):
        run_standalone(lamps_registry, "agent_train", options, tmp_path / "a", console=None)
    [m] = [m for m in _lines(tmp_path / "a" / "metrics.jsonl") if m.get("phase") == "gspo"]
    assert m["no_signal"] == 1 and m["zero_variance_share"] == 1.0 and m["tasks_drawn"] == 2
    kept = run_standalone(lamps_registry, "agent_train", {**options, "require_signal": False}, tmp_path / "b",
                          console=None)
    assert kept.summary["updates"] == 0 and (kept.outputs["checkpoint"] / "config.json").is_file()


def test_a_rerun_stage_reuses_its_finished_behaviour_cloning(tmp_path: Path, lamps_registry) -> None:
    from awctl.stages.standalone import run_standalone

    options = {"domain": "lamps", "policy": "tiny", "tasks": "all[:2]", "steps": 1, "group_size": 2,
               "tasks_per_step": 1, "max_action_tokens": 4, "bc": {"steps": 3}, "require_signal": False}
    first = run_standalone(lamps_registry, "agent_train", options, tmp_path / "run", console=None)
    assert "bc_reused" not in first.summary and first.summary["bc_steps"] == 3
    again = run_standalone(lamps_registry, "agent_train", options, tmp_path / "run", console=None)
    assert again.summary["bc_reused"] is True
    changed = run_standalone(lamps_registry, "agent_train", {**options, "bc": {"steps": 4}}, tmp_path / "run",
                             console=None)
    assert "bc_reused" not in changed.summary and changed.summary["bc_steps"] == 4
