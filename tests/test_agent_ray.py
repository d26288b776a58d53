"""``executor = "ray"`` on a real local Ray (``ray.init`` with 2 CPUs): environment pools, the world model
and the policy sampler as Ray actors, and the rollout engine driving them."""

from __future__ import annotations

import functools
import json
import os
import threading

import pytest

pytestmark = pytest.mark.slow


def keys(command: str, duration: float = 0.5) -> str:
    return json.dumps([{"keystrokes": command + "\n", "duration": duration}])


@pytest.fixture(scope="module")
def executor():
    pytest.importorskip("ray", reason="pip install 'awctl[ray]'")
    import ray

    from awctl.agent.executors import RayExecutor

    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    ex = RayExecutor(num_cpus=2, env_hosts=2, world_model_cpus=0.5, sampler_cpus=0.5)
    yield ex
    ex.close()
    assert not ray.is_initialized()  # the executor started Ray, so it shut it down


@pytest.fixture(scope="module")
def terminal():
    from awctl.plugins import get_registry

    return get_registry().domains["terminal"]


@pytest.fixture(scope="module")
def tiny_path():
    from awctl.models.tiny import default_tiny_model

    return str(default_tiny_model())


@pytest.fixture(scope="module")
def world_model(executor, tiny_path):
    from awctl.plugins import build_backend

    return executor.world_model(functools.partial(build_backend, "transformers", model=tiny_path, batch_size=16),
                                window_ms=50)


