"""A thin client for the ``adb`` program: device listing, shell commands, uiautomator dumps, focus.

Every call runs ``adb [-s SERIAL] <args...>`` as a subprocess (the ``adb`` found on ``PATH``, or the path
given), so a stand-in program on ``PATH`` can replay recorded device transcripts in tests. The command
lines are exactly what one would type: ``adb -s emulator-5554 shell input tap 540 1200``.

A device that disappears (``error: device 'X' not found``, ``device offline``) raises
:class:`DeviceDisconnected`; any other failing command raises :class:`AdbError` naming the command and
what adb printed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass

from awctl.errors import AwctlError, EnvironmentUnavailable

DUMP_PATH = "/sdcard/window_dump.xml"
FOCUS_COMMAND = "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"
_GONE = re.compile(r"error: (?:device (?:'[^']*' )?not found|device offline|no devices/emulators found"
                   r"|device unauthorized|device still authorizing|closed|protocol fault)")
_SIZE = re.compile(r"(Physical|Override) size: (\d+)x(\d+)")
_WINDOW = re.compile(r"mCurrentFocus=Window\{\S+ u\d+ ([\w.]+)/([\w.$]+)\}")
_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ u\d+ ([\w.]+)/([\w.$]+)")


class AdbError(AwctlError):
    """An adb command failed (the message names the command and adb's output)."""


class DeviceDisconnected(EnvironmentUnavailable):
    """The device went away (unplugged, emulator stopped, offline, unauthorized)."""


@dataclass(frozen=True)
class Focus:
    """The foreground app and activity (``com.android.settings``, ``com.android.settings/.Settings``)."""

    package: str
    activity: str


def find_adb(adb: str = "adb") -> str | None:
    """The adb executable: ``adb`` as a path, else looked up on ``PATH``."""
    return adb if "/" in adb and shutil.which(adb) else shutil.which(adb)


def list_devices(adb: str = "adb", timeout_s: float = 10.0) -> list[tuple[str, str]]:
    """``(serial, state)`` for each line of ``adb devices`` (state: device, offline, unauthorized...)."""
    exe = find_adb(adb)
    if exe is None:
        raise AdbError(f"{adb!r} not found on PATH", hint="apt-get install -y adb (or set [domains.android] adb)")
    try:
        proc = subprocess.run([exe, "devices"], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise AdbError(f"`adb devices` did not answer within {timeout_s:g} s") from None
    except OSError as exc:
        raise AdbError(f"cannot run {exe}: {exc}") from None
    if proc.returncode != 0:
        raise AdbError(f"`adb devices` failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}")
    devices = []
    for line in proc.stdout.splitlines():
        if not line.strip() or line.startswith(("List of devices", "*", "adb server")):
            continue
        parts = line.split()
        if len(parts) >= 2:
            devices.append((parts[0], parts[1]))
    return devices


def short_activity(package: str, activity: str) -> str:
    """``pkg/.Act`` for ``pkg/pkg.Act`` (Android's short component form), else ``pkg/activity``."""
    if activity.startswith(package + "."):
        activity = activity[len(package):]
    return f"{package}/{activity}"


def parse_focus(text: str) -> Focus | None:
    """The foreground activity from ``dumpsys window`` lines: the focused window when it is an activity,
    else the focused app (a dialog, an ANR window or the notification shade has the focus)."""
    for pattern in (_WINDOW, _APP):
        m = pattern.search(text)
        if m:
            return Focus(m.group(1), short_activity(m.group(1), m.group(2)))
    return None


def parse_screen_size(text: str) -> tuple[int, int] | None:
    """``(width, height)`` from ``wm size`` (an override size wins over the physical one)."""
    sizes = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _SIZE.finditer(text)}
    return sizes.get("Override") or sizes.get("Physical")


class AdbClient:
    """Runs adb commands against one device (``serial``; None = the only device attached)."""

    def __init__(self, serial: str | None = None, adb: str = "adb", timeout_s: float = 30.0,
                 dump_retries: int = 3) -> None:
        self.serial = serial
        self.adb = adb
        self.timeout_s = timeout_s
        self.dump_retries = dump_retries
        self.sent: list[str] = []  # every command line sent, for step info and debugging

    def argv(self, *args: str) -> list[str]:
        exe = find_adb(self.adb)
        if exe is None:
            raise EnvironmentUnavailable(f"{self.adb!r} not found on PATH",
                                         hint="apt-get install -y adb, or set [domains.android] adb = \"/path/adb\"")
        return [exe, *(["-s", self.serial] if self.serial else []), *args]

    def run(self, *args: str) -> str:
        """Run ``adb [-s serial] args...`` and return its standard output."""
        argv = self.argv(*args)
        line = " ".join(args)
        self.sent.append(line)
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise AdbError(f"`adb {line}` did not finish within {self.timeout_s:g} s",
                           hint="is the device responsive? (`adb devices`)") from None
        except OSError as exc:
            raise AdbError(f"cannot run {argv[0]}: {exc}") from None
        out = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode != 0 or _GONE.search(err):
            who = self.serial or "the device"
            if _GONE.search(err) or (proc.returncode != 0 and _GONE.search(out)):
                raise DeviceDisconnected(f"{who} is gone: `adb {line}` said {err or out.strip()!r}",
                                         hint="reconnect it and check `adb devices`")
            raise AdbError(f"`adb {line}` failed ({proc.returncode}): {err or out.strip()}")
        return out

    def shell(self, command: str) -> str:
        """``adb shell <command>`` (the device's shell parses ``command``)."""
        return self.run("shell", command)

    def state(self) -> str:
        return self.run("get-state").strip()

    def screen_size(self) -> tuple[int, int] | None:
        return parse_screen_size(self.shell("wm size"))

    def focus(self) -> Focus | None:
        return parse_focus(self.shell(FOCUS_COMMAND))

    def dump_ui(self, path: str = DUMP_PATH, retry_pause_s: float = 0.5) -> str:
        """The window's uiautomator dump as text (``uiautomator dump`` then ``exec-out cat``).

        uiautomator reports ``ERROR: could not get idle state.`` while an animation runs; the dump is
        retried ``dump_retries`` times before that is an error.
        """
        said = ""
        for attempt in range(max(1, self.dump_retries)):
            said = self.shell(f"uiautomator dump {path}").strip()
            if "dumped to" in said:
                return self.run("exec-out", f"cat {path}")
            if attempt + 1 < self.dump_retries:
                time.sleep(retry_pause_s)
        raise AdbError(f"uiautomator could not dump the window: {said!r}",
                       hint="the screen may never settle (a looping animation); retry or raise dump_retries")
