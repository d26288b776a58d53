import json
from pathlib import Path

import pytest
from awctl_domains.swe.codec import BashCall, EditorCall, SubmitCall, SweActionCodec
from awctl_domains.swe.importers import IMPORTERS, load_sweagent_traj

from awctl.errors import InputError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sweagent" / "inikit__inikit-1.traj"
codec = SweActionCodec()


def test_sweagent_traj_becomes_one_trajectory_with_canonical_actions():
    [traj] = list(load_sweagent_traj(FIXTURE))
    raw = json.loads(FIXTURE.read_text())
    assert traj.id == "swe-agent/inikit__inikit-1" and traj.domain == "swe" and traj.source == "swe-agent"
    assert len(traj.turns) == len(raw["trajectory"]) == 18
    assert traj.metadata["bash_observation_format"] == "raw"
    assert traj.metadata["exit_status"] == "submitted"
    assert "issue_description" in traj.system.task_description
    parsed = [codec.parse(t.action) for t in traj.turns]
    assert isinstance(parsed[0], BashCall) and isinstance(parsed[-1], SubmitCall)
    edits = [a for a in parsed if isinstance(a, EditorCall) and a.command == "str_replace"]
    assert edits[0].new_str == "        lineno = index + 1\n        line = lines[index].strip()"
    for turn, step in zip(traj.turns, raw["trajectory"], strict=True):
        assert turn.observation == step["observation"]
        assert turn.action == codec.render(codec.parse(turn.action))
        assert turn.metadata["source_action"] == step["action"]


def test_cli_actions_are_used_when_tool_calls_are_absent(tmp_path):
    raw = json.loads(FIXTURE.read_text())
    raw["history"] = []
    path = tmp_path / "x.traj"
    path.write_text(json.dumps(raw))
    [with_calls] = list(load_sweagent_traj(FIXTURE))
    [from_cli] = list(load_sweagent_traj(path))
    assert [t.action for t in from_cli.turns] == [t.action for t in with_calls.turns]


def test_unparseable_actions_are_kept_and_marked(tmp_path):
    path = tmp_path / "rel.traj"
    path.write_text(json.dumps({"trajectory": [
        {"action": "str_replace_editor view relative.py", "observation": "The path relative.py is not an absolute path"},
        {"action": "", "observation": ""},
    ]}))
    [traj] = list(load_sweagent_traj(path))
    assert len(traj.turns) == 1
    assert traj.turns[0].action == "str_replace_editor view relative.py"
    assert "absolute" in traj.turns[0].metadata["unparsed_action"]


def test_bad_files_name_the_file_and_field(tmp_path):
    bad = tmp_path / "bad.traj"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="bad.traj:1: not valid JSON"):
        list(load_sweagent_traj(bad))
    bad.write_text(json.dumps({"info": {}}))
    with pytest.raises(InputError, match="missing the `trajectory` list and the `history` list"):
        list(load_sweagent_traj(bad))
    bad.write_text(json.dumps({"trajectory": [{"action": "ls", "observation": 3}]}))
    with pytest.raises(InputError, match=r"trajectory\[0\]\.observation"):
        list(load_sweagent_traj(bad))


def test_importer_matches_traj_files():
    [importer] = IMPORTERS
    assert importer.matches(Path("runs/django__django-1.traj"))
    assert not importer.matches(Path("x.jsonl"))
