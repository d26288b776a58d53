"""The ADB adapter against the adb stand-in: exact command lines, observations, and a device that misbehaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from awctl_domains.android.adb import AdbClient, AdbError, DeviceDisconnected, parse_focus, parse_screen_size
from awctl_domains.android.domain import AndroidDomain
from awctl_domains.android.env import text_commands
from awctl_domains.android.screens import parse_screen
from awctl_domains.android.tasks import BASIC

from awctl.errors import EnvironmentUnavailable

SCREENS = Path(__file__).parents[1] / "fixtures" / "screens"
WIFI = next(t for t in BASIC if t.id.endswith("/wifi_off"))
DUMP = ["shell uiautomator dump /sdcard/window_dump.xml", "exec-out cat /sdcard/window_dump.xml",
        "shell dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"]


def test_reset_sends_the_setup_and_observes_with_uiautomator_and_dumpsys(adb, make_env) -> None:
    adb.use("settings")
    env = make_env()
    first = env.reset(WIFI)
    assert adb.commands() == [
        "devices", "get-state", "shell am force-stop com.android.settings", "shell svc wifi enable",
        "shell cmd connectivity airplane-mode disable", "shell am start -a android.settings.WIRELESS_SETTINGS",
        "shell wm size", *DUMP,
    ]
    assert {e["serial"] for e in adb.log()[1:]} == {"emulator-5554"}  # found by `adb devices`, then named
    screen = parse_screen(first)
    assert screen.header == [("Foreground app", "com.android.settings"),
                             ("Foreground activity", "com.android.settings/.Settings$NetworkDashboardActivity"),
                             ("Screen size", "1080x2400")]
    switch = dict(screen.elements)[5]
    assert switch.get("class_name") == "android.widget.Switch" and switch.get("is_checked") is True


def test_a_click_by_index_taps_the_element_centre(adb, make_env) -> None:
    adb.use("settings")
    env = make_env()
    env.reset(WIFI)
    result = env.step('{"action_type": "click", "index": 5}')
    assert result.info["commands"] == ["shell input tap 975 375", *DUMP]
    assert dict(parse_screen(result.observation).elements)[5].get("is_checked") is False
    assert not result.done and "error" not in result.info


def test_the_xml_representation_returns_the_devices_dump_unchanged(adb, make_env) -> None:
    adb.use("settings")
    env = make_env(representation="xml")
    first = env.reset(WIFI)
    header, dump = first.split("\n", 3)[:3], first.split("\n", 3)[3]
    assert header[0] == "Foreground app: com.android.settings"
    assert dump == (SCREENS / "settings_net_wifi_on.xml").read_text()
    assert parse_screen(first).kind == "xml"


def test_input_text_taps_clears_types_and_presses_enter(adb, make_env) -> None:
    adb.use("notes")
    env = make_env()
    env.reset(next(t for t in BASIC if t.id.endswith("/rename_note")))
    env.step('{"action_type": "click", "index": 1}')
    result = env.step('{"action_type": "input_text", "text": "Buy oat milk", "index": 3, "clear_text": true}')
    assert result.info["commands"][:5] == [
        "shell input tap 540 380", "shell input keyevent KEYCODE_MOVE_END",
        "shell input keyevent " + " ".join(["KEYCODE_DEL"] * 8), "shell input text Buy%soat%smilk",
        "shell input keyevent KEYCODE_ENTER",
    ]
    title = dict(parse_screen(result.observation).elements)[3]
    assert title.text == "Buy oat milk" and title.get("is_focused") is False


def test_text_commands_escape_spaces_quotes_percent_s_and_newlines() -> None:
    assert text_commands("Buy milk") == ["input text Buy%smilk"]
    assert text_commands("it's 100%s") == ["input text 'it'\"'\"'s%s100%'", "input text s"]
    assert text_commands("a\nb") == ["input text a", "input keyevent KEYCODE_ENTER", "input text b"]
    with pytest.raises(ValueError):
        text_commands("café")


def test_actions_the_device_cannot_do_send_nothing_and_say_why(adb, make_env) -> None:
    adb.use("settings")
    env = make_env()
    env.reset(WIFI)
    for action, why in [
        ('{"action_type": "click", "index": 99}', "element index 99 is not on the screen (indices: 0-23)"),
        ("click the switch", "not an action"),
        ('{"action_type": "open_app", "app_name": "Flappy Bird"}', "not in the app table"),
        ('{"action_type": "input_text", "text": "caf\\u00e9", "index": 3}', "printable ASCII"),
        ('{"action_type": "answer", "text": "Wi-Fi is on"}', None),
    ]:
        result = env.step(action)
        assert result.info["commands"] == DUMP, action
        assert (why is None and "error" not in result.info) or why in result.info["error"]
    assert env.step('{"action_type": "status", "goal_status": "complete"}').done


def test_an_unexpected_command_fails_loudly(adb, make_env) -> None:
    adb.use("settings")
    env = make_env()
    env.reset(WIFI)
    with pytest.raises(AdbError) as info:
        env.step('{"action_type": "click", "x": 10, "y": 10}')
    assert "unexpected command `adb shell input tap 10 10` in state 'net_wifi_on'" in str(info.value)
    assert adb.log()[-1]["unexpected"] is True and adb.log()[-1]["exit"] == 97


def test_a_device_that_disconnects_raises_device_disconnected(adb, make_env) -> None:
    screen = str(SCREENS / "settings_net_wifi_on.xml")
    focus = "  mCurrentFocus=Window{1 u0 com.android.settings/com.android.settings.SubSettings}\n"
    adb.use({"serial": "emulator-5554", "start": "on",
             "every_state": {"get-state": {"stdout": "device\n"}, "shell wm size": {"stdout": "Physical size: 1080x2400\n"}},
             "states": {"on": {"window_dump": screen, "dumpsys_window": focus,
                               "commands": {"shell input tap 975 375": {"next": "gone"}}},
                        "gone": {"offline": True}}})
    env = make_env(serial="emulator-5554")
    env.reset()
    with pytest.raises(DeviceDisconnected) as info:
        env.step('{"action_type": "click", "index": 5}')
    assert "emulator-5554 is gone" in str(info.value) and "not found" in str(info.value)
    assert isinstance(info.value, EnvironmentUnavailable)
    out = subprocess.run(["adb", "devices"], capture_output=True, text=True, check=True).stdout
    assert out == "List of devices attached\n\n"


def test_a_malformed_dump_is_an_adb_error_naming_the_problem(adb, make_env, tmp_path) -> None:
    cut = tmp_path / "cut.xml"
    whole = (SCREENS / "settings_net_wifi_on.xml").read_text()
    cut.write_text(whole[: whole.index("><node", 5000) + 1])  # uiautomator killed mid-write
    adb.use({"serial": "emulator-5554", "start": "s", "every_state": {"get-state": {"stdout": "device\n"},
                                                                        "shell wm size": {"stdout": ""}},
             "states": {"s": {"window_dump": str(cut), "dumpsys_window": ""}}})
    with pytest.raises(AdbError) as info:
        make_env().reset()
    assert "malformed uiautomator dump" in str(info.value) and "never closed" in str(info.value)


def test_a_dump_during_an_animation_is_retried(adb, make_env) -> None:
    transcript = json.loads((Path(os.environ["ADB_STANDIN_TRANSCRIPT"])).read_text())
    transcript["states"]["net_wifi_on"]["commands"]["shell uiautomator dump /sdcard/window_dump.xml"] = {
        "stdout": "ERROR: could not get idle state.\n", "times": 1}
    for state in transcript["states"].values():
        if "window_dump" in state:
            state["window_dump"] = str(Path(os.environ["ADB_STANDIN_TRANSCRIPT"]).parent / state["window_dump"])
    adb.use(transcript)
    env = make_env()
    env.client.dump_retries = 2
    screen = parse_screen(env.reset(WIFI))
    assert adb.commands().count("shell uiautomator dump /sdcard/window_dump.xml") == 2
    assert dict(screen.elements)[3].text == "Wi\u2011Fi"


def test_the_serial_is_checked_and_two_devices_need_one_named(adb, make_env) -> None:
    adb.use("settings")
    with pytest.raises(DeviceDisconnected):
        make_env(serial="emulator-5556").reset(WIFI)
    client = AdbClient("emulator-5554")
    assert client.state() == "device" and client.screen_size() == (1080, 2400)


def test_focus_and_screen_size_parsing_follow_dumpsys_and_wm() -> None:
    anr = ("  mCurrentFocus=Window{9f u0 Application Not Responding: com.example.notes}\n"
           "  mFocusedApp=ActivityRecord{3d u0 com.example.notes/.MainActivity t41}\n")
    focus = parse_focus(anr)
    assert focus is not None and (focus.package, focus.activity) == ("com.example.notes", "com.example.notes/.MainActivity")
    full = parse_focus("mCurrentFocus=Window{8f u0 com.android.settings/com.android.settings.SubSettings}")
    assert full is not None and full.activity == "com.android.settings/.SubSettings"
    assert parse_focus("mCurrentFocus=null\nmFocusedApp=null") is None
    assert parse_screen_size("Physical size: 1080x2400\nOverride size: 720x1600\n") == (720, 1600)


def test_real_env_status_reports_the_stand_in_device_and_no_adb(adb, monkeypatch, tmp_path) -> None:
    adb.use("settings")
    ok, why = AndroidDomain().real_env_status()
    assert ok and "emulator-5554" in why
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    ok, why = AndroidDomain().real_env_status()
    assert not ok and "no adb on PATH" in why


def test_awctl_domains_lists_android_with_its_real_env_status(tmp_path) -> None:
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"}
    out = subprocess.run([sys.executable, "-m", "awctl.cli.main", "domains", "--json"], capture_output=True,
                         text=True, env=env, check=True, cwd=Path(__file__).parents[3])
    info = next(d for d in json.loads(out.stdout) if d["name"] == "android")
    assert len(info["verifiers"]) >= 6 and info["suites"] == {"basic": 8}
    assert info["importers"] == ["androidworld", "agentworldbench-android"]
    assert info["real_env"] == {"available": False, "detail": (
        "no adb on PATH (apt-get install -y adb) and no device or emulator attached; the ADB adapter is tested "
        "against a transcript stand-in")}


def test_an_app_the_device_does_not_have_is_reported(adb, make_env) -> None:
    missing = ("Starting: Intent { cmp=com.example.notes/.MainActivity }\nError type 3\nError: Activity class "
               "{com.example.notes/com.example.notes.MainActivity} does not exist.\n")
    focus = "  mCurrentFocus=Window{1 u0 com.android.settings/com.android.settings.SubSettings}\n"
    adb.use({"serial": "emulator-5554", "start": "s",
             "every_state": {"get-state": {"stdout": "device\n"}, "shell wm size": {"stdout": "Physical size: 1080x2400\n"}},
             "states": {"s": {"window_dump": str(SCREENS / "settings_about.xml"), "dumpsys_window": focus,
                              "commands": {"shell am start -n com.example.notes/.MainActivity": {"stdout": missing}}}}})
    env = make_env()
    env.reset()
    result = env.step('{"action_type": "open_app", "app_name": "Notes"}')
    assert result.info["commands"] == ["shell am start -n com.example.notes/.MainActivity", *DUMP]
    assert "could not start 'Notes'" in result.info["error"] and "does not exist" in result.info["error"]
