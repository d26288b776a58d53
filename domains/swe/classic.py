"""SWE-agent's classic interface: its commands and the text they print.

SWE-agent (0.x "default" config and the 1.x ``tools/windowed*``, ``tools/search``, ``tools/edit_replace``
bundles) gives the agent shell-like commands besides bash::

    open "<path>" [<line_number>]      goto <line_number>      scroll_up      scroll_down
    create <filename>                  find_file <file_name> [<dir>]
    search_dir <search_term> [<dir>]   search_file <search_term> [<file>]
    edit <start_line>:<end_line>       (replacement text on the following lines, then ``end_of_edit``)
    edit <search> <replace> [<replace-all>]      insert <text> [--line <line>]      append <text>

They print a *window* of the open file::

    [File: /repo/src/mod.py (1997 lines total)]
    (1458 more lines above)
    1459:            self.WEEKS,
    ...
    (439 more lines below)

and searches as ``Found N matches for "term" in DIR:`` lists. In a conversation history every observation
also ends with the session's state line ``(Open file: <path>)\\n(Current directory: <dir>)\\nbash-$``.

This module parses the command line forms (:func:`parse_command`), the function-call forms
(:func:`from_args`) and those printed texts (:func:`parse_windows`, :func:`parse_search`,
:func:`split_state`). Observations keep their original line endings; parsers accept ``\\r\\n``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from awctl.errors import CodecError

# command -> its arguments, in canonical order (names as SWE-agent's tool schemas spell them)
COMMANDS: dict[str, tuple[str, ...]] = {
    "open": ("path", "line_number"),
    "goto": ("line_number",),
    "scroll_up": (),
    "scroll_down": (),
    "create": ("filename",),
    "find_file": ("file_name", "dir"),
    "search_dir": ("search_term", "dir"),
    "search_file": ("search_term", "file"),
    "edit": ("start_line", "end_line", "replacement_text", "search", "replace", "replace-all", "text"),
    "insert": ("line", "text"),
    "append": ("text",),
}
_INT_ARGS = frozenset({"line_number", "start_line", "end_line", "line"})
_REQUIRED: dict[str, tuple[str, ...]] = {
    "open": ("path",),
    "goto": ("line_number",),
    "create": ("filename",),
    "find_file": ("file_name",),
    "search_dir": ("search_term",),
    "search_file": ("search_term",),
    "insert": ("text",),
    "append": ("text",),
}
_EDIT_FORMS = (
    frozenset({"start_line", "end_line", "replacement_text"}),
    frozenset({"search", "replace"}),
    frozenset({"search", "replace", "replace-all"}),
    frozenset({"text"}),
)


@dataclass(frozen=True)
class ClassicCall:
    """One classic-interface command. ``args`` are (name, value) pairs in :data:`COMMANDS` order."""

    command: str
    args: tuple[tuple[str, Any], ...] = ()
    source: str | None = field(default=None, compare=False, repr=False)  # the text it was parsed from

    def get(self, name: str, default: Any = None) -> Any:
        return dict(self.args).get(name, default)

    def to_obj(self) -> dict[str, Any]:
        return {"tool": self.command, **dict(self.args)}


def make_call(command: str, args: dict[str, Any], where: str = "action") -> ClassicCall:
    """A validated :class:`ClassicCall` from a command name and its arguments (JSON or command line)."""
    if command not in COMMANDS:
        raise CodecError(f"unknown SWE-agent command {command!r}", where=where)
    allowed = COMMANDS[command]
    # SWE-agent's edit_replace tool spells the flag both ways across versions.
    args = {("replace-all" if k == "replace_all" else k): v for k, v in args.items() if v is not None}
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise CodecError(f"`{command}` does not take {', '.join(unknown)}", where=f"{where}.{unknown[0]}")
    for key in _REQUIRED.get(command, ()):
        if key not in args:
            raise CodecError(f"`{command}` needs `{key}`", where=f"{where}.{key}")
    if command == "edit" and frozenset(args) not in _EDIT_FORMS:
        raise CodecError(
            "`edit` takes start_line, end_line and replacement_text, or search and replace [replace-all], or text",
            where=where,
        )
    out: list[tuple[str, Any]] = []
    for key in allowed:
        if key not in args:
            continue
        value = args[key]
        if key in _INT_ARGS:
            if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise CodecError(f"`{key}` must be an integer", where=f"{where}.{key}")
        elif key == "replace-all":
            if isinstance(value, str) and value.lower() in ("true", "false"):
                value = value.lower() == "true"
            if not isinstance(value, bool):
                raise CodecError("`replace-all` must be a boolean", where=f"{where}.replace-all")
        elif not isinstance(value, str):
            raise CodecError(f"`{key}` must be a string", where=f"{where}.{key}")
        out.append((key, value))
    return ClassicCall(command, tuple(out))


def is_command_line(text: str) -> bool:
    """Whether ``text`` starts with a classic command word (so it is not a bash command line)."""
    head = text.strip().split(None, 1)[0] if text.strip() else ""
    return head in COMMANDS


_RANGE = re.compile(r"^(-?\d+):(-?\d+)$")


def parse_command(text: str) -> ClassicCall:
    """The classic command in SWE-agent's command-line form (as ``.traj`` ``action`` fields hold it)."""
    stripped = text.strip("\n").strip()
    first, _, rest = stripped.partition("\n")
    words_head = first.split(None, 1)
    command = words_head[0]
    head_args = words_head[1] if len(words_head) > 1 else ""
    if command not in COMMANDS:
        raise CodecError(f"unknown SWE-agent command {command!r}", where="action")
    # Multi-line forms: `edit N:M` (or `insert [N]`, `append`) on the first line, the text on the next lines,
    # then a line `end_of_<command>`. Anything else is one shell-quoted command line (quotes may span lines).
    terminator = f"end_of_{command}"
    body_lines = rest.split("\n")
    range_edit = command == "edit" and _RANGE.match(head_args.strip())
    if rest and (range_edit or (body_lines[-1].strip() == terminator and command in ("insert", "append"))):
        body = "\n".join(body_lines[:-1]) if body_lines[-1].strip() == terminator else rest
        if range_edit:
            return make_call(
                "edit", {"start_line": range_edit.group(1), "end_line": range_edit.group(2), "replacement_text": body}
            )
        args: dict[str, Any] = {"text": body}
        if command == "insert" and head_args.strip():
            args["line"] = head_args.strip()
        elif head_args.strip():
            raise CodecError(f"`{command}` with a text block takes no other argument", where="action")
        return make_call(command, args)
    if range_edit:
        return make_call(
            "edit", {"start_line": range_edit.group(1), "end_line": range_edit.group(2), "replacement_text": ""}
        )
    try:
        words = shlex.split(head_args if not rest else head_args + "\n" + rest)
    except ValueError as exc:
        raise CodecError(f"cannot split the command line ({exc})", where="action") from None
    names = COMMANDS[command]
    if command == "edit":
        if len(words) == 1:
            return make_call("edit", {"text": words[0]})
        if len(words) in (2, 3):
            args = {"search": words[0], "replace": words[1]}
            if len(words) == 3:
                args["replace-all"] = words[2]
            return make_call("edit", args)
        raise CodecError("`edit` takes <start_line>:<end_line> plus text, or <search> <replace>", where="action")
    if command == "insert":
        args = {}
        if "--line" in words:
            i = words.index("--line")
            if i + 1 >= len(words):
                raise CodecError("--line needs a value", where="action")
            args["line"] = words[i + 1]
            words = words[:i] + words[i + 2 :]
        if len(words) != 1:
            raise CodecError("`insert` takes one text argument", where="action")
        args["text"] = words[0]
        return make_call("insert", args)
    if command == "append":
        if len(words) != 1:
            raise CodecError("`append` takes one text argument", where="action")
        return make_call("append", {"text": words[0]})
    if len(words) > len(names):
        raise CodecError(f"`{command}` takes at most {len(names)} argument(s)", where="action")
    return make_call(command, dict(zip(names, words, strict=False)))


