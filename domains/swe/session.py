"""What a trajectory's history proves about the agent's session: working directory, open file, file windows.

:func:`session_before` walks the turns before the one under test and keeps

* ``cwd``: the working directory, from the initial state's ``(Current directory: DIR)``, from each
  footer that shows one (awctl, OpenHands, SWE-agent's state line) and from ``cd`` into a known directory;
* ``open_file``: SWE-agent's open file (``open``/``create`` and the state line set it);
* ``windows``: per file, the line count and the line texts that earlier windows showed, shifted by
  ``edit N:M`` edits whose effect is certain, dropped where a command may have changed the file.

Only the history and the system prompt feed it, so a candidate observation is judged by the same facts
a simulator had. Where a fact is unknown it is ``None`` and the verifiers that need it abstain.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

from awctl.trajectory import Trajectory

from .bashout import parse_result
from .classic import (
    CREATE_EXISTS,
    EDIT_APPLIED,
    EDIT_REJECTED,
    ClassicCall,
    Window,
    parse_windows,
    split_state,
    window_problems,
)
from .codec import BashCall, EditorCall, SweAction
from .replay import bash_may_write, parse_action

# SWE-agent's "(Current directory: DIR)" and OpenHands' "[Current working directory: DIR]".
_INITIAL_CWD = re.compile(r"[(\[]Current (?:working )?directory: (?P<cwd>/[^)\]\n]*)[)\]]")
_INITIAL_OPEN = re.compile(r"\(Open file: (?P<file>[^)\n]*)\)")
# Commands that may change the shell's directory (then only a footer tells where it is).
CHANGES_DIR = re.compile(r"(^|[;&|(\s])(cd|pushd|popd|source|\.)(\s|$)|\bexec\b")


def resolve(path: str, cwd: str | None) -> str | None:
    """``path`` made absolute against ``cwd`` and normalised; None when it is relative and cwd unknown."""
    path = path.strip()
    if path.startswith("/"):
        return posixpath.normpath(path)
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, path))


@dataclass
class FileWindowFacts:
    """What earlier windows showed of one file: its line count and line texts (right-stripped)."""

    total: int | None = None
    lines: dict[int, str] = field(default_factory=dict)


@dataclass
class Session:
    cwd: str | None = None
    open_file: str | None = None
    windows: dict[str, FileWindowFacts] = field(default_factory=dict)
    # The last window shown of the open file: (first, last) line numbers.
    last_window: tuple[int, int] | None = None

    def facts(self, path: str) -> FileWindowFacts:
        return self.windows.setdefault(path, FileWindowFacts())

    def learn_window(self, path: str, win: Window) -> None:
        if window_problems(win):
            return  # a window that contradicts itself teaches nothing
        facts = self.facts(path)
        if facts.total is not None and facts.total != win.total:
            facts.lines.clear()
        facts.total = win.total
        for number, text in win.lines:
            facts.lines[number] = text.rstrip()


def initial_cwd(trajectory: Trajectory) -> str | None:
    """The working directory the initial state names (SWE-agent's ``(Current directory: DIR)``)."""
    for text in (trajectory.system.initial_state, trajectory.system.raw or ""):
        m = _INITIAL_CWD.search(text)
        if m:
            return m.group("cwd").strip()
    return None


def _initial_open(trajectory: Trajectory) -> str | None:
    m = _INITIAL_OPEN.search(trajectory.system.initial_state)
    if not m or m.group("file").strip() in ("n/a", ""):
        return None
    return m.group("file").strip()


def cd_target(command: str, cwd: str | None) -> str | None:
    """Where a successful ``cd DIR`` (the whole line, or its first ``&&`` segment when no later one changes
    directory) leads from ``cwd``, else None."""
    segments = command.split("&&")
    if len(segments) > 1:
        if any(CHANGES_DIR.search(seg) for seg in segments[1:]):
            return None
        command = segments[0]
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) != 2 or words[0] != "cd" or any(c in words[1] for c in "$~`*?"):
        return None
    return resolve(words[1], cwd)


def window_path(call: ClassicCall, session: Session) -> str | None:
    """The file a classic command's window should show (absolute), or None when the history does not say."""
    if call.command == "open":
        return resolve(str(call.get("path")), session.cwd)
    if call.command == "create":
        return resolve(str(call.get("filename")), session.cwd)
    return session.open_file


def header_path(win: Window, session: Session) -> str | None:
    return resolve(win.path, session.cwd)


def apply_classic(session: Session, call: ClassicCall, observation: str) -> None:
    body, _ = split_state(observation)
    windows = parse_windows(body)
    target = window_path(call, session)
    if call.command in ("open", "create") and windows:
        target = header_path(windows[-1], session) or target
        session.open_file = target
    if target is None:
        return
    if call.command == "create":
        if CREATE_EXISTS.search(body):
            return
        session.windows[target] = FileWindowFacts()
    if call.command == "edit" and EDIT_REJECTED in body:
        # The file is unchanged; the last window is the original code.
        if windows:
            session.learn_window(target, windows[-1])
        return
    if call.command in ("edit", "insert", "append"):
        applied = any(m in body for m in EDIT_APPLIED) or bool(windows)
        if not applied:
            return
        facts = session.facts(target)
        start, end = call.get("start_line"), call.get("end_line")
        if start is not None and end is not None and facts.total is not None and windows:
            new = str(call.get("replacement_text"))
            new_lines = new.split("\n") if new else []
            delta = len(new_lines) - (end - start + 1)
            shifted = {n: t for n, t in facts.lines.items() if n < start}
            shifted |= {start + i: t.rstrip() for i, t in enumerate(new_lines)}
            shifted |= {n + delta: t for n, t in facts.lines.items() if n > end}
            facts.lines, facts.total = shifted, facts.total + delta
        else:
            facts.lines.clear()
            facts.total = None
    for win in windows:
        session.learn_window(target, win)
    if windows and windows[-1].lines and target == session.open_file:
        session.last_window = (windows[-1].lines[0][0], windows[-1].lines[-1][0])


def apply_turn(session: Session, action: SweAction | None, observation: str) -> None:
    """Update ``session`` with one recorded turn (the recorded observation is taken as the truth)."""
    result = parse_result(observation)
    previous_cwd = session.cwd
    if result.cwd is not None:
        session.cwd = result.cwd.strip()
    if isinstance(action, BashCall):
        if result.cwd is None:
            target = cd_target(action.command, previous_cwd)
            if target is not None and not result.output.strip():
                session.cwd = target
            elif CHANGES_DIR.search(action.command):
                session.cwd = None
        if bash_may_write(action.command):
            session.windows.clear()
    elif isinstance(action, EditorCall):
        if action.command != "view":
            session.windows.pop(posixpath.normpath(action.path), None)
    elif isinstance(action, ClassicCall):
        apply_classic(session, action, observation)
    _, state = split_state(observation)
    if state is not None:
        session.open_file = resolve(state.open_file, session.cwd) if state.open_file else None


def session_before(trajectory: Trajectory, index: int) -> Session:
    """The session after turns ``0..index-1`` of ``trajectory``."""
    session = Session(cwd=initial_cwd(trajectory))
    opened = _initial_open(trajectory)
    session.open_file = resolve(opened, session.cwd) if opened else None
    for turn in trajectory.turns[:index]:
        apply_turn(session, parse_action(turn.action), turn.observation)
    return session
