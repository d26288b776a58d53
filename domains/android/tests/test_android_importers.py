"""Importers: AndroidWorld episode logs and AgentWorldBench android rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.android.domain import AndroidDomain
from awctl_domains.android.importers import IMPORTERS, load_agentworldbench, load_androidworld
from awctl_domains.android.screens import parse_screen

from awctl.errors import InputError
from awctl.formats.agentworldbench import trajectory_to_rows

FIXTURES = Path(__file__).parent / "fixtures"


def test_androidworld_episodes_become_turns_of_element_lists() -> None:
    wifi, clock = load_androidworld(FIXTURES / "episodes.androidworld.json")
    assert wifi.system.task_description == "Turn off WiFi." and wifi.metadata["task_template"] == "SystemWifiTurnOff"
    assert [t.action for t in wifi.turns] == [
        '{"action_type": "open_app", "app_name": "Settings"}', '{"action_type": "click", "index": 2}',
        '{"action_type": "click", "index": 5}']
    assert wifi.metadata["unobserved_final_action"] == '{"action_type": "status", "goal_status": "complete"}'
    home = parse_screen(wifi.turns[0].observation)
    assert home.header == [("Foreground app", "com.android.settings"),
                           ("Foreground activity", "com.android.settings/.homepage.SettingsHomepageActivity"),
                           ("Screen size", "1080x2400")]
    # The invisible element AndroidWorld's text agent filters out is skipped; the indices stay.
    assert [i for i, _ in home.elements] == [0, 1, 2, 3, 4, 5, 6, 8]
    assert "Screen size: 1080x2400" in wifi.system.initial_state and wifi.metadata["initial_screen"].startswith(
        "Foreground app: com.google.android.apps.nexuslauncher")
    assert parse_screen(wifi.turns[2].observation).elements[5][1].get("is_checked") is False


def test_an_action_androidworld_could_not_parse_becomes_unknown() -> None:
    _, clock = load_androidworld(FIXTURES / "episodes.androidworld.json")
    assert [json.loads(t.action)["action_type"] for t in clock.turns] == ["click", "unknown", "answer"]
    assert "tap" in clock.turns[1].metadata["raw_action"]
    assert clock.turns[2].observation == clock.turns[1].observation  # the "after" list of an answer


def test_jsonl_episodes_and_errors_naming_the_field(tmp_path) -> None:
    episodes = json.loads((FIXTURES / "episodes.androidworld.json").read_text())
    path = tmp_path / "runs.androidworld.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in episodes) + "\n")
    assert [t.id for t in load_androidworld(path)] == ["runs.androidworld-1", "runs.androidworld-2"]
    bad = dict(episodes[1], steps=[{"ui_elements": [{"text": ["a"]}], "action": {"action_type": "wait"}}])
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"steps\[0\]\.ui_elements\[0\]\.text: unsupported value"):
        list(load_androidworld(path))
    path.write_text(json.dumps({"goal": "x"}))
    with pytest.raises(InputError, match="no 'steps' list"):
        list(load_androidworld(path))
    path.write_text("{")
    with pytest.raises(InputError, match="invalid JSON"):
        list(load_androidworld(path))


def test_agentworldbench_rows_import_losslessly_with_the_domain_hooks() -> None:
    path = FIXTURES / "dark_theme.android-awb.jsonl"
    (trajectory,) = load_agentworldbench(path)
    assert trajectory.turns[0].action == '{"action_type": "click", "index": 2}'  # unwrapped from ```json
    assert parse_screen(trajectory.turns[0].observation).kind == "elements"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert trajectory_to_rows(trajectory, {"android": AndroidDomain()}) == rows


def test_awb_hooks_unwrap_actions_and_fenced_screens() -> None:
    d = AndroidDomain()
    assert d.from_awb_action('```json\n{"action_type":"wait"}\n```') == '{"action_type":"wait"}'
    assert d.from_awb_action('Reason: done.\nAction: {"action_type": "status", "goal_status": "complete"}') == (
        '{"action_type": "status", "goal_status": "complete"}')
    assert d.from_awb_action("tap the button") == "tap the button"
    dump = (FIXTURES / "clock_alarms.xml").read_text()
    assert d.from_awb_observation(f"```xml\n{dump}\n```") == dump
    assert d.from_awb_observation("```\nnot a screen\n```") == "```\nnot a screen\n```"


def test_importers_match_their_file_names() -> None:
    by_name = {i.name: i for i in IMPORTERS}
    assert by_name["androidworld"].matches(Path("x/episodes.androidworld.json"))
    assert by_name["agentworldbench-android"].matches(Path("AgentWorldBench/android_test.jsonl"))
