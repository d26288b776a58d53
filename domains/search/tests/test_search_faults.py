"""Planted faults: one kind per verifier, each caught by the verifier it targets on real recordings of every
layout, planted only where it can occur, and never crashing a planter."""

from __future__ import annotations

import random
import re

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.env import SearchEnv
from awctl_domains.search.faults import FAULTS
from awctl_domains.search.tasks import ToolCalls, tasks_for

from awctl.domain import Fault, TurnContext, run_verifiers
from awctl.trajectory import Trajectory

DOMAIN = SearchDomain()


def _recordings() -> list[Trajectory]:
    trajs = []
    for suite in ("all", "qwen", "awb"):
        trajs += [DOMAIN.record(task, env=SearchEnv()) for task in tasks_for(suite)]
    # Episodes that search the same page twice and read the answer back, in each tool set.
    for suite, layout in (("facts", "awctl"), ("qwen", "qwen"), ("awb", "awb")):
        for task in tasks_for(suite)[:2]:
            search, extract, store = task.solution
            read = ToolCalls(layout).memory("get", "answer")
            trajs.append(DOMAIN.record(task, [search, search, extract, store, read], env=SearchEnv()))
    return trajs


RECORDINGS = _recordings()


def test_every_verifier_has_a_fault_and_the_domain_lists_them() -> None:
    assert DOMAIN.faults() == list(FAULTS)
    assert {f.verifier for f in FAULTS} == {v.name for v in DOMAIN.verifiers()}
    assert len({f.name for f in FAULTS}) == len(FAULTS)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_each_fault_is_caught_by_its_verifier_on_real_recordings(fault: Fault) -> None:
    rng = random.Random(fault.name)
    planted = caught = 0
    for traj in RECORDINGS:
        for i in range(len(traj.turns)):
            bad = fault.plant(TurnContext.at(traj, i), rng)  # a planter must not raise on any real turn
            if bad is None:
                continue
            assert bad != traj.turns[i].observation, (fault.name, traj.id, i)
            planted += 1
            result = [r for r in run_verifiers(DOMAIN, traj, i, bad) if r.check == fault.verifier]
            if result and not result[0].ok:
                caught += 1
                assert re.search(r"line \d+", result[0].message), result[0].message  # names the line
    assert planted >= 4, f"{fault.name} applies to only {planted} recorded turns"
    assert caught * 4 >= planted * 3, f"{fault.name}: caught {caught} of {planted}"


def test_recordings_pass_every_verifier_before_any_fault() -> None:
    for traj in RECORDINGS:
        for i in range(len(traj.turns)):
            assert all(r.ok for r in run_verifiers(DOMAIN, traj, i)), (traj.id, i)


@pytest.mark.parametrize(
    ("fault", "turn_kind"),
    [
        ("extract_contradicts_snippet", "memory"),
        ("memory_read_other_value", "search"),
        ("retitled_repeat_result", "extract"),
        ("extract_other_url", "search"),
    ],
)
def test_faults_plant_nothing_where_they_cannot_occur(fault: str, turn_kind: str) -> None:
    (kind,) = [f for f in FAULTS if f.name == fault]
    names = {"memory": ("memory", "dict_memory"), "search": ("web_search",), "extract": ("web_extractor",)}
    for traj in RECORDINGS:
        for i, turn in enumerate(traj.turns):
            action = DOMAIN.action_codec.parse(turn.action)
            if action.name in names[turn_kind]:
                assert kind.plant(TurnContext.at(traj, i), random.Random(0)) is None
