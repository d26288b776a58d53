"""SWE actions (editor, bash, submit) and observations: parse, render, normalise.

``render`` gives back the text an unchanged :meth:`SweActionCodec.parse` result was read from (byte for
byte); :meth:`SweActionCodec.canonical` and ``render`` of any other action give the canonical text, one
JSON object on one line, keys in a fixed order::

    {"tool": "str_replace_editor", "command": "view", "path": "/testbed/x.py", "view_range": [1, 20]}
    {"tool": "str_replace_editor", "command": "str_replace", "path": "/testbed/x.py", "old_str": "a", "new_str": "b"}
    {"tool": "bash", "command": "cd /testbed && python3 -m unittest"}
    {"tool": "submit"}

:meth:`SweActionCodec.parse` also accepts the shapes other tools write: a ```json fenced block,
function-call JSON (``{"name": ..., "arguments": {...} | "<json>"}``), OpenAI ``{"function": {...}}`` and
Anthropic ``{"type": "tool_use", "input": {...}}`` calls (also as a one-element list), tool-name aliases
(``str_replace_based_edit_tool``, ``execute_bash``...), and SWE-agent's command line form
``str_replace_editor view /testbed/x.py --view_range 1 20``.

Bash observations carry the command's output, then one trailer line (see :func:`render_bash`)::

    <output, trailing newlines removed>
    [exit_code: 0] [cwd: /testbed]

A command killed by its time limit ends its trailer with `` [timed_out]``. Editor observations are the
editor's text as :mod:`awctl_domains.swe.editor` produces it; ``submit`` observations are the ``git diff``.
An unchanged parsed observation renders back to its text byte for byte.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

from .classic import COMMANDS as CLASSIC_COMMANDS
from .classic import ClassicCall, make_call, parse_command
from .editor import COMMANDS

EDITOR_TOOL = "str_replace_editor"
EDITOR_ALIASES = frozenset({EDITOR_TOOL, "str_replace_based_edit_tool", "text_editor", "edit_file_tool"})
BASH_ALIASES = frozenset({"bash", "execute_bash", "shell", "run_shell", "terminal"})
SUBMIT_ALIASES = frozenset({"submit", "finish", "submit_patch"})
_FIELD_ORDER = ("path", "file_text", "view_range", "old_str", "new_str", "insert_line")
_REQUIRED: dict[str, tuple[str, ...]] = {
    "view": (),
    "create": ("file_text",),
    "str_replace": ("old_str",),
    "insert": ("insert_line", "new_str"),
    "undo_edit": (),
}
_ALLOWED: dict[str, frozenset[str]] = {
    "view": frozenset({"view_range"}),
    "create": frozenset({"file_text"}),
    "str_replace": frozenset({"old_str", "new_str"}),
    "insert": frozenset({"insert_line", "new_str"}),
    "undo_edit": frozenset(),
}
_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class EditorCall:
    """One ``str_replace_editor`` command. ``path`` is absolute; unused fields are ``None``."""

    command: str
    path: str
    file_text: str | None = None
    view_range: tuple[int, int] | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    source: str | None = field(default=None, compare=False, repr=False)  # the text it was parsed from

    def kwargs(self) -> dict[str, Any]:
        return {
            "file_text": self.file_text,
            "view_range": list(self.view_range) if self.view_range is not None else None,
            "old_str": self.old_str,
            "new_str": self.new_str,
            "insert_line": self.insert_line,
        }


@dataclass(frozen=True)
class BashCall:
    """One shell command line run in the persistent shell."""

    command: str
    source: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SubmitCall:
    """End the episode; the observation is the repository's diff."""

    source: str | None = field(default=None, compare=False, repr=False)


SweAction = EditorCall | BashCall | SubmitCall | ClassicCall


def action_family(action: SweAction) -> str:
    """Editor command name (``view``, ``str_replace``...), the bash program name, or ``submit``."""
    if isinstance(action, EditorCall):
        return action.command
    if isinstance(action, SubmitCall):
        return "submit"
    if isinstance(action, ClassicCall):
        return action.command
    return bash_program(action.command)


