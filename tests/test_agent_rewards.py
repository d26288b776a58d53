"""Episode rewards (the checker in the episode's environment, or a judge; the episode records which),
the Wilson interval of evaluations, task selections and the episode record's round trip."""

from __future__ import annotations

import json

import pytest


def test_the_checker_rewards_through_the_episodes_environment(lamps) -> None:
    from awctl.agent.rewards import episode_reward

    task = lamps.Lamps().tasks("all")[0]  # tree on
    env = lamps.LampsEnv()
    env.reset(task)
    assert episode_reward(env, task) == (0.0, False, "checker:real")
    env.step("turn tree on")
    steps = env.steps
    assert episode_reward(env, task, env_kind="sim") == (1.0, True, "checker:sim")
    assert env.steps == steps + 1  # the checker's probe went through env.step


def test_judge_verdicts_are_read_from_json_and_anything_else_fails() -> None:
    from awctl.agent.rewards import parse_verdict

    v = parse_verdict('<think>{"success": false}</think> Verdict: {"success": true, "score": 0.8, "reason": "done"}')
    assert v is not None and v.success and v.score == 0.8 and v.message == "done"  # the <think> block is ignored
    assert parse_verdict('{"success": true}').score == 1.0
    assert parse_verdict('{"success": false, "score": "high"}').score == 0.0
    assert parse_verdict('{"success": true, "score": 7}').score == 1.0  # clamped
    assert parse_verdict("yes, it worked") is None
    assert parse_verdict('{"ok": true}') is None


def test_a_judge_decides_without_probing_and_the_episode_says_so(lamps) -> None:
    pytest.importorskip("torch")
    from awctl.agent.episode import AgentTurn, Episode
    from awctl.agent.rewards import BackendJudge, judge_reward
    from awctl.models.backends.transformers_backend import TransformersBackend
    from awctl.models.tiny import default_tiny_model

    domain = lamps.Lamps()
    task = domain.tasks("all")[0]
    env = lamps.LampsEnv()
    env.reset(task)
    episode = Episode(task.id, "lamps", 0, 0, initial_observation="Board ready.",
                      turns=[AgentTurn("turn tree on", [1], [0.0], "tree is now on", [2])])
    backend = TransformersBackend(str(default_tiny_model()))
    judge = BackendJudge(backend, domain, "tiny-llm", max_tokens=8)
    try:
        text = judge.messages(task, episode)[1]["content"]
        assert "Task: Switch the tree lamp on." in text and "Action 1:\nturn tree on" in text
        outcome = judge_reward(judge)(env, task, episode)
    finally:
        judge.close()
    # A random tiny model writes no JSON verdict: the episode fails and the message says why.
    assert outcome.source == "judge:tiny-llm" and outcome.reward == 0.0 and not outcome.success
    assert "no JSON verdict" in outcome.message
    assert env.steps == 0  # the judge read the transcript; nothing ran in the environment


def test_wilson_interval_matches_known_values() -> None:
    from awctl.agent.evaluate import wilson_interval

    low, high = wilson_interval(8, 10)
    assert round(low, 3) == 0.490 and round(high, 3) == 0.943
    assert wilson_interval(0, 10)[0] == 0.0 and round(wilson_interval(0, 10)[1], 3) == 0.278
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_task_selections_take_suites_slices_and_ids(lamps) -> None:
    from awctl.agent.evaluate import select_agent_tasks
    from awctl.errors import AwctlError

    domain = lamps.Lamps()
    every = domain.tasks("all")
    assert [t.id for t in select_agent_tasks(domain, "all[:3]")] == [t.id for t in every[:3]]
    assert [t.id for t in select_agent_tasks(domain, "all[10:]")] == [t.id for t in every[10:]]
    assert [t.id for t in select_agent_tasks(domain, "all[-2:]", limit=1)] == [every[-2].id]
    assert len(select_agent_tasks(domain, "all")) == len(every)
    assert [t.id for t in select_agent_tasks(domain, [every[4].id])] == [every[4].id]
    with pytest.raises(AwctlError, match="is empty"):
        select_agent_tasks(domain, "all[50:]")
    with pytest.raises(AwctlError, match="no task suite"):
        select_agent_tasks(domain, "nope[1:]")


def test_an_episode_round_trips_through_json_and_becomes_a_trajectory(lamps) -> None:
    from awctl.agent.episode import AgentTurn, Episode

    domain = lamps.Lamps()
    e = Episode("lamps/all/tree-on", "lamps", 1, 42, prompt_ids=[1, 2], env_kind="real", status="max_turns",
                instruction="Switch the tree lamp on.", initial_observation="Board ready.",
                turns=[AgentTurn("turn tree on", [5, 6], [-0.1, -0.2], "tree is now on", [7, 8]),
                       AgentTurn("bad", [9], [-0.3], "cannot read action 'bad'", [10], valid=False),
                       AgentTurn("", [3], [-0.01], stop=True)])
    again = Episode.from_dict(json.loads(json.dumps(e.to_dict())))
    assert again == e
    assert e.token_ids() == [1, 2, 5, 6, 7, 8, 9, 10, 3]
    assert e.loss_mask() == [0, 0, 1, 1, 0, 0, 1, 0, 1]
    assert e.old_logprobs() == [0.0, 0.0, -0.1, -0.2, 0.0, 0.0, -0.3, 0.0, -0.01]
    lean = e.to_dict(tokens=False)
    assert "prompt_ids" not in lean and "action_ids" not in lean["turns"][0]
    traj = e.to_trajectory(domain, domain.tasks("all")[0])
    assert [t.action for t in traj.turns] == ["turn tree on", "bad"]  # the stop action is not a turn
    assert traj.turns[1].metadata["valid"] is False and traj.system.initial_state == "Board ready."
