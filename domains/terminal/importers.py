"""Importers of raw terminal logs into trajectories.

``asciinema``: asciicast v2 recordings (``.cast``): a header JSON line (``version`` 2, ``width``,
``height``) then one ``[time, code, data]`` event per line (``"o"`` output, ``"i"`` input; other codes
such as ``"r"`` resize or ``"m"`` marker are skipped). The output stream is replayed through a terminal
emulator (``pyte``) at the recorded geometry to get screens.

* With input events (``asciinema rec --stdin``), a turn's action is the keystrokes typed up to and
  including Enter or a control key (text → literal keystrokes, ``\\r`` → ``\\n``, control bytes →
  ``C-x`` items, arrow/escape sequences → key names); its observation is the screen just before the
  next keystroke (or at the end), its ``duration`` the time until then (capped at 60 s).
* Without input events, a turn ends each time a shell prompt (``user@host:path# `` or ``$ ``) reappears
  at the cursor; the action is the command echoed after the previous prompt plus Enter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .codec import Keystroke, TerminalActionCodec

PROMPT_AT_CURSOR = re.compile(r"^[\w.-]+@[\w.-]+:[^\n]*?[#$] $")
_PROMPT_PREFIX = re.compile(r"^[\w.-]+@[\w.-]+:[^\n]*?[#$] ")
MAX_DURATION = 60.0
_ESCAPES = {"\x1b[A": "Up", "\x1b[B": "Down", "\x1b[C": "Right", "\x1b[D": "Left", "\x1b[H": "Home",
            "\x1b[F": "End", "\x1b[3~": "DC", "\x1b[5~": "PPage", "\x1b[6~": "NPage", "\x1bOA": "Up",
            "\x1bOB": "Down", "\x1bOC": "Right", "\x1bOD": "Left", "\x1b[Z": "BTab"}
_CODEC = TerminalActionCodec()


def _events(path: Path) -> tuple[dict[str, Any], list[tuple[float, str, str]]]:
    from awctl.trajectory import open_text

    header: dict[str, Any] | None = None
    events: list[tuple[float, str, str]] = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})",
                                 hint="an asciicast v2 file has one JSON value per line") from None
            if header is None:
                if not isinstance(obj, dict) or obj.get("version") != 2:
                    raise InputError(f"{path}:{lineno}: not an asciicast v2 header",
                                     hint='the first line must be {"version": 2, "width": ..., "height": ...}')
                for key in ("width", "height"):
                    if not isinstance(obj.get(key), int) or obj[key] <= 0:
                        raise InputError(f"{path}:{lineno}: header field {key!r} must be a positive integer")
                header = obj
                continue
            if (not isinstance(obj, list) or len(obj) != 3 or not isinstance(obj[0], (int, float))
                    or not isinstance(obj[1], str) or not isinstance(obj[2], str)):
                raise InputError(f"{path}:{lineno}: an event must be [time, code, data]",
                                 hint='e.g. [0.25, "o", "ls\\r\\n"]')
            events.append((float(obj[0]), obj[1], obj[2]))
    if header is None:
        raise InputError(f"{path}: empty file, no asciicast header")
    return header, events


def _keystrokes(data: str) -> list[str]:
    """Cast input bytes as keystroke strings: literal runs, and key names for control/escape keys."""
    out: list[str] = []
    text = ""
    i = 0
    while i < len(data):
        ch = data[i]
        seq = next((s for s in _ESCAPES if data.startswith(s, i)), None)
        if seq is not None or ch < " " and ch not in "\r\n\t" or ch == "\x7f":
            if text:
                out.append(text)
                text = ""
            if seq is not None:
                out.append(_ESCAPES[seq])
                i += len(seq)
                continue
            out.append("Escape" if ch == "\x1b" else "BSpace" if ch == "\x7f" else f"C-{chr(ord(ch) + 96)}")
        else:
            text += "\n" if ch == "\r" else ch
        i += 1
    if text:
        out.append(text)
    return out


def _screen_text(screen: Any) -> str:
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _cursor_prefix(screen: Any) -> str:
    return screen.display[screen.cursor.y][: screen.cursor.x]


def load_cast(path: Path) -> Iterator[Trajectory]:
    """One trajectory per ``.cast`` file (see the module docstring)."""
    import pyte

    path = Path(path)
    header, events = _events(path)
    cols, rows = header["width"], header["height"]
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    has_input = any(code == "i" for _, code, _ in events)
    turns: list[Turn] = []
    initial: str | None = None

    if has_input:
        pending: list[str] = []
        committed_at: float | None = None
        first_input = True
        for t, code, data in events:
            if code == "o":
                stream.feed(data)
            elif code == "i":
                if first_input:
                    initial, first_input = _screen_text(screen), False
                if committed_at is not None:
                    turns.append(_turn(pending, t - committed_at, _screen_text(screen), t))
                    pending, committed_at = [], None
                ks = _keystrokes(data)
                pending += ks
                if any(k.endswith("\n") or k.startswith("C-") or k == "Escape" for k in ks):
                    committed_at = t
        if pending:
            end = events[-1][0] if events else 0.0
            turns.append(_turn(pending, end - (committed_at or end), _screen_text(screen), end))
    else:
        at_prompt = False
        prompt_y: int | None = None
        typed_row = ""
        for t, code, data in events:
            if code != "o":
                continue
            # Feed line by line so the prompt row is read after the command is echoed but before
            # Enter's newline can scroll it away.
            for piece in re.split(r"(?<=\n)", data):
                if not piece:
                    continue
                if prompt_y is not None and screen.cursor.y == prompt_y:
                    typed_row = screen.display[prompt_y]
                stream.feed(piece)
                if prompt_y is not None and screen.cursor.y == prompt_y:
                    typed_row = screen.display[prompt_y]
                now = bool(PROMPT_AT_CURSOR.match(_cursor_prefix(screen)))
                if now and not at_prompt:
                    if initial is None:
                        initial = _screen_text(screen)
                    else:
                        m = _PROMPT_PREFIX.match(typed_row)
                        typed = typed_row[m.end():].rstrip() if m else ""
                        turns.append(_turn([typed + "\n"], 0.0, _screen_text(screen), t))
                    prompt_y = screen.cursor.y
                    typed_row = screen.display[prompt_y]
                at_prompt = now

    shell_cwd = re.search(r"@[\w.-]+:([^\n#$]*)[#$]", initial or "")
    yield Trajectory(
        id=f"asciinema-{path.stem}",
        domain="terminal",
        source=f"asciinema:{path.name}",
        system=SystemPrompt(
            action_space=_CODEC.schema(),
            initial_state=f"A bash shell in a {cols}x{rows} terminal. The screen shows:\n```\n{initial or ''}\n```",
        ),
        turns=turns,
        metadata={"rows": rows, "cols": cols, "initial_screen": initial or "",
                  "home": "/workspace", "cast_header": {k: v for k, v in header.items() if k != "env"},
                  **({"cwd": shell_cwd.group(1)} if shell_cwd else {})},
    )


def _turn(keystrokes: list[str], duration: float, screen: str, t: float) -> Turn:
    # Merge literal runs so "l","s","\n" typed one byte per event becomes one item "ls\n".
    merged: list[str] = []
    for k in keystrokes:
        literal = not Keystroke(k).is_key
        if merged and literal and not Keystroke(merged[-1]).is_key and not merged[-1].endswith("\n"):
            merged[-1] += k
        else:
            merged.append(k)
    wait = round(min(max(duration, 0.0), MAX_DURATION), 3)
    items = tuple(Keystroke(k, wait if i == len(merged) - 1 else 0.0) for i, k in enumerate(merged))
    return Turn(action=_CODEC.render(items), observation=screen, metadata={"time": round(t, 3)})


IMPORTERS: tuple[Importer, ...] = (
    Importer("asciinema", "asciicast v2 recordings (.cast), replayed through a terminal emulator",
             ("*.cast", "*.cast.gz"), load_cast),
)
