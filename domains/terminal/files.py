"""The task files an initial state shows: written by :func:`files_section`, read back by :func:`stated_files`.

A small text file is shown as ``cat`` prints it (fenced), so a world model can answer a ``cat`` of a file
it was never shown by a command and the verifiers know what that ``cat`` prints; a larger one is named
with its line count only.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

SHOWN_FILE_LINES = 12  # a file's text is shown when it has at most this many lines
SHOWN_FILE_CHARS = 600  # ... and characters

_ENTRY = re.compile(r"^(?P<name>[^\s:`]+)(?: \(mode [0-7]+\))?(?P<bare> \(no newline at the end\))?:(?P<rest>.*)$")


def files_section(where: str, files: dict[str, Any]) -> str:
    """The task's ``files`` (setup format: name -> text or ``{"content", "mode"}``) in directory ``where``."""
    parts = [f"Files in {where}:"]
    for name in sorted(files):
        spec = files[name]
        text, mode = (spec.get("content", ""), spec.get("mode")) if isinstance(spec, dict) else (spec, None)
        label = f"{name} (mode {int(mode):o})" if mode is not None else name
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if not text:
            parts.append(f"{label}: empty")
        elif lines > SHOWN_FILE_LINES or len(text) > SHOWN_FILE_CHARS or "```" in text:  # a fence would end early
            parts.append(f"{label}: {lines} lines, not shown")
        else:
            tail = "" if text.endswith("\n") else " (no newline at the end)"
            parts.append(f"{label}{tail}:\n```\n{text.removesuffix(chr(10))}\n```")
    return "\n".join(parts)


def stated_files(text: str) -> dict[str, str]:
    """Absolute path -> text of every file a :func:`files_section` in ``text`` shows (empty ones included;
    files named without their text are left out). Anything else in ``text`` is ignored."""
    found: dict[str, str] = {}
    for section in re.finditer(r"^Files in (/\S*):\n", text, re.M):
        lines = text[section.end():].split("\n")
        i = 0
        while i < len(lines):
            entry = _ENTRY.match(lines[i])
            if entry is None:
                break
            path = posixpath.normpath(posixpath.join(section.group(1), entry.group("name")))
            if entry.group("rest") == " empty":
                found[path] = ""
            elif entry.group("rest") == "" and i + 1 < len(lines) and lines[i + 1] == "```":
                try:
                    end = lines.index("```", i + 2)
                except ValueError:
                    break
                body = "\n".join(lines[i + 2:end])
                found[path] = body if entry.group("bare") else body + "\n"
                i = end
            i += 1
    return found
