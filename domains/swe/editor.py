"""A real ``str_replace_editor`` (the SWE-agent / Anthropic text-editor tool) with its exact messages.

The editor has two layers:

* pure functions (:func:`view_file_text`, :func:`str_replace_text`, :func:`insert_text`, :func:`undo_text`,
  :func:`make_output`) that turn file contents into the tool's observation text; verifiers call these on
  contents they replayed from a trajectory, so a simulated observation is judged by the same rules;
* :class:`Editor`, which applies commands to real files under a workspace (the host directory a sandbox
  mounts at ``/testbed``) and keeps a per-file history for ``undo_edit``.

Observations are the tool's printed output without the trailing newlines ``print`` adds. Behaviour that
callers may rely on, matching the reference tool: responses longer than :data:`MAX_RESPONSE_LEN` characters
are clipped and followed by :data:`TRUNCATED_MESSAGE`; tabs are expanded in views and in files that
``str_replace``/``insert`` rewrite; edit snippets show :data:`SNIPPET_LINES` lines of context; directory
views list two levels below the path, hidden entries excluded (sorted by name here, so listings are
deterministic where ``find`` would follow directory order).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_RESPONSE_LEN = 16000
SNIPPET_LINES = 4
TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should "
    "retry this tool after you have searched inside the file with `grep -n` in order to find the line "
    "numbers of what you are looking for.</NOTE>"
)
COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")

# Message templates, word for word as the reference tool prints them.
VIEW_HEADER = "Here's the result of running `cat -n` on {descriptor}:\n"
DIR_HEADER = "Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n"
EDITED_PREFIX = "The file {path} has been edited. "
REVIEW_EDIT = "Review the changes and make sure they are as expected. Edit the file again if necessary."
REVIEW_INSERT = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, "
    "etc). Edit the file again if necessary."
)
CREATED = "File created successfully at: {path}"
UNDONE = "Last edit to {path} undone successfully. {output}"
NO_HISTORY = "No edit history found for {path}."
NOT_ABSOLUTE = "The path {path} is not an absolute path, it should start with `/`. Maybe you meant {suggested}?"
NOT_FOUND = "The path {path} does not exist. Please provide a valid path."
EXISTS = "File already exists at: {path}. Cannot overwrite files using command `create`."
IS_DIR = "The path {path} is a directory and only the `view` command can be used on directories"
NO_PARENT = "The parent directory {parent} does not exist. Please create it first."
DIR_RANGE = "The `view_range` parameter is not allowed when `path` points to a directory."
RANGE_SHAPE = "Invalid `view_range`. It should be a list of two integers."
RANGE_START = (
    "Invalid `view_range`: {view_range}. Its first element `{start}` should be within the range of lines "
    "of the file: {bounds}"
)
RANGE_END_BIG = (
    "Invalid `view_range`: {view_range}. Its second element `{end}` should be smaller than the number of "
    "lines in the file: `{n}`"
)
RANGE_END_SMALL = (
    "Invalid `view_range`: {view_range}. Its second element `{end}` should be larger or equal than its "
    "first `{start}`"
)
NO_MATCH = "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
MULTIPLE = (
    "No replacement was performed. Multiple occurrences of old_str `{old}` in lines {lines}. "
    "Please ensure it is unique"
)
SAME = "No replacement was performed, old_str `{old}` is the same as new_str `{new}`."
BAD_INSERT = (
    "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: {bounds}"
)
UNKNOWN_COMMAND = (
    'Unrecognized command {command}. The allowed commands for the str_replace_editor tool are: "view", '
    '"create", "str_replace", "insert", "undo_edit"'
)


@dataclass(frozen=True)
class EditOutcome:
    """What one editor command produced: the observation, success, and the file's new text if it changed."""

    observation: str
    ok: bool
    new_content: str | None = None
    previous_content: str | None = None


# ── pure rendering ────────────────────────────────────────────────────────────────────────────────────


def clip(content: str, limit: int = MAX_RESPONSE_LEN) -> str:
    """``content`` cut to ``limit`` characters plus the clipping marker, or unchanged when it fits."""
    return content if len(content) <= limit else content[:limit] + TRUNCATED_MESSAGE


def make_output(content: str, descriptor: str, init_line: int = 1) -> str:
    """The ``cat -n`` block: header, then each line as a 6-wide right-aligned number, a tab and the text.

    Clipping happens before tabs are expanded and before numbering, as in the reference tool, so the
    marker ends up on the last numbered line. The result ends with one newline.
    """
    content = clip(content).expandtabs()
    numbered = "\n".join(f"{i + init_line:6}\t{line}" for i, line in enumerate(content.split("\n")))
    return VIEW_HEADER.format(descriptor=descriptor) + numbered + "\n"


def _final(text: str) -> str:
    return text.rstrip("\n")


