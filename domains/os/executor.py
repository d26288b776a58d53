"""Runs action code inside one desktop session (a helper process, like the code runner of OSWorld's server).

Started by :class:`awctl_domains.os.desktop.DesktopSession` with the session's environment (``DISPLAY``,
``HOME``...) and two pipe descriptors: ``executor.py <request fd> <reply fd>``. Each request is one JSON
line ``{"code": "..."}``; the code runs in a fresh namespace that already holds ``pyautogui`` (with
``FAILSAFE`` off, as OSWorld's runner sets it) and ``time``, and the reply is one JSON line
``{"ok": bool, "error": "ExcType: message" | null, "output": "<what the code printed>"}``.
Printing goes to a buffer, never to the reply pipe; programs the code starts write to /dev/null.
"""

import contextlib
import io
import json
import os
import sys
import time
import traceback


def main() -> None:
    request_fd, reply_fd = int(sys.argv[1]), int(sys.argv[2])
    import pyautogui

    pyautogui.FAILSAFE = False
    # OSWorld's runner keeps pyautogui's 0.1 s pause; a shorter one keeps recording fast and still lets
    # the X server order the events.
    pyautogui.PAUSE = float(os.environ.get("AWCTL_OS_PYAUTOGUI_PAUSE", "0.05"))
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    replies = os.fdopen(reply_fd, "w", encoding="utf-8")
    for line in requests:
        if not line.strip():
            continue
        try:
            code = json.loads(line)["code"]
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"ok": False, "error": f"bad request: {exc}", "output": ""}
        else:
            buffer = io.StringIO()
            namespace = {"__name__": "__main__", "pyautogui": pyautogui, "time": time}
            try:
                with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                    exec(compile(code, "<action>", "exec"), namespace)  # the agent's action, by design
                reply = {"ok": True, "error": None, "output": buffer.getvalue()}
            except BaseException as exc:  # noqa: BLE001 - the agent's code may raise anything, even SystemExit
                tb = traceback.extract_tb(exc.__traceback__)
                where = next((f" (line {f.lineno})" for f in reversed(tb) if f.filename == "<action>"), "")
                reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}{where}", "output": buffer.getvalue()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
