"""Write the swe foreign corpus: SWE-agent ``.traj`` files (both layouts) and AgentWorldBench rows.

No SWE-agent or OpenHands can run here, so this script plays their part *without awctl*: every bash
command runs for real (``bash`` in a scratch git repository made from the files below, outputs as the
shell printed them, the repository's temporary path shown as the session's root), and the tools'
own outputs — SWE-agent's file viewer windows, searches, edit messages, state lines; the
``str_replace_editor`` messages of SWE-agent and OpenHands; OpenHands' bash footer — are rendered by this
script's own code in those programs' published formats. Nothing here imports awctl, so the corpus is an
independent check of awctl's verifiers.

Run from the repository root: ``python tests/foreign/swe/record.py`` (rewrites the data files next to it).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

# ── the scratch repository ───────────────────────────────────────────────────────────────────────────


def _convert_py() -> str:
    head = '''"""Temperature conversions."""

from __future__ import annotations

ABSOLUTE_ZERO_C = -273.15
'''
    units = ["celsius", "fahrenheit", "kelvin", "rankine", "delisle", "newton", "reaumur", "romer", "planck",
             "leiden", "dalton", "wedgwood", "hooke", "fowler"]
    body = []
    for i, unit in enumerate(units):
        body.append(
            f'''

def {unit}_scale_name() -> str:
    """The display name of the {unit} scale."""
    return "{unit.title()}"


def {unit}_index() -> int:
    return {i}
'''
        )
    tail = '''

def to_fahrenheit(celsius: float) -> int:
    """Degrees Fahrenheit for ``celsius``, rounded to the nearest degree."""
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError("below absolute zero")
    return int(celsius * 9 / 5 + 32)


def to_celsius(fahrenheit: float) -> int:
    """Degrees Celsius for ``fahrenheit``, rounded to the nearest degree."""
    return round((fahrenheit - 32) * 5 / 9)
'''
    return head + "".join(body) + tail


REPO: dict[str, str] = {
    "README.md": "# tempconv\n\nTemperature conversions with rounding.\n",
    "tempconv/__init__.py": "from .convert import to_celsius, to_fahrenheit\n\n__all__ = [\"to_celsius\", \"to_fahrenheit\"]\n",
    "tempconv/convert.py": _convert_py(),
    "tests/__init__.py": "",
    "tests/test_convert.py": (
        "import unittest\n\nfrom tempconv import to_celsius, to_fahrenheit\n\n\n"
        "class ConvertTest(unittest.TestCase):\n"
        "    def test_fahrenheit_rounds_to_nearest(self):\n        self.assertEqual(to_fahrenheit(36.6), 98)\n\n"
        "    def test_celsius(self):\n        self.assertEqual(to_celsius(212), 100)\n\n\n"
        "if __name__ == \"__main__\":\n    unittest.main()\n"
    ),
    ".gitignore": "__pycache__/\n",
}
ISSUE = (
    "to_fahrenheit truncates instead of rounding\n"
    "`to_fahrenheit(36.6)` returns 97, but 36.6 °C is 97.88 °F, so the nearest degree is 98."
)


class Sandbox:
    """The scratch repository and a persistent-shell emulation (cwd carried between commands)."""

    def __init__(self, root: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="swe-corpus-"))
        self.repo = self.tmp / "repo"
        self.root = root  # what the session calls the repository
        for rel, text in REPO.items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        (self.bin / "python").symlink_to(sys.executable)
        env = {"GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "dev",
               "GIT_COMMITTER_EMAIL": "dev@example.com"}
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "init"]):
            subprocess.run(cmd, cwd=self.repo, check=True, env={**os.environ, **env})
        self.cwd = root

    def host(self, path: str) -> Path:
        rel = posixpath.relpath(posixpath.normpath(path), self.root)
        return self.repo / rel

    def shown(self, text: str) -> str:
        return text.replace(str(self.repo), self.root)

    def bash(self, command: str) -> tuple[str, int]:
        """Run ``command`` in the current directory; returns (output with stderr, exit code)."""
        pwd_file = self.tmp / "pwd"
        # The session's paths name the repository by its root; on this machine it lives in a temporary folder.
        command = re.sub(rf"(?<![\w/.-]){re.escape(self.root)}(?![\w.-])", lambda m: str(self.repo), command)
        script = f"cd {shlex.quote(str(self.host(self.cwd)))}\n{command}\n__rc=$?\npwd > {pwd_file}\nexit $__rc\n"
        env = {**os.environ, "PATH": f"{self.bin}:{os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE": "1",
               "GIT_PAGER": "cat", "PAGER": "cat"}
        proc = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, env=env, timeout=60)
        if pwd_file.exists():
            self.cwd = self.shown(pwd_file.read_text().strip())
        return self.shown(proc.stdout + proc.stderr), proc.returncode

    def read(self, path: str) -> str:
        return self.host(path).read_text()

    def write(self, path: str, text: str) -> None:
        self.host(path).write_text(text)

    def resolve(self, path: str) -> str:
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.cwd, path))

    def diff(self) -> str:
        out, _ = self.bash("git add -A && git diff --cached")
        return out

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


# ── SWE-agent's classic interface (file viewer, searches, edits) ─────────────────────────────────────


def file_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


class Viewer:
    """SWE-agent's windowed file viewer over a :class:`Sandbox`."""

    def __init__(self, box: Sandbox, window: int = 100, absolute_header: bool = True) -> None:
        self.box, self.window, self.absolute_header = box, window, absolute_header
        self.open_file: str | None = None
        self.first = 1

    def render(self, shown_path: str, first: int, window: int | None = None) -> str:
        lines = file_lines(self.box.read(self.open_file or shown_path))
        window = window or self.window
        n = len(lines)
        last = min(n, first + window - 1)
        out = [f"[File: {shown_path} ({n} lines total)]"]
        if first > 1:
            out.append(f"({first - 1} more lines above)")
        out += [f"{i}:{lines[i - 1]}" for i in range(first, last + 1)]
        if last < n:
            out.append(f"({n - last} more lines below)")
        return "\n".join(out)

    def _clamp(self, first: int) -> int:
        n = len(file_lines(self.box.read(self.open_file or "")))
        return max(1, min(first, n - self.window + 1))

    def header(self, given: str) -> str:
        return self.box.resolve(given) if self.absolute_header else given

    def open(self, path: str, line: int | None = None) -> str:
        self.open_file = self.box.resolve(path)
        self.shown = self.header(path)
        self.first = self._clamp(line - self.window // 2) if line else 1
        return self.render(self.shown, self.first)

    def goto(self, line: int) -> str:
        self.first = self._clamp(line - self.window // 2)
        return self.render(self.shown, self.first)

    def scroll(self, down: bool) -> str:
        step = self.window - 2  # SWE-agent keeps two lines of overlap
        self.first = self._clamp(self.first + step if down else self.first - step)
        return self.render(self.shown, self.first)

    def create(self, name: str) -> str:
        path = self.box.resolve(name)
        self.box.write(path, "\n")
        return self.open(name)

    def edit_lines(self, start: int, end: int, text: str) -> str:
        assert self.open_file is not None
        lines = file_lines(self.box.read(self.open_file))
        new_lines = text.split("\n") if text else []
        updated = lines[: start - 1] + new_lines + lines[end:]
        new_text = "\n".join(updated) + "\n"
        if self.open_file.endswith(".py"):
            try:
                compile(new_text, self.open_file, "exec")
            except SyntaxError as exc:
                return self._rejected(exc, start, updated, lines)
        self.box.write(self.open_file, new_text)
        self.first = self._clamp(start - self.window // 2)
        return self.render(self.shown, self.first) + (
            "\nFile updated. Please review the changes and make sure they are correct (correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary."
        )

    def _rejected(self, exc: SyntaxError, start: int, updated: list[str], original: list[str]) -> str:
        def small(lines: list[str]) -> str:
            first = max(1, start - 6)
            last = min(len(lines), start + 4)
            out = [f"[File: {self.open_file} ({len(lines)} lines total)]"]
            if first > 1:
                out.append(f"({first - 1} more lines above)")
            out += [f"{i}:{lines[i - 1]}" for i in range(first, last + 1)]
            if last < len(lines):
                out.append(f"({len(lines) - last} more lines below)")
            return "\n".join(out)

        bar = "-------------------------------------------------"
        return (
            "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit "
            f"commmand.\n\nERRORS:\n- E999 {type(exc).__name__}: {exc.msg}\n\nThis is how your edit would have "
            f"looked if applied\n{bar}\n{small(updated)}\n{bar}\n\nThis is the original code before your edit\n{bar}\n"
            f"{small(original)}\n{bar}\nYour changes have NOT been applied. Please fix your edit command and try "
            "again.\nYou either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code."
            "\nDO NOT re-run the same failed edit command. Running it again will lead to the same error."
        )

    def edit_replace(self, search: str, replace: str) -> str:
        assert self.open_file is not None
        text = self.box.read(self.open_file)
        assert text.count(search) >= 1, search
        self.box.write(self.open_file, text.replace(search, replace, 1))
        return (
            "Replaced 1 occurrences. Please review the changes and make sure they are correct\n(correct indentation, "
            "no duplicate lines, etc). Edit the file again if necessary.\n"
        ) + self.render(self.box.resolve(self.open_file), self.first)

    def insert(self, text: str, line: int | None = None) -> str:
        assert self.open_file is not None
        lines = file_lines(self.box.read(self.open_file))
        at = len(lines) if line is None else line
        lines = lines[:at] + text.split("\n") + lines[at:]
        self.box.write(self.open_file, "\n".join(lines) + "\n")
        self.first = self._clamp(at + 1 - self.window // 2)
        return (
            "Text inserted. Please review the changes and make sure they are correct\n(correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary.\n"
        ) + self.render(self.box.resolve(self.open_file), self.first)

    def find_file(self, name: str, directory: str | None = None) -> str:
        where = self.box.resolve(directory or ".")
        out, _ = self.box.bash(f"find {shlex.quote(where)} -name "
                               f"{shlex.quote(name)} -not -path '*/.git/*' | sort")
        paths = [p for p in out.split("\n") if p.strip()]
        if not paths:
            return f'No matches found for "{name}" in {where}'
        return f'Found {len(paths)} matches for "{name}" in {where}:\n' + "\n".join(paths)

    def search_dir(self, term: str, directory: str | None = None) -> str:
        where = self.box.resolve(directory or ".")
        out, _ = self.box.bash(f"grep -rIc --exclude-dir=.git -- {shlex.quote(term)} {shlex.quote(where)} | sort")
        rows = [(p, int(k)) for p, _, k in (line.rpartition(":") for line in out.split("\n") if line) if int(k)]
        if not rows:
            return f'No matches found for "{term}" in {where}'
        total = sum(k for _, k in rows)
        body = "\n".join(f"{p} ({k} matches)" for p, k in rows)
        return f'Found {total} matches for "{term}" in {where}:\n{body}\nEnd of matches for "{term}" in {where}'

    def search_file(self, term: str, path: str | None = None) -> str:
        target = self.box.resolve(path) if path else self.open_file
        assert target is not None
        lines = file_lines(self.box.read(target))
        hits = [(i + 1, t) for i, t in enumerate(lines) if term in t]
        if not hits:
            return f'No matches found for "{term}" in {target}'
        body = "\n".join(f"Line {n}:{t}" for n, t in hits)
        return f'Found {len(hits)} matches for "{term}" in {target}:\n{body}\nEnd of matches for "{term}" in {target}'


# ── str_replace_editor as SWE-agent (edit_anthropic) and OpenHands (openhands-aci) print it ──────────


class TextEditor:
    def __init__(self, box: Sandbox, flavor: str) -> None:
        self.box, self.flavor = box, flavor
        self.history: dict[str, list[str]] = {}

    def _cat_n(self, text: str, descriptor: str, start: int = 1) -> str:
        numbered = "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(text.split("\n")))
        return f"Here's the result of running `cat -n` on {descriptor}:\n{numbered}\n"

    def _error(self, message: str, parameter: str | None = None, value: str | None = None) -> str:
        if self.flavor == "openhands":
            text = f"Invalid `{parameter}` parameter: {value}. {message}" if parameter else message
            return f"ERROR:\n{text}"
        return message

    def run(self, command: str, path: str, **kw: object) -> str:
        host = self.box.host(path)
        if command != "create" and not host.exists():
            return self._error(f"The path {path} does not exist. Please provide a valid path.", "path", path)
        if command == "create" and host.exists():
            return self._error(f"File already exists at: {path}. Cannot overwrite files using command `create`.",
                               "path", path)
        if command == "view":
            if host.is_dir():
                return self._view_dir(path, host)
            text = host.read_text()
            vr = kw.get("view_range")
            if vr is None:
                return self._cat_n(text, path).rstrip("\n")
            start, end = vr  # type: ignore[misc]
            lines = text.split("\n")
            if self.flavor == "openhands" and end > len(file_lines(text)):
                n = len(file_lines(text))  # openhands-aci counts lines like `wc -l`, warns, and shows up to n
                return (self._cat_n("\n".join(lines[start - 1 : n]), path, start)
                        + f"\nNOTE: We only show up to {n} since there's only {n} lines in this file\n")
            return self._cat_n("\n".join(lines[start - 1 : end]), path, start).rstrip("\n")
        if command == "create":
            host.write_text(str(kw["file_text"]))
            self.history.setdefault(path, []).append(str(kw["file_text"]))
            return f"File created successfully at: {path}"
        text = host.read_text()
        if command == "str_replace":
            old, new = str(kw["old_str"]), str(kw.get("new_str") or "")
            count = text.count(old)
            if count == 0:
                return self._error(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
            if count > 1:
                lines = [i + 1 for i, line in enumerate(text.split("\n")) if old in line]
                dot = "." if self.flavor == "openhands" else ""
                return self._error(f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines "
                                   f"{lines}. Please ensure it is unique{dot}")
            updated = text.replace(old, new)
            host.write_text(updated)
            self.history.setdefault(path, []).append(text)
            at = text.split(old)[0].count("\n")  # 0-based line of the match
            if self.flavor == "openhands":  # openhands-aci counts the line from 1 and reads lines start+1..end
                start = max(0, at + 1 - 4)
                end = at + 1 + 4 + new.count("\n")
                snippet = "\n".join(updated.split("\n")[start:end])
            else:
                start = max(0, at - 4)
                end = at + 4 + new.count("\n")
                snippet = "\n".join(updated.split("\n")[start : end + 1])
            return (f"The file {path} has been edited. " + self._cat_n(snippet, f"a snippet of {path}", start + 1)
                    + "Review the changes and make sure they are as expected. Edit the file again if necessary.")
        if command == "insert":
            line, new = int(kw["insert_line"]), str(kw["new_str"])  # type: ignore[call-overload]
            lines = text.split("\n")
            new_lines = new.split("\n")
            host.write_text("\n".join(lines[:line] + new_lines + lines[line:]))
            self.history.setdefault(path, []).append(text)
            snippet = lines[max(0, line - 4) : line] + new_lines + lines[line : line + 4]
            return ("The file " + path + " has been edited. "
                    + self._cat_n("\n".join(snippet), "a snippet of the edited file", max(1, line - 4 + 1))
                    + "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, "
                    "etc). Edit the file again if necessary.")
        if command == "undo_edit":
            stack = self.history.get(path) or []
            if not stack:
                return self._error(f"No edit history found for {path}.")
            previous = stack.pop()
            host.write_text(previous)
            return f"Last edit to {path} undone successfully. " + self._cat_n(previous, path).rstrip("\n")
        raise ValueError(command)

    def _view_dir(self, path: str, host: Path) -> str:
        entries = []
        for child in sorted(host.iterdir()):
            if child.name.startswith("."):
                continue
            entries.append((child, f"{path.rstrip('/')}/{child.name}"))
            if child.is_dir():
                entries += [(g, f"{path.rstrip('/')}/{child.name}/{g.name}") for g in sorted(child.iterdir())
                            if not g.name.startswith(".") and g.name != "__pycache__"]
        if self.flavor == "openhands":
            rows = [f"{path}/"] + [s + ("/" if p.is_dir() else "") for p, s in entries]
            hidden = len([c for c in host.iterdir() if c.name.startswith(".")])
            text = (f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n"
                    + "\n".join(rows))
            if hidden:
                text += (f"\n\n{hidden} hidden files/directories in this directory are excluded. You can use "
                         f"'ls -la {path}' to see them.")
            return text
        rows = [path] + [s for _, s in entries]
        return f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n" + "\n".join(rows)


def openhands_bash(box: Sandbox, command: str) -> str:
    out, code = box.bash(command)
    out = out.rstrip("\n")
    return (f"{out}\n[The command completed with exit code {code}.]\n[Current working directory: {box.cwd}]\n"
            f"[Python interpreter: /usr/bin/python]\n[Command finished with exit code {code}]")


# ── SWE-agent .traj writers ──────────────────────────────────────────────────────────────────────────

NO_OUTPUT = "Your command ran successfully and did not produce any output."


def state_line(open_file: str | None, cwd: str) -> str:
    return f"(Open file: {open_file or 'n/a'})\n(Current directory: {cwd})\nbash-$"


def instance_message(root: str) -> str:
    return (f"We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n"
            f"{ISSUE}\n\nINSTRUCTIONS:\nNow, you're going to solve this issue on your own.\n\n{state_line(None, root)}")


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def cli(name: str, args: dict) -> str:
    """SWE-agent's command-line rendering of a tool call."""
    if name == "bash":
        return str(args["command"])
    if name == "submit":
        return "submit"
    if name == "str_replace_editor":
        words = ["str_replace_editor", args["command"], args["path"]]
        for key in ("file_text", "view_range", "old_str", "new_str", "insert_line"):
            if key in args:
                value = args[key]
                words += [f"--{key}", *(map(str, value) if key == "view_range" else [str(value)])]
        return " ".join(shlex.quote(w) if i > 2 or " " in w else w for i, w in enumerate(words))
    if name == "edit" and "start_line" in args:
        return f"edit {args['start_line']}:{args['end_line']}\n{args['replacement_text']}\nend_of_edit"
    words = [name]
    for key, value in args.items():
        if key == "line":
            words += ["--line", str(value)]
        elif key == "path":
            words.append(f'"{value}"')
        else:
            words.append(str(value) if isinstance(value, bool | int) else shlex.quote(str(value)))
    return " ".join(words)


def run_step(box: Sandbox, viewer: Viewer, editor: TextEditor | None, name: str, args: dict) -> str:
    """The tool's own output for one call (``\\n`` line ends, no trailing newline)."""
    if name == "bash":
        return box.bash(str(args["command"]))[0].rstrip("\n")
    if name == "submit":
        return box.diff().rstrip("\n")
    if name == "str_replace_editor":
        assert editor is not None
        return editor.run(**args)
    if name == "open":
        return viewer.open(args["path"], args.get("line_number"))
    if name == "goto":
        return viewer.goto(args["line_number"])
    if name in ("scroll_down", "scroll_up"):
        return viewer.scroll(name == "scroll_down")
    if name == "create":
        return viewer.create(args["filename"])
    if name == "edit" and "start_line" in args:
        return viewer.edit_lines(args["start_line"], args["end_line"], args["replacement_text"])
    if name == "edit":
        return viewer.edit_replace(args["search"], args["replace"])
    if name == "insert":
        return viewer.insert(args["text"], args.get("line"))
    if name == "find_file":
        return viewer.find_file(args["file_name"], args.get("dir"))
    if name == "search_dir":
        return viewer.search_dir(args["search_term"], args.get("dir"))
    if name == "search_file":
        return viewer.search_file(args["search_term"], args.get("file"))
    raise ValueError(name)


def line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.split("\n")) if needle in line)


CONVERT = REPO["tempconv/convert.py"]
BUG_LINE = line_of(CONVERT, "return int(celsius * 9 / 5 + 32)")
SYSTEM_CLASSIC = (
    "SETTING: You are an autonomous programmer, and you're working directly in the command line with a special "
    "interface.\n\nThe special interface consists of a file editor that shows you 100 lines of a file at a time."
)


def _tool_call(i: int, name: str, args: dict) -> dict:
    return {"function": {"arguments": json.dumps(args), "name": name}, "id": f"call_{i:04d}", "type": "function"}


def write_classic_0x(path: Path) -> None:
    """SWE-agent 0.x layout: a `trajectory` list, state as a JSON string taken before each action."""
    root = "/tempconv__tempconv"
    box = Sandbox(root)
    viewer = Viewer(box)
    steps = [
        ("First find the module the issue names.", "find_file", {"file_name": "convert.py"}),
        ("Open it.", "open", {"path": "tempconv/convert.py"}),
        ("Scroll down to the conversion functions.", "scroll_down", {}),
        ("Back up to see the helpers.", "scroll_up", {}),
        ("Where are the conversion functions defined?", "search_file", {"search_term": "def to_"}),
        ("Go to the buggy return.", "goto", {"line_number": BUG_LINE}),
        ("Who calls to_fahrenheit?", "search_dir", {"search_term": "to_fahrenheit"}),
        ("Round instead of truncating.", "edit",
         {"start_line": BUG_LINE, "end_line": BUG_LINE, "replacement_text": "return round(celsius * 9 / 5 + 32)"}),
        ("The indentation was wrong; again.", "edit",
         {"start_line": BUG_LINE, "end_line": BUG_LINE, "replacement_text": "    return round(celsius * 9 / 5 + 32)"}),
        ("A reproduction script.", "create", {"filename": "reproduce.py"}),
        ("Its code.", "edit", {"start_line": 1, "end_line": 1,
                               "replacement_text": "from tempconv import to_fahrenheit\n\nprint(to_fahrenheit(36.6))"}),
        ("Run it.", "bash", {"command": "python reproduce.py"}),
        ("Run the tests.", "bash", {"command": "python -m unittest tests.test_convert"}),
        ("Clean up.", "bash", {"command": "rm reproduce.py"}),
        ("Submit.", "submit", {}),
    ]
    trajectory, history = [], [
        {"role": "system", "content": SYSTEM_CLASSIC, "agent": "primary"},
        {"role": "user", "content": instance_message(root), "agent": "primary"},
    ]
    try:
        for thought, name, args in steps:
            before = {"open_file": viewer.open_file or "n/a", "working_dir": box.cwd}
            action = cli(name, args)
            obs = run_step(box, viewer, None, name, args)
            if name == "submit":
                obs = "\n" + obs  # SWE-agent 0.x prints the diff after an empty line
            raw = obs + "\n" if obs else ""
            response = f"{thought}\n```\n{action}\n```"
            trajectory.append({"action": action + "\n", "observation": raw, "response": response,
                               "state": json.dumps(before) + "\n", "thought": thought + "\n"})
            history.append({"role": "assistant", "content": response, "thought": thought + "\n",
                            "action": action + "\n", "agent": "primary"})
            shown = raw if raw else NO_OUTPUT + "\n"
            history.append({"role": "user", "content": shown + "\n" + state_line(viewer.open_file, box.cwd),
                            "agent": "primary"})
        diff = box.diff()
    finally:
        box.close()
    data = {"environment": "swe_main", "trajectory": trajectory, "history": history,
            "info": {"exit_status": "submitted", "submission": diff, "model_stats": {"api_calls": len(steps)}}}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _write_1x(path: Path, root: str, steps: list, editor_flavor: str | None, history_only: bool) -> None:
    """SWE-agent 1.x: function calls; observations with \\r\\n line ends; state (an object) after each action."""
    box = Sandbox(root)
    viewer = Viewer(box, absolute_header=False)
    editor = TextEditor(box, editor_flavor) if editor_flavor else None
    trajectory: list[dict] = []
    history: list[dict] = [
        {"role": "system", "content": SYSTEM_CLASSIC, "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": instance_message(root), "agent": "main", "message_type": "observation"},
    ]
    try:
        for i, (thought, name, args) in enumerate(steps):
            action = cli(name, args)
            obs = crlf(run_step(box, viewer, editor, name, args))
            if name == "submit":
                obs = "\r\n" + obs + "\r\n"
            state = {"open_file": viewer.open_file, "working_dir": box.cwd}
            trajectory.append({"action": action, "observation": obs, "response": thought, "thought": thought,
                               "execution_time": 0.25, "state": state, "query": [], "extra_info": {}})
            call = _tool_call(i, name, args)
            history.append({"role": "assistant", "content": thought, "thought": thought, "action": action,
                            "agent": "main", "tool_calls": [call], "message_type": "action"})
            shown = obs if obs.strip() else NO_OUTPUT
            history.append({"role": "tool", "content": shown + "\n" + state_line(viewer.open_file, box.cwd),
                            "agent": "main", "message_type": "observation", "tool_call_ids": [call["id"]]})
        diff = box.diff()
    finally:
        box.close()
    if history_only:
        data: dict = {"history": history}
    else:
        data = {"environment": "main", "trajectory": trajectory, "history": history,
                "info": {"submission": crlf(diff), "exit_status": "submitted", "swe_agent_version": "1.0.1",
                         "model_stats": {"api_calls": len(steps)}},
                "replay_config": json.dumps({"env": {"repo": {"path": root}}, "agent": {"name": "main"}})}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


FC_STEPS = [
    ("List the repository.", "bash", {"command": "ls"}),
    ("Find the module.", "find_file", {"file_name": "convert.py", "dir": "tempconv"}),
    ("Open it in the middle.", "open", {"path": "tempconv/convert.py", "line_number": 60}),
    ("Go to the conversion.", "goto", {"line_number": BUG_LINE}),
    ("Round instead of truncating.", "edit", {"search": "    return int(celsius * 9 / 5 + 32)",
                                              "replace": "    return round(celsius * 9 / 5 + 32)",
                                              "replace-all": False}),
    ("Check every rounding.", "search_file", {"search_term": "round("}),
    ("A check script.", "create", {"filename": "check.py"}),
    ("Its code.", "insert", {"text": "from tempconv import to_fahrenheit\nprint(to_fahrenheit(36.6))"}),
    ("Run it.", "bash", {"command": "python check.py"}),
    ("Look at the tests folder.", "bash", {"command": "cd tests && ls"}),
    ("Run the tests from the root.", "bash", {"command": "cd /testbed && python -m unittest tests.test_convert"}),
    ("Clean up.", "bash", {"command": "rm check.py"}),
    ("Submit.", "submit", {}),
]
HISTORY_STEPS = [
    ("Find the tests.", "find_file", {"file_name": "test_convert.py"}),
    ("Open them.", "open", {"path": "tests/test_convert.py"}),
    ("Into the package.", "bash", {"command": "cd tempconv"}),
    ("What is here?", "bash", {"command": "ls"}),
    ("Open the module at the bug.", "open", {"path": "convert.py", "line_number": BUG_LINE}),
    ("Where is the constant used?", "search_dir", {"search_term": "ABSOLUTE_ZERO_C"}),
    ("Fix the rounding.", "edit", {"search": "int(celsius * 9 / 5 + 32)", "replace": "round(celsius * 9 / 5 + 32)"}),
    ("Scroll up to the top part.", "scroll_up", {}),
    ("Run the failing test.", "bash", {"command": "cd .. && python -m unittest tests.test_convert"}),
    ("Submit.", "submit", {}),
]
EDITOR = "/testbed/tempconv/convert.py"
ANTHROPIC_STEPS = [
    ("Look at the repository.", "str_replace_editor", {"command": "view", "path": "/testbed"}),
    ("The module.", "str_replace_editor", {"command": "view", "path": EDITOR}),
    ("The function.", "str_replace_editor",
     {"command": "view", "path": EDITOR, "view_range": [BUG_LINE - 5, BUG_LINE + 1]}),
    ("Try a replacement.", "str_replace_editor",
     {"command": "str_replace", "path": EDITOR, "old_str": "return int(celsius*9/5+32)", "new_str": "x"}),
    ("Too short.", "str_replace_editor",
     {"command": "str_replace", "path": EDITOR, "old_str": "    return ", "new_str": "    return  "}),
    ("The fix.", "str_replace_editor",
     {"command": "str_replace", "path": EDITOR, "old_str": "    return int(celsius * 9 / 5 + 32)",
      "new_str": "    # round half away from zero is not needed here\n    return round(celsius * 9 / 5 + 32)"}),
    ("Check it.", "str_replace_editor",
     {"command": "view", "path": EDITOR, "view_range": [BUG_LINE - 5, BUG_LINE + 2]}),
    ("A check script.", "str_replace_editor",
     {"command": "create", "path": "/testbed/check.py",
      "file_text": "from tempconv import to_fahrenheit\n\nprint(to_fahrenheit(36.6))\n"}),
    ("Look at it.", "str_replace_editor", {"command": "view", "path": "/testbed/check.py"}),
    ("Print a second value too.", "str_replace_editor",
     {"command": "str_replace", "path": "/testbed/check.py", "old_str": "print(to_fahrenheit(36.6))",
      "new_str": "print(to_fahrenheit(36.6), to_fahrenheit(-40))"}),
    ("Again by mistake.", "str_replace_editor",
     {"command": "create", "path": "/testbed/check.py", "file_text": "print(1)\n"}),
    ("A comment on top.", "str_replace_editor",
     {"command": "insert", "path": "/testbed/check.py", "insert_line": 0, "new_str": "# check the issue"}),
    ("Undo it.", "str_replace_editor", {"command": "undo_edit", "path": "/testbed/check.py"}),
    ("The first two lines.", "str_replace_editor",
     {"command": "view", "path": "/testbed/check.py", "view_range": [1, 2]}),
    ("Is there a setup.py?", "str_replace_editor", {"command": "view", "path": "/testbed/setup.py"}),
    ("Run the check.", "bash", {"command": "python /testbed/check.py"}),
    ("Run the tests.", "bash", {"command": "cd /testbed && python -m unittest tests.test_convert"}),
    ("Clean up.", "bash", {"command": "rm /testbed/check.py"}),
    ("Submit.", "submit", {}),
]


# ── AgentWorldBench rows ─────────────────────────────────────────────────────────────────────────────

SIM = (
    "Predict exactly what the environment returns for the agent's latest action, consistent with the initial "
    "state and every earlier observation. Think inside <think></think>, then write the observation inside "
    "<predicted_observation></predicted_observation>."
)
SYSTEM_OPENHANDS = (
    "You are the environment of a software-engineering agent: a Linux container with a Python repository, a "
    "persistent bash shell and a file editor.\n\n## Task Description\n" + ISSUE + "\n\n## Action Space\n"
    "Each action is one function call, {\"name\": <tool>, \"arguments\": {...}}:\n"
    "- execute_bash(command): runs the command in the persistent shell. The result is the output followed by "
    "[The command completed with exit code N.], [Current working directory: DIR], [Python interpreter: PATH] "
    "and [Command finished with exit code N], one per line.\n"
    "- str_replace_editor(command, path, file_text, view_range, old_str, new_str, insert_line): view, create and "
    "edit files (commands view, create, str_replace, insert, undo_edit); errors start with \"ERROR:\".\n"
    "- finish(message): ends the task.\n\n## Initial State\n[Current working directory: /workspace/tempconv]\n\n"
    "## Simulation Instruction\n" + SIM
)
SYSTEM_SWEAGENT = (
    "You are the environment of SWE-agent: a shell with a special interface on a Python repository.\n\n"
    "## Task Description\n" + ISSUE + "\n\n## Action Space\nOne command per turn: any bash command; open \"<path>\" "
    "[<line_number>], goto <line_number>, scroll_up, scroll_down, create <filename>, edit <start_line>:<end_line> "
    "with the replacement lines and end_of_edit, find_file <file_name> [<dir>], search_dir <search_term> [<dir>], "
    "search_file <search_term> [<file>], submit. Every observation ends with the state line (Open file: <path>), "
    "(Current directory: <dir>), bash-$.\n\n## Initial State\n" + state_line(None, "/tempconv") + "\n\n"
    "## Simulation Instruction\n" + SIM
)


def rows(prefix: str, system: str, episode: list[tuple[str, str]]) -> list[dict]:
    prompts = [f"### Turn {i + 1}\n**Action:**\n{action}" for i, (action, _) in enumerate(episode)]
    responses = [f"**Environment Observation:**\n{obs}" for _, obs in episode]
    out = []
    for n in range(1, len(episode) + 1):
        out.append({"task": "swe", "id": f"{prefix}_turn{n}", "prompt": prompts[:n], "response": responses[:n],
                    "current_prompt": prompts[n - 1], "system_str": system, "turn_idx": n,
                    "total_turns": len(episode)})
    return out


def call_text(name: str, args: dict) -> str:
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def openhands_episode(steps: list[tuple[str, dict]]) -> list[tuple[str, str]]:
    box = Sandbox("/workspace/tempconv")
    editor = TextEditor(box, "openhands")
    out = []
    try:
        for name, args in steps:
            obs = openhands_bash(box, args["command"]) if name == "execute_bash" else editor.run(**args)
            out.append((call_text(name, args), obs))
    finally:
        box.close()
    return out


def write_openhands_rows(path: Path) -> None:
    src = "/workspace/tempconv/tempconv/convert.py"
    first = openhands_episode([
        ("execute_bash", {"command": "python -m unittest tests.test_convert"}),
        ("str_replace_editor", {"command": "view", "path": "/workspace/tempconv"}),
        ("str_replace_editor", {"command": "view", "path": src}),
        ("str_replace_editor", {"command": "view", "path": src, "view_range": [BUG_LINE - 2, BUG_LINE + 40]}),
        ("str_replace_editor", {"command": "str_replace", "path": src,
                                "old_str": "return int(celsius * 9 / 5 + 32)",
                                "new_str": "return round(celsius * 9 / 5 + 32)"}),
        ("str_replace_editor", {"command": "str_replace", "path": src,
                                "old_str": '    """Degrees Celsius for ``fahrenheit``, rounded to the nearest degree."""',
                                "new_str": '    """Degrees Celsius for ``fahrenheit``.\n\n    Rounded half to even."""'}),
        ("str_replace_editor", {"command": "view", "path": src, "view_range": [BUG_LINE - 3, BUG_LINE]}),
        ("execute_bash", {"command": "python -m unittest tests.test_convert"}),
        ("execute_bash", {"command": "git diff --stat"}),
        ("str_replace_editor", {"command": "view", "path": src}),
    ])
    second = openhands_episode([
        ("execute_bash", {"command": "cd tempconv && ls"}),
        ("execute_bash", {"command": "ls nothere"}),
        ("execute_bash", {"command": "pwd"}),
        ("str_replace_editor", {"command": "str_replace", "path": src, "old_str": "int(celsius*9/5)",
                                "new_str": "round(celsius*9/5)"}),
        ("str_replace_editor", {"command": "create", "path": src, "file_text": "x = 1\n"}),
        ("str_replace_editor", {"command": "create", "path": "/workspace/tempconv/check.py",
                                "file_text": "from tempconv import to_fahrenheit\nprint(to_fahrenheit(36.6))\n"}),
        ("str_replace_editor", {"command": "str_replace", "path": "/workspace/tempconv/check.py",
                                "old_str": "print(to_fahrenheit(36.6))", "new_str": "print(to_fahrenheit(36.6))\n"
                                "print(to_fahrenheit(0))"}),
        ("str_replace_editor", {"command": "insert", "path": "/workspace/tempconv/check.py", "insert_line": 1,
                                "new_str": "# 36.6 C is 97.88 F"}),
        ("str_replace_editor", {"command": "undo_edit", "path": "/workspace/tempconv/check.py"}),
        ("str_replace_editor", {"command": "view", "path": "/workspace/tempconv/check.py"}),
        ("execute_bash", {"command": "cd /workspace/tempconv && python check.py"}),
        ("execute_bash", {"command": "python -m unittest tests.test_convert"}),
        ("execute_bash", {"command": "tempconv-cli --help"}),
        ("execute_bash", {"command": "python -c \"__import__('tempconv').to_fahrenheit(-500)\""}),
        ("str_replace_editor", {"command": "view", "path": "/workspace/tempconv/setup.py"}),
    ])
    with path.open("w", encoding="utf-8") as handle:
        for row in rows("openhands_fix", SYSTEM_OPENHANDS, first) + rows("openhands_explore", SYSTEM_OPENHANDS, second):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_sweagent_rows(path: Path) -> None:
    box = Sandbox("/tempconv")
    viewer = Viewer(box)
    steps = [
        ("find_file", {"file_name": "convert.py"}),
        ("open", {"path": "tempconv/convert.py", "line_number": BUG_LINE}),
        ("search_file", {"search_term": "celsius"}),
        ("goto", {"line_number": 10}),
        ("scroll_down", {}),
        ("edit", {"start_line": BUG_LINE, "end_line": BUG_LINE,
                  "replacement_text": "    return round(celsius * 9 / 5 + 32)"}),
        ("bash", {"command": "python -m unittest tests.test_convert"}),
        ("bash", {"command": "cd tests"}),
        ("bash", {"command": "ls"}),
        ("search_dir", {"search_term": "to_celsius", "dir": ".."}),
        ("submit", {}),
    ]
    episode = []
    try:
        for name, args in steps:
            obs = run_step(box, viewer, None, name, args)
            episode.append((cli(name, args), (obs or NO_OUTPUT) + "\n" + state_line(viewer.open_file, box.cwd)))
    finally:
        box.close()
    with path.open("w", encoding="utf-8") as handle:
        for row in rows("sweagent_classic", SYSTEM_SWEAGENT, episode):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    write_classic_0x(HERE / "classic_0x__tempconv-1.traj")
    _write_1x(HERE / "function_calling__tempconv-2.traj", "/testbed", FC_STEPS, None, history_only=False)
    _write_1x(HERE / "history_only__tempconv-3.traj", "/tempconv", HISTORY_STEPS, None, history_only=True)
    _write_1x(HERE / "str_replace_editor__tempconv-4.traj", "/testbed", ANTHROPIC_STEPS, "sweagent", history_only=False)
    write_openhands_rows(HERE / "openhands.awb.jsonl")
    write_sweagent_rows(HERE / "sweagent_classic.awb.jsonl")


if __name__ == "__main__":
    main()