def view_file_text(path: str, content: str, view_range: tuple[int, int] | list[int] | None = None) -> EditOutcome:
    """The observation of ``view`` on a file whose text is ``content``."""
    if view_range is None:
        return EditOutcome(_final(make_output(content, path)), True)
    if len(view_range) != 2 or not all(isinstance(i, int) for i in view_range):
        return EditOutcome(RANGE_SHAPE, False)
    lines = content.split("\n")
    n = len(lines)
    start, end = view_range
    shown = list(view_range)
    if start < 1 or start > n:
        return EditOutcome(RANGE_START.format(view_range=shown, start=start, bounds=[1, n]), False)
    if end > n:
        return EditOutcome(RANGE_END_BIG.format(view_range=shown, end=end, n=n), False)
    if end != -1 and end < start:
        return EditOutcome(RANGE_END_SMALL.format(view_range=shown, end=end, start=start), False)
    if end == -1:
        end = n
    return EditOutcome(_final(make_output("\n".join(lines[start - 1 : end]), path, start)), True)


def occurrence_lines(content: str, old: str) -> list[int]:
    """1-based numbers of the lines containing ``old`` (what the multiple-occurrences error lists)."""
    return [i + 1 for i, line in enumerate(content.split("\n")) if old in line]


def str_replace_text(path: str, content: str, old: str, new: str | None) -> EditOutcome:
    """The observation (and new file text) of ``str_replace`` on a file whose text is ``content``."""
    content = content.expandtabs()
    old = old.expandtabs()
    new = new.expandtabs() if new is not None else ""
    count = content.count(old)
    if count == 0:
        return EditOutcome(NO_MATCH.format(old=old, path=path), False)
    if count > 1:
        return EditOutcome(MULTIPLE.format(old=old, lines=occurrence_lines(content, old)), False)
    if new == old:
        return EditOutcome(SAME.format(old=old, new=new), False)
    updated = content.replace(old, new)
    replaced_at = content.split(old)[0].count("\n")  # 0-based line of the match start
    # As the reference tool: SNIPPET_LINES lines either side of the new text, 0-based slice [start, end].
    start = max(0, replaced_at - SNIPPET_LINES)
    end = replaced_at + SNIPPET_LINES + new.count("\n")
    snippet = "\n".join(updated.split("\n")[start : end + 1])
    text = EDITED_PREFIX.format(path=path) + make_output(snippet, f"a snippet of {path}", start + 1) + REVIEW_EDIT
    return EditOutcome(text, True, new_content=updated, previous_content=content)


def insert_text(path: str, content: str, insert_line: int, new: str) -> EditOutcome:
    """The observation (and new file text) of ``insert`` after line ``insert_line`` (0 = top)."""
    content = content.expandtabs()
    new = new.expandtabs()
    lines = content.split("\n")
    n = len(lines)
    if insert_line < 0 or insert_line > n:
        return EditOutcome(BAD_INSERT.format(line=insert_line, bounds=[0, n]), False)
    new_lines = new.split("\n")
    updated = "\n".join(lines[:insert_line] + new_lines + lines[insert_line:])
    snippet = "\n".join(
        lines[max(0, insert_line - SNIPPET_LINES) : insert_line]
        + new_lines
        + lines[insert_line : insert_line + SNIPPET_LINES]
    )
    first = max(1, insert_line - SNIPPET_LINES + 1)
    text = (
        EDITED_PREFIX.format(path=path) + make_output(snippet, "a snippet of the edited file", first) + REVIEW_INSERT
    )
    return EditOutcome(text, True, new_content=updated, previous_content=content)


def undo_text(path: str, previous: str | None) -> EditOutcome:
    """The observation of ``undo_edit`` restoring ``previous`` (``None``: nothing to undo)."""
    if previous is None:
        return EditOutcome(NO_HISTORY.format(path=path), False)
    return EditOutcome(_final(UNDONE.format(path=path, output=make_output(previous, path))), True, new_content=previous)


def directory_listing_text(path: str, entries: list[str]) -> str:
    """The directory view: the header, then ``path`` and every listed entry, one per line."""
    listing = "\n".join([path, *entries]) + "\n"
    return _final(DIR_HEADER.format(path=path) + listing)


def _history_key(path: str) -> str:
    # The reference tool files history under str(Path(path)): "//" and "/./" collapse, ".." stays.
    return str(PurePosixPath(path))


class _IoFailure(Exception):
    """A read or write failed; the message is the observation."""


def _os_error(exc: OSError, path: str) -> str:
    """``str(exc)`` as Python prints it, with the agent's path in place of the host's."""
    if exc.errno is None:
        return type(exc).__name__
    return f"[Errno {exc.errno}] {exc.strerror}: '{path}'"


# ── the editor on real files ─────────────────────────────────────────────────────────────────────────


