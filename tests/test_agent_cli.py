"""``awctl agent train --env real`` then ``awctl agent eval --env real`` end to end on the real terminal
sandbox with a tiny policy (few steps; the pipeline's invariants, not a tuned outcome), and the command's
usage errors."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_agent_commands_are_listed_and_say_what_is_missing(tmp_path: Path, awctl) -> None:
    run_awctl = awctl
    out = run_awctl("agent", "--help")
    assert out.returncode == 0 and "train" in out.stdout and "eval" in out.stdout
    missing = run_awctl("agent", "train", "--out", str(tmp_path / "x"))
    assert missing.returncode != 0 and "--domain" in missing.stderr
    unknown = run_awctl("agent", "eval", "-d", "no-such-domain", "--policy", "tiny", "--out", str(tmp_path / "y"))
    assert unknown.returncode != 0 and "unknown domain 'no-such-domain'" in unknown.stderr
    bad = run_awctl("agent", "train", "-d", "terminal", "--out", str(tmp_path / "z"), "group_size=1")
    assert bad.returncode != 0 and "group_size" in bad.stderr


@pytest.mark.slow
def test_agent_train_then_eval_on_the_real_terminal(tmp_path: Path, awctl) -> None:
    run_awctl = awctl
    for tool in ("bwrap", "tmux"):
        if shutil.which(tool) is None:
            pytest.skip(f"the real terminal needs {tool} (apt-get install -y bubblewrap tmux)")
    train_dir, eval_dir = tmp_path / "train", tmp_path / "eval"
    train = run_awctl("agent", "train", "--env", "real", "-d", "terminal", "--policy", "tiny",
                      "--tasks", "basic[:2]", "--steps", "2", "--group-size", "2", "--tasks-per-step", "1",
                      "--bc-steps", "40", "--max-turns", "2", "--out", str(train_dir), "--json",
                      "bc.lr=5e-3", "optim.min_lr_ratio=1.0", "require_signal=false", timeout=900)
    assert train.returncode == 0, train.stderr[-3000:]
    result = json.loads(train.stdout)
    summary, outputs = result["summary"], {k: Path(v) for k, v in result["outputs"].items()}
    assert summary["env_kind"] == "real" and summary["steps"] == 2 and summary["tasks"] == 2
    # Behaviour cloning learned from the reference solutions as the real terminal answered them.
    refs = _lines(outputs["references"])
    assert len(refs) == 2 and summary["bc_references"] == 2 and summary["bc_references_failed"] == 0
    assert all(r["turns"][0]["observation_text"] and r["turns"][-1]["stop"] for r in refs)
    assert summary["bc_last_loss"] < summary["bc_first_loss"]
    # Every GSPO episode ran in the real terminal and was judged by the task checker there.
    from awctl.agent.episode import Episode

    episodes = _lines(outputs["episodes"])
    assert len(episodes) == summary["episodes"] > 0 and {e["step"] for e in episodes} == {1, 2}
    for row in episodes:
        row.pop("step")
        e = Episode.from_dict(row)
        assert e.status in ("done", "max_turns", "max_tokens", "timeout", "crashed")
        if e.status in ("done", "max_turns", "max_tokens"):
            assert e.reward_source == "checker:real" and e.reward in (0.0, 1.0)
        assert len(e.token_ids()) == len(e.loss_mask()) == len(e.old_logprobs())
        assert sum(e.loss_mask()) == e.action_tokens and e.steps <= len(e.turns) <= 2 + 1
    assert summary["env_steps"] == sum(r["steps"] for r in episodes)
    metrics = _lines(train_dir / "metrics.jsonl")
    bc = [m for m in metrics if m.get("phase") == "bc"]
    gspo = [m for m in metrics if m.get("phase") == "gspo"]
    assert len(bc) == 40 and len(gspo) == 2
    for m in gspo:
        assert {"reward", "reward_std", "zero_variance_share", "tasks_drawn", "task_ids", "policy_s", "env_s",
                "env_steps", "invalid_actions"} <= m.keys()
        assert all(t.startswith("terminal/basic/") for t in m["task_ids"])
    assert (outputs["checkpoint"] / "config.json").is_file()

    held_out = run_awctl("agent", "eval", "--env", "real", "-d", "terminal", "--policy", str(outputs["checkpoint"]),
                         "--tasks", "basic[2:4]", "--seeds", "0,1", "--max-turns", "2", "--out", str(eval_dir),
                         timeout=600)
    assert held_out.returncode == 0, held_out.stderr[-3000:]
    results = json.loads((eval_dir / "results.json").read_text())
    assert results["env"] == "real" and results["episodes"] == 4 == len(_lines(eval_dir / "episodes.jsonl"))
    assert set(results["per_task"]) == set(results["tasks"]) and not set(results["tasks"]) & {
        e["task_id"] for e in episodes}  # held out: no task trained on
    assert 0 <= results["successes"] <= 4 and results["success_rate"] == results["successes"] / 4
    low, high = results["ci95"]
    assert 0 <= low <= results["success_rate"] <= high <= 1 and high > low
    assert results["env_steps"] == sum(e["steps"] for e in _lines(eval_dir / "episodes.jsonl"))
    for key in ("env_steps_per_s", "policy_s", "env_s", "wall_s"):
        assert math.isfinite(results[key]) and results[key] >= 0
    assert results["reward_sources"] in (["checker:real"], [])
