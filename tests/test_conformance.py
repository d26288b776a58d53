"""The conformance kit passes a domain that keeps the contract and fails, naming the rule, a copy that
breaks any one rule; its message says what an author has to fix. Random text earns no verifier credit."""

from __future__ import annotations

import importlib.util
import random
import string
from pathlib import Path

import pytest

from awctl.conformance import RULES, check_domain

_spec = importlib.util.spec_from_file_location(
    "counter_fixture", Path(__file__).parent / "fixtures" / "conformance" / "counter.py")
counter = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(counter)


def test_a_domain_that_keeps_the_contract_passes_every_rule() -> None:
    report = check_domain(counter.Counter())
    assert report.ok and not report.skipped, report.text()
    assert [o.rule for o in report.outcomes] == list(RULES)


@pytest.mark.parametrize("rule", sorted(counter.BROKEN))
def test_each_broken_plugin_fails_naming_its_rule(rule: str) -> None:
    report = check_domain(counter.BROKEN[rule]())
    failed = dict(report.failures)
    assert rule in failed, report.text()
    assert failed[rule], "the failure must say what is wrong"
    print(f"{rule}: {failed[rule]}")


def test_every_rule_has_a_broken_plugin() -> None:
    assert set(counter.BROKEN) == set(RULES)


def test_rules_that_cannot_run_are_skipped_with_the_reason_not_passed() -> None:
    report = check_domain(counter.Counter(), real_env=False)
    skipped = dict(report.skipped)
    assert set(skipped) >= {"task.reference_passes", "task.noop_fails", "env.reset_reproducible",
                            "env.first_observation"}
    assert "not requested" in skipped["task.reference_passes"]
    assert report.ok


def test_random_text_earns_no_verifier_credit_in_the_judge_or_the_reward() -> None:
    from awctl.domain import verifier_credit
    from awctl.eval.deterministic import compare
    from awctl.record import record_episode, scripted_policy
    from awctl.rl.expand import expand
    from awctl.rl.rewards import RewardModel

    domain = counter.Counter()
    trajs = []
    for task in domain.tasks("basic"):
        with domain.real_env() as env:
            trajs.append(record_episode(domain, env, task, scripted_policy))
    rng = random.Random(0)
    rewards = RewardModel({"counter": domain})
    prompts = expand(trajs, {"counter": domain})
    for p in prompts:
        garbage = "".join(rng.choice(string.printable[:94]) for _ in range(80))
        credit = verifier_credit(domain, p.trajectory, p.index, garbage)
        assert credit.applicable and credit.rate == 0.0
        judged = compare(domain, p.reference, garbage, trajectory=p.trajectory, index=p.index)
        assert judged.details["verifier_rate"] == 0.0
        (reward,) = rewards.score([p], [f"<predicted_observation>\n{garbage}\n</predicted_observation>"])
        assert reward.verifier == 0.0


def test_perfect_reference_judges_each_row_against_the_turn_it_evaluates() -> None:
    # AgentWorldBench files often hold rows for some turns only (first, middle, last): a row must be
    # answered with its own turn's real observation, not the observation at the row's position.
    from awctl.conformance.kit import rule_perfect_reference
    from awctl.formats.agentworldbench import AWCTL_KEY, rows_to_trajectories, trajectory_to_rows
    from awctl.record import record_episode, scripted_policy

    domain = counter.Counter()
    task = max(domain.tasks("basic"), key=lambda t: len(t.solution))
    with domain.real_env() as env:
        traj = record_episode(domain, env, task, scripted_policy)
    assert len(traj.turns) >= 3 and traj.turns[1].observation != traj.turns[-1].observation
    rows = [{k: v for k, v in r.items() if k != AWCTL_KEY} for r in trajectory_to_rows(traj, {"counter": domain})]
    sparse = [rows[0], rows[-1]]
    (imported,) = rows_to_trajectories(sparse, {"counter": domain})
    outcome = rule_perfect_reference(domain, {"counter": domain}, [imported])
    assert outcome.status == "ok" and outcome.checked == 2, outcome.message
