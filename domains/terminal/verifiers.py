"""Deterministic checks of terminal screens, usable on recorded turns and on a simulator's predictions.

Each verifier returns ``None`` when it cannot decide (the check does not apply, or scrolling or an
unusual program makes the screen unpredictable), so a real recorded session never fails one. They rely
on the sandbox's fixed prompt ``root@sandbox:<cwd># `` (:data:`PROMPT_RE`) and the geometry in
``trajectory.metadata`` (``rows``/``cols``, default 40/160). The screen before a turn is the previous
turn's observation, or for the first turn the fenced screen in the system prompt's initial state.

* ``screen_geometry`` — at most ``rows`` lines of at most ``cols`` cells, no tabs/escapes.
* ``prompt_format`` — every prompt-looking line is exactly the sandbox prompt (absolute cwd, ``#``).
* ``prompt_cwd`` — after a command, the new prompt's directory follows ``cd`` (or stays put).
* ``command_echo`` — the typed keystrokes appear right after the previous prompt.
* ``typed_echo_only`` — keystrokes without Enter change nothing but the echo on the prompt line.
* ``exact_output`` — fully determined outputs match exactly: ``echo`` of literals, ``pwd``, and ``cat``
  of a file written earlier in the session by ``echo``/``printf`` redirection.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.envs.sandbox import PROMPT_RE
from awctl.errors import CodecError

from .codec import (
    DEFAULT_COLS,
    DEFAULT_ROWS,
    TerminalActionCodec,
    TerminalObservationCodec,
    command_name,
    wrap_line,
)

# Something that looks like a shell prompt of any shell (user@host:path$ or #).
_PROMPT_ANYWHERE = re.compile(r"root@sandbox:/[^#\n]*# ")
PROMPT_SHAPE_RE = re.compile(r"^[\w.-]+@[\w.-]+:[^\n]*?[#$%] ")
SCREEN_FENCE_RE = re.compile(r"```(?:text|console|terminal)?\n(.*?)\n?```", re.S)
# Programs and escapes that repaint the screen, which makes echo positions unpredictable.
REPAINTS = re.compile(r"\b(clear|reset|tput|vi|vim|nvim|nano|less|more|man|top|htop|watch|tmux|screen|emacs)\b"
                      r"|\\033|\\e\[|\\x1b|\\u001b")
_SPECIAL = set("$`\\*?[]{}~;|&<>()!\t#")
_CODEC = TerminalActionCodec()


# ── shared reading of the turn ────────────────────────────────────────────────────────────────────────


def geometry(ctx: TurnContext) -> tuple[int, int]:
    meta = ctx.trajectory.metadata
    return int(meta.get("rows", DEFAULT_ROWS)), int(meta.get("cols", DEFAULT_COLS))


def screen_lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def initial_screen(ctx: TurnContext) -> str | None:
    """The screen before the first turn: ``metadata["initial_screen"]`` or the initial state's fence."""
    meta = ctx.trajectory.metadata.get("initial_screen")
    if isinstance(meta, str):
        return meta
    m = SCREEN_FENCE_RE.search(ctx.trajectory.system.initial_state or "")
    return m.group(1) if m else None


def screen_before(ctx: TurnContext, index: int | None = None) -> list[str] | None:
    i = ctx.index if index is None else index
    if i > 0:
        return screen_lines(ctx.trajectory.turns[i - 1].observation)
    first = initial_screen(ctx)
    return None if first is None else screen_lines(first)


def idle_prompt(lines: list[str] | None) -> str | None:
    """The cwd when the screen ends at an empty prompt (the shell waits for a command), else None."""
    if not lines:
        return None
    m = PROMPT_RE.match(lines[-1] + " ") if lines[-1].endswith("#") else None
    return m.group("cwd") if m and m.group("typed") == "" else None


