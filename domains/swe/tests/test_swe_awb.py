from pathlib import Path

from awctl_domains.swe.domain import SweDomain
from awctl_domains.swe.importers import load_sweagent_traj

from awctl.formats.agentworldbench import rows_to_trajectories, trajectory_to_rows

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sweagent" / "inikit__inikit-1.traj"
DOMAINS = {"swe": SweDomain()}


def test_agentworldbench_rows_round_trip_swe_trajectories():
    [traj] = list(load_sweagent_traj(FIXTURE))
    rows = trajectory_to_rows(traj, DOMAINS)
    assert len(rows) == len(traj.turns)
    last = rows[-1]
    assert "**Action:**\n```json\n{\"tool\": \"bash\"" in last["prompt"][0]
    assert last["response"][2].startswith("**Environment Observation:**\nHere's the result of running `cat -n`")
    [back] = list(rows_to_trajectories(rows, DOMAINS))
    assert [t.action for t in back.turns] == [t.action for t in traj.turns]
    assert [t.observation for t in back.turns] == [t.observation for t in traj.turns]
    assert trajectory_to_rows(back, DOMAINS) == rows


def test_function_call_bodies_become_canonical_actions():
    row = {
        "task": "swe", "id": "x_turn1", "turn_idx": 1, "total_turns": 1, "system_str": "sim",
        "prompt": ['### Turn 1\n**Action:**\n{"name": "bash", "arguments": {"command": "ls"}}'],
        "response": ["**Environment Observation:**\nREADME.md\n[exit_code: 0] [cwd: /testbed]"],
        "current_prompt": "",
    }
    [traj] = list(rows_to_trajectories([row], DOMAINS))
    assert traj.turns[0].action == '{"tool": "bash", "command": "ls"}'
    assert trajectory_to_rows(traj, DOMAINS) == [row]
