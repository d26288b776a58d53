"""Terminal recordings as files, read and written back byte for byte.

* :class:`Cast` — an asciinema recording. **asciicast v2**: a header object (``version`` 2, ``width``,
  ``height``, optional ``timestamp``, ``env``...) then one ``[time, code, data]`` event per line, ``time``
  in seconds since the start. **asciicast v3**: a header with ``version`` 3 and ``term: {cols, rows, ...}``,
  events ``[interval, code, data]`` where ``interval`` is the time since the previous event, ``#`` comment
  lines allowed. Codes: ``o`` output, ``i`` input, ``r`` resize, ``m`` marker, ``x`` exit (v3).
* :class:`Typescript` — what util-linux ``script`` writes: an optional ``Script started on ... [COMMAND=...
  TERM=... COLUMNS="160" LINES="40"]`` line, the raw terminal output, an optional ``Script done on ...``
  line.

``parse_cast(text)``/``render_cast(cast)`` and ``parse_typescript``/``render_typescript`` are inverse:
``render(parse(x)) == x``. Unedited lines are written as they were read; an edited header or event is
written in asciinema's own layout (``json.dumps`` with its default separators).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awctl.errors import InputError

Event = tuple[float, str, str]


@dataclass
class Cast:
    """A parsed asciicast. ``events`` carry absolute times (v3 intervals are summed on reading)."""

    version: int
    header: dict[str, Any]
    events: list[Event]
    # What rendering needs to give the file back exactly: every line, and what each one held.
    _lines: list[str] = field(default_factory=list, repr=False)
    _kinds: list[str] = field(default_factory=list, repr=False)  # "header", "event", "other"
    _values: list[Any] = field(default_factory=list, repr=False)
    _newline_at_end: bool = True

    @property
    def cols(self) -> int:
        return int(self.header["term"]["cols"] if self.version == 3 else self.header["width"])

    @property
    def rows(self) -> int:
        return int(self.header["term"]["rows"] if self.version == 3 else self.header["height"])


def _bad(where: str, message: str, hint: str = "") -> InputError:
    return InputError(f"{where}: {message}", hint=hint or "an asciicast has a JSON header line, then one "
                      "[time, code, data] event per line")


def parse_cast(text: str, where: str = "cast") -> Cast:
    """A :class:`Cast` of asciicast v2 or v3 text; errors name ``where`` and the line."""
    lines = text.split("\n")
    newline_at_end = bool(lines) and lines[-1] == ""
    if newline_at_end:
        lines.pop()
    cast: Cast | None = None
    kinds, values, events = [], [], []
    clock = 0.0
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or (cast is not None and cast.version == 3 and line.startswith("#")):
            kinds.append("other")
            values.append(None)
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _bad(f"{where}:{lineno}", f"invalid JSON ({exc.msg})") from None
        if cast is None:
            cast = _header(obj, f"{where}:{lineno}")
            kinds.append("header")
            values.append(json.loads(line))  # a copy: an in-place edit of cast.header must show as an edit
            continue
        if (not isinstance(obj, list) or len(obj) != 3 or isinstance(obj[0], bool)
                or not isinstance(obj[0], (int, float)) or not isinstance(obj[1], str)
                or not isinstance(obj[2], str)):
            raise _bad(f"{where}:{lineno}", "an event must be [time, code, data]", 'e.g. [0.25, "o", "ls\\r\\n"]')
        clock = clock + float(obj[0]) if cast.version == 3 else float(obj[0])
        events.append((clock, obj[1], obj[2]))
        kinds.append("event")
        values.append(obj)
    if cast is None:
        raise _bad(where, "empty file, no asciicast header")
    cast.events = events
    cast._lines, cast._kinds, cast._values, cast._newline_at_end = lines, kinds, values, newline_at_end
    return cast


def _header(obj: Any, where: str) -> Cast:
    if not isinstance(obj, dict) or obj.get("version") not in (2, 3):
        raise _bad(where, "not an asciicast v2 or v3 header",
                   'the first line must be {"version": 2, "width": ..., "height": ...} or '
                   '{"version": 3, "term": {"cols": ..., "rows": ...}}')
    if obj["version"] == 2:
        for key in ("width", "height"):
            if not isinstance(obj.get(key), int) or isinstance(obj.get(key), bool) or obj[key] <= 0:
                raise _bad(where, f"header field {key!r} must be a positive integer")
    else:
        term = obj.get("term")
        if not isinstance(term, dict):
            raise _bad(where, "a v3 header needs a 'term' object with 'cols' and 'rows'")
        for key in ("cols", "rows"):
            if not isinstance(term.get(key), int) or isinstance(term.get(key), bool) or term[key] <= 0:
                raise _bad(where, f"header field 'term.{key}' must be a positive integer")
    return Cast(int(obj["version"]), obj, [])


def render_cast(cast: Cast) -> str:
    """The text of ``cast``: lines as read where unchanged, asciinema's layout where edited."""
    out: list[str] = []
    events = iter(cast.events)
    previous = 0.0
    kinds = cast._kinds or ["header"] + ["event"] * len(cast.events)
    for i, kind in enumerate(kinds):
        raw = cast._lines[i] if i < len(cast._lines) else None
        if kind == "other":
            out.append(raw or "")
            continue
        if kind == "header":
            value: Any = cast.header
        else:
            t, code, data = next(events)
            value = [round(t - previous, 6) if cast.version == 3 else t, code, data]
            previous = t
        original = cast._values[i] if i < len(cast._values) else None
        out.append(raw if raw is not None and _same(original, value) else json.dumps(value))
    for t, code, data in events:  # events appended after parsing
        out.append(json.dumps([round(t - previous, 6) if cast.version == 3 else t, code, data]))
        previous = t
    return "\n".join(out) + ("\n" if cast._newline_at_end else "")


