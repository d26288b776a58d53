"""The ``basic`` task suite: everyday phone tasks in Settings, a notes app and Contacts.

Each task's ``setup["commands"]`` brings a device to the task's start (``am force-stop``, ``svc wifi
enable``, ``pm clear``, seeding notes through the app's content provider, ``am start``); its reference
``solution`` is AndroidWorld actions; its checker sends one ``wait`` action through ``env.step`` and reads
the screen it gets back (a switch's state, the notes listed, the contact shown), so the same checker
judges a real device and a simulator. ``setup["transcript"]`` names the recorded device transcript
(``fixtures/transcripts/<name>.json``) the tests replay through the ADB stand-in; a real device ignores it.
Element indices in the solutions are those of the recorded screens (Android 11 layouts).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from awctl.domain import CheckResult, Task
from awctl.env import Environment
from awctl.errors import CodecError

from .screens import Screen, UIElement, parse_screen

TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"
WAIT = json.dumps({"action_type": "wait"})


def act(action_type: str, **fields: object) -> str:
    """An action's text, e.g. ``act("click", index=3)``."""
    return json.dumps({"action_type": action_type, **fields})


def current_screen(env: Environment) -> Screen:
    """The screen after a ``wait`` (raises CodecError when the observation is not a screen)."""
    return parse_screen(env.step(WAIT).observation)


def elements(screen: Screen) -> list[UIElement]:
    return [e for _, e in screen.ui_elements()]


def texts(screen: Screen, resource_suffix: str | None = None) -> list[str]:
    """Texts of the screen's elements (only those whose resource name ends with ``resource_suffix``)."""
    out = []
    for e in elements(screen):
        name = e.get("resource_name") or ""
        if e.text and (resource_suffix is None or str(name).endswith(resource_suffix)):
            out.append(e.text)
    return out


def switch_for(screen: Screen, title: str) -> UIElement | None:
    """The switch on the same row as the element whose text is ``title`` (nearest, within 100 px)."""
    label = next((e for e in elements(screen) if e.text == title and e.bbox_pixels), None)
    if label is None or label.bbox_pixels is None:
        return None
    y = label.bbox_pixels.center[1]
    switches = [e for e in elements(screen) if str(e.get("class_name") or "").endswith("Switch") and e.bbox_pixels]
    best = min(switches, key=lambda e: abs(e.bbox_pixels.center[1] - y), default=None)  # type: ignore[union-attr]
    if best is None or abs(best.bbox_pixels.center[1] - y) > 100:  # type: ignore[union-attr]
        return None
    return best


def _checker(judge: Callable[[Screen], CheckResult]) -> Callable[[Environment], CheckResult]:
    def check(env: Environment) -> CheckResult:
        try:
            screen = current_screen(env)
        except CodecError as exc:
            return CheckResult(False, f"the screen could not be read: {exc.message}", 0.0)
        if not screen.structured:
            return CheckResult(False, "the observation is not a UI element list or a uiautomator dump", 0.0)
        return judge(screen)

    return check


def switch_is(title: str, on: bool) -> Callable[[Environment], CheckResult]:
    def judge(screen: Screen) -> CheckResult:
        switch = switch_for(screen, title)
        if switch is None:
            return CheckResult(False, f"no switch next to {title!r} on the screen", 0.0)
        state = switch.flag("is_checked")
        ok = state is on
        return CheckResult(ok, f"the {title!r} switch is {'on' if state else 'off'}, expected {'on' if on else 'off'}",
                           1.0 if ok else 0.0)

    return _checker(judge)


def shows(*wanted: str, absent: tuple[str, ...] = (), resource_suffix: str | None = None
          ) -> Callable[[Environment], CheckResult]:
    def judge(screen: Screen) -> CheckResult:
        seen = texts(screen, resource_suffix)
        missing = [w for w in wanted if w not in seen]
        present = [a for a in absent if a in seen]
        if missing or present:
            what = "; ".join(filter(None, [missing and f"missing {missing}", present and f"still shows {present}"]))
            return CheckResult(False, f"{what} (the screen shows {seen[:12]})", 0.0)
        return CheckResult(True, f"the screen shows {list(wanted)}", 1.0)

    return _checker(judge)


