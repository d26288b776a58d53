"""What a terminal trajectory establishes, turn by turn, read from the trajectory alone.

Verifiers never assume a machine: the geometry, the screen form, the prompt, the home directory, the
working directory and the files whose content is known (shown by the initial state's "Files in" section,
or written by the session) all come from the system prompt (its initial state), the trajectory's metadata
(as an importer recorded it) and the turns before the one checked.
:func:`facts_before` replays the recorded turns and returns :class:`Facts`; :func:`read_turn` locates
an action's echo, output and new prompt in an observation. Anything the trajectory does not establish is
``None``, and the checks built on it abstain.

**Screen forms.** A trajectory shows its terminal in one of two forms:

* ``screen`` — every observation is the whole visible screen (tmux ``capture-pane``; awctl's own form):
  history stays on top until it scrolls, and the typed text is echoed where the previous prompt was;
* ``incremental`` — every observation is only what the terminal added since the last one: the echo of
  the typed text (either alone, continuing the previous prompt line — ``echo`` — or with the prompt in
  front — ``line``), the output, and the new prompt (a trailing space after the prompt is kept).

Terminal-Bench's Terminus observations carry their form in a header line: ``Current Terminal Screen:``
(a screen) or ``New Terminal Output:`` (incremental, prompt line included). A trajectory names its form
in ``metadata["screen_form"]``; otherwise the form is inferred from where the recorded turns echo their
commands, and while nothing decides it every form is tried.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import threading
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from awctl.domain import fenced_block_after
from awctl.errors import CodecError

from .codec import TerminalActionCodec, command_name, display_width, wrap_line
from .files import stated_files
from .prompt_shapes import Prompt, parse_prompt, parse_shell_prompt, repl_started_by

if TYPE_CHECKING:
    from awctl.domain import TurnContext
    from awctl.trajectory import Trajectory

SCREEN_FENCE_RE = re.compile(r"```(?:text|console|terminal|bash|sh)?\n(.*?)\n?```", re.S)
TERMINUS_HEADERS = ("New Terminal Output:", "Current Terminal Screen:")
FORMS = ("screen", "incremental")
# Programs and escapes that repaint the screen, which makes echo positions unpredictable.
REPAINT_PROGRAMS = frozenset({"clear", "reset", "tput", "vi", "vim", "nvim", "nano", "less", "more", "man", "top",
                              "htop", "watch", "tmux", "screen", "emacs"})
_ESCAPES = re.compile(r"\\033|\\e\[|\\x1b|\\u001b|\\E\[")
# Commands that may replace the shell or its prompt: the next prompt may have another shape.
PROMPT_CHANGERS = frozenset({
    "su", "sudo", "ssh", "exit", "logout", "bash", "sh", "dash", "zsh", "ksh", "fish", "exec", "source", ".",
    "chroot", "newgrp", "sg", "login", "screen", "tmux", "docker", "kubectl", "podman", "nix-shell", "conda",
    "deactivate", "activate", "workon", "hostname", "hostnamectl", "set", "runuser", "setpriv", "unshare",
    "script", "asciinema", "telnet", "nc", "ftp", "sftp", "mysql", "mariadb", "psql", "irb", "ipython",
    "ipython3", "gdb", "node", "bc", "redis-cli", "mongo", "lua", "R", "ghci", "php", "perl",
})  # python and sqlite3 start a REPL only without a script (see starts_repl)
# Builtins and words that may change the working directory.
CHANGES_DIR = frozenset({"cd", "pushd", "popd", "source", ".", "exec", "eval", "builtin", "command"})
# Commands that print nothing on success and an error message (``name: ...``) on failure.
SILENT_OK = frozenset({"mkdir", "touch", "cp", "mv", "rm", "rmdir", "ln", "chmod", "chown", "export",
                       "true", "unset", "cd", "gzip", "gunzip"})
_PROMPT_VARS = re.compile(r"\b(PS1|PS2|PROMPT_COMMAND|PROMPT_DIRTRIM)\b")
_DEFINES = re.compile(r"^\s*(?:alias\s+([\w.-]+)=|function\s+([\w.-]+)|([\w.-]+)\s*\(\s*\)\s*\{)")
_CODEC = TerminalActionCodec()
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def repaints(typed: str) -> bool:
    """Whether typed text may repaint the screen: a full-screen program, or an escape sequence printed."""
    if _ESCAPES.search(typed):
        return True
    return any(command_name(part) in REPAINT_PROGRAMS for part in _command_parts(typed))


# ── the trajectory's fixed facts ─────────────────────────────────────────────────────────────────────


def system_text(traj: Trajectory) -> str:
    """The text of the system prompt in which the initial state is described."""
    system = traj.system
    return "\n".join(t for t in (system.initial_state, system.raw or "", system.extra) if t)


def geometry(traj: Trajectory) -> tuple[int | None, int | None]:
    """``(rows, cols)`` from the metadata (``rows``/``cols``) or a ``COLSxROWS terminal`` statement."""
    meta = traj.metadata
    rows = meta.get("rows") if isinstance(meta.get("rows"), int) else None
    cols = meta.get("cols") if isinstance(meta.get("cols"), int) else None
    if rows is None or cols is None:
        m = re.search(r"\b(\d{2,4})\s*[x×]\s*(\d{1,4})\s+(?:character\s+)?(?:terminal|tmux pane|pane|tty)", system_text(traj))
        if m:
            cols, rows = cols or int(m.group(1)), rows or int(m.group(2))
    return rows, cols


def initial_screen(traj: Trajectory) -> str | None:
    """The screen before the first turn: ``metadata["initial_screen"]`` or the initial state's fence."""
    meta = traj.metadata.get("initial_screen")
    if isinstance(meta, str):
        return meta
    for text in (traj.system.initial_state, traj.system.raw or ""):
        after = fenced_block_after(text or "", "The screen shows:")  # awctl's own (files' texts come first)
        if after is not None:
            return after
        m = SCREEN_FENCE_RE.search(text or "")
        if m:
            return m.group(1)
    return None


