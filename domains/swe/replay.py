"""Reading editor observations back, and replaying a trajectory's file system from its history.

:func:`classify` says which editor message an observation is (for the action that produced it) and
pulls out its numbered ``cat -n`` block. :func:`replay` walks the turns before the one under test and
keeps what they prove about the files: full texts (from ``create``, unclipped full views, edits applied
to known texts, undos), paths known to exist or not, and the editor's undo stacks. A bash command that
may write files forgets every text and path fact (it could have changed anything); read-only commands
(``cat``, ``grep``, ``ls``, ``git diff``...) keep them. Verifiers compare a turn's observation with what
the editor would print for the replayed state, so a check only fires where the history determines the
answer — never on guesses.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from awctl.errors import CodecError
from awctl.trajectory import Trajectory

from . import editor as ed
from .classic import split_state
from .codec import BashCall, EditorCall, SweAction, SweActionCodec

_CODEC = SweActionCodec()
# SWE-agent's default config abbreviates long Python files (a tree-sitter "filemap") instead of clipping.
FILEMAP_NOTE = "<NOTE>This file is too large to display entirely. Showing abbreviated version."
_LINT_NOTE = "\n\n<NOTE>Your edits have been applied, but the linter has found syntax errors.</NOTE>"


def parse_action(text: str) -> SweAction | None:
    try:
        return _CODEC.parse(text)
    except CodecError:
        return None


# How harnesses wrap the tool's text in a conversation: SWE-agent's "OBSERVATION:" template, OpenHands'
# "ERROR:" prefix for a tool error.
_WRAPPERS = ("OBSERVATION:\n", "ERROR:\n")


def clean(observation: str) -> str:
    """The editor's own text of an observation: the harness's wrapping (``OBSERVATION:``/``ERROR:`` prefix,
    SWE-agent's state line), ``\r\n`` line ends, trailing newlines and the linter epilogue removed."""
    text, _ = split_state(observation)
    text = text.replace("\r\n", "\n")
    for prefix in _WRAPPERS:
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.rstrip("\n")
    cut = text.find(_LINT_NOTE)
    return text[:cut] if cut >= 0 else text


def normalize(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


# ── numbered blocks ──────────────────────────────────────────────────────────────────────────────────

_NUMBERED = re.compile(r"^( *)(\d+)(?:\t(.*))?$")


@dataclass
class Numbered:
    """A ``cat -n`` block: (line number, text) pairs; ``bad`` lists lines that are not numbered right."""

    lines: list[tuple[int, str]]
    bad: list[str]
    clipped: bool

    @property
    def start(self) -> int | None:
        return self.lines[0][0] if self.lines else None

    def text(self) -> str:
        """The shown file text (clipping marker removed), lines joined with newlines."""
        body = "\n".join(t for _, t in self.lines)
        return body[: body.rfind(ed.TRUNCATED_MESSAGE)] if self.clipped else body


def parse_numbered(block: str) -> Numbered:
    lines: list[tuple[int, str]] = []
    bad: list[str] = []
    for raw in block.split("\n"):
        m = _NUMBERED.match(raw)
        if not m:
            bad.append(raw)
            continue
        number = int(m.group(2))
        # The number is right-aligned in a 6-wide field (wider numbers just grow).
        if len(m.group(1)) + len(m.group(2)) != max(6, len(m.group(2))):
            bad.append(raw)
        lines.append((number, m.group(3) or ""))
    clipped = bool(lines) and lines[-1][1].endswith(ed.TRUNCATED_MESSAGE)
    return Numbered(lines, bad, clipped)


# ── classification ───────────────────────────────────────────────────────────────────────────────────


@dataclass
class Classified:
    """Which editor message an observation is. ``kind`` is ``None`` when it matches no template."""

    kind: str | None
    numbered: Numbered | None = None
    detail: str = ""


def _view_header(descriptor: str) -> str:
    return ed.VIEW_HEADER.format(descriptor=descriptor)


def classify(call: EditorCall, observation: str) -> Classified:
    """Match ``observation`` against every message the editor can print for ``call``."""
    obs = clean(observation)
    path = call.path
    exact: dict[str, str] = {
        "not_found": ed.NOT_FOUND.format(path=path),
        "is_dir": ed.IS_DIR.format(path=path),
    }
    # OpenHands' editor words the same outcomes as "Invalid `<param>` parameter: <value>. <hint>".
    alternatives: dict[str, list[str]] = {
        "not_found": [_oh("path", path, ed.NOT_FOUND.format(path=path))],
        "is_dir": [_oh("path", path, ed.IS_DIR.format(path=path) + ".")],
    }
    patterns: dict[str, str] = {}
    num = r"-?\d+"
    if call.command == "view":
        header = _view_header(path)
        if obs.startswith(header):
            body = obs[len(header) :]
            note = OH_RANGE_NOTE.search(body)  # OpenHands shows a shortened range with a NOTE after it
            return Classified("view_file", parse_numbered(body[: note.start()] if note else body))
        if obs.startswith(ed.DIR_HEADER.format(path=path)):
            listing = obs[len(ed.DIR_HEADER.format(path=path)) :]
            hidden = _OH_HIDDEN_NOTE.search(listing)
            listing = listing[: hidden.start()] if hidden else listing
            # OpenHands marks directories with a trailing slash.
            listing = "\n".join(e[:-1] if e.endswith("/") and len(e) > 1 else e for e in listing.split("\n"))
            return Classified("view_dir", detail=listing)
        exact |= {"dir_range": ed.DIR_RANGE, "range_shape": ed.RANGE_SHAPE}
        if call.view_range is not None:
            vr_text = str(list(call.view_range))
            alternatives["dir_range"] = [_oh("view_range", vr_text, ed.DIR_RANGE)]
            alternatives["range_shape"] = [_oh("view_range", vr_text, "It should be a list of two integers.")]
        if call.view_range is not None:
            vr = re.escape(str(list(call.view_range)))
            s, e = call.view_range
            patterns["range_start"] = (
                rf"Invalid `view_range`: {vr}\. Its first element `{s}` should be within the range of lines of "
                rf"the file: \[1, (?P<n>\d+)\]"
            )
            patterns["range_end_big"] = (
                rf"Invalid `view_range`: {vr}\. Its second element `{e}` should be smaller than the number of "
                rf"lines in the file: `(?P<n>\d+)`"
            )
            exact["range_end_small"] = ed.RANGE_END_SMALL.format(view_range=list(call.view_range), end=e, start=s)
            patterns["range_start_oh"] = (
                rf"Invalid `view_range` parameter: {vr}\. Its first element `{s}` should be within the range of "
                rf"lines of the file: \[1, (?P<n>\d+)\]\."
            )
            alternatives["range_end_small"] = [_oh(
                "view_range", str(list(call.view_range)),
                f"Its second element `{e}` should be greater than or equal to the first element `{s}`.",
            )]
    elif call.command == "create":
        exact |= {
            "created": ed.CREATED.format(path=path),
            "exists": ed.EXISTS.format(path=path),
            "no_parent": ed.NO_PARENT.format(parent=path.rsplit("/", 1)[0] or "/"),
        }
        alternatives["exists"] = [_oh("path", path, ed.EXISTS.format(path=path))]
    elif call.command == "str_replace":
        old = (call.old_str or "").expandtabs()
        new = (call.new_str or "").expandtabs()
        prefix = ed.EDITED_PREFIX.format(path=path) + _view_header(f"a snippet of {path}")
        if obs.startswith(prefix) and obs.endswith("\n" + ed.REVIEW_EDIT):
            return Classified("edited", parse_numbered(obs[len(prefix) : -len(ed.REVIEW_EDIT) - 1]))
        exact |= {"no_match": ed.NO_MATCH.format(old=old, path=path), "same": ed.SAME.format(old=old, new=new)}
        # OpenHands does not expand tabs in the strings it quotes.
        alternatives["no_match"] = [ed.NO_MATCH.format(old=call.old_str or "", path=path)]
        alternatives["same"] = [_oh(
            "new_str", call.new_str or "", "No replacement was performed. `new_str` and `old_str` must be different."
        )]
        patterns["multiple"] = (
            re.escape(ed.MULTIPLE.format(old=old, lines="@@")).replace("@@", r"(?P<lines>\[[\d, ]*\])") + r"\.?"
        )
    elif call.command == "insert":
        prefix = ed.EDITED_PREFIX.format(path=path) + _view_header("a snippet of the edited file")
        if obs.startswith(prefix) and obs.endswith("\n" + ed.REVIEW_INSERT):
            return Classified("inserted", parse_numbered(obs[len(prefix) : -len(ed.REVIEW_INSERT) - 1]))
        patterns["bad_insert"] = (
            rf"Invalid `insert_line` parameter: {call.insert_line}\. It should be within the range of "
            rf"(?:lines of the file|allowed values): \[0, (?P<n>{num})\]"
        )
    elif call.command == "undo_edit":
        prefix = ed.UNDONE.format(path=path, output="") + _view_header(path)
        if obs.startswith(prefix):
            return Classified("undone", parse_numbered(obs[len(prefix) :]))
        exact["no_history"] = ed.NO_HISTORY.format(path=path)
    if call.command == "view" and obs.startswith(FILEMAP_NOTE):
        return Classified("view_filemap")
    patterns["io_error"] = rf"Ran into .+ while trying to (?:write to|read) {re.escape(path)}"
    norm = normalize(obs)
    for kind, text in exact.items():
        if norm == normalize(text) or any(norm == normalize(alt) for alt in alternatives.get(kind, ())):
            return Classified(kind)
    for kind, pattern in patterns.items():
        m = re.fullmatch(pattern, obs, re.DOTALL if kind == "io_error" else 0)
        if m:
            return Classified(kind.removesuffix("_oh"), detail=m.group(1) if m.groups() else "")
    return Classified(None)


def _oh(parameter: str, value: str, hint: str) -> str:
    return f"Invalid `{parameter}` parameter: {value}. {hint}"


OH_RANGE_NOTE = re.compile(r"\n+NOTE: We only show up to (\d+) since there's only \d+ lines in this file\s*$")
_OH_HIDDEN_NOTE = re.compile(
    r"\n+\d+ hidden files/directories in this directory are excluded\. You can use 'ls -la .+' to see them\.\s*$"
)


# ── replay ───────────────────────────────────────────────────────────────────────────────────────────

_READ_ONLY = frozenset(
    {"cat", "ls", "grep", "egrep", "fgrep", "rg", "head", "tail", "wc", "pwd", "echo", "printf", "nl", "sort",
     "uniq", "tree", "which", "file", "stat", "du", "diff", "true", "false", "cd", "awk", "cut", "tr", "less",
     "more", "env", "date", "whoami", "basename", "dirname", "realpath", "readlink", "test", "["}
)
_GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "grep", "branch", "rev-parse", "ls-files", "blame"})
_REDIRECT = re.compile(r"(?<![<>&\d])(\d?)>>?\s*(?!&)(\S+)")