def bash_program(command: str) -> str:
    """The first program a command line runs, skipping ``cd X &&`` prefixes and ``VAR=value`` settings."""
    programs = []
    for segment in re.split(r"&&|\|\||;|\|", command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            words = segment.split()
        words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if words:
            programs.append(words[0].rsplit("/", 1)[-1])
    useful = [p for p in programs if p != "cd"]
    return (useful or programs or ["bash"])[0]


class SweActionCodec(ActionCodec):
    """Parses every accepted action shape into :data:`SweAction`; renders the text an unchanged parse result
    came from, else the canonical JSON."""

    def parse(self, text: str) -> SweAction:
        return replace(self._parse(text), source=text)

    def _parse(self, text: str) -> SweAction:
        stripped = text.strip()
        if not stripped:
            raise CodecError("empty action", where="action", hint='write e.g. {"tool": "bash", "command": "ls"}')
        fence = _FENCE.match(stripped)
        if fence:
            stripped = fence.group(1).strip()
        if stripped.startswith(("{", "[")):
            try:
                obj = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise CodecError(
                    f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", where="action"
                ) from None
            return self.from_obj(obj)
        head = stripped.split(None, 1)[0]
        if head in EDITOR_ALIASES:
            return _parse_cli(stripped)
        if head in SUBMIT_ALIASES and stripped == head:
            return SubmitCall()
        if head in CLASSIC_COMMANDS:
            return parse_command(stripped)
        raise CodecError(
            "not a tool call: expected a JSON object or `str_replace_editor <command> <path> ...`",
            where="action",
            hint='wrap shell commands as {"tool": "bash", "command": "..."}',
        )

    def from_obj(self, obj: Any, where: str = "action") -> SweAction:
        """The action of an already-decoded JSON value in any accepted shape."""
        if isinstance(obj, list):
            if len(obj) != 1:
                raise CodecError(f"expected exactly one tool call, got {len(obj)}", where=where)
            return self.from_obj(obj[0], f"{where}[0]")
        if not isinstance(obj, dict):
            raise CodecError(f"expected a JSON object, got {type(obj).__name__}", where=where)
        if "function" in obj and isinstance(obj["function"], dict):  # OpenAI tool_calls entry
            return self.from_obj(obj["function"], f"{where}.function")
        name = obj.get("tool", obj.get("name"))
        args: Any = obj
        if "tool" not in obj and "name" in obj:
            args = obj.get("arguments", obj.get("input", obj.get("parameters", {})))
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args.strip() else {}
                except json.JSONDecodeError as exc:
                    raise CodecError(f"arguments are not valid JSON ({exc.msg})", where=f"{where}.arguments") from None
            if not isinstance(args, dict):
                raise CodecError("arguments must be a JSON object", where=f"{where}.arguments")
        elif isinstance(obj.get("arguments"), dict):  # {"tool": ..., "arguments": {...}}
            args = obj["arguments"]
        if not isinstance(name, str) or not name:
            raise CodecError(
                'missing tool name ("tool" or "name")', where=where, hint="use str_replace_editor, bash or submit"
            )
        if name in BASH_ALIASES:
            command = args.get("command", args.get("cmd"))
            if not isinstance(command, str) or not command.strip():
                raise CodecError("bash needs a non-empty string `command`", where=f"{where}.command")
            return BashCall(command)
        if name in SUBMIT_ALIASES:
            return SubmitCall()
        if name in EDITOR_ALIASES:
            return _editor_from_args(args, where)
        if name in CLASSIC_COMMANDS:
            return make_call(name, {k: v for k, v in args.items() if k not in ("tool", "name")}, where)
        raise CodecError(
            f"unknown tool {name!r}",
            where=f"{where}.tool",
            hint="use str_replace_editor, bash, submit or a SWE-agent command (open, goto, edit, ...)",
        )

    def render(self, action: SweAction) -> str:
        """The text ``action`` was parsed from while it still says the same (lossless), else the canonical
        text (:meth:`render_canonical`)."""
        if action.source is not None:
            try:
                if self._parse(action.source) == action:
                    return action.source
            except CodecError:
                pass
        return self.render_canonical(action)

    def canonical(self, text: str) -> str:
        """The canonical text of an action written in any accepted shape; raises :class:`CodecError` like
        :meth:`parse`."""
        return self.render_canonical(self._parse(text))

    def render_canonical(self, action: SweAction) -> str:
        """One JSON object on one line, keys in a fixed order (see the module docstring)."""
        if isinstance(action, BashCall):
            return json.dumps({"tool": "bash", "command": action.command}, ensure_ascii=False)
        if isinstance(action, SubmitCall):
            return json.dumps({"tool": "submit"})
        if isinstance(action, ClassicCall):
            return json.dumps(action.to_obj(), ensure_ascii=False)
        out: dict[str, Any] = {"tool": EDITOR_TOOL, "command": action.command}
        values = {"path": action.path, **action.kwargs()}
        for key in _FIELD_ORDER:
            if values[key] is not None:
                out[key] = values[key]
        return json.dumps(out, ensure_ascii=False)

    def schema(self) -> str:
        return SCHEMA

    def family(self, text: str) -> str:
        try:
            return action_family(self.parse(text))
        except CodecError:
            return "invalid"


def _editor_from_args(args: dict[str, Any], where: str) -> EditorCall:
    command = args.get("command")
    if command not in COMMANDS:
        raise CodecError(
            f"editor command must be one of {', '.join(COMMANDS)}, got {command!r}", where=f"{where}.command"
        )
    path = args.get("path")
    if not isinstance(path, str) or not path:
        raise CodecError("missing `path`", where=f"{where}.path", hint="give an absolute path such as /testbed/x.py")
    if not path.startswith("/"):
        raise CodecError(
            f"`path` must be absolute, got {path!r}", where=f"{where}.path", hint=f"did you mean /testbed/{path}?"
        )
    for key in _REQUIRED[command]:
        if args.get(key) is None:
            raise CodecError(f"`{command}` needs `{key}`", where=f"{where}.{key}")
    extra = {k for k in _FIELD_ORDER if k != "path" and args.get(k) is not None} - _ALLOWED[command]
    if extra:
        raise CodecError(f"`{command}` does not take {', '.join(sorted(extra))}", where=f"{where}.{min(extra)}")
    view_range = args.get("view_range")
    if view_range is not None:
        if (
            not isinstance(view_range, list | tuple)
            or len(view_range) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in view_range)
        ):
            raise CodecError("`view_range` must be two integers [start, end]", where=f"{where}.view_range")
        view_range = (view_range[0], view_range[1])
    insert_line = args.get("insert_line")
    if insert_line is not None and (not isinstance(insert_line, int) or isinstance(insert_line, bool)):
        raise CodecError("`insert_line` must be an integer", where=f"{where}.insert_line")
    for key in ("file_text", "old_str", "new_str"):
        if args.get(key) is not None and not isinstance(args[key], str):
            raise CodecError(f"`{key}` must be a string", where=f"{where}.{key}")
    return EditorCall(
        command=command,
        path=path,
        file_text=args.get("file_text"),
        view_range=view_range,
        old_str=args.get("old_str"),
        new_str=args.get("new_str"),
        insert_line=insert_line,
    )