def test_sim_episodes_on_two_env_actors_share_one_world_model_actor(executor, world_model, terminal):
    from awctl.agent.envs import sim_envs

    pool = executor.envs(sim_envs(terminal, world_model, sim_options={"max_tokens": 6},
                                  schedule={"perturbations": [{"name": "disk_full", "start": 1}]}))
    tasks = terminal.tasks("basic")[:6]
    before = world_model.stats()["requests"]
    envs = [pool.make(t, i) for i, t in enumerate(tasks)]
    try:
        hosts = {e.host_pid for e in envs}
        assert len(hosts) == 2 and os.getpid() not in hosts  # two actor processes, not this one
        pool.set_step(1)  # reaches every host's copy of the factory
        for i, (env, task) in enumerate(zip(envs, tasks, strict=True)):
            env.reset(task, seed=i)
        barrier, results = threading.Barrier(len(envs)), [None] * len(envs)

        def play(i: int) -> None:
            barrier.wait()
            results[i] = envs[i].step(keys(f"echo {i}"))

        threads = [threading.Thread(target=play, args=(i,)) for i in range(len(envs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert all(r is not None and r.info["turn"] == 0 for r in results)
        # Made before set_step(1): step 0's schedule, unperturbed.
        assert all(r.info["perturbation"] is None for r in results)
        stats = world_model.stats()
        assert stats["requests"] - before == 6 and stats["largest_batch"] >= 2  # requests from both hosts batched
        later = pool.make(tasks[0], 0)
        later.reset(tasks[0], seed=0)
        assert later.step(keys("ls")).info["perturbation"]["name"] == "disk_full"
        later.close()
        per_host = pool.stats()["hosts"]
        assert sum(h["made"] for h in per_host) == 7 and all(h["step"] == 1 for h in per_host)
    finally:
        for env in envs:
            env.close()
        pool.close()


def test_real_sandboxes_run_on_env_actors_and_their_checker_passes(executor, terminal):
    import shutil

    from awctl.agent.envs import real_envs

    if shutil.which("bwrap") is None or shutil.which("tmux") is None:
        pytest.skip("the terminal sandbox needs bwrap and tmux")
    pool = executor.envs(real_envs(terminal, {"pids_limit": 64}))
    task = terminal.tasks("basic")[0]
    env = pool.make(task, 1)
    try:
        assert env.reset(task, seed=0).endswith("root@sandbox:/workspace#")
        for action in task.solution:
            env.step(action)
        verdict = task.check(env)  # its probes are remote steps
        assert verdict.ok, verdict.message
        assert env.host_pid != os.getpid()  # the sandbox was started by the actor, not by this process
        assert "sandbox-ok" in env.call("step", keys("echo sandbox-ok")).observation
    finally:
        env.close()
        pool.close()


def test_sampler_actor_samples_like_the_local_sampler_and_follows_sync(executor, tiny_path, terminal):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.agent.policy import AgentPolicy, TransformersSampler

    model, tok = AutoModelForCausalLM.from_pretrained(tiny_path), AutoTokenizer.from_pretrained(tiny_path)
    policy = AgentPolicy(model, tok, terminal, max_action_tokens=8)
    make = functools.partial(TransformersSampler, model, tok, policy.stop_ids, max_new_tokens=8, temperature=1.0)
    remote = executor.sampler(make)
    assert remote.kind == "transformers"
    prompt = policy.start(terminal.tasks("basic")[0], "root@sandbox:/workspace#")
    local = policy.sampler.sample([prompt, prompt], [3, 4])
    there = remote.sample([prompt, prompt], [3, 4])
    assert [s.ids for s in there] == [s.ids for s in local]
    for a, b in zip(there, local, strict=True):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    with torch.no_grad():  # an "update" of the policy: the actor samples from its old weights until synced
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    changed = policy.sampler.sample([prompt], [3])[0]
    assert changed.ids != local[0].ids
    assert remote.sync(model, step=1) is True and remote.sync(model, step=1) is False
    after = remote.sample([prompt], [3])[0]
    assert after.ids == changed.ids and after.logprobs == pytest.approx(changed.logprobs, abs=1e-4)


def test_the_rollout_engine_runs_on_ray_actors(executor, world_model, tiny_path, terminal):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.agent.envs import sim_envs
    from awctl.agent.policy import AgentPolicy, TransformersSampler
    from awctl.agent.rollout import RolloutEngine

    model, tok = AutoModelForCausalLM.from_pretrained(tiny_path), AutoTokenizer.from_pretrained(tiny_path)
    local = AgentPolicy(model, tok, terminal, max_action_tokens=8)
    sampler = executor.sampler(functools.partial(TransformersSampler, model, tok, local.stop_ids, max_new_tokens=8))
    policy = AgentPolicy(model, tok, terminal, max_action_tokens=8, sampler=sampler)
    pool = executor.envs(sim_envs(terminal, world_model, sim_options={"max_tokens": 6}))
    engine = RolloutEngine(policy, pool, max_turns=2, concurrency=4, executor=executor, step_timeout_s=300,
                           episode_timeout_s=900)
    try:
        episodes = engine.run(terminal.tasks("basic")[:2], group_size=2, seed=0)
    finally:
        pool.close()
    assert len(episodes) == 4 and all(e.status in ("done", "max_turns") for e in episodes), \
        [(e.status, e.error) for e in episodes]
    assert all(e.reward_source == "checker:sim" and e.reward is not None for e in episodes)
    # The token ids the episodes carry are the ones the sampler actor produced.
    assert all(len(e.token_ids()) == len(e.loss_mask()) for e in episodes)
    hosts = pool.stats()["hosts"]
    assert sum(h["made"] for h in hosts) == 4 and {h["pid"] for h in hosts}.isdisjoint({os.getpid()})


def test_a_world_model_in_this_process_cannot_go_to_env_actors(executor, terminal, tiny_path):
    from awctl.agent.envs import sim_envs
    from awctl.errors import AwctlError
    from awctl.models.backends.transformers_backend import TransformersBackend

    local = TransformersBackend(tiny_path)
    with pytest.raises(AwctlError, match="lives in this process") as info:
        executor.envs(sim_envs(terminal, local))
    assert "executor.world_model" in (info.value.hint or "")
    local.close()
