"""The recorder's backend policy: an agent model served over HTTP acts in a real environment."""

from __future__ import annotations

import json

from awctl.eval.replay_server import ReplayServer
from awctl.plugins import get_domain


def test_backend_policy_drives_a_real_environment_over_http(tmp_path, awctl):
    search = get_domain("search")
    task = search.tasks("facts")[0]
    seen: list[list[dict[str, str]]] = []

    def agent(messages, body):
        # A stand-in agent that replays the reference solution, one action per assistant turn so far.
        seen.append(messages)
        done = sum(1 for m in messages if m["role"] == "assistant")
        return task.solution[done] if done < len(task.solution) else ""

    out = tmp_path / "agent.jsonl"
    with ReplayServer(agent) as server:
        result = awctl("record", "-d", "search", "--task-id", task.id, "--policy", "backend:openai",
                       "--base-url", server.base_url, "--model", "replay", "-o", str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["trajectories"] == 1 and summary["passed"] == 1
    traj = json.loads(out.read_text())
    assert [t["action"] for t in traj["turns"]] == task.solution
    # The agent saw the task, the action space and every real observation, in order.
    first, last = seen[0], seen[-1]
    assert task.instruction in first[0]["content"] and first[1]["role"] == "user"
    assert [m["content"] for m in last if m["role"] == "user"][1:] == [t["observation"] for t in traj["turns"]]


def test_unknown_policy_and_backend_are_clear_errors(tmp_path, awctl):
    out = awctl("record", "-d", "search", "--policy", "llama", "-o", str(tmp_path / "x.jsonl"))
    assert out.returncode == 2 and "unknown policy 'llama'" in out.stderr
    out = awctl("record", "-d", "search", "--policy", "backend:nope", "-o", str(tmp_path / "x.jsonl"))
    assert out.returncode == 2 and "unknown backend 'nope'" in out.stderr


def test_task_ids_take_patterns_and_each_must_match():
    import pytest

    from awctl.errors import AwctlError
    from awctl.record import select_tasks

    terminal = get_domain("terminal")
    picked = [t.id for t in select_tasks(terminal, "drill", ids=["terminal/drill/00[0-2]", "terminal/drill/010"])]
    assert picked == ["terminal/drill/000", "terminal/drill/001", "terminal/drill/002", "terminal/drill/010"]
    with pytest.raises(AwctlError, match="no task matches 'terminal/drill/9\\*'"):
        select_tasks(terminal, "drill", ids=["terminal/drill/000", "terminal/drill/9*"])