def _parse_cli(text: str) -> EditorCall:
    """SWE-agent's rendering of a tool call: ``str_replace_editor <command> <path> --flag value ...``."""
    try:
        words = shlex.split(text, posix=True)
    except ValueError as exc:
        raise CodecError(f"cannot split the command line ({exc})", where="action") from None
    if len(words) < 3:
        raise CodecError("expected `str_replace_editor <command> <path> ...`", where="action")
    args: dict[str, Any] = {"command": words[1], "path": words[2]}
    i = 3
    while i < len(words):
        flag = words[i]
        if not flag.startswith("--"):
            raise CodecError(f"unexpected argument {flag!r}", where=f"action.argv[{i}]")
        key = flag[2:]
        if key == "view_range":
            try:
                args[key] = [int(words[i + 1]), int(words[i + 2])]
            except (IndexError, ValueError):
                raise CodecError("--view_range needs two integers", where=f"action.argv[{i}]") from None
            i += 3
            continue
        if i + 1 >= len(words):
            raise CodecError(f"{flag} needs a value", where=f"action.argv[{i}]")
        value: Any = words[i + 1]
        if key == "insert_line":
            try:
                value = int(value)
            except ValueError:
                raise CodecError("--insert_line needs an integer", where=f"action.argv[{i}]") from None
        elif key not in _FIELD_ORDER:
            raise CodecError(f"unknown option {flag}", where=f"action.argv[{i}]")
        args[key] = value
        i += 2
    return _editor_from_args(args, "action")