@dataclass
class Editor:
    """Applies editor commands to files of a workspace mounted at ``mount_point`` inside a sandbox.

    Paths in commands and messages are the agent's paths (``/testbed/pkg/x.py``); they map to
    ``workspace / "pkg/x.py"`` on the host. A path outside the mount, or one whose symlinks resolve
    outside the workspace, is reported as not existing: the host-side editor never touches other files.
    ``history`` maps agent paths to earlier texts, newest last, for ``undo_edit``.
    """

    workspace: Path
    mount_point: str = "/testbed"
    cwd: Callable[[], str] = field(default=lambda: "/testbed")
    history: dict[str, list[str]] = field(default_factory=dict)

    def host_path(self, path: str) -> Path | None:
        """The host file for an absolute agent path, or ``None`` when it lies outside the workspace."""
        posix = PurePosixPath(os.path.normpath(path))
        mount = PurePosixPath(self.mount_point)
        try:
            rel = posix.relative_to(mount)
        except ValueError:
            return None
        root = self.workspace.resolve()
        host = root.joinpath(*rel.parts)
        try:
            host.resolve().relative_to(root)
        except ValueError:
            return None  # a symlink pointing out of the workspace
        return host

    def run(
        self,
        command: str,
        path: str,
        *,
        file_text: str | None = None,
        view_range: list[int] | tuple[int, int] | None = None,
        old_str: str | None = None,
        new_str: str | None = None,
        insert_line: int | None = None,
    ) -> EditOutcome:
        """Run one command and return its outcome; files change only on success.

        An OS error while reading or writing (permission denied, disk full) gives the tool's
        ``Ran into ... while trying to write to PATH`` message, naming the agent's path, never the host's.
        """
        try:
            return self._run(command, path, file_text, view_range, old_str, new_str, insert_line)
        except _IoFailure as failure:
            return EditOutcome(str(failure), False)

    def _run(
        self,
        command: str,
        path: str,
        file_text: str | None,
        view_range: list[int] | tuple[int, int] | None,
        old_str: str | None,
        new_str: str | None,
        insert_line: int | None,
    ) -> EditOutcome:
        if command not in COMMANDS:
            return EditOutcome(UNKNOWN_COMMAND.format(command=command), False)
        if not path.startswith("/"):
            suggested = str(PurePosixPath(self.cwd()) / path)
            return EditOutcome(NOT_ABSOLUTE.format(path=path, suggested=suggested), False)
        host = self.host_path(path)
        exists = host is not None and host.exists()
        if not exists and command != "create":
            return EditOutcome(NOT_FOUND.format(path=path), False)
        if exists and command == "create":
            return EditOutcome(EXISTS.format(path=path), False)
        if exists and host is not None and host.is_dir() and command != "view":
            return EditOutcome(IS_DIR.format(path=path), False)
        if host is None:  # create outside the workspace: its parent cannot exist for us
            return EditOutcome(NO_PARENT.format(parent=str(PurePosixPath(path).parent)), False)

        if command == "view":
            if host.is_dir():
                if view_range:
                    return EditOutcome(DIR_RANGE, False)
                return EditOutcome(directory_listing_text(path, self._listing(path, host)), True)
            return view_file_text(path, self._read(host, path), view_range)
        if command == "create":
            if not host.parent.is_dir():
                return EditOutcome(NO_PARENT.format(parent=str(PurePosixPath(path).parent)), False)
            text = file_text if file_text is not None else ""
            self._write(host, path, text)
            self.history.setdefault(_history_key(path), []).append(text)
            return EditOutcome(CREATED.format(path=path), True, new_content=text)
        if command == "str_replace":
            outcome = str_replace_text(path, self._read(host, path), old_str or "", new_str)
        elif command == "insert":
            outcome = insert_text(path, self._read(host, path), insert_line or 0, new_str or "")
        else:  # undo_edit
            stack = self.history.get(_history_key(path)) or []
            outcome = undo_text(path, stack.pop() if stack else None)
            if outcome.ok and outcome.new_content is not None:
                self._write(host, path, outcome.new_content)
            return outcome
        if outcome.ok and outcome.new_content is not None and outcome.previous_content is not None:
            self._write(host, path, outcome.new_content)
            self.history.setdefault(_history_key(path), []).append(outcome.previous_content)
        return outcome

    @staticmethod
    def _read(host: Path, path: str) -> str:
        # Universal newlines as Path.read_text gives them; latin-1 as the reference tool's fallback.
        try:
            try:
                return host.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                return host.read_text(encoding="latin-1")
        except OSError as exc:
            raise _IoFailure(f"Ran into {_os_error(exc, path)} while trying to read {path}") from None

    @staticmethod
    def _write(host: Path, path: str, text: str) -> None:
        try:
            host.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise _IoFailure(f"Ran into {_os_error(exc, path)} while trying to write to {path}") from None

    def _listing(self, path: str, host: Path, max_depth: int = 2) -> list[str]:
        base = path.rstrip("/") or "/"
        out: list[str] = []

        def walk(directory: Path, shown: str, depth: int) -> None:
            try:
                children = sorted(directory.iterdir(), key=lambda p: p.name)
            except OSError:
                return
            for child in children:
                if child.name.startswith("."):
                    continue  # find -not -path '*/.*' drops hidden entries and everything under them
                child_shown = f"{shown.rstrip('/')}/{child.name}"
                out.append(child_shown)
                if depth < max_depth and child.is_dir() and not child.is_symlink():
                    walk(child, child_shown, depth + 1)

        walk(host, base, 1)
        return out
