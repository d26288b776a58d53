"""SimEnv: prompt building, history rendering, verifier-gated resampling, perturbation schedules,
batched stepping — with a scripted backend for exact control, and with a real tiny model."""

from __future__ import annotations

import asyncio

import pytest

from awctl.backend import Backend, ChatRequest, Completion
from awctl.domain import ActionCodec, Domain, ObservationCodec, Perturbation, VerifyResult, verifier
from awctl.errors import AwctlError
from awctl.sim.env import SimEnv, astep_many, step_many

OBS = "<predicted_observation>"
END = "</predicted_observation>"


class _Text(ActionCodec, ObservationCodec):
    def parse(self, text):
        return text

    def render(self, value):
        return value

    def schema(self):
        return "Any shell command."


@verifier("not_bad", "the observation never contains BAD")
def _not_bad(ctx):
    return VerifyResult(
        "not_bad", "BAD" not in ctx.observation, "BAD found" if "BAD" in ctx.observation else ""
    )


@verifier("nonempty", "the observation is not blank")
def _nonempty(ctx):
    return bool(ctx.observation.strip())


class ToyDomain(Domain):
    name = "toy"
    action_codec = _Text()
    observation_codec = _Text()

    def verifiers(self):
        return [_not_bad, _nonempty]

    def perturbations(self):
        return [
            Perturbation(
                "rate_limit",
                "HTTP 429",
                "Answer with HTTP 429 Too Many Requests (limit {limit}).",
                {"limit": 5},
            )
        ]


class ScriptedBackend(Backend):
    """Returns queued texts in order and records every batch it was called with."""

    name = "scripted"
    model = "scripted"

    def __init__(self, texts):
        self.texts = list(texts)
        self.calls: list[list[ChatRequest]] = []

    def generate(self, requests):
        self.calls.append(list(requests))
        return [[Completion(text=self.texts.pop(0))] for _ in requests]


def wrap(obs: str) -> str:
    return f"<think>t</think>{OBS}\n**Environment Observation:**\n{obs}\n{END}"


def test_step_builds_prompt_history_and_decodes_observation():
    be = ScriptedBackend([wrap("a.txt"), wrap("hello")])
    env = SimEnv(ToyDomain(), be, initial_state="empty dir", variant=2)
    assert env.reset() == "empty dir"
    r1 = env.step("ls")
    assert r1.observation == "a.txt"
    assert r1.info["reasoning"] == "t" and r1.info["verified"] and r1.info["attempts"] == 1
    r2 = env.step("cat a.txt")
    msgs = be.calls[1][0].messages
    assert msgs[0]["role"] == "system" and "Any shell command." in msgs[0]["content"]
    assert msgs[0]["content"] == ToyDomain().system_prompt(env.sections, 2)
    assert msgs[1] == {"role": "user", "content": "### Turn 1\n**Action:**\nls"}
    assert msgs[2] == {"role": "assistant", "content": "**Environment Observation:**\na.txt"}
    assert msgs[3] == {"role": "user", "content": "### Turn 2\n**Action:**\ncat a.txt"}
    assert r2.observation == "hello" and [t.action for t in env.history] == ["ls", "cat a.txt"]


def test_failed_verifier_triggers_resampling_until_one_passes():
    be = ScriptedBackend([wrap("BAD"), wrap(""), wrap("fine"), wrap("never used")])
    env = SimEnv(ToyDomain(), be, resample=3, resample_temperature=0.9, seed=7)
    r = env.step("ls")
    assert r.observation == "fine"
    assert r.info["attempts"] == 3 and r.info["candidates"] == [1, 1, 0]
    temps = [c[0].temperature for c in be.calls]
    assert temps == [0.0, 0.9, 0.9]
    seeds = [c[0].seed for c in be.calls]
    assert len(set(seeds)) == 3  # each resample draws differently
    assert be.texts == [wrap("never used")]


def test_all_candidates_failing_returns_the_best_with_the_report():
    be = ScriptedBackend([wrap(""), wrap("BAD"), wrap("")])
    env = SimEnv(ToyDomain(), be, resample=2)
    r = env.step("ls")
    # "" fails nonempty only (1 failure), "BAD" fails not_bad only (1 failure): tie -> the non-empty one.
    assert r.observation == "BAD"
    assert not r.info["verified"]
    assert {v["check"]: v["ok"] for v in r.info["verifiers"]} == {"not_bad": False, "nonempty": True}


