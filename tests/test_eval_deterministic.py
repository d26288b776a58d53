"""The deterministic judge: a perfect copy scores 5/5 everywhere; documented corruptions score lower,
monotonically in their amount, across every domain with fixtures (AWB rows of all seven domains and
trajectories recorded in the real search, MCP, terminal and SWE environments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awctl.eval import SCORE_DIMENSIONS
from awctl.eval.corruptions import CORRUPTIONS, break_format, change_digits, drop_lines, malform_ids
from awctl.eval.deterministic import DeterministicJudge, compare, mask_metadata
from awctl.eval.extract import row_view
from awctl.eval.judging import judge_rows
from awctl.formats.agentworldbench import OBSERVATION_MARKER
from awctl.plugins import get_registry
from awctl.trajectory import read_trajectories

FIXTURES = Path(__file__).parent / "fixtures"
AWB_FILES = sorted((FIXTURES / "awb").glob("*_test.jsonl"))
# Recorded with `awctl record` in the real environments (local search engine, stdio MCP servers,
# bubblewrap shell, SWE sandbox).
RECORDED = [FIXTURES / "eval" / f"{d}_recorded.jsonl" for d in ("search", "mcp", "terminal", "swe")]
AMOUNTS = [0.0, 0.25, 0.5, 0.75, 1.0]

GIT_LOG = """commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39
Author: Dev <dev@example.org>
Date:   2026-11-29T14:04:42Z

    fix: parse durations (took 0.31s, pid 48213)

