"""Importers: OSWorld result directories and AgentWorldBench os rows (fixtures hand-written in those layouts)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from awctl_domains.os.domain import OsDomain
from awctl_domains.os.importers import load_awb_os, load_osworld

from awctl.domain import run_verifiers
from awctl.errors import InputError
from awctl.formats.agentworldbench import read_rows, trajectory_to_rows
from awctl.trajectory import iter_jsonl

FIXTURES = Path(__file__).parent / "fixtures"
RESULTS = FIXTURES / "osworld_results"
DOMAIN = OsDomain()


def test_osworld_results_become_trajectories_with_trees_instruction_and_screen() -> None:
    [traj] = list(load_osworld(RESULTS))
    assert traj.domain == "os" and traj.source == "osworld"
    assert traj.system.task_description.startswith("Add '- apples'")
    assert "1920x1080 screen" in traj.system.initial_state and "<desktop-frame" in traj.system.initial_state
    # The two lines of step 1 share a screenshot: one turn whose action holds both, as fenced blocks.
    assert len(traj.turns) == 2
    first = traj.turns[0]
    assert first.action.count("```python") == 2 and "pyautogui.write" in first.action
    assert first.metadata["tree_file"] == "step_1_20240516@101502.xml"
    assert first.metadata["agent_response"] == "I will click into the document and go to its end."
    assert traj.metadata["result"] == "1.0"
    for i in range(len(traj.turns)):
        results = run_verifiers(DOMAIN, traj, i)
        assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    checks = {r.check for i in range(2) for r in run_verifiers(DOMAIN, traj, i)}
    assert {"typed_text_in_focus", "closed_window_gone", "one_active_window", "elements_on_screen"} <= checks


def test_a_step_without_its_tree_file_names_the_file_and_the_fix(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(RESULTS, copy)
    example = next(copy.rglob("traj.jsonl")).parent
    (example / "step_2_20240516@101509.xml").unlink()
    with pytest.raises(InputError, match=r"step 2: no accessibility tree file for 'step_2_20240516@101509'") as info:
        list(load_osworld(copy))
    assert "step_2_20240516@101509.xml" in (info.value.hint or "")


def test_a_bad_action_in_the_log_names_the_line(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(RESULTS, copy)
    log = next(copy.rglob("traj.jsonl"))
    lines = log.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["action"] = {"action_type": "TELEPORT"}
    lines[2] = json.dumps(bad)
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"traj.jsonl:3: field 'action': action: unknown action_type 'TELEPORT'"):
        list(load_osworld(log))


def test_agentworldbench_os_rows_round_trip_and_pass_the_verifiers() -> None:
    path = FIXTURES / "awb_os_rows.jsonl"
    trajectories = [t for t in read_rows(path) if t.domain == "os"]
    assert [t.id for t in load_awb_os(path)] == [t.id for t in trajectories] and len(trajectories) == 1
    traj = trajectories[0]
    assert traj.turns[0].action.startswith("```python\npyautogui.click(600, 500)")
    assert traj.turns[1].observation.startswith("<desktop-frame")
    rows = [obj for _, obj in iter_jsonl(path) if obj["task"] == "os"]
    assert trajectory_to_rows(traj) == rows
    for i in range(len(traj.turns)):
        results = run_verifiers(DOMAIN, traj, i)
        assert all(r.ok for r in results), [r for r in results if not r.ok]
    assert {r.check for r in run_verifiers(DOMAIN, traj, 1)} >= {"closed_window_gone", "elements_on_screen"}