def note_titles_are(*titles: str) -> Callable[[Environment], CheckResult]:
    def judge(screen: Screen) -> CheckResult:
        seen = texts(screen, ":id/note_title")
        ok = seen == list(titles)
        return CheckResult(ok, f"the notes listed are {seen}, expected {list(titles)}", 1.0 if ok else 0.0)

    return _checker(judge)


SETTINGS_STOP = "am force-stop com.android.settings"
NETWORK = [SETTINGS_STOP, "svc wifi enable", "cmd connectivity airplane-mode disable",
           "am start -a android.settings.WIRELESS_SETTINGS"]
NOTES_CLEAR = "pm clear com.example.notes"
NOTES_START = "am start -n com.example.notes/.MainActivity"
_INSERT = "content insert --uri content://com.example.notes/notes --bind title:s:{} --bind body:s:{}"
SEED_BUY = _INSERT.format("'Buy milk'", "'2 litres, semi-skimmed'")
SEED_ADA = _INSERT.format("'Call Ada'", "'about the engine notes'")
PEOPLE = "com.google.android.contacts/com.android.contacts.activities.PeopleActivity"


def _task(name: str, instruction: str, solution: list[str], check: Callable[[Environment], CheckResult],
          commands: list[str], transcript: str, tags: tuple[str, ...]) -> Task:
    return Task(id=f"android/basic/{name}", domain="android", suite="basic", instruction=instruction,
                solution=solution, check=check, setup={"commands": commands, "transcript": transcript},
                max_turns=12, tags=tags)


BASIC: tuple[Task, ...] = (
    _task("wifi_off", "Turn off Wi-Fi.", [act("click", index=5)], switch_is("Wi\u2011Fi", False),
          NETWORK, "settings", ("settings", "toggle")),
    _task("airplane_mode_on", "Turn on airplane mode.", [act("click", index=10)], switch_is("Airplane mode", True),
          NETWORK, "settings", ("settings", "toggle")),
    _task("dark_theme_on", "Turn on the dark theme.", [act("click", index=6)], switch_is("Dark theme", True),
          [SETTINGS_STOP, "cmd uimode night no", "am start -a android.settings.DISPLAY_SETTINGS"], "settings",
          ("settings", "toggle")),
    _task("open_about_phone", "Open the page that shows this device's Android version.",
          [act("scroll", direction="down"), act("click", index=20)], shows("Android version", "Build number"),
          [SETTINGS_STOP, "am start -n com.android.settings/.Settings"], "settings", ("settings", "scroll")),
    _task("add_note", "Create a note titled 'Buy milk' in the Notes app.",
          [act("open_app", app_name="Notes"), act("click", index=2), act("input_text", text="Buy milk", index=3),
           act("click", index=2)], note_titles_are("Buy milk"),
          [NOTES_CLEAR, "input keyevent KEYCODE_HOME"], "notes", ("notes", "text entry")),
    _task("delete_note", "Delete the note 'Call Ada' and keep the others.",
          [act("long_press", index=3), act("click", index=2), act("click", index=3)], note_titles_are("Buy milk"),
          [NOTES_CLEAR, SEED_BUY, SEED_ADA, NOTES_START], "notes", ("notes", "dialog")),
    _task("rename_note", "Rename the note 'Buy milk' to 'Buy oat milk'.",
          [act("click", index=1), act("input_text", text="Buy oat milk", index=3, clear_text=True),
           act("click", index=2)], note_titles_are("Buy oat milk"),
          [NOTES_CLEAR, SEED_BUY, NOTES_START], "notes", ("notes", "text entry")),
    _task("open_contact", "Find Ada Lovelace in Contacts and open her contact card.",
          [act("click", index=1), act("input_text", text="Ada"), act("click", index=3)],
          shows("Ada Lovelace", "(555) 010-1815"),
          ["am force-stop com.google.android.contacts", f"am start -n {PEOPLE}"], "contacts", ("contacts", "search")),
)

SUITES: dict[str, tuple[Task, ...]] = {"basic": BASIC}


def tasks_for(suite: str) -> list[Task]:
    return list(SUITES.get(suite, ()))