_HOME_PATTERNS = (
    re.compile(r"[Ww]orking directory:?\s+`?(/[\w./-]*)`?\s+\(also \$HOME\)"),
    re.compile(r"\bHOME=`?(/[\w./-]*)"),
    re.compile(r"\$HOME\s+(?:is|=)\s+`?(/[\w./-]*)"),
    re.compile(r"[Hh]ome directory(?:\s+is|:)?\s+`?(/[\w./-]*)"),
)
_CWD_PATTERNS = (
    re.compile(r"(?:[Ww]orking directory|[Cc]urrent directory|\bcwd\b)(?:\s+is|:)?\s+`?(/[\w./-]*)"),
)


def _stated(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return _clean_path(m.group(1).rstrip(".`"))
    return None


def _clean_path(path: str) -> str:
    return "/" + posixpath.normpath(path).lstrip("/") if path.startswith("/") else path


def split_observation(text: str) -> tuple[str | None, list[str]]:
    """``(terminus header or None, lines)``: lines right-stripped, trailing blank lines dropped."""
    text = text.replace("\r\n", "\n")
    header = None
    for h in TERMINUS_HEADERS:
        if text.startswith(h + "\n") or text == h:
            header, text = h, text[len(h) + 1:]
            break
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return header, lines


def screen_lines(text: str) -> list[str]:
    """Lines of an observation (right-stripped, trailing blank lines dropped, Terminus header removed)."""
    return split_observation(text)[1]


def last_raw_line(text: str) -> str:
    """The last non-blank line exactly as written (a prompt keeps its trailing space in incremental form)."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-1] if lines else ""


# ── facts established before a turn ──────────────────────────────────────────────────────────────────


@dataclass
class Facts:
    """What the trajectory established before a turn (``None``: not established).

    ``prompt`` is the idle prompt the screen ends at (``None`` when the screen does not end at one);
    ``glue`` is output printed before it on its line (no final newline), ``pending`` text typed after it
    without Enter; ``shell`` is the last shell (non-REPL) prompt seen; ``last_command`` the last command
    line run at a prompt (while no prompt came back, what is still running).
    """

    rows: int | None = None
    cols: int | None = None
    form: str | None = None
    before: list[str] | None = None
    header: str | None = None
    prompt: Prompt | None = None
    glue: str = ""
    pending: str = ""
    shell: Prompt | None = None
    homes: dict[str, str] = field(default_factory=dict)
    tilde: bool | None = None
    cwd: str | None = None  # absolute, or home-relative ("~", "~/sub") while the home is unknown
    files: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    last_command: str | None = None  # the last command line run at a prompt (what may still be running)

    @property
    def prompt_line(self) -> str:
        """The idle prompt's line up to the cursor (what the next typed text is echoed after)."""
        return "" if self.prompt is None else self.glue + self.prompt.text + self.pending

    @property
    def home(self) -> str | None:
        return self.homes.get(user_key(self.shell))

    @property
    def abs_cwd(self) -> str | None:
        """The working directory as an absolute path, when established."""
        cwd = self.cwd
        if cwd is None or cwd.startswith("/"):
            return cwd
        home = self.home
        return None if home is None else (home if cwd == "~" else home.rstrip("/") + cwd[1:])

    def learn_home(self, home: str) -> None:
        self.homes[user_key(self.shell)] = home

    @property
    def at_shell(self) -> bool:
        """The screen ends at an idle shell prompt (not a REPL's)."""
        return self.prompt is not None and not self.prompt.is_repl

    def copy(self) -> Facts:
        return replace(self, before=list(self.before) if self.before is not None else None,
                       homes=dict(self.homes), files=dict(self.files), defined=set(self.defined))


_FORM_STATEMENTS = {
    "screen": re.compile(r"\b(?:whole|entire|full|visible) (?:terminal )?screen\b", re.I),
    "incremental": re.compile(r"\b(?:incremental output|only the new output|only what the terminal (?:added|printed)"
                              r"|output since the (?:last|previous))", re.I),
}


def stated_form(traj: Trajectory) -> str | None:
    """The screen form the trajectory names: ``metadata["screen_form"]``, else a statement in its system
    prompt ("the whole visible screen" / "only the new output"), else None."""
    form = traj.metadata.get("screen_form")
    if form in FORMS:
        return str(form)
    text = "\n".join(t for t in (*traj.system.sections().values(), traj.system.raw or "", traj.system.extra) if t)
    found = [name for name, pattern in _FORM_STATEMENTS.items() if pattern.search(text)]
    return found[0] if len(found) == 1 else None


def user_key(prompt: Prompt | None) -> str:
    """Whose home a prompt's shell has: the user a prompt shows, ``""`` when it shows none."""
    return prompt.user if prompt is not None and prompt.family in ("userhost", "bracket") else ""


def _home_relative_rest(cwd: str, absolute: str) -> str | None:
    """The home directory when ``cwd`` (``~/a/b``) names ``absolute`` (``/root/a/b``), else None."""
    rest = cwd[1:]
    if cwd.startswith("~") and absolute.endswith(rest) and len(absolute) > len(rest) and (
            rest == "" or rest.startswith("/")):
        return absolute[: len(absolute) - len(rest)]
    return None


def initial_facts(traj: Trajectory) -> Facts:
    rows, cols = geometry(traj)
    facts = Facts(rows=rows, cols=cols, form=stated_form(traj))
    first = initial_screen(traj)
    if first is None:
        return facts
    header, lines = split_observation(first)
    facts.before, facts.header = lines, header
    raw = last_raw_line(first)
    prompt = parse_prompt(raw) if lines else None
    text = system_text(traj)
    user = user_key(prompt)
    home = traj.metadata.get("home") if isinstance(traj.metadata.get("home"), str) else _stated(_HOME_PATTERNS, text)
    if home:
        facts.homes[user] = _clean_path(home)
    cwd = traj.metadata.get("cwd") if isinstance(traj.metadata.get("cwd"), str) else _stated(_CWD_PATTERNS, text)
    if cwd:
        facts.cwd = _clean_path(cwd)
    facts.files = stated_files(text)
    _set_prompt(facts, prompt, raw)
    return facts


def _set_prompt(facts: Facts, prompt: Prompt | None, raw_line: str) -> None:
    facts.prompt, facts.pending = prompt, ""
    facts.glue = "" if prompt is None else raw_line.rstrip()[: prompt.offset]
    if prompt is None or prompt.is_repl:
        return
    if facts.shell is not None and facts.shell.shape != prompt.shape:
        facts.cwd = None  # another shell (su, ssh...): its directory is not the old one's
        if facts.shell.user != prompt.user:
            facts.tilde = None
    facts.shell = prompt
    _learn_from_prompt_path(facts, prompt)


def _learn_from_prompt_path(facts: Facts, prompt: Prompt) -> None:
    path = prompt.path
    if path is None or prompt.family != "userhost":
        if prompt.family == "bracket" and path == "~":
            facts.cwd = "~"
        return
    home = facts.home
    if path.startswith("~") and home is None and facts.cwd is not None and facts.cwd.startswith("/"):
        # The directory is known (stated, or followed through cd) and the prompt shows it under ~.
        home = _home_relative_rest(path, facts.cwd)
        if home is not None:
            facts.learn_home(home)
    if path.startswith("~"):
        facts.tilde = True
        facts.cwd = path
    elif path.startswith("/"):
        if home is not None and (path == home or path.startswith(home.rstrip("/") + "/")) and home != "/":
            facts.tilde = False
        facts.cwd = path


class _Replay:
    """The facts after each recorded turn of one trajectory object, shared by every turn's verifiers so a
    trajectory is replayed once (not once per turn)."""

    def __init__(self, traj: Trajectory) -> None:
        self.system, self.metadata = traj.system, traj.metadata
        self.texts: list[tuple[str, str]] = []  # the (action, observation) each step was computed from
        self.facts: list[Facts] = [initial_facts(traj)]


_REPLAYS: dict[int, tuple[weakref.ref[Trajectory], _Replay]] = {}
_LOCK = threading.Lock()


def _replay(traj: Trajectory) -> _Replay:
    key = id(traj)
    found = _REPLAYS.get(key)
    if found is not None and found[0]() is traj and found[1].system is traj.system \
            and found[1].metadata is traj.metadata:
        return found[1]
    replay = _Replay(traj)
    _REPLAYS[key] = (weakref.ref(traj, lambda _ref, key=key: _REPLAYS.pop(key, None)), replay)
    return replay


def facts_before(ctx: TurnContext, index: int | None = None) -> Facts:
    """The facts before turn ``index`` (default: the turn under test), replaying the recorded turns.

    Replays are kept per trajectory object; a turn whose texts changed since (an edited copy, a turn
    replaced) is replayed again from there. The returned :class:`Facts` must not be modified.
    """
    i = ctx.index if index is None else index
    traj = ctx.trajectory
    with _LOCK:
        replay = _replay(traj)
        turns, texts = traj.turns, replay.texts
        valid = 0
        while valid < min(len(texts), i) and texts[valid][0] is turns[valid].action \
                and texts[valid][1] is turns[valid].observation:
            valid += 1
        if valid < min(len(texts), i):
            del texts[valid:]
            del replay.facts[valid + 1:]
        while len(texts) < i:
            turn = turns[len(texts)]
            replay.facts.append(advance(replay.facts[-1], turn.action, turn.observation))
            texts.append((turn.action, turn.observation))
        return replay.facts[i]


# ── reading one turn ─────────────────────────────────────────────────────────────────────────────────


def action_text(action: str) -> tuple[str | None, bool]:
    """``(typed text, Enter pressed)`` for an action of one literal item (printable, at most a final
    Enter); ``(None, ...)`` otherwise."""
    try:
        items = _CODEC.parse(action)
    except CodecError:
        return None, False
    if len(items) != 1 or items[0].is_key or items[0].is_wait:
        return None, any(k.keystrokes.endswith("\n") or k.keystrokes in ("Enter", "C-m", "C-j") for k in items)
    text = items[0].keystrokes
    enter = text.endswith("\n")
    body = text[:-1] if enter else text
    if not body.isprintable():
        return None, enter or "\n" in body
    return body, enter


@dataclass
class TurnView:
    """A turn as seen in an observation. ``echo_at`` is the echo's first line (``None``: not located),
    ``form`` the form it was located in (``screen``, ``echo``, ``line``); ``output`` the lines between the
    echo and the final prompt; ``final`` the idle prompt on the last line (``None``: not at a prompt).

    ``lines`` are the observation's lines; for an observation whose leading whitespace was stripped (the
    judge strips predictions) the blank rows and indentation the layout puts on top are restored, and
    ``shift`` says how many lines were added in front. ``layout`` names what the observation lacks of the
    structure the trajectory established (``None``: nothing found missing), see :func:`layout_problem`.
    """

    typed: str | None
    enter: bool
    command: str | None
    header: str | None
    lines: list[str]
    last_raw: str
    echo: list[str] = field(default_factory=list)
    echo_at: int | None = None
    form: str | None = None
    forms: tuple[str, ...] = ()
    status: dict[str, str] = field(default_factory=dict)
    final: Prompt | None = None
    output: list[str] | None = None
    changes_prompt: bool = False
    shift: int = 0
    layout: str | None = None


def candidate_forms(facts: Facts, header: str | None) -> tuple[str, ...]:
    """Where an observation may put the echo: ``screen``, ``echo`` (incremental, prompt not repeated) or
    ``line`` (incremental with the prompt line)."""
    if header == "Current Terminal Screen:":
        return ("screen",)
    if header == "New Terminal Output:":
        return ("line",)
    if facts.form == "screen":
        return ("screen",)
    if facts.form == "incremental":
        return ("echo", "line")
    return ("screen", "echo", "line")


def echo_chunks(facts: Facts, typed: str) -> list[str]:
    """The screen lines the prompt line shows once ``typed`` is echoed after it (wrapped at ``cols``)."""
    full = facts.prompt_line + typed
    return wrap(full, facts.cols)


def wrap(text: str, cols: int | None) -> list[str]:
    return [text.rstrip()] if cols is None else wrap_line(text, cols)


def locate_echo(facts: Facts, lines: list[str], chunks: list[str], form: str,
                settled: bool = True) -> tuple[int | None, str]:
    """Where ``chunks`` (the echo) sit in ``lines`` for ``form``: ``(index, status)`` with status
    ``found``, ``missing`` (the place is known and the echo is not there) or ``unknown`` (the screen
    scrolled and the echo may have left it). ``settled``: the screen ends at an idle prompt."""
    n = len(chunks)
    if not chunks:
        return None, "unknown"
    if form == "line":
        start = next((i for i, line in enumerate(lines) if line), len(lines))
        return (start, "found") if lines[start: start + n] == chunks else (None, "missing")
    if form == "echo":
        skip = display_width(facts.prompt_line)
        if facts.cols is not None and skip >= facts.cols:
            return None, "unknown"
        first = cut_cells(chunks[0], skip)
        return (0, "found") if lines[:n] == [first, *chunks[1:]] else (None, "missing")
    before = facts.before
    if not before:
        return None, "unknown"
    base = len(before) - 1
    # Nothing scrolled when a settled screen (its prompt on the cursor row) is shorter than the terminal;
    # a screen whose cursor rests on blank rows (a command still running, the shell gone) may have
    # scrolled anyway, unless the old screen still stands at the top.
    if facts.rows is not None and len(lines) < facts.rows and (settled or base >= 1 and lines[:base] == before[:base]):
        return (base, "found") if lines[base: base + n] == chunks else (None, "missing")
    # The screen may have scrolled by k lines: its top is then the old screen from line k on. Whether
    # the echo is gone cannot be told on a screen that may have scrolled it away (the same long output
    # twice leaves the same screen); a shorter one still shows it.
    for k in range(0, base + 1):
        at = base - k
        if lines[:at] == before[k:base] and lines[at: at + n] == chunks:
            return at, "found"
    if facts.rows is not None and not may_have_scrolled_away(lines, facts.rows, settled):
        return None, "missing"
    return None, "unknown"


def may_have_scrolled_away(lines: list[str], rows: int, settled: bool) -> bool:
    """Whether a screen of ``lines`` (trailing blank rows dropped) may have scrolled everything the
    previous screen showed out of sight. A settled screen (prompt on the cursor row) is then full. One
    whose cursor rests lower may end in blank rows the program printed; but a screen whose text fills
    less than half the terminal would need more blank rows printed after its output than text rows shown,
    so it is taken to still show what was on top."""
    return len(lines) >= rows if settled else 2 * len(lines) >= rows


def cut_cells(text: str, cells: int) -> str:
    """``text`` without its first ``cells`` display cells."""
    used = 0
    for i, ch in enumerate(text):
        if used >= cells:
            return text[i:]
        used += display_width(ch)
    return ""


def read_turn(facts: Facts, action: str, observation: str) -> TurnView:
    """Locate the action's echo, output and final prompt in ``observation`` (see :class:`TurnView`)."""
    typed, enter = action_text(action)
    header, lines = split_observation(observation)
    command = facts.pending + typed if typed is not None and enter and facts.prompt is not None else None
    view = TurnView(typed, enter, command, header, lines, last_raw_line(observation))
    view.forms = candidate_forms(facts, header)
    if command is not None:
        view.changes_prompt = _changes_prompt(facts, command)
    else:
        # An interrupt brings the same prompt back; other keys (C-d, typed lines run later) may not.
        view.changes_prompt = not _only_interrupts(action)
    known = facts.prompt or facts.shell
    final = parse_prompt(lines[-1], known, allow_repl=view.changes_prompt) if lines else None
    if lines and command is not None and facts.at_shell:
        # Output without a final newline (echo -n) is glued before the prompt: read the prompt after it.
        out = expected_output(facts, command)
        glue = out.rsplit("\n", 1)[-1] if out else ""
        if glue and lines[-1].startswith(glue):
            final = parse_shell_prompt(lines[-1], len(glue))
    view.final = final
    settled = final is not None
    if typed is not None and facts.prompt is not None and not repaints(typed):
        view.echo = echo_chunks(facts, typed)
        for form in view.forms:
            at, status = locate_echo(facts, lines, view.echo, form, settled=settled)
            view.status[form] = status
            if at is not None and view.echo_at is None:
                view.echo_at, view.form = at, form
        if view.echo_at is None and header is None and _maybe_stripped(observation):
            _restore_echo(facts, view, observation, settled)
    elif (header is None and _maybe_stripped(observation) and _continuity_applies(facts, view, action)
          and screen_continues(facts, lines, settled) is False):
        _restore_screen(facts, view, observation)
    lines = view.lines
    if view.echo_at is not None and enter:
        end = len(lines) - 1 if final is not None else len(lines)
        start = view.echo_at + len(view.echo)
        view.output = lines[start:end] if end >= start else None
    view.layout = layout_problem(facts, view, action)
    return view


def line_number(view: TurnView, index: int) -> int:
    """1-based line number in the observation text of ``view.lines[index]`` (the Terminus header is line
    1 when present; lines restored in front of a stripped observation are not counted)."""
    return max(1, index + 1 - view.shift + (1 if view.header else 0))


def _maybe_stripped(observation: str) -> bool:
    """Whether ``observation`` may have lost leading whitespace (it starts with a visible character)."""
    return bool(observation) and not observation[0].isspace()


def _pad(head: str) -> str:
    """The leading whitespace of ``head``: what stripping an observation that starts with it removes."""
    return head[: len(head) - len(head.lstrip())]


def _heads(facts: Facts, echo: list[str], form: str, enter: bool) -> list[str]:
    """The texts an observation of ``form`` may start with (the screen form: one per scroll offset)."""
    tail = "\n" if enter else ""
    if form == "echo":
        return ["\n".join([cut_cells(echo[0], display_width(facts.prompt_line)), *echo[1:]]) + tail]
    if form == "line":
        return ["\n".join(echo) + tail]
    before = facts.before or []
    return ["\n".join(before[k:len(before) - 1] + echo) + tail for k in range(len(before))]


def _restore_echo(facts: Facts, view: TurnView, observation: str, settled: bool) -> None:
    """Locate the echo in ``observation`` with the leading whitespace its form puts there given back
    (blank top rows, an indented first line), for an observation that was stripped. An echo with nothing
    visible in it is only taken as found when the observation ends at a prompt."""
    for form in view.forms:
        for head in dict.fromkeys(_heads(facts, view.echo, form, view.enter)):
            pad = _pad(head)
            if not pad or pad == head and not settled:
                # An echo that shows nothing visible cannot be told apart from any text once stripped:
                # only an observation that also ends at a prompt reads as the terminal's.
                continue
            lines = split_observation(pad + observation)[1]
            at, _ = locate_echo(facts, lines, view.echo, form, settled=settled)
            if at is not None:
                view.shift = len(lines) - len(view.lines)
                view.lines, view.echo_at, view.form = lines, at, form
                view.status[form] = "found"
                return


# Keys after which a screen keeps what it showed (an interrupt, end of input, Enter, waiting).
_KEEPING_KEYS = frozenset({"", "C-c", "C-d", "C-z", "C-\\", "Enter", "C-m", "C-j", "KPEnter"})


def _keeps_screen(facts: Facts, action: str) -> bool:
    """Whether the action leaves the previous screen's rows in place (until they scroll): literal text or
    keeping keys, sent while nothing that repaints the screen runs."""
    try:
        items = _CODEC.parse(action)
    except CodecError:
        return False
    if any(item.is_key and item.keystrokes not in _KEEPING_KEYS or repaints(item.keystrokes) for item in items):
        return False
    # A program that is still running may be a full-screen one.
    return facts.prompt is not None or facts.last_command is not None and not repaints(facts.last_command)


def screen_continues(facts: Facts, lines: list[str], settled: bool) -> bool | None:
    """Whether a full screen continues the previous one: the previous rows stay on top, or scrolled up by
    some rows, up to the previous cursor row, which may only have been extended (``None``: the screen may
    have scrolled them all away)."""
    before = facts.before
    if not before or facts.rows is None:
        return None
    base = len(before) - 1
    for k in range(base + 1):
        at = base - k
        if at < len(lines) and lines[:at] == before[k:base] and lines[at].startswith(before[base]):
            return True
    return None if may_have_scrolled_away(lines, facts.rows, settled) else False


def layout_problem(facts: Facts, view: TurnView, action: str) -> str | None:
    """What the observation lacks of the layout the trajectory established, naming the line (``None``
    when nothing established is missing):

    * a Terminus header, when the earlier observations carry one;
    * the echo of text typed at a prompt where every screen form puts it (see :func:`locate_echo`);
    * in the full-screen form, the previous screen's rows on top (or scrolled up), after keystrokes that
      leave them in place.

    An empty observation lacks nothing here (the judge scores emptiness itself).
    """
    if not view.lines:
        return None
    if facts.header is not None and view.header is None:
        return (f"line 1: expected a Terminus header ({' or '.join(TERMINUS_HEADERS)}) as on every earlier "
                "observation")
    if view.echo:
        if view.echo_at is None and view.status and all(s == "missing" for s in view.status.values()):
            form = view.forms[0]
            at = {"screen": len(facts.before or [1]) - 1, "echo": 0}.get(
                form, next((i for i, line in enumerate(view.lines) if line), 0))
            want = view.echo[0] if form != "echo" else cut_cells(view.echo[0], display_width(facts.prompt_line))
            got = view.lines[at] if at < len(view.lines) else "<missing>"
            return (f"line {line_number(view, at)}: expected the echo {want[:70]!r} of the typed text where the "
                    f"prompt was, got {got[:70]!r}")
        return None
    if _continuity_applies(facts, view, action) and screen_continues(facts, view.lines, view.final is not None) is False:
        assert facts.before is not None
        return (f"line 1: expected the previous screen's rows on top (from {facts.before[0][:50]!r}, or "
                f"scrolled up), which these keystrokes leave in place, got {view.lines[0][:50]!r}")
    return None


def _continuity_applies(facts: Facts, view: TurnView, action: str) -> bool:
    """Whether a full screen must continue the previous one: keystrokes without an echo to locate, in the
    full-screen form (no Terminus header on either side), while nothing that repaints runs."""
    return (not view.echo and bool(view.lines) and facts.form == "screen" and view.header is None
            and facts.header is None and bool(facts.before) and _keeps_screen(facts, action))


def _restore_screen(facts: Facts, view: TurnView, observation: str) -> None:
    """Give a stripped full screen back the blank top rows and indentation of the previous screen's rows
    it continues (see :func:`screen_continues`)."""
    before, settled = facts.before or [], view.final is not None
    for pad in dict.fromkeys(_pad("\n".join(before[k:])) for k in range(len(before))):
        if not pad:
            continue
        lines = split_observation(pad + observation)[1]
        if screen_continues(facts, lines, settled):
            view.shift, view.lines = len(lines) - len(view.lines), lines
            return


def _only_interrupts(action: str) -> bool:
    try:
        items = _CODEC.parse(action)
    except CodecError:
        return False
    return all(item.keystrokes in ("C-c", "") for item in items)


def starts_repl(part: str) -> bool:
    """Whether a simple command starts an interactive interpreter (``python3``, ``python3 -q``,
    ``sqlite3 db``), not a script (``python3 x.py``, ``python3 -c ...``, ``sqlite3 db 'select 1'``)."""
    try:
        words = shlex.split(part, comments=True)
    except ValueError:
        return True
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in ("sudo", "env", "exec", "time")):
        words = words[1:]
    if not words:
        return False
    repl = repl_started_by(words[0])
    if repl is None:
        return False
    args = words[1:]
    positional = [a for a in args if not a.startswith("-")]
    if repl == "python":
        return "-i" in args or not positional and not any(a in ("-c", "-m") or a.startswith(("-c", "-m"))
                                                          for a in args)
    if repl == "sqlite":
        return len(positional) <= 1
    return True


