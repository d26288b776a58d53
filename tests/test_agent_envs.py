"""Where agent episodes run: simulators over one batched world model, the controllable simulator's
schedule and curriculum, real environment pools, hybrids, and an audit's blind spots.

Real parts throughout: the terminal domain, its bubblewrap sandbox, and a tiny transformers world model.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from awctl.agent.envs import (
    PerturbationRule,
    RatePerturbationSchedule,
    SimSchedule,
    action_family,
    blind_spots_from_audit,
    hybrid_envs,
    real_envs,
    sim_envs,
)
from awctl.backend import Backend
from awctl.errors import AwctlError, InputError


def keys(command: str, duration: float = 0.5) -> str:
    return json.dumps([{"keystrokes": command + "\n", "duration": duration}])


@pytest.fixture(scope="module")
def terminal():
    from awctl.plugins import get_registry

    return get_registry().domains["terminal"]


@pytest.fixture(scope="module")
def tiny_backend():
    pytest.importorskip("transformers")
    from awctl.models.backends.transformers_backend import TransformersBackend
    from awctl.models.tiny import default_tiny_model

    backend = TransformersBackend(str(default_tiny_model()), batch_size=16)
    yield backend
    backend.close()


class Recording(Backend):
    """A real backend that also keeps every request it was sent and the size of every call."""

    def __init__(self, inner: Backend) -> None:
        self.inner, self.name = inner, inner.name
        self.requests: list = []
        self.calls: list[int] = []

    def generate(self, requests):
        self.requests += requests
        self.calls.append(len(requests))
        return self.inner.generate(requests)


def sandbox_ready() -> None:
    import shutil

    missing = [p for p in ("bwrap", "tmux") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"the terminal sandbox needs {', '.join(missing)}")


# ── one batched world model ──────────────────────────────────────────────────────────────────────────


def test_concurrent_sim_episodes_share_world_model_calls(terminal, tiny_backend):
    rec = Recording(tiny_backend)
    factory = sim_envs(terminal, rec, sim_options={"max_tokens": 6}, window_ms=50)
    tasks = terminal.tasks("basic")[:6]
    envs = [factory.make(t, i) for i, t in enumerate(tasks)]
    try:
        for i, (env, task) in enumerate(zip(envs, tasks, strict=True)):
            env.reset(task, seed=i)
        barrier = threading.Barrier(len(envs))
        results = [None] * len(envs)

        def play(i: int) -> None:
            barrier.wait()
            results[i] = envs[i].step(keys(f"echo episode{i}"))

        threads = [threading.Thread(target=play, args=(i,)) for i in range(len(envs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert all(r is not None and r.info["turn"] == 0 for r in results)
        # Six episodes, six requests, fewer backend calls: the steps were batched together.
        assert sum(rec.calls) == 6 and len(rec.calls) < 6 and max(rec.calls) >= 2, rec.calls
        stats = factory.stats()
        assert stats["backend"]["requests"] == 6 and stats["backend"]["largest_batch"] == max(rec.calls)
        assert stats["episodes"] == 6 and stats["steps"] == 6
        # Each episode kept its own history and its own prompt.
        for i, env in enumerate(envs):
            assert [t.action for t in env.history] == [keys(f"echo episode{i}")]
        assert all(any(f"echo episode{i}" in json.dumps(r.messages) for r in rec.requests) for i in range(6))
    finally:
        factory.close()
    # Closing ends the batching task on its own loop, stops the loop's thread and closes the loop (no task is
    # left pending, which asyncio would report as "Task was destroyed but it is pending!").
    shared = factory.shared
    assert shared._loop is None and shared.batching._worker is None
    assert not any(t.name == "awctl-world-model" and t.is_alive() for t in threading.enumerate())


@pytest.mark.not_a_component("bad options are refused before anything runs")
def test_sim_envs_refuse_unknown_options_and_unknown_perturbations(terminal, tiny_backend):
    with pytest.raises(InputError, match="unknown simulator option.*temprature"):
        sim_envs(terminal, tiny_backend, sim_options={"temprature": 0.5})
    with pytest.raises(InputError, match=r"schedule.perturbations\[0\].*no perturbation 'fire'"):
        sim_envs(terminal, tiny_backend, schedule={"perturbations": [{"name": "fire"}]})
    with pytest.raises(InputError, match="fixed perturbation or a schedule"):
        sim_envs(terminal, tiny_backend, schedule={}, sim_options={"perturbation": "disk_full"})


# ── the controllable simulator ───────────────────────────────────────────────────────────────────────


@pytest.mark.not_a_component("pure scheduling logic")
def test_schedule_draws_each_episode_share_reproducibly():
    schedule = SimSchedule.from_dict({"seed": 7, "perturbations": [
        {"name": "disk_full", "episodes": 0.3},
        {"name": "command_not_found", "episodes": 0.2, "params": {"command": "python3"}},
    ]})
    draws = [schedule.draw(4, seed) for seed in range(1000)]
    names = [d.name if d else None for d in draws]
    assert 240 <= names.count("disk_full") <= 360
    assert 140 <= names.count("command_not_found") <= 260
    assert 420 <= names.count(None) <= 580
    assert names == [d.name if d else None for d in (schedule.draw(4, s) for s in range(1000))]  # reproducible
    other = SimSchedule.from_dict({"seed": 8, "perturbations": [{"name": "disk_full", "episodes": 0.3}]})
    assert [schedule.draw(4, s) is None for s in range(50)] != [other.draw(4, s) is None for s in range(50)]


@pytest.mark.not_a_component("pure scheduling logic")
def test_schedule_windows_curriculum_and_validation(terminal):
    schedule = SimSchedule.from_dict({
        "perturbations": [{"name": "disk_full", "start": 2, "stop": 4}, {"name": "slow_output", "start": 4}],
        "curriculum": [{"start": 3, "tags": ["grep", "sed"]}, {"start": 0, "max_solution": 1}, {"start": 6}],
    })
    assert [[p["name"] for p in schedule.for_step(s)["perturbations"]] for s in range(6)] == \
        [[], [], ["disk_full"], ["disk_full"], ["slow_output"], ["slow_output"]]
    assert schedule.draw(0, 1) is None and schedule.draw(2, 1).name == "disk_full"
    tasks = terminal.tasks("basic")
    short, tagged, every = (schedule.tasks_for(s, tasks) for s in (0, 3, 9))
    assert short and all(len(t.solution) <= 1 for t in short) and len(short) < len(tasks)
    assert tagged and all({"grep", "sed"} & set(t.tags) for t in tagged)
    assert every == tasks
    assert schedule.for_step(4)["difficulty"]["tags"] == ["grep", "sed"]
    with pytest.raises(InputError, match="admits none"):
        SimSchedule.from_dict({"curriculum": [{"tags": ["no-such-tag"]}]}).tasks_for(0, tasks)
    with pytest.raises(InputError, match=r"curriculum\[0\]: unknown key\(s\) max_len"):
        SimSchedule.from_dict({"curriculum": [{"max_len": 2}]})
    with pytest.raises(InputError, match="add up to 1.5 > 1"):
        SimSchedule.from_dict({"perturbations": [{"name": "a", "episodes": 0.8}, {"name": "b", "episodes": 0.7}]})
    with pytest.raises(InputError, match="rate must be within 0..1"):
        PerturbationRule("disk_full", rate=2)
    with pytest.raises(InputError, match="unknown key"):
        SimSchedule.from_dict({"perturbation": []})


@pytest.mark.not_a_component("pure scheduling logic")
def test_rate_every_and_match_decide_which_steps_are_perturbed(terminal):
    rule = PerturbationRule("command_not_found", every=2, match="python", rate=0.5)
    sched = RatePerturbationSchedule(rule, terminal, seed=3)
    hits = [sched.advance(keys("python3 x.py" if i % 3 else "ls")) for i in range(600)]
    counted = [i for i in range(600) if i % 3]
    assert not any(hits[i] for i in range(600) if i % 3 == 0)  # unmatched actions never count
    due = counted[1::2]  # every 2nd counted action is due
    assert not any(hits[i] for i in counted[0::2])
    assert 0.38 < sum(hits[i] for i in due) / len(due) < 0.62
    again = RatePerturbationSchedule(rule, terminal, seed=3)
    assert hits == [again.advance(keys("python3 x.py" if i % 3 else "ls")) for i in range(600)]


def test_sim_episodes_follow_the_schedule_of_the_step_they_were_made_for(terminal, tiny_backend):
    rec = Recording(tiny_backend)
    schedule = SimSchedule.from_dict({"seed": 1, "perturbations": [
        {"name": "command_not_found", "params": {"command": "frobnicate"}, "start": 2}]})
    factory = sim_envs(terminal, rec, schedule=schedule, sim_options={"max_tokens": 4})
    task = terminal.tasks("basic")[0]
    try:
        factory.set_step(1)
        early = factory.make(task, 0)
        factory.set_step(2)
        late = factory.make(task, 1)
        for env in (early, late):
            env.reset(task, seed=5)
        calm, perturbed = early.step(keys("ls")), late.step(keys("ls"))
        assert calm.info["perturbation"] is None
        assert perturbed.info["perturbation"]["name"] == "command_not_found"
        system = [m["content"] for m in rec.requests[-1].messages if m["role"] == "system"][0]
        assert "`frobnicate` is not installed" in system
        assert not any("frobnicate" in m["content"] for m in rec.requests[-2].messages)
        early.reset(task, seed=5)  # made for step 1: stays unperturbed after the factory moved on
        assert early.step(keys("ls")).info["perturbation"] is None
        stats = factory.stats()
        assert stats["perturbed_episodes"] == {"command_not_found": 1}
        assert stats["perturbed_steps"] == {"command_not_found": 1} and stats["episodes"] == 3
    finally:
        factory.close()


# ── real pools and hybrids ───────────────────────────────────────────────────────────────────────────


def test_real_pool_caps_live_environments_and_closes_leftovers(terminal):
    sandbox_ready()
    pool = real_envs(terminal, {"pids_limit": 64}, max_live=1)
    task = terminal.tasks("basic")[0]
    first = pool.make(task, 0)
    first.reset(task)
    assert first.shell is not None and first.shell.jail.pids_limit == 64  # the inner env's attributes
    got = []
    waiter = threading.Thread(target=lambda: got.append(pool.make(task, 1)))
    waiter.start()
    time.sleep(0.3)
    assert got == [] and pool.live == 1  # the second waits for a place
    first.close()
    waiter.join(10)
    assert len(got) == 1 and pool.live == 1
    got[0].reset(task)
    shell = got[0].shell
    pool.close()  # an environment nobody closed is closed by the pool
    assert pool.live == 0 and got[0].inner.shell is None and not shell.alive()
    with pytest.raises(AwctlError, match="closed"):
        pool.make(task, 0)


def test_hybrid_sends_blind_spot_families_to_the_real_env_after_catching_up(terminal, tiny_backend):
    sandbox_ready()
    rec = Recording(tiny_backend)
    sim, real = sim_envs(terminal, rec, sim_options={"max_tokens": 6}), real_envs(terminal)
    factory = hybrid_envs(terminal, real, sim, {"ls"})
    task = terminal.tasks("basic")[0]
    env = factory.make(task, 0)
    try:
        env.reset(task, seed=0)
        first = env.step(keys("touch made.txt"))
        assert (first.info["routed"], first.info["family"]) == ("sim", "touch") and real.made == 0
        second = env.step(keys("ls"))
        assert (second.info["routed"], second.info["family"], second.info["replayed"]) == ("real", "ls", 1)
        # The real sandbox replayed the simulated `touch` first, so `ls` really lists the file.
        assert "made.txt" in second.observation.splitlines()
        assert env.sim.history[-1].observation == second.observation
        third = env.step(keys("cat made.txt"))
        assert third.info["routed"] == "sim"
        assert any(second.observation in m["content"] for m in rec.requests[-1].messages)  # sim saw the real screen
        real_env = env.catch_up()  # the real env, caught up on the simulated `cat` as well
        assert env.real_seen == 3 and real_env is env.real
        assert real.made == 1 and real.live == 1
    finally:
        env.close()
    assert real.live == 0
    stats = factory.stats()
    assert (stats["real_steps"], stats["sim_steps"], stats["replayed_steps"]) == (1, 2, 2)
    assert stats["episodes_with_real"] == 1 and stats["blind_spots"] == ["ls"]
    factory.close()


def test_hybrid_starts_no_real_env_without_a_blind_spot_action(terminal, tiny_backend):
    sim, real = sim_envs(terminal, tiny_backend, sim_options={"max_tokens": 4}), real_envs(terminal)
    factory = hybrid_envs(terminal, real, sim, {"git"})
    task = terminal.tasks("basic")[0]
    with factory.make(task, 0) as env:
        env.reset(task, seed=0)
        for command in ("ls", "pwd", "echo hi"):
            assert env.step(keys(command)).info["routed"] == "sim"
    assert real.made == 0
    factory.close()


# ── the audit's blind spots ──────────────────────────────────────────────────────────────────────────


def test_blind_spots_come_from_an_audit_json(tmp_path, terminal):
    from awctl.eval.audit import AuditResult, TurnResult, write_report

    def turn(family: str, score: float, exact: bool) -> TurnResult:
        return TurnResult("t", 0, family, keys(family), exact, exact, score, {}, "p", "r")

    result = AuditResult("terminal", "tiny", [
        turn("ls", 5, True), turn("ls", 5, True),             # perfect: never a blind spot
        turn("grep", 2, False), turn("grep", 3, False),
        turn("sed", 1, False),
        turn("cat", 4.5, True), turn("cat", 4, False),
        turn("awk", 3.5, False),
    ])
    write_report(result, tmp_path)
    assert blind_spots_from_audit(tmp_path) == {"grep", "sed", "cat", "awk"}
    assert blind_spots_from_audit(tmp_path / "audit.json", count=2) == {"sed", "grep"}
    assert blind_spots_from_audit(tmp_path, max_score=50) == {"sed", "grep"}
    assert blind_spots_from_audit(tmp_path, min_turns=2) == {"grep", "cat"}
    assert action_family(terminal, keys("grep -n x f")) == "grep"
    assert action_family(terminal, "not json") == "invalid"
    (tmp_path / "bad.json").write_text("{\n  nope\n}")
    with pytest.raises(InputError, match=r"bad.json:2: not JSON"):
        blind_spots_from_audit(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"rows": []}')
    with pytest.raises(InputError, match="no 'families' list"):
        blind_spots_from_audit(tmp_path / "other.json")


# ── with the rollout engine ──────────────────────────────────────────────────────────────────────────


def test_the_rollout_engine_runs_sim_episodes_over_one_batched_world_model(terminal, tiny_backend):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from awctl.agent.executors import InProcessExecutor
    from awctl.agent.policy import AgentPolicy
    from awctl.agent.rollout import RolloutEngine
    from awctl.models.tiny import default_tiny_model

    path = str(default_tiny_model())
    model, tok = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    policy = AgentPolicy(model, tok, terminal, max_action_tokens=8)
    factory = sim_envs(terminal, tiny_backend, sim_options={"max_tokens": 6}, window_ms=100)
    engine = RolloutEngine(policy, factory, max_turns=2, concurrency=4, executor=InProcessExecutor(),
                           step_timeout_s=120, episode_timeout_s=600)
    try:
        episodes = engine.run(terminal.tasks("basic")[:2], group_size=2, seed=0)
    finally:
        factory.close()
    assert len(episodes) == 4 and all(e.status != "crashed" for e in episodes), [e.error for e in episodes]
    assert all(e.env_kind == "sim" for e in episodes)
    stats = factory.stats()
    assert stats["episodes"] == 4
    steps = sum(e.steps for e in episodes)
    # Every environment step and every checker probe (the episodes end together, so their probes
    # arrive together) went through the one shared backend, in shared calls.
    assert stats["steps"] >= steps + 4 and stats["backend"]["requests"] == stats["steps"]
    assert stats["backend"]["largest_batch"] >= 2


@pytest.mark.slow
def test_sim_episodes_over_an_openai_compatible_endpoint_share_its_batches(terminal):
    """The world model behind an HTTP endpoint (here ``awctl simulate serve``; a vLLM server the same):
    concurrent episodes' steps reach it together and it batches them."""
    import urllib.request

    from awctl.models.backends.openai_backend import OpenAIBackend
    from awctl.models.tiny import default_tiny_model
    from awctl.sim.launch import ServerProcess

    with ServerProcess.awctl_serve("-b", "transformers", "-m", str(default_tiny_model()), "--batch-window-ms", "50",
                                   startup_timeout=300) as server:
        endpoint = OpenAIBackend(base_url=server.url + "/v1")
        factory = sim_envs(terminal, endpoint, sim_options={"max_tokens": 6}, window_ms=20)
        tasks = terminal.tasks("basic")[:4]
        envs = [factory.make(t, i) for i, t in enumerate(tasks)]
        try:
            for i, (env, task) in enumerate(zip(envs, tasks, strict=True)):
                env.reset(task, seed=i)
            barrier, results = threading.Barrier(4), [None] * 4

            def play(i: int) -> None:
                barrier.wait()
                results[i] = envs[i].step(keys(f"echo {i}"))

            threads = [threading.Thread(target=play, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert all(r is not None and r.info["turn"] == 0 for r in results)
            with urllib.request.urlopen(server.url + "/health", timeout=10) as resp:
                health = json.loads(resp.read())
            assert health["requests"] == 4 and health["largest_batch"] >= 2, health
        finally:
            factory.close()
