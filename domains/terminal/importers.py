"""Importers of raw terminal recordings into trajectories.

``asciinema`` — asciicast v2 and v3 recordings (``.cast``, see :mod:`.recordings`). The output stream
is replayed through a terminal emulator (``pyte``) at the recorded geometry; observations are **full
screens** (``metadata["screen_form"] = "screen"``).

* With input events (``asciinema rec --stdin``), a turn's action is the keystrokes typed up to and
  including Enter or a control key (text → literal keystrokes, ``\\r`` → ``\\n``, control bytes →
  ``C-x`` items, arrow/escape sequences → key names); its observation is the screen just before the
  next keystroke (or at the end), its ``duration`` the time until then (capped at 60 s).
* Without input events, a turn ends each time a shell prompt (any family :mod:`.prompt_shapes` reads:
  ``user@host:path# ``, ``bash-5.2$ ``, ``$ ``...) reappears at the cursor; the action is the command
  echoed after the previous prompt plus Enter.

``script`` — util-linux ``script`` typescripts (``.typescript``): the output is replayed the same way,
turns end where a prompt reappears at the cursor, and each observation is the **incremental output**
(``screen_form = "incremental"``): the echo of the command, its output and the new prompt, exactly as
the terminal laid them out (long lines wrapped at ``COLUMNS``), the prompt's trailing space kept.

Neither importer assumes anything about the machine: the home directory and the working directory are
left for the verifiers to learn from the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awctl.domain import Importer
from awctl.errors import InputError
from awctl.trajectory import SystemPrompt, Trajectory, Turn

from .codec import Keystroke, TerminalActionCodec
from .prompt_shapes import Prompt, parse_prompt
from .recordings import parse_typescript, read_cast, read_text

MAX_DURATION = 60.0
_ESCAPES = {"\x1b[A": "Up", "\x1b[B": "Down", "\x1b[C": "Right", "\x1b[D": "Left", "\x1b[H": "Home",
            "\x1b[F": "End", "\x1b[3~": "DC", "\x1b[5~": "PPage", "\x1b[6~": "NPage", "\x1bOA": "Up",
            "\x1bOB": "Down", "\x1bOC": "Right", "\x1bOD": "Left", "\x1b[Z": "BTab"}
_CODEC = TerminalActionCodec()
# Cut a chunk of output after each prompt-like ending, so the cursor is seen resting after a prompt.
_PROMPT_END = re.compile(r"(?<=[#$%>:] )")


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


class Terminal:
    """A pyte terminal replaying a recording's output; ``rows`` may exceed the real height so nothing
    scrolls away (for incremental observations)."""

    def __init__(self, cols: int, rows: int) -> None:
        import pyte

        self.cols, self.rows = cols, rows
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)

    def feed(self, data: str) -> None:
        self.stream.feed(data)

    def row(self, y: int) -> str:
        line = self.screen.buffer[y]
        return "".join(line[x].data for x in range(self.cols))

    @property
    def cursor(self) -> tuple[int, int]:
        return self.screen.cursor.y, self.screen.cursor.x

    def text(self, upto: int | None = None) -> str:
        """The screen's lines (right-stripped, trailing blank lines dropped) up to row ``upto``."""
        last = self.rows - 1 if upto is None else upto
        lines = [self.row(y).rstrip() for y in range(last + 1)]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def prompt_at_cursor(self, known: Prompt | None) -> Prompt | None:
        """The prompt the cursor rests after (nothing typed after it yet), if any."""
        y, x = self.cursor
        before = self.row(y)[:x]
        if not before.strip() or self.row(y)[x:].strip():
            return None
        if before[-1:] != " " and not before.rstrip().endswith((">", "#", "$", "%")):
            return None
        return parse_prompt(before, known, allow_repl=True)

    def between(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The text between two cursor positions: first row from its column, whole rows (right-stripped),
        the last row up to the cursor (its trailing spaces kept)."""
        (y0, x0), (y1, x1) = start, end
        if y1 == y0:
            return self.row(y0)[x0:x1]
        parts = [self.row(y0)[x0:].rstrip()] + [self.row(y).rstrip() for y in range(y0 + 1, y1)]
        parts.append(self.row(y1)[:x1])
        return "\n".join(parts)

    def typed_after(self, start: tuple[int, int]) -> str:
        """The command echoed after a prompt at ``start`` (rows that are full continue on the next)."""
        y, x = start
        text = self.row(y)[x:]
        while len(self.row(y).rstrip()) == self.cols and y + 1 < self.rows:
            y += 1
            text += self.row(y)
        return text.rstrip()


def _system(cols: int, rows: int, initial: str, form: str) -> SystemPrompt:
    shown = ("Each observation is the whole visible screen." if form == "screen" else
             "Each observation is only the new output: the echo, what the command printed and the new prompt.")
    # The action space names the prompt this recording's shell shows, not awctl's own.
    first = parse_prompt(initial.rstrip("\n").split("\n")[-1]) if initial.strip() else None
    prompt = f"`{first.text}`" if first else "of the shell"
    return SystemPrompt(action_space=_CODEC.schema(prompt, cols, rows),
                        initial_state=f"A bash shell in a {cols}x{rows} terminal. {shown} The screen shows:\n"
                                      f"```\n{initial}\n```")


def load_cast(path: Path) -> Iterator[Trajectory]:
    """One trajectory per ``.cast`` file (see the module docstring)."""
    path = Path(path)
    cast = read_cast(path)
    cols, rows = cast.cols, cast.rows
    term = Terminal(cols, rows)
    events = [(t, code, data) for t, code, data in cast.events if code in ("o", "i")]
    has_input = any(code == "i" for _, code, _ in events)
    turns: list[Turn] = []
    initial: str | None = None

    if has_input:
        pending: list[str] = []
        committed_at: float | None = None
        first_input = True
        for t, code, data in events:
            if code == "o":
                term.feed(data)
                continue
            if first_input:
                initial, first_input = term.text(), False
            if committed_at is not None:
                turns.append(_turn(pending, t - committed_at, term.text(), t))
                pending, committed_at = [], None
            ks = _keystrokes(data)
            pending += ks
            if any(k.endswith("\n") or k.startswith("C-") or k == "Escape" for k in ks):
                committed_at = t
        if pending:
            end = events[-1][0] if events else 0.0
            turns.append(_turn(pending, end - (committed_at or end), term.text(), end))
    else:
        known: Prompt | None = None
        prompt_at: tuple[int, int] | None = None
        at_prompt = False
        typed_row = ""
        for t, _code, data in events:
            # Feed line by line so the prompt row is read after the command is echoed but before
            # Enter's newline can scroll it away.
            for piece in (p for chunk in re.split(r"(?<=\n)", data) for p in _PROMPT_END.split(chunk)):
                if not piece:
                    continue
                if prompt_at is not None and term.cursor[0] == prompt_at[0]:
                    typed_row = term.row(prompt_at[0])[prompt_at[1]:]
                term.feed(piece)
                if prompt_at is not None and term.cursor[0] == prompt_at[0]:
                    typed_row = term.row(prompt_at[0])[prompt_at[1]:]
                found = term.prompt_at_cursor(known)
                was, at_prompt = at_prompt, found is not None
                if found is None or was:
                    continue
                if initial is None:
                    initial = term.text()
                else:
                    turns.append(_turn([typed_row.rstrip() + "\n"], 0.0, term.text(), t))
                known, prompt_at, typed_row = found, term.cursor, ""

    yield Trajectory(
        id=f"asciinema-{path.name.split('.')[0]}",
        domain="terminal",
        source=f"asciinema:{path.name}",
        system=_system(cols, rows, initial or "", "screen"),
        turns=turns,
        metadata={"rows": rows, "cols": cols, "initial_screen": initial or "", "screen_form": "screen",
                  "cast_header": {k: v for k, v in cast.header.items() if k != "env"}},
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


def load_typescript(path: Path) -> Iterator[Trajectory]:
    """One trajectory per typescript, in incremental form (see the module docstring)."""
    path = Path(path)
    ts = parse_typescript(read_text(path))
    if ts.cols is None or ts.rows is None:
        raise InputError(f"{path}:1: the typescript does not say the terminal's size",
                         hint='record with util-linux script on a terminal: its first line then carries '
                              'COLUMNS="..." LINES="..."')
    cols, rows = ts.cols, ts.rows
    # Tall enough that nothing scrolls away: every observation is cut from the whole output.
    term = Terminal(cols, ts.output.count("\n") + ts.output.count("\r") + rows + 2)
    turns: list[Turn] = []
    initial: str | None = None
    known: Prompt | None = None
    prompt_at: tuple[int, int] | None = None
    at_prompt = False
    for chunk in re.split(r"(?<=\n)", ts.output):
        for piece in _PROMPT_END.split(chunk):
            if not piece:
                continue
            term.feed(piece)
            found = term.prompt_at_cursor(known)
            was, at_prompt = at_prompt, found is not None
            if found is None or was:
                continue
            if prompt_at is None:
                initial = term.text(term.cursor[0])
            else:
                typed = term.typed_after(prompt_at)
                turns.append(Turn(action=_CODEC.render((Keystroke(typed + "\n", 0.0),)),
                                  observation=term.between(prompt_at, term.cursor)))
            known, prompt_at = found, term.cursor
    if prompt_at is not None and term.cursor != prompt_at:
        # The last command (often `exit`) and whatever it printed before the recording ended.
        typed = term.typed_after(prompt_at)
        rest = term.between(prompt_at, term.cursor).rstrip("\n")
        if typed:
            turns.append(Turn(action=_CODEC.render((Keystroke(typed + "\n", 0.0),)), observation=rest))
    meta: dict[str, Any] = {"rows": rows, "cols": cols, "initial_screen": initial or "",
                            "screen_form": "incremental",
                            "typescript": {k: v for k, v in ts.fields.items() if k != "COMMAND"}}
    yield Trajectory(id=f"script-{path.name.split('.')[0]}", domain="terminal", source=f"script:{path.name}",
                     system=_system(cols, rows, initial or "", "incremental"), turns=turns, metadata=meta)


IMPORTERS: tuple[Importer, ...] = (
    Importer("asciinema", "asciicast v2/v3 recordings (.cast), replayed through a terminal emulator",
             ("*.cast", "*.cast.gz"), load_cast),
    Importer("script", "util-linux script typescripts (.typescript), as incremental output",
             ("*.typescript", "*.typescript.gz"), load_typescript),
)
