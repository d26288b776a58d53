"""The real android environment: a connected device or emulator driven over ADB.

:class:`AdbEnv` executes AndroidWorld actions the way AndroidWorld's ``actuation.py`` does, as ``adb shell``
commands, and observes the screen with ``uiautomator dump`` plus ``dumpsys window`` (foreground
activity):

=================  ====================================================================================
click              ``input tap X Y`` at the element's centre (truncated), or at ``x``/``y``
double_tap         ``input tap X Y; input tap X Y`` (one shell command, so the taps are close together)
long_press         ``input swipe X Y X Y 1000``
input_text         a tap on the target (when given), ``clear_text``: ``input keyevent KEYCODE_MOVE_END``
                   and one ``KEYCODE_DEL`` per character of the field, then ``input text`` (spaces as
                   ``%s``; a newline presses Enter), then ``input keyevent KEYCODE_ENTER``
keyboard_enter     ``input keyevent KEYCODE_ENTER`` (or the action's ``keycode``)
navigate_home      ``input keyevent KEYCODE_HOME``; navigate_back: ``KEYCODE_BACK``
scroll             ``input swipe`` from the centre of the element (or screen) to its edge, 500 ms
swipe              a whole-screen ``input swipe`` from edge to edge, 500 ms (the inverse of scroll)
open_app           ``am start -n PKG/ACTIVITY`` when the app table names an activity, else
                   ``monkey -p PKG -c android.intent.category.LAUNCHER 1``
wait               sleeps ``wait_s``; status / answer / unknown send nothing (status ends the episode)
=================  ====================================================================================

An action the device cannot carry out (malformed JSON, an index not on the screen, an app not in the
table, text ``input`` cannot type) sends nothing, as in AndroidWorld, and the step's ``info["error"]``
says why. Observations are a UI element list (``representation = "elements"``, the default) or the raw
dump (``"xml"``), under ``Foreground app:`` / ``Foreground activity:`` header lines.

Settings (``awctl.toml [domains.android]``): ``serial`` (default: the only device attached), ``adb``,
``representation``, ``settle_s`` (pause after an action, default 1.0), ``wait_s`` (default 2.0),
``timeout_s``, ``dump_retries``, ``apps`` (``{"Notes": "com.example.notes/.MainActivity"}``, added to
:data:`APPS`). ``task.setup["commands"]`` are shell commands run on ``reset`` (e.g. ``svc wifi enable``).
"""

from __future__ import annotations

import re
import shlex
import time
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import CodecError, EnvironmentUnavailable

from . import actions as A
from .adb import AdbClient, AdbError, list_devices
from .screens import (
    FOREGROUND_ACTIVITY,
    FOREGROUND_APP,
    SCREEN_SIZE,
    Screen,
    UIElement,
    canonical_screen,
    parse_screen,
)
from .uixml import parse_xml

if TYPE_CHECKING:
    from awctl.domain import Task

#: App names AndroidWorld's ``open_app`` understands, as ``package/activity`` (or a bare package).
APPS: dict[str, str] = {
    "settings": "com.android.settings/.Settings",
    "contacts": "com.google.android.contacts/com.android.contacts.activities.PeopleActivity",
    "clock": "com.google.android.deskclock/com.android.deskclock.DeskClock",
    "camera": "com.android.camera2/com.android.camera.CameraLauncher",
    "chrome": "com.android.chrome/com.google.android.apps.chrome.Main",
    "files": "com.google.android.documentsui/com.android.documentsui.files.FilesActivity",
    "phone": "com.google.android.dialer/.extensions.GoogleDialtactsActivity",
    "messages": "com.google.android.apps.messaging/.ui.ConversationListActivity",
    "markor": "net.gsantner.markor/.activity.MainActivity",
    "notes": "com.example.notes/.MainActivity",
}
LONG_PRESS_MS = 1000
SWIPE_MS = 500


def text_commands(text: str) -> list[str]:
    """The shell commands that type ``text`` with ``input text`` (a newline presses Enter)."""
    if any(ord(ch) > 126 or (ord(ch) < 32 and ch != "\n") for ch in text):
        raise ValueError("`input text` types printable ASCII only")
    commands = []
    for i, segment in enumerate(text.split("\n")):
        if i:
            commands.append("input keyevent KEYCODE_ENTER")
        # "%s" is how `input text` spells a space, so a literal "%s" is typed as "%" then "s...".
        for chunk in re.split(r"(?<=%)(?=s)", segment):
            if chunk:
                commands.append("input text " + shlex.quote(chunk.replace(" ", "%s")))
    return commands