def _changes_prompt(facts: Facts, command: str) -> bool:
    """Whether running ``command`` may leave a prompt of another shape (or a REPL's)."""
    if facts.prompt is not None and facts.prompt.is_repl:
        return bool(re.fullmatch(r"\s*(exit\(\)|quit\(\)|exit|quit|\.exit|\.quit|\\q|q|end)\s*;?\s*", command))
    if _PROMPT_VARS.search(command) or "\n" in command:
        return True
    for part in _command_parts(command):
        name = command_name(part)
        if name in PROMPT_CHANGERS or name in facts.defined or starts_repl(part):
            return True
    return False


def _command_parts(command: str) -> list[str]:
    """The simple commands of a command line: split at unquoted ``;``, ``&``, ``|``, parentheses,
    braces, backquotes and ``$(``."""
    parts, current, quote, i = [], [], "", 0
    while i < len(command):
        ch = command[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == "\\" and i + 1 < len(command):
            current += [ch, command[i + 1]]
            i += 1
        elif ch in ";&|(){}`" or command.startswith("$(", i):
            parts.append("".join(current))
            current = []
            i += 2 if command.startswith("$(", i) else 1
            continue
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


# ── learning from a recorded turn ────────────────────────────────────────────────────────────────────


def advance(facts: Facts, action: str, observation: str) -> Facts:
    """The facts after a recorded turn (its observation is trusted)."""
    view = read_turn(facts, action, observation)
    new = facts.copy()
    header, lines = view.header, view.lines
    new.before, new.header = lines, header
    # Form evidence: the echo found in exactly one family of forms.
    if new.form is None and view.echo_at is not None and header is None:
        found = {f for f, status in view.status.items() if status == "found"}
        kinds = {"screen" if f == "screen" else "incremental" for f in found}
        if len(kinds) == 1:
            new.form = kinds.pop()
    command = view.command
    if command is not None:
        new.last_command = command
    if command is not None and facts.at_shell:
        _learn_command(new, facts, view, command)
    elif facts.prompt is not None and facts.prompt.is_repl:
        pass  # what a REPL runs cannot move the shell it was started from
    elif view.enter:
        # Something ran that is not one command at a prompt (several items, a key, text typed ahead
        # while a program ran): what it did to the directory and the files is unknown (the new prompt
        # may still show the directory).
        new.cwd = None
        new.files.clear()
    if view.typed is not None and not view.enter and facts.prompt is not None:
        # Typed without Enter: same prompt, the text waits on its line.
        new.pending = facts.pending + view.typed
        return new
    _set_prompt(new, view.final, view.last_raw if view.final is not None else "")
    return new


def _learn_command(new: Facts, facts: Facts, view: TurnView, command: str) -> None:
    assert facts.prompt is not None
    out = view.output
    words = literal_words(command)
    m = _DEFINES.match(command)
    if m:
        new.defined.add(next(g for g in m.groups() if g))
    if words == ["pwd"] and out is not None and len(out) == 1 and out[0].startswith("/"):
        new.cwd = out[0]
        home = _home_relative_rest(facts.cwd, out[0]) if facts.cwd is not None else None
        if home is not None and facts.home is None:
            new.learn_home(home)
    elif re.fullmatch(r"echo\s+(?:\$HOME|\"\$HOME\"|\$\{HOME\}|~)", command.strip()) and out is not None \
            and len(out) == 1 and out[0].startswith("/"):
        new.learn_home(out[0])
    if view.changes_prompt or touches_dirs(command, facts):
        new.cwd = cd_result(facts, command, view)
    new.files = session_files_after(facts, command, view)


# ── directories ──────────────────────────────────────────────────────────────────────────────────────

_SPECIAL = set("$`\\*?[]{}~;|&<>()!\t#")


def literal_words(command: str) -> list[str] | None:
    """Shell words of a command with no expansions, redirections or operators (else None)."""
    if any(ch in _SPECIAL for ch in command) or "'" in command and '"' in command:
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "!", "time",
                       "{", "}", "case", "esac", "in", "select", "function"})