def render_command(call: ClassicCall) -> str:
    """SWE-agent's command-line form of ``call`` (the inverse of :func:`parse_command`)."""
    a = dict(call.args)
    if call.command == "edit" and "start_line" in a:
        return f"edit {a['start_line']}:{a['end_line']}\n{a['replacement_text']}\nend_of_edit"
    if call.command == "insert" and "\n" in a["text"]:
        return f"insert {a.get('line', '')}".rstrip() + f"\n{a['text']}\nend_of_insert"
    words = [call.command]
    for key, value in call.args:
        if key == "line" and call.command == "insert":
            continue
        words.append(str(value) if isinstance(value, int) and not isinstance(value, bool) else shlex.quote(str(value)))
    if call.command == "insert" and "line" in a:
        words += ["--line", str(a["line"])]
    return " ".join(words)


# ── the session state line ───────────────────────────────────────────────────────────────────────────

_STATE = re.compile(r"\n?\(Open file: (?P<file>[^\n]*)\)\r?\n\(Current directory: (?P<cwd>[^\n]*)\)\r?\n(?:bash-\$)?\s*$")


@dataclass(frozen=True)
class SessionState:
    """The state line SWE-agent appends to each observation in a conversation."""

    open_file: str | None  # None for "n/a"
    cwd: str


