"""Random text earns no verifier credit: a check that passes a real turn fails (not abstains) when random
text replaces the observation, since the turn's action says what kind of observation was due; an error
reply, a legitimate answer to any call, still passes or is left alone."""

from __future__ import annotations

import random
import string
from pathlib import Path

from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.importers import load_openai_chat, load_qwen_agent_log
from awctl_domains.search.tasks import tasks_for

from awctl.domain import verifier_credit, verifier_outcomes
from awctl.formats.agentworldbench import read_rows
from awctl.trajectory import Trajectory

DOMAIN = SearchDomain()
CORPUS = Path(__file__).parents[3] / "tests" / "foreign" / "search"
FIXTURE = Path(__file__).parent / "fixtures" / "agent_logs.search-chat.jsonl"
ALPHABET = string.ascii_letters + string.digits + " .,;:-_/"
ERRORS = ("Error: 429 Too Many Requests", "Google search Timeout, return None, Please try again later.")


def _trajectories() -> list[Trajectory]:
    trajs = [t for path in sorted(CORPUS.glob("*.awb.jsonl")) for t in read_rows(path)]
    trajs += load_qwen_agent_log(CORPUS / "deepresearch_runs.qwen-agent.jsonl")
    trajs += load_openai_chat(FIXTURE)
    # awctl's own sessions in each of the three layouts (the suites qwen and awb name theirs)
    trajs += [DOMAIN.record(t) for suite in ("all", "qwen", "awb") for t in tasks_for(suite)[::5]]
    return trajs


def test_random_text_fails_every_check_that_passes_a_real_turn() -> None:
    rng = random.Random(7)
    checked, names = 0, set()
    for traj in _trajectories():
        for i, turn in enumerate(traj.turns):
            garbage = "".join(rng.choice(ALPHABET) for _ in range(max(8, len(turn.observation) // 4)))
            on_garbage = dict(verifier_outcomes(DOMAIN, traj, i, garbage))
            for name, ref in verifier_outcomes(DOMAIN, traj, i):
                if ref is None or not ref.ok:
                    continue
                got = on_garbage[name]
                assert got is not None and not got.ok, (traj.id, i, name, got)
                assert "line " in got.message, got.message  # names the line, and what was due
                checked += 1
                names.add(name)
            assert verifier_credit(DOMAIN, traj, i, garbage).passed == 0
    assert checked > 500 and names == {v.name for v in DOMAIN.verifiers()}


def test_a_failure_says_which_kind_of_observation_the_call_was_due() -> None:
    traj = DOMAIN.record(tasks_for("memory")[-1])  # searches, reads and keeps notes
    search_turn = next(i for i, t in enumerate(traj.turns) if '"web_search"' in t.action)
    got = dict(verifier_outcomes(DOMAIN, traj, search_turn, "nothing to see here"))
    message = got["search_numbering"].message
    assert "expected search results (one block per query) answering the web_search call" in message
    memory_turn = next(i for i, t in enumerate(traj.turns) if '"memory"' in t.action)
    got = dict(verifier_outcomes(DOMAIN, traj, memory_turn, "Query 1: x\nResults: 0"))
    assert not got["memory_replay"].ok and "a SearchResults observation" in got["memory_replay"].message


def test_an_error_reply_is_still_no_failure_of_the_content_checks() -> None:
    for traj in [DOMAIN.record(t) for t in tasks_for("all")[::6]]:
        for i in range(len(traj.turns)):
            for text in ERRORS:
                outcomes = verifier_outcomes(DOMAIN, traj, i, text)
                failed = [n for n, r in outcomes if r is not None and not r.ok]
                assert set(failed) <= {"observation_parses"}, (traj.id, i, text, failed)
