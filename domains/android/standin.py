"""An ``adb`` stand-in that replays a recorded device transcript (standard library only).

No emulator runs on the machines that test awctl, so the ADB adapter is tested against this program put
first on ``PATH`` as ``adb`` (:func:`install` writes the launcher). It answers exactly the command lines a
transcript lists and **fails loudly** (exit status 97, a message on stderr, a line in the log) on any
other, so a test sees every command the adapter sends.

A transcript (JSON) is a small state machine of a device::

    {"serial": "emulator-5554", "start": "network",
     "every_state": {"get-state": {"stdout": "device\\n"}, "shell wm size": {"stdout": "Physical size: 1080x2400\\n"}},
     "states": {
       "network": {"window_dump": "../screens/network.xml",
                   "dumpsys_window": "  mCurrentFocus=Window{4d1c2b3 u0 com.android.settings/...}\\n",
                   "commands": {"shell input tap 975 610": {"next": "network_wifi_off"}}},
       "gone": {"offline": true}}}

The key of a command is the adb command line without ``adb`` and without ``-s SERIAL`` (checked against
``serial``), its arguments joined by spaces as adb joins them for the device's shell:
``shell input tap 975 610``. A response has ``stdout``, ``stderr``, ``exit`` (default 0), ``next`` (the
state afterwards) and ``times`` (how often it answers in a state before it is used up). Besides the
listed commands the stand-in speaks the uiautomator protocol of the current state:
``shell uiautomator dump PATH`` writes the state's ``window_dump`` file to PATH on the "device" and prints
``UI hierchary dumped to: PATH`` (sic, as Android prints it); ``exec-out cat PATH`` and ``pull PATH LOCAL``
read device files; ``shell dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'`` prints the state's
``dumpsys_window``; ``devices`` lists the device (none once it is offline). In an ``offline`` state every
command fails as adb does when the device is gone.

Environment: ``ADB_STANDIN_TRANSCRIPT`` (the JSON file), ``ADB_STANDIN_STATE`` (a JSON file keeping the
current state between invocations; removed = start over), ``ADB_STANDIN_LOG`` (optional JSONL log of
every command and whether it was expected).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

UNEXPECTED = 97
FOCUS_COMMAND = "shell dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"


def install(bin_dir: str | os.PathLike[str], python: str | None = None) -> Path:
    """Write an executable ``adb`` launcher for this stand-in into ``bin_dir``; returns its path."""
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "adb"
    # -S -E: no site-packages, no PYTHON* variables; the stand-in needs only the standard library.
    exe.write_text(f"#!/bin/sh\nexec {python or sys.executable} -S -E {Path(__file__).resolve()} \"$@\"\n")
    exe.chmod(0o755)
    return exe


class Device:
    def __init__(self, transcript_path: Path, state_path: Path) -> None:
        self.transcript_path = transcript_path
        self.base = transcript_path.parent
        self.t: dict[str, Any] = json.loads(transcript_path.read_text(encoding="utf-8"))
        self.state_path = state_path
        if state_path.exists():
            self.s = json.loads(state_path.read_text(encoding="utf-8"))
        else:
            self.s = {"state": self.t["start"], "files": {}, "used": {}}
        self.serial = self.t.get("serial", "emulator-5554")

    def save(self) -> None:
        self.state_path.write_text(json.dumps(self.s), encoding="utf-8")

    @property
    def state(self) -> dict[str, Any]:
        return self.t["states"].get(self.s["state"], {})

    def respond(self, key: str, args: list[str]) -> tuple[str, str, int]:
        if key == "devices":
            listed = "" if self.state.get("offline") else f"{self.serial}\tdevice\n"
            return f"List of devices attached\n{listed}\n", "", 0
        if self.state.get("offline"):
            return "", f"error: device '{self.serial}' not found\n", 1
        for scope in (self.state.get("commands", {}), self.t.get("every_state", {})):
            response = scope.get(key)
            if response is None:
                continue
            used_key = f"{self.s['state']}|{key}"
            times = response.get("times")
            if times is not None and self.s["used"].get(used_key, 0) >= times:
                continue
            self.s["used"][used_key] = self.s["used"].get(used_key, 0) + 1
            if response.get("next"):
                self.s["state"] = response["next"]
            return self._text(response, "stdout"), self._text(response, "stderr"), int(response.get("exit", 0))
        return self.protocol(key, args)

    def _text(self, response: dict[str, Any], name: str) -> str:
        if f"{name}_file" in response:
            return (self.base / response[f"{name}_file"]).read_text(encoding="utf-8")
        return str(response.get(name, ""))

    def protocol(self, key: str, args: list[str]) -> tuple[str, str, int]:
        dump = re.fullmatch(r"shell uiautomator dump (\S+)", key)
        if dump and "window_dump" in self.state:
            self.s["files"][dump.group(1)] = str(self.base / self.state["window_dump"])
            return f"UI hierchary dumped to: {dump.group(1)}\n", "", 0
        cat = re.fullmatch(r"exec-out cat (\S+)", key)
        if cat:
            path = self.s["files"].get(cat.group(1))
            if path is None:
                return "", f"cat: {cat.group(1)}: No such file or directory\n", 1
            return Path(path).read_text(encoding="utf-8"), "", 0
        if len(args) == 3 and args[0] == "pull":
            path = self.s["files"].get(args[1])
            if path is None:
                return "", f"adb: error: failed to stat remote object '{args[1]}': No such file or directory\n", 1
            data = Path(path).read_bytes()
            Path(args[2]).write_bytes(data)
            return f"{args[1]}: 1 file pulled, 0 skipped. 1.2 MB/s ({len(data)} bytes in 0.001s)\n", "", 0
        if key == FOCUS_COMMAND and "dumpsys_window" in self.state:
            return self.state["dumpsys_window"], "", 0
        expected = sorted({*self.state.get("commands", {}), *self.t.get("every_state", {})})
        message = (f"adb stand-in: unexpected command `adb {key}` in state {self.s['state']!r} of "
                   f"{self.transcript_path.name}; the transcript expects one of {expected} (or the uiautomator "
                   f"and dumpsys protocol)\n")
        return "", message, UNEXPECTED


def main(argv: list[str]) -> int:
    transcript = os.environ.get("ADB_STANDIN_TRANSCRIPT")
    state = os.environ.get("ADB_STANDIN_STATE")
    if not transcript or not state:
        sys.stderr.write("adb stand-in: set ADB_STANDIN_TRANSCRIPT and ADB_STANDIN_STATE\n")
        return UNEXPECTED
    device = Device(Path(transcript), Path(state))
    args = list(argv)
    serial = None
    while args and args[0] in ("-s", "-t", "-H", "-P"):
        if args[0] == "-s" and len(args) > 1:
            serial = args[1]
        args = args[2:]
    key = " ".join(args)
    if serial is not None and serial != device.serial:
        out, err, code = "", f"error: device '{serial}' not found\n", 1
    else:
        out, err, code = device.respond(key, args)
    device.save()
    log = os.environ.get("ADB_STANDIN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"command": key, "serial": serial, "exit": code,
                                     "unexpected": code == UNEXPECTED, "state": device.s["state"]}) + "\n")
    sys.stdout.buffer.write(out.encode("utf-8"))
    sys.stderr.buffer.write(err.encode("utf-8"))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