def typed_text(action: str) -> str | None:
    """The literal text of a one-item action of printable characters (an optional final Enter)."""
    try:
        items = _CODEC.parse(action)
    except CodecError:
        return None
    if len(items) != 1 or items[0].is_key or items[0].is_wait:
        return None
    text = items[0].keystrokes
    body = text[:-1] if text.endswith("\n") else text
    if not body.isprintable() or "\n" in body:
        return None
    return text


def single_command(action: str) -> str | None:
    """The command line of an action that types exactly one command and presses Enter."""
    text = typed_text(action)
    if text is None or not text.endswith("\n") or not text.strip():
        return None
    return text[:-1]


def find_chunks(lines: list[str], chunks: list[str], at: int | None) -> int | None:
    """Index where ``chunks`` occur as consecutive lines (exactly at ``at`` when given; else the last)."""
    n = len(chunks)
    starts = [at] if at is not None else range(len(lines) - n, -1, -1)
    for s in starts:
        if s >= 0 and lines[s: s + n] == chunks:
            return s
    return None


@dataclass
class CommandView:
    """A command turn seen on screen: where its echo is, its output lines, the final prompt's cwd."""

    echo_at: int
    output: list[str]
    final_cwd: str | None


def command_view(ctx: TurnContext, command: str, lines: list[str], before: list[str]) -> CommandView | None:
    """Locate a command's echo and output on an unscrolled screen (None when it cannot be located)."""
    rows, cols = geometry(ctx)
    cwd = idle_prompt(before)
    if cwd is None or len(lines) >= rows:
        return None
    echo = wrap_line(f"root@sandbox:{cwd}# {command}", cols)
    at = find_chunks(lines, echo, len(before) - 1)
    if at is None:
        return None
    final = idle_prompt(lines)
    end = len(lines) - 1 if final is not None else len(lines)
    return CommandView(at, lines[at + len(echo): end], final)


# ── the verifiers ────────────────────────────────────────────────────────────────────────────────────


@verifier("screen_geometry", "The screen fits the terminal: at most rows lines of at most cols cells.")
def screen_geometry(ctx: TurnContext) -> VerifyResult:
    rows, cols = geometry(ctx)
    try:
        TerminalObservationCodec(rows, cols).parse(ctx.observation)
    except CodecError as exc:
        return VerifyResult("screen_geometry", False, str(exc))
    return VerifyResult("screen_geometry", True)


@verifier("prompt_format", "Every prompt line is the sandbox prompt `root@sandbox:<absolute cwd># `.")
def prompt_format(ctx: TurnContext) -> VerifyResult | None:
    checked = 0
    for i, line in enumerate(screen_lines(ctx.observation), 1):
        if PROMPT_SHAPE_RE.match(line + " "):
            checked += 1
            # Output without a final newline puts the prompt after it on the same line.
            if not _PROMPT_ANYWHERE.search(line + " "):
                return VerifyResult("prompt_format", False,
                                    f"line {i}: {line[:60]!r} is not the prompt 'root@sandbox:<cwd># '")
    return VerifyResult("prompt_format", True) if checked else None


_CHANGES_DIR = re.compile(r"(^|[;&|(]\s*)(cd|pushd|popd|source|\.|exec|eval)(\s|$)|\bcd\b")


@verifier("prompt_cwd", "After a command, the prompt's directory follows `cd` (and stays put otherwise).")
def prompt_cwd(ctx: TurnContext) -> VerifyResult | None:
    command = single_command(ctx.action)
    before = screen_before(ctx)
    prev = idle_prompt(before)
    lines = screen_lines(ctx.observation)
    now = idle_prompt(lines)
    if command is None or prev is None or now is None:
        return None
    home = str(ctx.trajectory.metadata.get("home", "/workspace"))
    if not _CHANGES_DIR.search(command):
        expected = prev
    else:
        words = _literal_words(command)
        if not words or words[0] != "cd" or len(words) > 2:
            return None
        arg = words[1] if len(words) == 2 else "~"
        if arg == "-":
            return None
        if arg == "~" or arg.startswith("~/"):
            arg = home + arg[1:]
        view = command_view(ctx, command, lines, before or [])
        if view is None:
            return None
        if view.output:  # cd printed something: it failed (no such directory...) and stayed put
            if not any("cd:" in line for line in view.output):
                return None
            expected = prev
        else:
            expected = posixpath.normpath(posixpath.join(prev, arg))
            expected = "/" + expected.lstrip("/")
    if now != expected:
        return VerifyResult("prompt_cwd", False, f"prompt shows {now!r} but the working directory is {expected!r}")
    return VerifyResult("prompt_cwd", True)