SCHEMA = """\
Each action is one JSON object (a tool call). Tools:
- str_replace_editor: view, create and edit files. Fields: "command" (view | create | str_replace | insert |
  undo_edit), "path" (absolute, e.g. /testbed/pkg/module.py), and per command:
  view: optional "view_range" [start, end] (1-based, end -1 = to the end; files only);
  create: "file_text"; str_replace: "old_str" (must occur exactly once), "new_str";
  insert: "insert_line" (insert after this line; 0 = top), "new_str"; undo_edit: nothing else.
  Example: {"tool": "str_replace_editor", "command": "view", "path": "/testbed/setup.py", "view_range": [1, 20]}
- bash: run a command line in a persistent shell (state such as the working directory carries over).
  Example: {"tool": "bash", "command": "cd /testbed && python3 -m unittest -q"}
- submit: finish the task; the observation is the repository diff. Example: {"tool": "submit"}
The repository is at /testbed. Bash observations end with a line "[exit_code: N] [cwd: DIR]"."""


# ── observations ─────────────────────────────────────────────────────────────────────────────────────

BASH_TRAILER = re.compile(r"^\[exit_code: (-?\d+)\] \[cwd: (/[^\]\n]*)\]( \[timed_out\])?$")


@dataclass(frozen=True)
class SweObservation:
    """A parsed observation. ``kind`` is ``bash`` (with output, exit code, cwd) or ``text`` (editor, diff)."""

    kind: str
    text: str
    exit_code: int | None = None
    cwd: str | None = None
    timed_out: bool = False
    source: str | None = field(default=None, compare=False, repr=False)  # the text it was parsed from


def render_bash(output: str, exit_code: int, cwd: str, timed_out: bool = False) -> str:
    """The bash observation: output without trailing newlines, then the trailer line."""
    trailer = f"[exit_code: {exit_code}] [cwd: {cwd}]" + (" [timed_out]" if timed_out else "")
    body = output.rstrip("\n")
    return f"{body}\n{trailer}" if body else trailer


def parse_bash(text: str) -> SweObservation | None:
    """The bash fields of an observation whose last line is a trailer, else ``None``."""
    body, _, last = text.rstrip("\n").rpartition("\n")
    if not _:
        body, last = "", text.rstrip("\n")
    match = BASH_TRAILER.match(last)
    if not match:
        return None
    return SweObservation("bash", body, int(match.group(1)), match.group(2), bool(match.group(3)))


class SweObservationCodec(ObservationCodec):
    """Bash observations split into output/exit code/cwd; everything else is kept as text. An unchanged
    parse result renders back to its text byte for byte (blank lines before the trailer included)."""

    def parse(self, text: str) -> SweObservation:
        if not isinstance(text, str):
            raise CodecError(f"observation must be text, got {type(text).__name__}", where="observation")
        return replace(parse_bash(text) or SweObservation("text", text), source=text)

    def render(self, observation: SweObservation) -> str:
        source = observation.source
        if source is not None and (parse_bash(source) or SweObservation("text", source)) == observation:
            return source
        if observation.kind == "bash":
            if observation.exit_code is None or observation.cwd is None:
                raise CodecError("a bash observation needs exit_code and cwd", where="observation")
            return render_bash(observation.text, observation.exit_code, observation.cwd, observation.timed_out)
        return observation.text

    def normalize(self, text: str) -> str:
        # Trailing spaces vary between recorders (an empty numbered line ends in a tab), so they go; so does
        # leading whitespace (a blank first line, an indented first row): the judge strips predictions.
        return "\n".join(line.rstrip() for line in text.strip().splitlines())