def split_state(text: str) -> tuple[str, SessionState | None]:
    """``(observation without the state line, state)``; ``state`` is None when there is no state line."""
    m = _STATE.search(text)
    if not m:
        return text, None
    f = m.group("file").strip()
    return text[: m.start()], SessionState(None if f in ("n/a", "") else f, m.group("cwd").strip())


# ── windows ──────────────────────────────────────────────────────────────────────────────────────────

_HEADER = re.compile(r"^\[File: (?P<path>.+) \((?P<total>\d+) lines total\)\]$")
_ABOVE = re.compile(r"^\((?P<n>\d+) more lines above\)$")
_BELOW = re.compile(r"^\((?P<n>\d+) more lines below\)$")
_LINE = re.compile(r"^(?P<n>\d+):(?P<text>.*)$")


@dataclass
class Window:
    """One printed window: the header's path and total, the above/below counts and the numbered lines.

    ``start``/``end`` are indexes into the observation's lines (``\\r\\n`` folded) where the window begins and
    ends; ``bad`` lists lines inside the window that are neither numbered nor a marker.
    """

    path: str
    total: int
    above: int | None = None
    below: int | None = None
    lines: list[tuple[int, str]] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    start: int = 0
    end: int = 0

    @property
    def first(self) -> int | None:
        return self.lines[0][0] if self.lines else None

    @property
    def last(self) -> int | None:
        return self.lines[-1][0] if self.lines else None


def observation_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def parse_windows(text: str) -> list[Window]:
    """Every window printed in ``text`` (a failed lint edit prints two), in order."""
    lines = observation_lines(text)
    out: list[Window] = []
    i = 0
    while i < len(lines):
        m = _HEADER.match(lines[i])
        if not m:
            i += 1
            continue
        win = Window(m.group("path"), int(m.group("total")), start=i)
        j = i + 1
        if j < len(lines) and (a := _ABOVE.match(lines[j])):
            win.above = int(a.group("n"))
            j += 1
        while j < len(lines):
            line = lines[j]
            if (b := _BELOW.match(line)):
                win.below = int(b.group("n"))
                j += 1
                break
            if (n := _LINE.match(line)):
                number = int(n.group("n"))
                # Past the file's end a numbered-looking line is text after the window (a message).
                if number > win.total and win.lines:
                    break
                win.lines.append((number, n.group("text")))
                j += 1
                continue
            break
        win.end = j
        out.append(win)
        i = j
    return out


