"""The agent rollout engine against a real in-process environment (tests/fixtures/agent_lamps) with a tiny
policy: hung steps are cut by their timeout, crashed episodes are recorded without stopping the run,
invalid actions get the codec's error back and are counted, and wall time is split into policy and
environment time."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny():
    """A random-init tiny model and its tokenizer: it writes garbage, which a loose codec accepts."""
    from awctl.models.tiny import default_tiny_model
    from awctl.train.model import load_for_training

    model, tok = load_for_training(default_tiny_model())
    return model.eval(), tok


def _engine(lamps, tiny, *, strict=False, **kw):
    from awctl.agent.envs import real_envs
    from awctl.agent.policy import AgentPolicy
    from awctl.agent.rollout import RolloutEngine

    domain = lamps.Lamps(strict=strict)
    policy = AgentPolicy(*tiny, domain, max_action_tokens=kw.pop("max_action_tokens", 6), temperature=1.0)
    return RolloutEngine(policy, real_envs(domain), **kw), policy


def test_a_hanging_environment_step_is_cut_by_its_timeout(lamps, tiny) -> None:
    engine, _ = _engine(lamps, tiny, step_timeout_s=1.0, concurrency=4)
    tasks = [lamps.hazard_tasks(hang_s=60.0)[0], *lamps.Lamps().tasks("all")[:2]]
    before = len(lamps.LampsEnv.opened)
    t0 = time.perf_counter()
    episodes = engine.run(tasks, group_size=2, seed=3)
    took = time.perf_counter() - t0
    assert took < 30, f"a step that sleeps 60 s held the run for {took:.1f} s"
    hung = [e for e in episodes if e.task_id.endswith("/hang")]
    assert [e.status for e in hung] == ["timeout", "timeout"]
    assert all("step did not return within 1 s" in (e.error or "") for e in hung)
    assert all(e.reward is None and e.success is False for e in hung)
    assert all(len(e.turns) == 1 and e.turns[0].observation_ids == [] for e in hung)  # the cut action is kept
    others = [e for e in episodes if not e.task_id.endswith("/hang")]
    assert len(others) == 4 and all(e.status in ("done", "max_turns") and e.reward is not None for e in others)
    # The hung environments were closed from another thread, without waiting for their step.
    envs = lamps.LampsEnv.opened[before:]
    deadline = time.monotonic() + 5
    while not all(env.closed for env in envs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(envs) == 6 and all(env.closed for env in envs)
    assert engine.stats.statuses["timeout"] == 2


def test_an_episode_past_its_episode_timeout_ends_as_timeout(lamps, tiny) -> None:
    engine, _ = _engine(lamps, tiny, step_timeout_s=10.0, episode_timeout_s=1.0, concurrency=2)
    slow = lamps.hazard_tasks(hang_s=0.4)[0]  # each step takes 0.4 s; three of them exceed the 1 s budget
    [episode] = engine.run([slow], group_size=1, seed=0)
    assert episode.status == "timeout" and "episode ran past 1 s" in episode.error
    assert 1 <= episode.steps <= 3


def test_a_crashed_episode_is_recorded_and_the_run_goes_on(lamps, tiny) -> None:
    engine, _ = _engine(lamps, tiny, step_timeout_s=10.0, concurrency=3)
    hazards = lamps.hazard_tasks()[1:]  # step raises, reset raises, checker raises
    normal = lamps.Lamps().tasks("all")[:2]
    before = len(lamps.LampsEnv.opened)
    episodes = engine.run([*hazards, *normal], group_size=1, seed=1)
    by_task = {e.task_id.rsplit("/", 1)[1]: e for e in episodes}
    assert by_task["crash-step"].status == "crashed"
    assert by_task["crash-step"].error == "step raised RuntimeError: the lamp board caught fire"
    assert by_task["crash-reset"].status == "crashed" and by_task["crash-reset"].turns == []
    assert by_task["crash-reset"].error == "reset raised RuntimeError: the lamp board is unplugged"
    assert by_task["crash-check"].status == "crashed"
    assert by_task["crash-check"].error == "reward raised RuntimeError: the checker's probe broke"
    assert by_task["crash-check"].steps >= 1  # it played its episode; only the checker broke
    for e in normal:
        got = by_task[e.id.rsplit("/", 1)[1]]
        assert got.status in ("done", "max_turns") and got.reward is not None and got.error is None
        assert got.reward_source == "checker:real"
    time.sleep(0.2)
    assert all(env.closed for env in lamps.LampsEnv.opened[before:])
    assert engine.stats.statuses["crashed"] == 3 and engine.stats.episodes == 5


def test_invalid_actions_get_the_codec_error_back_and_are_counted(lamps, tiny) -> None:
    from awctl.errors import CodecError

    engine, policy = _engine(lamps, tiny, strict=True, step_timeout_s=10.0, concurrency=4, max_action_tokens=8)
    before = len(lamps.LampsEnv.opened)
    episodes = engine.run(lamps.Lamps().tasks("all")[:4], group_size=2, seed=5)
    envs = lamps.LampsEnv.opened[before:]
    invalid = 0
    for e in episodes:
        bad = [t for t in e.turns if not t.valid]
        assert e.invalid_actions == len(bad)
        invalid += len(bad)
        for t in bad:
            with pytest.raises(CodecError) as caught:
                policy.domain.action_codec.parse(t.action_text)
            assert t.observation_text == str(caught.value)  # the codec's message, as a harness answers
            assert "write `turn LAMP on|off` or `look`" in t.observation_text
            stopped = t.action_ids[-1] in policy.stop_ids
            assert t.observation_ids == policy.observation_ids(t.observation_text, stopped=stopped)
        # An invalid action never reached the environment: its steps are the valid actions only.
        assert e.steps == sum(1 for t in e.turns if t.valid and not t.stop)
    assert invalid > 0, "a random tiny model should write unreadable actions"
    # Every env step the engine counted is one the environments saw (the checker's probe adds one each).
    assert sum(env.steps for env in envs) == sum(e.steps for e in episodes) + len(episodes)


def test_wall_time_is_split_into_policy_and_environment_time(lamps, tiny) -> None:
    engine, _ = _engine(lamps, tiny, step_timeout_s=10.0, concurrency=2)
    slow = lamps.hazard_tasks(hang_s=0.3)[0]
    episodes = engine.run([slow], group_size=2, seed=2)
    for e in episodes:
        assert e.status in ("done", "max_turns")
        # Each step sleeps 0.3 s, and the checker's look is one more step.
        assert e.env_s >= 0.3 * (e.steps + 1) - 0.05
        assert e.policy_s > 0 and all(t.policy_s > 0 for t in e.turns)
        assert all(t.env_s >= 0.29 for t in e.turns if not t.stop)
    stats = engine.stats
    assert stats.policy_s > 0 and stats.env_s >= sum(e.env_s for e in episodes) - 1e-6
    assert stats.wall_s >= max(e.wall_s for e in episodes) - 1e-6
    assert stats.steps == sum(e.steps for e in episodes)


def test_sampling_is_seeded_per_episode_whatever_else_shares_the_batch(lamps, tiny) -> None:
    engine, _ = _engine(lamps, tiny, step_timeout_s=10.0, concurrency=1, max_turns=1)
    alone = engine.run(lamps.Lamps().tasks("all")[:1], group_size=1, seed=7)
    crowd, _ = _engine(lamps, tiny, step_timeout_s=10.0, concurrency=4, max_turns=1)
    together = crowd.run(lamps.Lamps().tasks("all")[:2], group_size=2, seed=7)
    assert alone[0].seed == together[0].seed
    assert alone[0].turns[0].action_ids == together[0].turns[0].action_ids


def test_an_episode_that_would_outgrow_the_context_ends_as_max_tokens(lamps, tiny) -> None:
    engine, policy = _engine(lamps, tiny, step_timeout_s=10.0, concurrency=2, max_action_tokens=6)
    task = lamps.Lamps().tasks("all")[0]
    first = len(policy.start(task, "Board ready: 6 lamps. Work order: " + task.instruction))
    # Room for the first action only: after it and its observation the next action would not fit.
    engine.max_context_tokens = first + 6 + 2
    episodes = engine.run([task], group_size=2, seed=0)
    for e in episodes:
        assert e.status in ("max_tokens", "done") and len(e.turns) <= 1
        assert e.reward is not None  # the checker still judged what was done
    assert any(e.status == "max_tokens" for e in episodes)