class AdbEnv(Environment):
    """One device session per episode (see the module docstring)."""

    domain = "android"

    def __init__(self, settings: dict[str, Any] | None = None, **overrides: Any) -> None:
        if settings is None:
            from awctl.config import load_project_config

            settings = load_project_config().domain_settings("android")
        self.settings = {**settings, **overrides}
        self.representation = str(self.settings.get("representation", "elements"))
        if self.representation not in ("elements", "xml"):
            raise ValueError(f"representation must be 'elements' or 'xml', got {self.representation!r}")
        self.settle_s = float(self.settings.get("settle_s", 1.0))
        self.wait_s = float(self.settings.get("wait_s", 2.0))
        self.apps = {**APPS, **{str(k).lower(): str(v) for k, v in dict(self.settings.get("apps", {})).items()}}
        self.client = AdbClient(self.settings.get("serial"), str(self.settings.get("adb", "adb")),
                                float(self.settings.get("timeout_s", 30.0)), int(self.settings.get("dump_retries", 3)))
        self.screen_size: tuple[int, int] | None = None
        self.screen: Screen | None = None

    # ── episode ──
    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        if self.client.serial is None:
            self.client.serial = self._only_device()
        state = self.client.state()
        if state != "device":
            raise EnvironmentUnavailable(f"device {self.client.serial} is {state!r}, not ready",
                                         hint="unlock it and accept the USB debugging prompt")
        for command in (task.setup.get("commands", []) if task is not None else []):
            self.client.shell(str(command))
        self.screen_size = self.client.screen_size()
        return self.observe()

    def _only_device(self) -> str:
        try:
            devices = list_devices(str(self.settings.get("adb", "adb")))
        except AdbError as exc:
            raise EnvironmentUnavailable(exc.message, hint=exc.hint) from None
        ready = [serial for serial, state in devices if state == "device"]
        if len(ready) != 1:
            listed = ", ".join(f"{s} ({st})" for s, st in devices) or "none"
            raise EnvironmentUnavailable(
                f"need exactly one ready device, `adb devices` lists: {listed}",
                hint="start an emulator or connect a phone, or set [domains.android] serial")
        return ready[0]

    def step(self, action: str) -> StepResult:
        if self.screen is None:
            self.reset()
        sent_before = len(self.client.sent)
        t0 = time.monotonic()
        error = None
        done = False
        try:
            parsed = A.parse_action(action)
        except CodecError as exc:
            parsed, error = None, f"not an action, nothing was done: {exc.message}"
        if parsed is not None:
            try:
                self._execute(parsed)
            except _Refused as exc:
                error = str(exc)
            done = parsed.action_type == A.STATUS
            if parsed.action_type == A.WAIT:
                time.sleep(self.wait_s)
            elif self.client.sent[sent_before:]:
                time.sleep(self.settle_s)
        observation = self.observe()
        info: dict[str, Any] = {"commands": self.client.sent[sent_before:], "elapsed_s": round(time.monotonic() - t0, 4)}
        if error:
            info["error"] = error
        return StepResult(observation, done=done, info=info)

    def close(self) -> None:
        self.screen = None

    # ── observing ──
    def observe(self) -> str:
        """The current screen as observation text (and remembered, to resolve element indices)."""
        xml = self.client.dump_ui()
        try:
            doc = parse_xml(xml)
        except CodecError as exc:
            raise AdbError(f"device {self.client.serial} returned a malformed uiautomator dump: {exc.message}",
                           hint="uiautomator may have been interrupted; retry the step") from None
        if self.screen_size is None and doc.nodes():
            from .uixml import parse_bounds

            box = parse_bounds(doc.nodes()[0].get("bounds") or "")
            self.screen_size = (box[2], box[3]) if box else None
        focus = self.client.focus()
        # The header always has the same keys (a verifier checks that), "unknown" where adb gave nothing.
        size = f"{self.screen_size[0]}x{self.screen_size[1]}" if self.screen_size else "unknown"
        header = [(FOREGROUND_APP, focus.package if focus else "unknown"),
                  (FOREGROUND_ACTIVITY, focus.activity if focus else "unknown"), (SCREEN_SIZE, size)]
        if self.representation == "xml":
            text = "\n".join([*(f"{k}: {v}" for k, v in header), xml])
        else:
            from .screens import xml_elements

            text = canonical_screen(Screen("elements", header=header, elements=list(enumerate(xml_elements(doc)))))
        self.screen = parse_screen(text)
        return text

    # ── acting ──
    def _element(self, index: int) -> UIElement:
        assert self.screen is not None
        listed = dict(self.screen.ui_elements())
        if index not in listed:
            span = f"0-{max(listed)}" if listed else "none"
            raise _Refused(f"element index {index} is not on the screen (indices: {span}); nothing was done")
        return listed[index]

    def _point(self, a: A.AndroidAction) -> tuple[int, int] | None:
        if a.index is not None:
            box = self._element(a.index).bbox_pixels
            if box is None:
                raise _Refused(f"element {a.index} has no bounds; nothing was done")
            return box.center
        if a.x is not None and a.y is not None:
            return int(a.x), int(a.y)
        return None

    def _size(self) -> tuple[int, int]:
        if self.screen_size is None:
            raise _Refused("the screen size is unknown (wm size and the dump gave none)")
        return self.screen_size

    def _execute(self, a: A.AndroidAction) -> None:
        shell = self.client.shell
        kind = a.action_type
        if kind in A.POINT_ACTIONS:
            point = self._point(a)
            assert point is not None
            x, y = point
            if kind == A.CLICK:
                shell(f"input tap {x} {y}")
            elif kind == A.DOUBLE_TAP:
                shell(f"input tap {x} {y}; input tap {x} {y}")
            else:
                shell(f"input swipe {x} {y} {x} {y} {LONG_PRESS_MS}")
        elif kind == A.INPUT_TEXT:
            self._input_text(a)
        elif kind == A.KEYBOARD_ENTER:
            shell(f"input keyevent {a.keycode or 'KEYCODE_ENTER'}")
        elif kind == A.NAVIGATE_HOME:
            shell("input keyevent KEYCODE_HOME")
        elif kind == A.NAVIGATE_BACK:
            shell("input keyevent KEYCODE_BACK")
        elif kind == A.SCROLL:
            shell(self._scroll_command(a))
        elif kind == A.SWIPE:
            shell(self._swipe_command(a.direction or "up"))
        elif kind == A.OPEN_APP:
            said = shell(self._open_app_command(a.app_name or ""))
            # am and monkey report a missing app on stdout and still exit 0.
            if re.search(r"^Error|No activities found|monkey aborted", said, re.M):
                raise _Refused(f"the device could not start {a.app_name!r}: {said.strip()[:200]}")

    def _input_text(self, a: A.AndroidAction) -> None:
        text = a.text or ""
        try:
            typing = text_commands(text)
        except ValueError as exc:
            raise _Refused(f"{exc}; nothing was done") from None
        target = self._element(a.index) if a.index is not None else None
        if target is None and a.target == "none" and self.screen is not None:
            target = next((e for _, e in self.screen.ui_elements()
                           if e.flag("is_focused") and e.flag("is_editable")), None)
        point = self._point(a)
        if point is not None:
            self.client.shell(f"input tap {point[0]} {point[1]}")
        if a.clear_text:
            current = (target.text or "") if target is not None else ""
            self.client.shell("input keyevent KEYCODE_MOVE_END")
            if current:
                self.client.shell("input keyevent " + " ".join(["KEYCODE_DEL"] * len(current)))
        for command in typing:
            self.client.shell(command)
        self.client.shell("input keyevent KEYCODE_ENTER")

    def _scroll_command(self, a: A.AndroidAction) -> str:
        width, height = self._size()
        if a.index is not None:
            box = self._element(a.index).bbox_pixels
            if box is None:
                raise _Refused(f"element {a.index} has no bounds; nothing was done")
            x0, y0 = max(int(box.x_min), 0), max(int(box.y_min), 0)
            x1, y1 = min(int(box.x_max), width), min(int(box.y_max), height)
        else:
            x0, y0, x1, y1 = 0, 0, width, height
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        # Scrolling down moves the content up: the finger goes from the centre towards the top edge.
        end = {"down": (cx, y0), "up": (cx, y1), "right": (x0, cy), "left": (x1, cy)}[a.direction or "down"]
        return f"input swipe {cx} {cy} {end[0]} {end[1]} {SWIPE_MS}"

    def _swipe_command(self, direction: str) -> str:
        width, height = self._size()
        mx, my = width // 2, height // 2
        start, end = {
            "down": ((mx, 0), (mx, height)), "up": ((mx, height), (mx, 0)),
            "left": ((0, my), (width, my)), "right": ((width, my), (0, my)),
        }[direction]
        return f"input swipe {start[0]} {start[1]} {end[0]} {end[1]} {SWIPE_MS}"

    def _open_app_command(self, name: str) -> str:
        target = self.apps.get(name.strip().lower())
        if target is None and re.fullmatch(r"[A-Za-z][\w]*(\.[A-Za-z][\w]*)+", name.strip()):
            target = name.strip()  # a package name
        if target is None:
            raise _Refused(f"app {name!r} is not in the app table (nothing happens for an app that is not "
                           "installed); add it under [domains.android.apps]")
        if "/" in target:
            return f"am start -n {target}"
        return f"monkey -p {target} -c android.intent.category.LAUNCHER 1"


class _Refused(Exception):
    """An action the device cannot carry out; the step sends nothing more and reports this message."""