request 123e4567-e89b-12d3-a456-426614174000 served in 12ms
container a1b2c3d4e5f6 started at 2026-11-29T14:05:01Z
 3 files changed, 42 insertions(+), 7 deletions(-)"""


def _awb_rows() -> list[dict]:
    rows = []
    for path in AWB_FILES:
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _gen(observation: str) -> str:
    return f"<predicted_observation>\n{OBSERVATION_MARKER}\n{observation}\n</predicted_observation>"


def _judge_awb(rows: list[dict], corrupt=None, amount: float = 0.0) -> list[dict]:
    preds = []
    for row in rows:
        truth = row_view(row).ground_truth
        preds.append({**row, "gen": _gen(corrupt(truth, amount) if corrupt else truth)})
    return list(judge_rows(preds, DeterministicJudge(get_registry().domains)))


def test_fixtures_cover_all_awb_domains() -> None:
    assert {p.name.split("_")[0] for p in AWB_FILES} >= {"terminal", "swe", "mcp", "search", "web", "android", "os"}


def test_perfect_copy_scores_five_on_every_dimension_for_every_awb_row() -> None:
    judged = _judge_awb(_awb_rows())
    assert judged
    for row in judged:
        assert row["failed"] == 0.0, row
        assert [row[d] for d in SCORE_DIMENSIONS] == [5] * 5, (row["task"], row["id"], row["weaknesses"])
        assert row["total_score"] == 5.0


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_perfect_copy_of_recorded_real_turns_scores_five(path: Path) -> None:
    reg = get_registry()
    for traj in read_trajectories(path):
        domain = reg.domain(traj.domain)
        for t, turn in enumerate(traj.turns):
            j = compare(domain, turn.observation, turn.observation, trajectory=traj, index=t)
            assert j.scores == dict.fromkeys(SCORE_DIMENSIONS, 5), (traj.id, t, j.weaknesses)
            assert j.details["verifier_rate"] == 1.0


def test_runtime_metadata_may_differ_in_value_but_not_in_form() -> None:
    other = (GIT_LOG.replace("3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", "0badc0ffee0badc0ffee0badc0ffee0badc0ffe1")
             .replace("14:04:42", "09:10:11").replace("0.31s", "2.5s").replace("48213", "7").replace("12ms", "3ms"))
    assert other != GIT_LOG
    assert compare(None, GIT_LOG, other).scores == dict.fromkeys(SCORE_DIMENSIONS, 5)
    broken = malform_ids(GIT_LOG, 0.2)
    j = compare(None, GIT_LOG, broken)
    assert j.scores["format"] < 5 and j.details["metadata"] < 1
    assert "<UUID>" in mask_metadata(GIT_LOG) and "<PID>" in mask_metadata(GIT_LOG)


# Consistency follows the domain's verifiers, which more damage can satisfy again (line numbers shifted
# by one fail a numbering check; shifting every one of them passes it): it must drop, not drop monotonically.
MONOTONE_DIMENSIONS = [d for d in SCORE_DIMENSIONS if d != "consistency"]


def _assert_monotone(series: list[dict[str, int]], label: str) -> None:
    totals = [sum(s.values()) / 5 for s in series]
    assert series[-1]["consistency"] <= series[0]["consistency"]
    for dim in MONOTONE_DIMENSIONS:
        values = [s[dim] for s in series]
        assert all(a >= b for a, b in zip(values, values[1:], strict=False)), (label, dim, values)
    assert all(a >= b for a, b in zip(totals, totals[1:], strict=False)), (label, totals)
    assert totals[0] == 5.0 and totals[-1] < totals[0], (label, totals)


def _changes_everything(fn, text: str) -> bool:
    return fn(text, 1.0) != text


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_awb_corruptions_lower_scores_monotonically(name: str) -> None:
    fn = CORRUPTIONS[name]
    rows = [r for r in _awb_rows() if _changes_everything(fn, row_view(r).ground_truth)]
    if name != "malform_ids":
        assert len(rows) >= 10, "the corruption should apply to most fixture rows"
    per_amount = [_judge_awb(rows, fn, a) for a in AMOUNTS]
    for i, row in enumerate(rows):
        _assert_monotone([{d: judged[i][d] for d in SCORE_DIMENSIONS} for judged in per_amount],
                         f"{name} {row['task']} {row['id']}")


@pytest.mark.not_a_component("a fixture without multi-line observations has nothing to join")
@pytest.mark.parametrize("name", ["drop_lines", "change_digits", "break_format"])
@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_turn_corruptions_lower_scores_monotonically(path: Path, name: str) -> None:
    fn = CORRUPTIONS[name]
    reg = get_registry()
    checked = 0
    for traj in read_trajectories(path):
        domain = reg.domain(traj.domain)
        for t, turn in enumerate(traj.turns):
            if not _changes_everything(fn, turn.observation):
                continue
            series = [compare(domain, turn.observation, fn(turn.observation, a), trajectory=traj, index=t).scores
                      for a in AMOUNTS]
            _assert_monotone(series, f"{name} {traj.id}#{t}")
            checked += 1
    if checked == 0 and name == "break_format":
        pytest.skip(f"{path.stem}: every observation is one line; nothing to join")
    assert checked >= 1


@pytest.mark.parametrize("fn", [drop_lines, change_digits, break_format, malform_ids])
def test_metadata_rich_text_corruptions_are_monotone(fn) -> None:
    _assert_monotone([compare(None, GIT_LOG, fn(GIT_LOG, a)).scores for a in AMOUNTS], fn.__name__)


def test_corruptions_are_nested_and_identity_at_zero() -> None:
    for fn in CORRUPTIONS.values():
        assert fn(GIT_LOG, 0.0) == GIT_LOG
    with pytest.raises(ValueError):
        drop_lines(GIT_LOG, 1.5)


def test_output_diagnostics_cost_format_and_realism() -> None:
    rows = [r for r in _awb_rows() if r["task"].endswith("terminal")][:1]
    truth = row_view(rows[0]).ground_truth
    untagged = list(judge_rows([{**rows[0], "gen": truth}], DeterministicJudge(get_registry().domains)))[0]
    assert untagged["format"] == 4 and untagged["factuality"] == 5
    hedged = list(judge_rows([{**rows[0], "gen": _gen(truth + "\nThe output would probably be longer.")}],
                             DeterministicJudge(get_registry().domains)))[0]
    assert hedged["realism"] <= 3


def test_empty_generation_fails_like_the_official_judge() -> None:
    row = {**_awb_rows()[0], "gen": ""}
    out = list(judge_rows([row], DeterministicJudge(get_registry().domains)))[0]
    assert out["failed"] == 1.0 and out["error_message"] == "No model generation"