def test_no_resampling_when_disabled():
    be = ScriptedBackend([wrap("BAD")])
    r = SimEnv(ToyDomain(), be).step("ls")
    assert r.observation == "BAD" and r.info["attempts"] == 1 and not r.info["verified"]


def test_perturbation_injected_on_every_nth_matching_action():
    be = ScriptedBackend([wrap(str(i)) for i in range(6)])
    env = SimEnv(
        ToyDomain(),
        be,
        perturbation="rate_limit",
        perturbation_params={"limit": 9},
        perturb_every=2,
        perturb_match=r"^call",
    )
    actions = ["call a", "ls", "call b", "call c", "ls", "call d"]
    infos = [env.step(a).info for a in actions]
    text = "Answer with HTTP 429 Too Many Requests (limit 9)."
    injected = [text in c[0].messages[0]["content"] for c in be.calls]
    assert injected == [False, False, True, False, False, True]
    assert [i["perturbation"] is not None for i in infos] == injected
    assert infos[2]["perturbation"]["name"] == "rate_limit"


def test_unknown_perturbation_lists_known_ones():
    with pytest.raises(AwctlError) as err:
        SimEnv(ToyDomain(), ScriptedBackend([]), perturbation="nope")
    assert "rate_limit" in err.value.hint


def test_perturbation_can_be_switched_live():
    be = ScriptedBackend([wrap("1"), wrap("2")])
    env = SimEnv(ToyDomain(), be)
    env.step("ls")
    env.set_perturbation("rate_limit")
    env.step("ls")
    assert "limit 5" not in be.calls[0][0].messages[0]["content"]
    assert "limit 5" in be.calls[1][0].messages[0]["content"]


def test_max_turns_and_history_window():
    be = ScriptedBackend([wrap(str(i)) for i in range(3)])
    env = SimEnv(ToyDomain(), be, max_turns=3, max_history_turns=1)
    results = [env.step(f"echo {i}") for i in range(3)]
    assert [r.done for r in results] == [False, False, True]
    last = be.calls[2][0].messages
    assert [m["content"] for m in last[1:]] == [
        "### Turn 2\n**Action:**\necho 1",
        "**Environment Observation:**\n1",
        "### Turn 3\n**Action:**\necho 2",
    ]


def test_step_many_sends_one_batch_per_round():
    be = ScriptedBackend([wrap("BAD"), wrap("b"), wrap("c"), wrap("fixed")])
    envs = [SimEnv(ToyDomain(), be, resample=1) for _ in range(3)]
    results = step_many(envs, ["x", "y", "z"])
    assert [len(c) for c in be.calls] == [3, 1]  # round 1: all three; round 2: only the failed one
    assert [r.observation for r in results] == ["fixed", "b", "c"]


def test_step_many_refuses_mixed_backends():
    with pytest.raises(AwctlError):
        step_many(
            [SimEnv(ToyDomain(), ScriptedBackend([])), SimEnv(ToyDomain(), ScriptedBackend([]))], ["a", "b"]
        )


def test_async_step_and_step_many():
    be = ScriptedBackend([wrap("1"), wrap("2"), wrap("3")])
    env = SimEnv(ToyDomain(), be)
    assert asyncio.run(env.astep("a")).observation == "1"
    envs = [env, SimEnv(ToyDomain(), be)]
    assert [r.observation for r in asyncio.run(astep_many(envs, ["b", "c"]))] == ["2", "3"]


def test_trajectory_export_round_trips():
    be = ScriptedBackend([wrap("out")])
    env = SimEnv(ToyDomain(), be, initial_state="s")
    env.step("ls")
    traj = env.to_trajectory("t1")
    assert traj.turns[0].observation == "out" and traj.system.initial_state == "s"


@pytest.fixture(scope="module")
def tiny_backend():
    from awctl.models.backends.transformers_backend import TransformersBackend

    be = TransformersBackend("tiny", batch_size=8)
    yield be
    be.close()


def test_batched_steps_equal_sequential_steps_on_a_real_model(tiny_backend):
    actions = ["ls", "cat /etc/hostname", "echo a b c d e f", "pwd"]
    seq_envs = [SimEnv(ToyDomain(), tiny_backend, max_tokens=6) for _ in actions]
    seq = [e.step(a) for e, a in zip(seq_envs, actions, strict=True)]
    bat_envs = [SimEnv(ToyDomain(), tiny_backend, max_tokens=6) for _ in actions]
    bat = step_many(bat_envs, actions)
    assert [r.info["raw"] for r in bat] == [r.info["raw"] for r in seq]
    assert all(r.info["usage"]["completion_tokens"] >= 1 for r in bat)
