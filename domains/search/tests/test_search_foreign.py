"""The foreign search corpus (``tests/foreign/search``: AgentWorldBench rows and Qwen web-agent run results
that awctl did not write): converts, verifies with zero failed turns, preps without quarantine, round-trips
byte for byte, and every planted fault kind is caught on it."""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest
from awctl_domains.search.domain import SearchDomain
from awctl_domains.search.importers import load_qwen_agent_log
from awctl_domains.search.toolsets import tool_set
from click.testing import CliRunner

from awctl.cli.main import cli
from awctl.domain import TurnContext, run_verifiers
from awctl.formats.agentworldbench import read_rows
from awctl.trajectory import Trajectory

CORPUS = Path(__file__).parents[3] / "tests" / "foreign" / "search"
AWB_FILES = sorted(CORPUS.glob("*.awb.jsonl"))
RUNS = CORPUS / "deepresearch_runs.qwen-agent.jsonl"
DOMAIN = SearchDomain()


def _trajectories() -> list[Trajectory]:
    trajs = [t for path in AWB_FILES for t in read_rows(path)]
    return trajs + list(load_qwen_agent_log(RUNS))


TRAJS = _trajectories()


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_the_corpus_covers_the_awb_tool_set_in_several_mixes_and_the_qwen_tools() -> None:
    layouts = Counter(tool_set(t.system).layout for t in TRAJS)
    assert layouts["awb"] >= 20 and layouts["qwen"] == 8 and layouts[None] == 2
    mixes = {
        tuple(n for n in tool_set(t.system).tools if "_" in n) for t in TRAJS if t.source == "agentworldbench"
    }
    assert len(mixes) >= 5
    assert all(len(t.turns) >= 2 for t in TRAJS) and sum(len(t.turns) for t in TRAJS) >= 120
    readme = (CORPUS / "README.md").read_text()
    assert all(path.name in readme for path in CORPUS.iterdir() if path.suffix != ".md")


def test_the_qwen_agent_importer_keeps_tool_outputs_verbatim_and_skips_other_tools() -> None:
    runs = [json.loads(line) for line in RUNS.read_text().splitlines()]
    trajs = list(load_qwen_agent_log(RUNS))
    assert [t.system.task_description for t in trajs] == [r["question"] for r in runs]
    first = runs[0]["messages"][3]["content"]
    assert trajs[0].turns[0].observation == first.removeprefix("<tool_response>\n").removesuffix(
        "\n</tool_response>"
    )
    assert trajs[2].metadata["skipped_tool_calls"] == [{"message": 4, "tool": "PythonInterpreter"}]
    assert [len(t.turns) for t in trajs] == [2, 2, 2, 2, 2]
    assert all(tool_set(t.system).layout == "qwen" for t in trajs)


def test_awctl_data_verify_fails_no_turn_and_checks_every_verifier(tmp_path: Path) -> None:
    out = tmp_path / "corpus.jsonl"
    runs = tmp_path / "runs.jsonl"
    _cli("data", "convert", "--from", "agentworldbench", *map(str, AWB_FILES), "-o", str(out))
    _cli("data", "convert", "--from", "search-qwen-agent", str(RUNS), "-o", str(runs))
    for path in (out, runs):
        report = json.loads(_cli("data", "verify", str(path), "--json"))
        assert report["failed"] == 0, report["failures"]
    report = json.loads(_cli("data", "verify", str(out), "--json"))
    checked = {name for name, s in report["summary"].items() if s["passed"]}
    assert {v.name for v in DOMAIN.verifiers()} <= checked


@pytest.mark.parametrize("path", AWB_FILES, ids=lambda p: p.name)
def test_awctl_data_convert_round_trips_the_rows_byte_for_byte(path: Path, tmp_path: Path) -> None:
    mid, back = tmp_path / "mid.jsonl", tmp_path / "back.jsonl"
    _cli("data", "convert", "--from", "agentworldbench", str(path), "-o", str(mid))
    _cli("data", "convert", "--from", "awctl", "--to", "agentworldbench", str(mid), "-o", str(back))
    assert back.read_bytes() == path.read_bytes()


def test_awb_observations_are_kept_as_the_codec_renders_them() -> None:
    for traj in TRAJS:
        for turn in traj.turns:
            codec = DOMAIN.observation_codec
            assert codec.render(codec.parse(turn.observation)) == turn.observation
            assert "awb_response" not in turn.metadata  # the domain re-renders every row's text itself


def test_prep_quarantines_no_session(tmp_path: Path) -> None:
    from awctl.data.pipeline import PrepConfig, run_prep
    from awctl.plugins import get_registry

    data = tmp_path / "in"
    data.mkdir()
    for path in [*AWB_FILES, RUNS]:
        shutil.copy(path, data / path.name)
    config = PrepConfig(
        inputs=[str(data)], out=str(tmp_path / "prep"), tokenizer="train:400", split="train=1"
    )
    counts = run_prep(config, domains=get_registry().domains)["counts"]
    assert counts["quarantined"] == 0 and counts["read"] == len(TRAJS)


def test_every_fault_kind_is_caught_on_the_corpus() -> None:
    for fault in DOMAIN.faults():
        rng = random.Random(fault.name)
        planted = caught = 0
        for traj in TRAJS:
            for i in range(len(traj.turns)):
                bad = fault.plant(TurnContext.at(traj, i), rng)
                if bad is None:
                    continue
                planted += 1
                result = [r for r in run_verifiers(DOMAIN, traj, i, bad) if r.check == fault.verifier]
                caught += bool(result) and not result[0].ok
        assert planted >= 4 and caught * 4 >= planted * 3, (fault.name, caught, planted)