@verifier("command_echo", "The typed keystrokes appear right after the previous prompt.")
def command_echo(ctx: TurnContext) -> VerifyResult | None:
    text = typed_text(ctx.action)
    before = screen_before(ctx)
    cwd = idle_prompt(before)
    if text is None or cwd is None or before is None or REPAINTS.search(text):
        return None
    rows, cols = geometry(ctx)
    lines = screen_lines(ctx.observation)
    echo = wrap_line(f"root@sandbox:{cwd}# {text.rstrip(chr(10))}", cols)
    if len(before) - 1 + len(echo) > rows:
        return None
    if len(lines) < rows:
        # Nothing scrolled, so the echo must sit exactly where the previous prompt was.
        if find_chunks(lines, echo, len(before) - 1) is None:
            got = lines[len(before) - 1] if len(lines) >= len(before) else "<missing>"
            return VerifyResult("command_echo", False,
                                f"line {len(before)}: expected the echo {echo[0][:70]!r}, got {got[:70]!r}")
        return VerifyResult("command_echo", True)
    return VerifyResult("command_echo", True) if find_chunks(lines, echo, None) is not None else None


@verifier("typed_echo_only", "Keystrokes without Enter only extend the prompt line with the echo.")
def typed_echo_only(ctx: TurnContext) -> VerifyResult | None:
    text = typed_text(ctx.action)
    before = screen_before(ctx)
    cwd = idle_prompt(before)
    if text is None or text.endswith("\n") or cwd is None or before is None:
        return None
    rows, cols = geometry(ctx)
    expected = before[:-1] + wrap_line(f"root@sandbox:{cwd}# {text}", cols)
    if len(expected) > rows:
        return None
    lines = screen_lines(ctx.observation)
    if lines != expected:
        diff = next((i for i, (a, b) in enumerate(zip(lines, expected, strict=False)) if a != b), min(len(lines), len(expected)))
        got = lines[diff] if diff < len(lines) else "<missing>"
        want = expected[diff] if diff < len(expected) else "<nothing>"
        return VerifyResult("typed_echo_only", False,
                            f"line {diff + 1}: expected {want[:70]!r}, got {got[:70]!r} (no Enter was pressed)")
    return VerifyResult("typed_echo_only", True)


@verifier("exact_output", "Fully determined outputs (echo literal, pwd, cat of a file written earlier) match.")
def exact_output(ctx: TurnContext) -> VerifyResult | None:
    command = single_command(ctx.action)
    before = screen_before(ctx)
    cwd = idle_prompt(before)
    if command is None or cwd is None or before is None:
        return None
    expected = expected_output(ctx, command, cwd)
    if expected is None:
        return None
    rows, cols = geometry(ctx)
    lines = screen_lines(ctx.observation)
    echo = wrap_line(f"root@sandbox:{cwd}# {command}", cols)
    tail_text = expected + f"root@sandbox:{cwd}# "
    tail = [chunk for logical in tail_text.split("\n") for chunk in wrap_line(logical, cols)]
    start = len(before) - 1
    if start + len(echo) + len(tail) >= rows or len(lines) >= rows:
        return None  # the screen scrolled; what remains visible is not fully determined by the command
    got = lines[start + len(echo):]
    if lines[start: start + len(echo)] != echo or got != tail:
        return VerifyResult("exact_output", False,
                            f"`{command[:50]}` must print {expected[:80]!r}; the screen shows {got[:3]!r}...")
    return VerifyResult("exact_output", True)