def cd_words(part: str) -> list[str] | None:
    """The words of a simple ``cd`` whose argument has no expansion but a leading ``~`` (else None)."""
    if any(ch in _SPECIAL - {"~"} for ch in part) or "'" in part and '"' in part:
        return None
    try:
        words = shlex.split(part)
    except ValueError:
        return None
    if not words or words[0] != "cd" or len(words) > 2 or any("~" in w[1:] for w in words[1:]):
        return None
    return words


def touches_dirs(command: str, facts: Facts) -> bool:
    """Whether ``command`` may change the working directory: a ``cd`` anywhere, or a builtin that may
    (``pushd``, ``source``, ``.``, ``exec``, ``eval``...) or a session-defined alias/function in command
    position."""
    if re.search(r"\bcd\b", command):
        return True
    for part in _command_parts(command):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            return True
        while words and (words[0] in _KEYWORDS or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        if words and (words[0] in CHANGES_DIR or words[0] in facts.defined):
            return True
    return False


def cd_steps(command: str) -> list[tuple[str, str]] | None:
    """A command as ``[(separator, part)]`` when it is a chain of simple commands joined by ``&&`` or
    ``;`` (the first separator is ``""``); None when it has pipes, subshells, ``||`` or background jobs."""
    if re.search(r"\|\||[|&(){}`]|\$\(", command.replace("&&", "")):
        return None
    steps, sep = [], ""
    for piece in re.split(r"(&&|;)", command):
        if piece in ("&&", ";"):
            sep = piece
            continue
        if not piece.strip():
            if sep and not steps:
                return None
            continue
        steps.append((sep, piece.strip()))
    return steps or None


def cd_result(facts: Facts, command: str, view: TurnView) -> str | None:
    """The working directory after ``command`` when determined (else None): absolute, or home-relative
    (``~/sub``) while the home directory is unknown."""
    target = logical_after(facts, command, view)
    if target is None:
        return None
    base, parts = target
    if base == "~":
        home = facts.home
        if home is None:
            return "~" + "".join("/" + p for p in parts)
        return _clean_path(posixpath.join(home, *parts)) if parts else home
    return "/" + "/".join(parts)


Logical = tuple[str, list[str]]  # ("/" or "~", path parts)


def logical_path(display: str | None, facts: Facts) -> Logical | None:
    """A prompt's path (``~/a``, ``/x/y``) as ``(base, parts)``; None when it is not a full path."""
    if display is None:
        return None
    if display == "~" or display.startswith("~/"):
        return "~", [p for p in display[2:].split("/") if p]
    if display.startswith("/"):
        return "/", [p for p in display.split("/") if p]
    return None


def _apply_cd(current: Logical | None, arg: str, facts: Facts) -> Logical | None:
    if arg in ("", "~") or arg.startswith("~/"):
        start: Logical = ("~", [])
        rest = arg[2:] if arg.startswith("~/") else ""
    elif arg.startswith("/"):
        start, rest = ("/", []), arg
    elif arg == "-" or arg.startswith("~") or current is None:
        return None
    else:
        start, rest = current, arg
    base, parts = start[0], list(start[1])
    for piece in rest.split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            if parts:
                parts.pop()
            elif base == "~":
                home = facts.home
                if home is None:
                    return None
                base, parts = "/", [p for p in home.split("/") if p]
                if parts:
                    parts.pop()
        else:
            parts.append(piece)
    return base, parts


def logical_after(facts: Facts, command: str, view: TurnView) -> Logical | None:
    """Where a chain of ``cd``s and quiet commands leaves the shell, as a logical path (None: unknown).

    Decided only when every ``cd`` certainly ran: the commands before the last ``cd`` are ``cd``s or
    commands that print an error when they fail (``mkdir``, ``cp``...) and none printed one. A lone
    ``cd`` that printed ``cd: ...`` failed and left the shell where it was.
    """
    steps = cd_steps(command)
    out = view.output
    if steps is None or facts.prompt is None or out is None:
        return None
    current = logical_path(facts.prompt.path, facts) if facts.prompt.family == "userhost" else None
    if current is None and facts.cwd is not None:
        current = ("~" if facts.cwd.startswith("~") else "/"), [p for p in facts.cwd.lstrip("~").split("/") if p]
    names = [command_name(part) for _, part in steps]
    if "cd" not in names:
        return None
    for name in names:
        if name in facts.defined or name != "cd" and (
                name in CHANGES_DIR or name in PROMPT_CHANGERS or repl_started_by(name)):
            return None
    if any(re.match(r"^(?:-?bash: )?(?:line \d+: )?cd: ", line) for line in out):
        return current if len(steps) == 1 else None
    last_cd = max(i for i, n in enumerate(names) if n == "cd")
    earlier = set(names[:last_cd])
    if any(n not in SILENT_OK for n in earlier):
        return None
    if any(re.match(rf"^(?:-?bash: )?{re.escape(n)}: ", line) for n in earlier for line in out):
        return None  # a command before a cd failed: in an && chain the cd did not run
    for name, (_, part) in zip(names, steps, strict=True):
        if name != "cd":
            continue
        words = cd_words(part)
        if words is None:
            return None
        current = _apply_cd(current, words[1] if len(words) == 2 else "~", facts)
        if current is None:
            return None
    return current


def path_verdict(target: Logical, shown: str, facts: Facts, family: str) -> tuple[bool | None, str]:
    """Whether a prompt may show ``shown`` for the logical directory ``target``: ``(True/False, expected)``,
    or ``(None, expected)`` when the trajectory does not establish enough (an unknown home directory).

    A ``user@host:path`` prompt is judged in the style it uses: ``~/x`` against the home-relative path,
    an absolute path against the absolute one (whether the style is right is ``prompt_format``'s
    business). A ``[user@host dir]`` prompt shows the last component, or ``~`` at home.
    """
    base, parts = target
    home = facts.home
    abs_path = None
    if base == "/":
        abs_path = "/" + "/".join(parts)
    elif home is not None:
        abs_path = _clean_path(posixpath.join(home, *parts)) if parts else home
    under = base == "~" or abs_path is not None and home is not None and home != "/" and (
        abs_path == home or abs_path.startswith(home.rstrip("/") + "/"))
    tail = None
    if base == "~":
        tail = "~" + ("/" + "/".join(parts) if parts else "")
    elif under and home is not None and abs_path is not None:
        tail = "~" + abs_path[len(home):]
    if family == "bracket":
        if under and tail == "~":
            return shown == "~", "~"
        if base == "/" and home is None and shown == "~":
            return None, "~"
        want = parts[-1] if parts else "/"
        return shown == want, want
    if base == "~" and facts.tilde is True and tail is not None:
        return shown == tail, tail  # this shell abbreviates the home directory: it must show ~
    if shown.startswith("~"):
        if tail is not None:
            return shown == tail, tail
        if home is not None or abs_path is None:
            return False, abs_path or "?"
        rest = shown[1:]
        consistent = abs_path.endswith(rest) and len(abs_path) > len(rest) and (rest == "" or rest.startswith("/"))
        return (None if consistent else False), abs_path
    if abs_path is None:
        return None, tail or "?"
    if under and tail is not None and facts.tilde is True:
        return False, tail
    return shown == abs_path, abs_path


# ── files whose content the session determined ───────────────────────────────────────────────────────

_WRITE_RE = re.compile(r"^(?P<cmd>(?:echo|printf)\s[^<>|;&$`]*?)\s*(?P<op>>>?)\s*(?P<file>[\w./-]+)$")
_PRINTF_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\\\": "\\", "%%": "%"}
_READ_ONLY = {"cd", "ls", "pwd", "echo", "cat", "true", "wc", "head", "tail", "grep", "clear", "date",
              "whoami", "id", "hostname", "uname", "env", "printenv", "type", "which", "stat", "file", "test"}


def echo_output(words: list[str]) -> str | None:
    """What ``echo`` prints for literal words (None for options other than ``-n``)."""
    args = words[1:]
    newline = "\n"
    if args and args[0] == "-n":
        args, newline = args[1:], ""
    if any(a.startswith("-") for a in args[:1]):
        return None
    return " ".join(args) + newline


def written_content(cmd: str) -> str | None:
    """What ``echo ...``/``printf '...'`` writes, when fully determined."""
    if cmd.startswith("printf"):
        m = re.fullmatch(r"printf\s+'([^'%\\]*(?:(?:\\[nt\\]|%%)[^'%\\]*)*)'", cmd)
        if not m:
            return None
        return re.sub(r"\\[nt\\]|%%", lambda e: _PRINTF_ESCAPES[e.group(0)], m.group(1))
    words = literal_words(cmd)
    return None if words is None or words[0] != "echo" else echo_output(words)


def session_files_after(facts: Facts, command: str, view: TurnView) -> dict[str, str]:
    """Files whose whole content is known after ``command`` (absolute path -> content).

    Only ``echo``/``printf`` redirections that printed nothing count; any other command that is not
    plainly read-only forgets everything, so the map is never stale.
    """
    files = dict(facts.files)
    m = _WRITE_RE.match(command)
    if m:
        content = written_content(m.group("cmd").strip())
        cwd = facts.abs_cwd
        if cwd is None:
            files.clear()
            return files
        path = posixpath.normpath(posixpath.join(cwd, m.group("file")))
        if content is None or view.output is None or view.output:
            files.pop(path, None)
        elif m.group("op") == ">>":
            if path in files:
                files[path] += content
        else:
            files[path] = content
        return files
    simple = [c.strip() for c in re.split(r"\|\|?|&&|;", command)]
    if ">" in command or any(command_name(c) not in _READ_ONLY or command_name(c) in facts.defined
                             for c in simple if c):
        files.clear()
    return files


def expected_output(facts: Facts, command: str) -> str | None:
    """The exact output of ``command`` when the trajectory determines it (else None)."""
    words = literal_words(command)
    if not words or words[0] in facts.defined:
        return None
    if words[0] == "echo":
        return echo_output(words)
    if words == ["pwd"]:
        cwd = facts.abs_cwd
        return None if cwd is None else cwd + "\n"
    if words[0] == "cat" and len(words) == 2 and not words[1].startswith("-") and facts.abs_cwd is not None:
        return facts.files.get(posixpath.normpath(posixpath.join(facts.abs_cwd, words[1])))
    return None


def describe_facts(facts: Facts) -> dict[str, Any]:
    """A JSON-able summary (for debugging a verifier's decision)."""
    return {"rows": facts.rows, "cols": facts.cols, "form": facts.form, "home": facts.home, "cwd": facts.cwd,
            "tilde": facts.tilde, "prompt": facts.prompt.text if facts.prompt else None,
            "prompt_line": facts.prompt_line}
