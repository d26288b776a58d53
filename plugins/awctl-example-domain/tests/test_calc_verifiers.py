"""Verifiers: silent on real recordings (stripped as the judge strips them), abstaining only where the
trajectory says too little, catching every planted fault of their kind, and giving random text no credit."""

from __future__ import annotations

import random
import string

from awctl_example_domain.domain import CalcDomain
from awctl_example_domain.faults import FAULTS

from awctl.domain import TurnContext, run_verifiers, verifier_credit, verifier_outcomes
from awctl.trajectory import SystemPrompt, Trajectory, Turn

DOMAIN = CalcDomain()


def test_every_verifier_passes_every_recorded_turn_as_recorded_and_stripped(recordings) -> None:
    for traj in recordings:
        for i, turn in enumerate(traj.turns):
            for observation in (turn.observation, f"\n {turn.observation}  \n".strip()):
                failed = [r for r in run_verifiers(DOMAIN, traj, i, observation) if not r.ok]
                assert not failed, (traj.id, i, failed)


def test_every_verifier_applies_somewhere_in_the_recordings(recordings) -> None:
    applied = {name for traj in recordings for i in range(len(traj.turns))
               for name, res in verifier_outcomes(DOMAIN, traj, i) if res is not None}
    assert applied == {v.name for v in DOMAIN.verifiers()}


def test_every_verifier_has_a_fault_and_each_fault_is_caught_where_planted(recordings) -> None:
    assert {f.verifier for f in FAULTS} == {v.name for v in DOMAIN.verifiers()}
    rng = random.Random(0)
    for fault in FAULTS:
        target = next(v for v in DOMAIN.verifiers() if v.name == fault.verifier)
        planted = 0
        for traj in recordings:
            for i in range(len(traj.turns)):
                corrupted = fault.plant(TurnContext.at(traj, i), rng)
                if corrupted is None:
                    continue
                planted += 1
                result = target(TurnContext.at(traj, i, corrupted))
                assert result is not None and not result.ok, (fault.name, traj.id, i, corrupted)
                assert result.message.startswith("line 1") or "line" in result.message
        assert planted >= 4, fault.name


def test_wrong_value_keeps_the_line_readable_so_only_its_verifier_objects(recordings) -> None:
    traj = recordings[0]
    corrupted = FAULTS[2].plant(TurnContext.at(traj, 0), random.Random(1))
    failed = {r.check for r in run_verifiers(DOMAIN, traj, 0, corrupted) if not r.ok}
    assert failed == {"deterministic_result"}


def test_replay_abstains_on_another_programs_banner_or_a_history_it_cannot_reproduce(recordings) -> None:
    foreign = recordings[0].model_copy(update={"system": SystemPrompt(initial_state="Welcome to bc 1.07")})
    assert dict(verifier_outcomes(DOMAIN, foreign, 0))["deterministic_result"] is None
    diverged = Trajectory(id="d", domain="calc", system=SystemPrompt(initial_state="calc ready; variables: none"),
                          turns=[Turn(action="x = 1", observation="x = 1.0"), Turn(action="x", observation="1.0")])
    assert dict(verifier_outcomes(DOMAIN, diverged, 1))["deterministic_result"] is None


def test_failure_names_the_line_and_the_expected_text(recordings) -> None:
    traj = recordings[0]
    (res,) = [r for r in run_verifiers(DOMAIN, traj, 0, "answer = 41") if not r.ok]
    assert res.check == "deterministic_result" and "line 1: expected 'answer = 42'" in res.message


def test_random_text_earns_no_verifier_credit(recordings) -> None:
    rng = random.Random(7)
    for traj in recordings:
        for i in range(len(traj.turns)):
            noise = "".join(rng.choice(string.printable) for _ in range(80)).strip()
            credit = verifier_credit(DOMAIN, traj, i, noise)
            assert credit.applicable >= 1 and credit.passed == 0, (traj.id, i, credit)
