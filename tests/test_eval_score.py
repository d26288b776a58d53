"""`awctl eval score` agrees with the official AgentWorldBench aggregation to the second decimal.

``official_aggregate`` below is a test oracle written from the documented behaviour of the official
``eval.py`` ``aggregate_scores``: group by ``task.split('/')[-1]``; valid rows have ``failed == 0.0``
(missing counts as failed); per dimension the mean of valid values that are not 0, normalised
``(raw - 1) / 4 * 100`` (an empty list gives 0.0 before normalising); domains without valid rows are
skipped; the overall is the normalised mean of all pooled non-zero ``total_score`` values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.eval.score import aggregate, format_table

FIXTURE = Path(__file__).parent / "fixtures" / "eval" / "judged_sample.jsonl"
DIMS = ["format", "factuality", "consistency", "realism", "quality"]


def official_aggregate(jobs: list[dict]) -> tuple[dict[str, dict[str, float]], float | None, int]:
    groups: dict[str, list[dict]] = {}
    for job in jobs:
        task = job.get("task", "mcp")
        groups.setdefault(task.split("/")[-1] if "/" in task else task, []).append(job)
    per_domain: dict[str, dict[str, float]] = {}
    pooled: list[float] = []
    for name in sorted(groups):
        valid = [j for j in groups[name] if j.get("failed", 1.0) == 0.0]
        if not valid:
            continue
        per_domain[name] = {}
        for dim in [*DIMS, "total_score"]:
            values = [j.get(dim, 0) for j in valid if j.get(dim, 0) != 0]
            avg = sum(values) / len(values) if values else 0.0
            per_domain[name][dim] = (avg - 1) / 4 * 100
            if dim == "total_score":
                pooled.extend(values)
    overall = (sum(pooled) / len(pooled) - 1) / 4 * 100 if pooled else None
    return per_domain, overall, len(pooled)


def _rows() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def test_fixture_covers_the_tricky_cases() -> None:
    rows = _rows()
    assert any("failed" not in r for r in rows)
    assert any(r.get("failed") == 0.0 and r.get("realism") == 0 for r in rows)
    assert any(r.get("failed") == 0.0 and "quality" not in r for r in rows)
    assert any(r.get("failed") == 0.0 and r.get("total_score") == 0 for r in rows)
    assert any(r["task"].endswith("/weird") for r in rows)


def test_cli_score_json_matches_official_rules() -> None:
    result = CliRunner().invoke(cli, ["eval", "score", str(FIXTURE), "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    expected, overall, n_valid = official_aggregate(_rows())
    assert set(expected) == {d for d, e in got["domains"].items() if "scores" in e}
    for name, dims in expected.items():
        for dim, value in dims.items():
            assert got["domains"][name]["scores"][dim] == pytest.approx(value, abs=1e-2), (name, dim)
            assert f"{got['domains'][name]['scores'][dim]:.2f}" == f"{value:.2f}"
    assert got["overall"] == pytest.approx(overall, abs=1e-2)
    assert got["valid"] == n_valid
    assert got["failed"] == len(_rows()) - n_valid
    assert got["domains"]["weird"] == {"samples": 2, "valid": 0, "failed": 2}
    # terminal rows from "terminal" and "agentworldbench/terminal" are one domain
    assert got["domains"]["terminal"]["samples"] == sum(r["task"].endswith("terminal") for r in _rows())
    means = [e["scores"]["total_score"] for e in got["domains"].values() if "scores" in e]
    assert got["overall_domain_mean"] == pytest.approx(sum(means) / len(means))


def test_table_prints_two_decimals_and_both_overalls() -> None:
    result = aggregate(_rows())
    text = format_table(result)
    assert f"Overall (pooled, official): {result['overall']:.2f}" in text
    assert f"Overall (mean of domains):  {result['overall_domain_mean']:.2f}" in text
    assert "Weird" in text and "0/2" in text


def test_all_failed_file_has_no_overall() -> None:
    result = aggregate([{"task": "mcp", "failed": 1.0}, {"task": "mcp"}])
    assert result["overall"] is None and result["overall_domain_mean"] is None
    assert result["domains"]["mcp"]["failed"] == 2


def test_domain_with_only_zero_values_reports_the_official_minus_25() -> None:
    # The official script takes an empty list's mean as 0.0 and prints normalise(0) = -25.00.
    result = aggregate([{"task": "os", "failed": 0.0, "total_score": 3.0, "format": 0}])
    assert result["domains"]["os"]["scores"]["format"] == pytest.approx(-25.0)
    assert result["domains"]["os"]["scores"]["total_score"] == pytest.approx(50.0)