# ── what an exactly known command prints ─────────────────────────────────────────────────────────────


def _literal_words(command: str) -> list[str] | None:
    """Shell words of a command with no expansions, redirections or operators (else None)."""
    if any(ch in _SPECIAL for ch in command) or "'" in command and '"' in command:
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _echo_output(words: list[str]) -> str | None:
    args = words[1:]
    newline = "\n"
    if args and args[0] == "-n":
        args, newline = args[1:], ""
    if any(a.startswith("-") for a in args[:1]):
        return None
    return " ".join(args) + newline


_WRITE_RE = re.compile(r"^(?P<cmd>(?:echo|printf)\s[^<>|;&$`]*?)\s*(?P<op>>>?)\s*(?P<file>[\w./-]+)$")
_PRINTF_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\\\": "\\", "%%": "%"}
_READ_ONLY = {"cd", "ls", "pwd", "echo", "cat", "true", "wc", "head", "tail", "grep", "clear", "date",
              "whoami", "id", "hostname", "uname", "env", "printenv", "type", "which", "stat", "file", "test"}


def _written_content(cmd: str) -> str | None:
    """What ``echo ...``/``printf '...'`` writes, when fully determined."""
    if cmd.startswith("printf"):
        m = re.fullmatch(r"printf\s+'([^'%\\]*(?:(?:\\[nt\\]|%%)[^'%\\]*)*)'", cmd)
        if not m:
            return None
        return re.sub(r"\\[nt\\]|%%", lambda e: _PRINTF_ESCAPES[e.group(0)], m.group(1))
    words = _literal_words(cmd)
    return None if words is None or words[0] != "echo" else _echo_output(words)


def session_files(ctx: TurnContext) -> dict[str, str]:
    """Files whose whole content the session's earlier turns determined (absolute path -> content).

    Only ``echo``/``printf`` redirections that printed nothing count; any other command that is not
    plainly read-only (or any non-command action) forgets everything, so the map is never stale.
    """
    cached = ctx.state.get("terminal.session_files")
    if cached is not None:
        return cached
    files: dict[str, str] = {}
    for j in range(ctx.index):
        turn = ctx.trajectory.turns[j]
        command = single_command(turn.action)
        before = screen_before(ctx, j)
        cwd = idle_prompt(before)
        if command is None or cwd is None or before is None:
            files.clear()
            continue
        m = _WRITE_RE.match(command)
        if m:
            content = _written_content(m.group("cmd").strip())
            path = posixpath.normpath(posixpath.join(cwd, m.group("file")))
            view = command_view(ctx, command, screen_lines(turn.observation), before)
            if content is None or view is None or view.output:
                files.pop(path, None)
            elif m.group("op") == ">>":
                if path in files:
                    files[path] += content
            else:
                files[path] = content
            continue
        simple = [c.strip() for c in re.split(r"\|\|?|&&|;", command)]
        if ">" in command or any(command_name(c) not in _READ_ONLY for c in simple if c):
            files.clear()
    ctx.state["terminal.session_files"] = files
    return files


def expected_output(ctx: TurnContext, command: str, cwd: str) -> str | None:
    """The exact output of ``command`` when it is fully determined (else None)."""
    words = _literal_words(command)
    if not words:
        return None
    if words[0] == "echo":
        return _echo_output(words)
    if words == ["pwd"]:
        return cwd + "\n"
    if words[0] == "cat" and len(words) == 2 and not words[1].startswith("-"):
        return session_files(ctx).get(posixpath.normpath(posixpath.join(cwd, words[1])))
    return None


VERIFIERS: tuple[Verifier, ...] = (
    screen_geometry, prompt_format, prompt_cwd, command_echo, typed_echo_only, exact_output,
)
