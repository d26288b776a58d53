"""Real third-party MCP servers recorded without awctl (``tests/foreign/mcp``): every turn reads, passes every
verifier, survives prep, round-trips byte for byte, and the planted faults are caught."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from awctl_domains.mcp.domain import McpDomain
from awctl_domains.mcp.importers import load_openai_chat

from awctl.conformance.faults import format_tallies, plant_faults
from awctl.data.clean import check_domain
from awctl.domain import run_verifiers
from awctl.formats.agentworldbench import read_rows, write_rows
from awctl.trajectory import Trajectory

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "foreign" / "mcp"
DOMAIN = McpDomain()
AWB_FILES = sorted(CORPUS.glob("*.awb.jsonl"))
DOMAINS = {"mcp": DOMAIN}


def load() -> list[tuple[str, Trajectory]]:
    out = [(p.name, t) for p in AWB_FILES for t in read_rows(p, DOMAINS)]
    out += [(p.name, t) for p in sorted(CORPUS.glob("*.openai.jsonl")) for t in load_openai_chat(p)]
    return out


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, Trajectory]]:
    found = load()
    assert len(AWB_FILES) >= 8 and len(found) >= 20, (
        "the recordings are missing; see tests/foreign/mcp/README.md"
    )
    return found


def test_every_form_of_the_corpus_is_present(corpus) -> None:
    forms = Counter(
        DOMAIN.observation_codec.parse(turn.observation).form for _, t in corpus for turn in t.turns
    )
    assert {"envelope", "result", "error", "blocks", "text"} <= set(forms), forms
    action_forms = Counter(DOMAIN.action_codec.parse(turn.action).form for _, t in corpus for turn in t.turns)
    assert {"call", "request"} <= set(action_forms)


def test_no_verifier_fails_a_turn_and_every_verifier_checks_some(corpus) -> None:
    checked: Counter[str] = Counter()
    failures = []
    for name, traj in corpus:
        for i in range(len(traj.turns)):
            for res in run_verifiers(DOMAIN, traj, i):
                checked[res.check] += 1
                if not res.ok:
                    failures.append(f"{name} {traj.id} turn {i}: {res.check}: {res.message}")
    assert failures == []
    assert set(checked) == {v.name for v in DOMAIN.verifiers()}, checked


def test_prep_quarantines_nothing(corpus) -> None:
    assert [(name, t.id, check_domain(t, DOMAIN)) for name, t in corpus if check_domain(t, DOMAIN)] == []


def test_codecs_write_every_action_and_observation_back_byte_for_byte(corpus) -> None:
    for _, traj in corpus:
        for turn in traj.turns:
            assert DOMAIN.action_codec.render(DOMAIN.action_codec.parse(turn.action)) == turn.action
            assert DOMAIN.observation_codec.render(DOMAIN.observation_codec.parse(turn.observation)) == (
                turn.observation
            )


@pytest.mark.parametrize("path", AWB_FILES, ids=lambda p: p.name)
def test_agentworldbench_rows_round_trip_byte_for_byte(path: Path, tmp_path: Path) -> None:
    trajectories = list(read_rows(path, DOMAINS))
    # the hooks alone reproduce the rows: no verbatim copies were needed
    assert not any(
        k.startswith("awb_") and k != "awb_before_action"
        for t in trajectories
        for turn in t.turns
        for k in turn.metadata
    )
    out = tmp_path / path.name
    write_rows(out, trajectories, DOMAINS)
    assert out.read_bytes() == path.read_bytes()


def test_planted_faults_are_caught_on_at_least_three_of_four_turns(corpus) -> None:
    tallies = plant_faults(DOMAIN, [t for _, t in corpus])
    print("\n" + format_tallies(tallies))
    assert set(tallies) == {f.name for f in DOMAIN.faults()}
    for tally in tallies.values():
        assert tally.planted >= 4, f"{tally.fault}: planted only {tally.planted} times"
        assert tally.caught * 4 >= tally.planted * 3, tally.to_dict()
    # planting works on copies: the recorded turns (and the parse cache behind them) are untouched
    assert all(r.ok for _, t in corpus for i in range(len(t.turns)) for r in run_verifiers(DOMAIN, t, i))


def test_faults_are_caught_on_awctls_own_recordings_too(recorded: dict[str, Trajectory]) -> None:
    tallies = plant_faults(DOMAIN, list(recorded.values()))
    print("\n" + format_tallies(tallies))
    planted = {name: t for name, t in tallies.items() if t.planted}
    assert len(planted) >= 9
    for tally in planted.values():
        assert tally.caught * 4 >= tally.planted * 3, tally.to_dict()