def window_problems(win: Window) -> list[str]:
    """What is wrong inside one window by itself (numbering, above/below counts, total)."""
    problems: list[str] = []
    if not win.lines:
        return [] if win.total == 0 else [f"the window of {win.path} shows no numbered line"]
    numbers = [n for n, _ in win.lines]
    for k in range(1, len(numbers)):
        if numbers[k] != numbers[k - 1] + 1:
            problems.append(f"window line numbers jump from {numbers[k - 1]} to {numbers[k]}")
            break
    first, last = numbers[0], numbers[-1]
    if win.above is not None and win.above != first - 1:
        problems.append(f"({win.above} more lines above) but the window starts at line {first}")
    if win.above is None and first != 1:
        problems.append(f"the window starts at line {first} without a '(N more lines above)' line")
    if win.below is not None and win.below != win.total - last:
        problems.append(
            f"({win.below} more lines below) but the window ends at line {last} of {win.total}"
        )
    if win.below is None and last != win.total and not problems:
        problems.append(f"the window ends at line {last} of {win.total} without a '(N more lines below)' line")
    return problems


# SWE-agent's own messages in place of a window or a search result: usage lines, errors, warnings.
_INTERFACE_MESSAGE = re.compile(
    r"^(?:Usage: |Error: |Warning: |No file open|No replacement was performed|Your proposed edit|More than \d+ "
    r"|Invalid |Please )|\b(?:not found|does not exist|is a directory|must be|No such file)\b",
    re.M,
)


def is_interface_message(text: str) -> bool:
    """Whether ``text`` (state line removed) is one of the messages SWE-agent's commands print instead of
    a window or a search result (usage, error and warning lines)."""
    return _INTERFACE_MESSAGE.search(text) is not None


# ── searches ─────────────────────────────────────────────────────────────────────────────────────────

_FOUND = re.compile(r'^Found (?P<n>\d+) matches for "(?P<term>.*)" in (?P<where>.+):$')
_NONE = re.compile(r'^No matches found for "(?P<term>.*)" in (?P<where>.+)$')
_END = re.compile(r'^End of matches for "(?P<term>.*)" in (?P<where>.+)$')
_DIR_ROW = re.compile(r"^(?P<path>.+) \((?P<k>\d+) matches\)$")
_FILE_ROW = re.compile(r"^Line (?P<n>\d+):(?P<text>.*)$")


@dataclass
class SearchResult:
    """A parsed ``find_file``/``search_dir``/``search_file`` output."""

    count: int
    term: str
    where: str
    rows: list[str]
    end: tuple[str, str] | None = None  # the "End of matches" line's term and place
    found: bool = True


def parse_search(text: str) -> SearchResult | None:
    """The search output in ``text`` (state line already removed), or None when it is not one."""
    lines = [ln for ln in observation_lines(text.strip("\r\n"))]
    if not lines:
        return None
    if (m := _NONE.match(lines[0])) and len(lines) == 1:
        return SearchResult(0, m.group("term"), m.group("where"), [], found=False)
    m = _FOUND.match(lines[0])
    if not m:
        return None
    rows = lines[1:]
    end = None
    if rows and (e := _END.match(rows[-1])):
        end = (e.group("term"), e.group("where"))
        rows = rows[:-1]
    return SearchResult(int(m.group("n")), m.group("term"), m.group("where"), rows, end)


def dir_row(row: str) -> tuple[str, int] | None:
    m = _DIR_ROW.match(row)
    return (m.group("path"), int(m.group("k"))) if m else None


def file_row(row: str) -> tuple[int, str] | None:
    m = _FILE_ROW.match(row)
    return (int(m.group("n")), m.group("text")) if m else None


# ── edit messages ────────────────────────────────────────────────────────────────────────────────────

EDIT_APPLIED = ("File updated.", "Replaced ", "Text replaced.")
EDIT_REJECTED = "Your changes have NOT been applied."
CREATE_EXISTS = re.compile(r"^Error: File '(?P<name>.+)' already exists\.")