def _same(original: Any, value: Any) -> bool:
    if isinstance(original, list) and isinstance(value, list) and len(original) == len(value) == 3:
        return abs(float(original[0]) - float(value[0])) < 5e-7 and original[1:] == value[1:]
    return bool(original == value)


def read_cast(path: Path) -> Cast:
    return parse_cast(read_text(path), str(path))


# ── script(1) typescripts ────────────────────────────────────────────────────────────────────────────

_STARTED = re.compile(r"^Script started on (?P<date>[^\[\n]*?)\s*(?:\[(?P<fields>[^\n]*)\])?$")
_DONE = re.compile(r"\nScript done on [^\n]*\n?$")
_FIELD = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass
class Typescript:
    """A parsed typescript: ``header``/``footer`` lines (``None`` when absent, e.g. ``script -q`` of
    older versions), ``fields`` from the header (``COLUMNS``, ``LINES``, ``TERM``, ``COMMAND``...) and
    ``output``, the terminal's raw output (escape sequences and ``\\r\\n`` included)."""

    header: str | None
    output: str
    footer: str | None
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def cols(self) -> int | None:
        value = self.fields.get("COLUMNS", "")
        return int(value) if value.isdigit() else None

    @property
    def rows(self) -> int | None:
        value = self.fields.get("LINES", "")
        return int(value) if value.isdigit() else None


def parse_typescript(text: str) -> Typescript:
    header = footer = None
    body = text
    first, sep, rest = text.partition("\n")
    fields: dict[str, str] = {}
    m = _STARTED.match(first)
    if m and sep:
        header, body = first, rest
        fields = dict(_FIELD.findall(m.group("fields") or ""))
    done = _DONE.search(body)
    if done:
        footer, body = body[done.start():], body[: done.start()]
    return Typescript(header, body, footer, fields)


def render_typescript(ts: Typescript) -> str:
    return (ts.header + "\n" if ts.header is not None else "") + ts.output + (ts.footer or "")


def read_text(path: Path) -> str:
    """A recording's text; not UTF-8 or unreadable -> :class:`InputError` naming the file and offset."""
    import gzip

    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read ({exc})", hint="check that the file is complete") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 at byte {exc.start} ({exc.reason})",
                         hint="a terminal recording is UTF-8 text; re-record it with a UTF-8 locale") from None