def bash_may_write(command: str) -> bool:
    """Whether a command line might change files (conservative: unknown programs may)."""
    for m in _REDIRECT.finditer(command):
        if m.group(2) != "/dev/null":
            return True
    for segment in re.split(r"&&|\|\||;|\||\n", command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            return True
        words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if not words:
            continue
        prog = words[0].rsplit("/", 1)[-1]
        if prog == "git":
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if sub not in _GIT_READ_ONLY:
                return True
        elif prog == "sed":
            if any(w.startswith("-i") or w.startswith("--in-place") for w in words[1:]):
                return True
        elif prog == "find":
            if any(w in ("-delete", "-exec", "-execdir", "-fprint", "-ok") for w in words[1:]):
                return True
        elif prog not in _READ_ONLY:
            return True
    return False


def _universal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class FsKnowledge:
    """What the history proves about the files. Texts are as a later ``view`` would show them."""

    files: dict[str, str] = field(default_factory=dict)
    exists: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    # The editor's undo stacks (they live in the editor, so bash never clears them); None = unknown text.
    undo: dict[str, list[str | None]] = field(default_factory=dict)
    # Whose str_replace_editor the trajectory shows: "sweagent" (SWE-agent/Anthropic) or "openhands".
    flavor: str = "sweagent"

    def forget_files(self) -> None:
        self.files.clear()
        self.exists.clear()
        self.absent.clear()
        self.dirs.clear()

    def learn_view(self, path: str, numbered: Numbered) -> None:
        if numbered.clipped or numbered.bad or not numbered.lines or numbered.start != 1:
            self.files.pop(path, None)
            return
        # An undo shows the restored text as written; later reads see it with universal newlines.
        text = _universal(numbered.text())
        # A view shows tabs expanded; a text longer than the clip limit could clip differently unexpanded.
        if len(text) <= ed.MAX_RESPONSE_LEN:
            self.files[path] = text
        else:
            self.files.pop(path, None)

    def mark_exists(self, path: str) -> None:
        self.exists.add(path)
        self.absent.discard(path)


def file_key(path: str) -> str:
    """The key of a path in :class:`FsKnowledge` (``/testbed/./a.py`` and ``/testbed/a.py`` are one file)."""
    return posixpath.normpath(path)


def undo_key_for(path: str) -> str:
    """The key the editor files undo history under (``pathlib`` normalisation, as the reference tool)."""
    return str(PurePosixPath(path))


def expected_outcome(call: EditorCall, know: FsKnowledge) -> ed.EditOutcome | None:
    """What the editor prints for ``call`` given ``know``, or ``None`` when the history does not say."""
    path = call.path
    key, undo_key = file_key(path), undo_key_for(path)
    if call.command == "create":
        if key in know.exists or key in know.files:
            return ed.EditOutcome(ed.EXISTS.format(path=path), False)
        return None
    if key in know.absent:
        return ed.EditOutcome(ed.NOT_FOUND.format(path=path), False)
    if call.command == "undo_edit":
        stack = know.undo.get(undo_key, [])
        if key not in know.exists and key not in know.files:
            return None
        if not stack:
            return ed.undo_text(path, None)
        top = stack[-1]
        return None if top is None else ed.undo_text(path, top)
    content = know.files.get(key)
    if content is None or key in know.dirs:
        return None
    if call.command == "view":
        if know.flavor == "openhands" and call.view_range is not None:
            return openhands_range_view(path, content, call.view_range)
        return ed.view_file_text(path, content, call.view_range)
    if call.command == "str_replace":
        return ed.str_replace_text(path, content, call.old_str or "", call.new_str)
    if call.command == "insert":
        return ed.insert_text(path, content, call.insert_line or 0, call.new_str or "")
    return None


def apply_turn(know: FsKnowledge, action: SweAction | None, observation: str) -> None:
    """Update ``know`` with one recorded turn (the recorded observation is taken as the truth)."""
    if action is None:
        return
    if isinstance(action, BashCall):
        if bash_may_write(action.command):
            know.forget_files()
        return
    if not isinstance(action, EditorCall):
        return
    path = action.path
    key, undo_key = file_key(path), undo_key_for(path)
    expected = expected_outcome(action, know)
    got = classify(action, observation)
    agrees = expected is not None and outcome_problem(action, expected, observation) is None
    kind = got.kind
    if kind == "not_found":
        know.absent.add(key)
        know.exists.discard(key)
        know.files.pop(key, None)
        return
    if kind in ("exists", "is_dir", "dir_range"):
        know.mark_exists(key)
        if kind != "exists":
            know.dirs.add(key)
        return
    if kind == "io_error":
        # The file could not be read or written; an undo's history entry is popped before its write.
        know.files.pop(key, None)
        if action.command == "undo_edit" and know.undo.get(undo_key):
            know.undo[undo_key].pop()
        return
    if kind == "view_filemap":
        know.mark_exists(key)
        return
    if kind == "view_dir":
        know.mark_exists(key)
        know.dirs.add(key)
        for entry in got.detail.split("\n")[1:]:
            if entry.strip():
                know.mark_exists(file_key(entry.strip()))
        return
    if kind == "view_file":
        know.mark_exists(key)
        if action.view_range is None and got.numbered is not None:
            know.learn_view(key, got.numbered)
        return
    if kind == "created":
        # A path reported missing earlier may name this new file through a symlinked folder.
        know.absent.clear()
        know.mark_exists(key)
        text = _universal(action.file_text or "")
        know.files[key] = text
        know.undo.setdefault(undo_key, []).append(action.file_text or "")
        return
    if kind in ("edited", "inserted"):
        know.mark_exists(key)
        if agrees and expected is not None and expected.new_content is not None:
            know.files[key] = _universal(expected.new_content)  # as the next read will see it
            know.undo.setdefault(undo_key, []).append(expected.previous_content)
        else:
            # The edit happened but the text it replaced is unknown (or disagrees with the replay).
            know.files.pop(key, None)
            know.undo.setdefault(undo_key, []).append(None)
        return
    if kind == "undone":
        know.mark_exists(key)
        stack = know.undo.get(undo_key, [])
        if stack:
            stack.pop()
        if got.numbered is not None:
            know.learn_view(key, got.numbered)
        return
    if kind == "no_history":
        know.mark_exists(key)
        know.undo[undo_key] = []
        return
    if kind in ("no_match", "multiple", "same", "bad_insert", "range_start", "range_end_big", "range_end_small"):
        know.mark_exists(key)
        return
    # Unknown message: the file may or may not have changed.
    know.files.pop(key, None)


_OH_SIGNS = (
    "ERROR:\nInvalid `",
    "[Command finished with exit code",
    "hidden files/directories in this directory are excluded",
    "NOTE: We only show up to",
)


def editor_flavor(trajectory: Trajectory, index: int) -> str:
    """``"openhands"`` when the system prompt or an earlier observation shows OpenHands' tools, else
    ``"sweagent"`` (the two editors differ in ranged views past the end of a file)."""
    system = trajectory.system.render()
    if "[Command finished with exit code" in system or 'start with "ERROR:"' in system:
        return "openhands"
    if any(sign in turn.observation for turn in trajectory.turns[:index] for sign in _OH_SIGNS):
        return "openhands"
    return "sweagent"


def openhands_range_view(path: str, content: str, view_range: tuple[int, int]) -> ed.EditOutcome | None:
    """OpenHands' ranged view: lines are counted as ``wc -l`` would, an end past the file is shortened with a
    NOTE; its range errors are not replayed (None)."""
    lines = content.split("\n")
    count = len(lines) - 1 if content.endswith("\n") else len(lines)
    start, end = view_range
    if not 1 <= start <= count or (end != -1 and end < start):
        return None
    note = ""
    if end == -1 or end > count:
        if end != -1:
            note = f"\n\nNOTE: We only show up to {count} since there's only {count} lines in this file"
        end = count
    body = "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate("\n".join(lines[start - 1 : end]).expandtabs().split("\n")))
    return ed.EditOutcome(ed.VIEW_HEADER.format(descriptor=path) + body + note, True)


def replay(trajectory: Trajectory, index: int) -> FsKnowledge:
    """The file-system knowledge after turns ``0..index-1`` of ``trajectory``."""
    know = FsKnowledge(flavor=editor_flavor(trajectory, index))
    for turn in trajectory.turns[:index]:
        apply_turn(know, parse_action(turn.action), turn.observation)
    return know


# ── comparing an observation with the replayed outcome ───────────────────────────────────────────────


def first_difference(expected: str, got: str) -> str:
    """``line N: expected '...', got '...'`` for the first differing line of two texts."""
    exp_lines, got_lines = expected.split("\n"), got.split("\n")
    for i, (a, b) in enumerate(zip(exp_lines, got_lines, strict=False)):
        if a != b:
            return f"line {i + 1}: expected {a[:120]!r}, got {b[:120]!r}"
    return f"expected {len(exp_lines)} lines, got {len(got_lines)}"


# Editors differ in how much context an edit snippet shows (SWE-agent: 4 lines either side; OpenHands: 3
# before, 4 after; older versions one more or less), so a snippet is judged by what it shows, not its window.
SNIPPET_SLACK = ed.SNIPPET_LINES + 1


def snippet_problem(call: EditorCall, expected: ed.EditOutcome, numbered: Numbered) -> str | None:
    """What is wrong with an edit snippet given the replayed outcome, or None when it fits: every shown line
    is the edited file's line of that number, and the lines around the new text are shown."""
    if expected.new_content is None or expected.previous_content is None:
        return None
    new_lines = expected.new_content.expandtabs().split("\n")
    if call.command == "str_replace":
        old = (call.old_str or "").expandtabs()
        at = expected.previous_content.expandtabs().split(old)[0].count("\n") + 1
        region = (at, at + (call.new_str or "").expandtabs().count("\n"))
    else:
        at = (call.insert_line or 0) + 1
        region = (at, at + (call.new_str or "").count("\n"))
    for number, text in numbered.lines:
        if not 1 <= number <= len(new_lines):
            return f"snippet line {number} is past the end of the edited file ({len(new_lines)} lines)"
        if numbered.clipped and (number, text) == numbered.lines[-1]:
            continue
        if text.expandtabs().rstrip() != new_lines[number - 1].rstrip():
            return (
                f"snippet line {number}: expected {new_lines[number - 1][:120]!r} (the replayed file after the "
                f"edit), got {text[:120]!r}"
            )
    if numbered.clipped or not numbered.lines:
        return None
    first, last = numbered.lines[0][0], numbered.lines[-1][0]
    end = min(region[1], len(new_lines))
    if first > region[0] or last < end:
        return f"the snippet shows lines {first}-{last}, not the new text at lines {region[0]}-{end}"
    if region[0] - first > SNIPPET_SLACK or last - end > SNIPPET_SLACK:
        return f"the snippet shows lines {first}-{last}, more context than the editor prints around {region[0]}-{end}"
    return None


def outcome_problem(call: EditorCall, expected: ed.EditOutcome, observation: str) -> str | None:
    """How ``observation`` differs from the replayed ``expected`` outcome, or None when it agrees."""
    want, got = normalize(clean(expected.observation)), normalize(clean(observation))
    if want == got:
        return None
    if expected.new_content is not None and call.command in ("str_replace", "insert"):
        got_kind = classify(call, observation)
        want_kind = classify(call, expected.observation).kind
        if got_kind.kind == want_kind and got_kind.numbered is not None:
            return snippet_problem(call, expected, got_kind.numbered)
    return first_difference(want, got)
