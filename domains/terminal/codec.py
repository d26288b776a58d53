"""Terminal actions and observations as text.

An **action** is a JSON list of keystroke items in the Terminal-Bench / Terminus style::

    [{"keystrokes": "ls -la\\n", "duration": 0.5}, {"keystrokes": "C-c", "duration": 0.1}]

* ``keystrokes`` is typed literally; a trailing ``\\n`` presses Enter, so the command runs.
* A whole ``keystrokes`` value that names a key (``C-c``, ``C-d``, ``Enter``, ``Escape``, ``Up``, ``Tab``…,
  tmux's key names) presses that key.
* ``""`` types nothing: the item only waits ``duration`` seconds.
* ``duration`` (seconds, ≥ 0, default 1.0) is how long to wait after the item before looking at the screen.

The Terminus-2 response object ``{"commands": [...]}`` is accepted as well. ``render`` gives back the text
an unchanged :meth:`~TerminalActionCodec.parse` result was read from (byte for byte, whatever its layout);
:meth:`~TerminalActionCodec.canonical` and ``render`` of any other action give the compact one-line JSON
list with both keys in every item.

An **observation** is what the terminal shows after the keystrokes, in one of the two screen forms a
trajectory can establish (see :mod:`.session`): the whole visible screen (``cols`` x ``rows``; awctl's
own recordings: 160 x 40, trailing spaces and blank lines removed, prompt line included), or the
incremental output since the previous observation (echo, output, new prompt). Terminal-Bench's
``New Terminal Output:`` / ``Current Terminal Screen:`` headers are read and kept. Parsing keeps every
byte, so ``render(parse(text)) == text``.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from awctl.domain import ActionCodec, ObservationCodec
from awctl.envs.sandbox import KEY_NAME_RE  # tmux's key names: a parsed action means what the terminal does
from awctl.errors import CodecError

DEFAULT_ROWS = 40
DEFAULT_COLS = 160
DEFAULT_DURATION = 1.0

# The action space's last sentence, up to the prompt's shape, in each screen form (forms.to_incremental
# swaps them).
SCREEN_OBSERVATION = "The observation is the visible screen afterwards, including the prompt "
INCREMENTAL_OBSERVATION = "The observation is only what the terminal added afterwards, ending with the prompt "


@dataclass(frozen=True)
class Keystroke:
    """One item of a terminal action."""

    keystrokes: str
    duration: float = DEFAULT_DURATION

    @property
    def is_key(self) -> bool:
        """True when ``keystrokes`` names one key (``C-c``) rather than literal text."""
        return bool(KEY_NAME_RE.match(self.keystrokes))

    @property
    def is_wait(self) -> bool:
        return self.keystrokes == ""

    @property
    def runs_command(self) -> bool:
        """True when the item is literal text ending with Enter."""
        return not self.is_key and self.keystrokes.endswith("\n")


TerminalAction = tuple[Keystroke, ...]


class ParsedAction(tuple):
    """A parsed action: the keystroke items (a plain tuple to every reader) and the text they were read
    from, so that rendering an unchanged parse result gives that text back."""

    source: str | None = None

    def __new__(cls, items: tuple[Keystroke, ...], source: str | None = None) -> ParsedAction:
        out = super().__new__(cls, items)
        out.source = source
        return out

_ITEM_KEYS = {"keystrokes", "duration"}


class TerminalActionCodec(ActionCodec):
    """Parses/renders the JSON keystroke list; errors name the item and the field."""

    def parse(self, text: str) -> TerminalAction:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CodecError(
                f"not valid JSON ({exc.msg})",
                where=f"line {exc.lineno}, column {exc.colno}",
                hint='write a JSON list such as [{"keystrokes": "ls\\n", "duration": 0.5}]',
            ) from None
        if isinstance(data, dict) and "commands" in data:
            data = data["commands"]
        if not isinstance(data, list):
            raise CodecError(f"expected a JSON list of keystroke items, got {type(data).__name__}",
                             where="action", hint='wrap the item in a list: [{"keystrokes": ...}]')
        if not data:
            raise CodecError("the list is empty", where="action",
                             hint='to only wait, send [{"keystrokes": "", "duration": 1}]')
        items = []
        for i, item in enumerate(data, 1):
            where = f"item {i}"
            if not isinstance(item, dict):
                raise CodecError(f"expected an object, got {type(item).__name__}", where=where)
            if "keystrokes" not in item:
                raise CodecError('missing "keystrokes"', where=where, hint='add "keystrokes": "<text>"')
            unknown = sorted(set(item) - _ITEM_KEYS - {"is_blocking", "timeout_sec"})
            if unknown:
                raise CodecError(f"unknown field(s) {', '.join(map(repr, unknown))}", where=where,
                                 hint='an item has only "keystrokes" and "duration"')
            keys = item["keystrokes"]
            if not isinstance(keys, str):
                raise CodecError(f'"keystrokes" must be a string, got {type(keys).__name__}', where=where)
            duration = item.get("duration", item.get("timeout_sec", DEFAULT_DURATION))
            if isinstance(duration, bool) or not isinstance(duration, (int, float)):
                raise CodecError(f'"duration" must be a number of seconds, got {duration!r}', where=where)
            if duration < 0 or duration != duration:
                raise CodecError(f'"duration" must be >= 0, got {duration!r}', where=where)
            items.append(Keystroke(keys, float(duration)))
        return ParsedAction(tuple(items), text)

    def render(self, action: TerminalAction) -> str:
        """The text ``action`` was parsed from while it still says the same (lossless), else the canonical
        text."""
        source = getattr(action, "source", None)
        if source is not None:
            try:
                if self.parse(source) == action:
                    return source
            except CodecError:
                pass
        return json.dumps([{"keystrokes": k.keystrokes, "duration": float(k.duration)} for k in action],
                          ensure_ascii=False)

    def canonical(self, text: str) -> str:
        """The canonical text (compact one-line JSON list) of an action in any accepted layout; raises
        :class:`CodecError` like :meth:`parse`."""
        return self.render(tuple(self.parse(text)))

    def schema(self, prompt: str = "`root@sandbox:<cwd># `", cols: int = DEFAULT_COLS,
               rows: int = DEFAULT_ROWS) -> str:
        """The action space for a system prompt: a ``cols`` x ``rows`` terminal whose screens end at
        ``prompt`` (its shape, as the domain names it; awctl's own by default)."""
        return (
            "Each action is a JSON list of keystroke items, sent to a bash shell in a "
            f"{cols}x{rows} terminal:\n"
            '[{"keystrokes": "<text>", "duration": <seconds>}, ...]\n'
            '- "keystrokes" is typed literally; end it with "\\n" to press Enter and run the command.\n'
            '- A "keystrokes" value that is exactly a key name presses that key: "C-c" (interrupt), '
            '"C-d" (end of input), "C-z", "Enter", "Escape", "Tab", "Up", "Down", "Left", "Right".\n'
            '- "" types nothing and just waits.\n'
            '- "duration" is how many seconds to wait after the item before the screen is read '
            f"(default {DEFAULT_DURATION}).\n"
            f"{SCREEN_OBSERVATION}{prompt}."
        )

    def family(self, text: str) -> str:
        """The command name of the first command, else ``control`` (C-/M- keys), ``keys`` or ``wait``."""
        try:
            action = self.parse(text)
        except CodecError:
            return "invalid"
        for item in action:
            if item.is_wait:
                continue
            if item.is_key:
                return "control" if item.keystrokes[:2] in ("C-", "M-") else "keys"
            if not item.runs_command:
                return "keys"
            return command_name(item.keystrokes) or "keys"
        return "wait"


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_name(line: str) -> str:
    """The program a command line starts (``sudo``/``env``/``VAR=x`` prefixes skipped), basename only."""
    first = line.strip().splitlines()[0] if line.strip() else ""
    try:
        words = shlex.split(first, comments=True)
    except ValueError:
        words = first.split()
    for word in words:
        if _ASSIGNMENT.match(word) or word in ("sudo", "env", "time", "nohup", "exec"):
            continue
        return word.rsplit("/", 1)[-1]
    return ""


TERMINUS_HEADERS = ("New Terminal Output:", "Current Terminal Screen:")


@dataclass(frozen=True)
class Screen:
    """A parsed terminal observation.

    ``lines`` are what checks read: right-stripped, trailing blank lines dropped, without a Terminus
    header. ``raw`` keeps every line exactly as given (trailing spaces, blank lines, ``\\r``) and
    ``header`` a Terminal-Bench ``New Terminal Output:`` / ``Current Terminal Screen:`` line, so
    :meth:`TerminalObservationCodec.render` gives the text back byte for byte. ``rows``/``cols`` is the
    geometry it was checked against (``None``: not checked).
    """

    lines: tuple[str, ...]
    rows: int | None = DEFAULT_ROWS
    cols: int | None = DEFAULT_COLS
    raw: tuple[str, ...] | None = None
    header: str | None = None

    @property
    def form(self) -> str | None:
        """``screen`` or ``incremental`` when a Terminus header says which, else ``None``."""
        if self.header is None:
            return None
        return "incremental" if self.header == TERMINUS_HEADERS[0] else "screen"


class TerminalObservationCodec(ObservationCodec):
    """Observations as text, in either screen form (see :mod:`.session`), losslessly.

    ``parse`` rejects tabs and escape sequences (a terminal shows neither) and, when the codec has a
    geometry, lines wider than ``cols`` and full screens taller than ``rows``; ``render(parse(x)) == x``.
    The domain's own codec has no geometry: a trajectory states its own, which ``screen_geometry`` checks.
    """

    def __init__(self, rows: int | None = DEFAULT_ROWS, cols: int | None = DEFAULT_COLS) -> None:
        self.rows, self.cols = rows, cols

    def parse(self, text: str) -> Screen:
        if not isinstance(text, str):
            raise CodecError(f"an observation is text, got {type(text).__name__}", where="observation")
        header, body = None, text
        for h in TERMINUS_HEADERS:
            if text == h or text.startswith(h + "\n"):
                header, body = h, text[len(h) + 1:] if len(text) > len(h) else None
                break
        raw = tuple(body.split("\n")) if body is not None else None
        lines = [line.rstrip() for line in (raw or ())]
        while lines and not lines[-1]:
            lines.pop()
        offset = 2 if header else 1
        if self.rows is not None and header != TERMINUS_HEADERS[0] and len(lines) > self.rows:
            raise CodecError(f"the screen has {len(lines)} lines but the terminal has {self.rows} rows",
                             where=f"line {self.rows + offset}", hint="keep only the visible screen")
        for i, line in enumerate(lines, offset):
            if "\t" in line or "\x1b" in line:
                raise CodecError("contains a tab or escape character, which a screen cannot show",
                                 where=f"line {i}", hint="expand tabs to spaces and drop escape sequences")
            if self.cols is not None and display_width(line) > self.cols:
                raise CodecError(f"{display_width(line)} columns wide, the terminal has {self.cols}",
                                 where=f"line {i}", hint="wrap long lines as the terminal does")
        return Screen(tuple(lines), self.rows, self.cols, raw, header)

    def render(self, observation: Screen) -> str:
        body = "\n".join(observation.raw if observation.raw is not None else observation.lines)
        if observation.header is None:
            return body
        return observation.header if observation.raw is None else f"{observation.header}\n{body}"

    def normalize(self, text: str) -> str:
        # Leading whitespace goes too: the judge strips every prediction, so a screen's blank top rows
        # (or a first line's indentation) cannot tell a faithful prediction from the reference.
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines).lstrip()


def display_width(line: str) -> int:
    """Terminal cells a line occupies (East-Asian wide characters take two)."""
    return sum(2 if _wide(ch) else 1 for ch in line)


def wrap_line(line: str, cols: int) -> list[str]:
    """How the terminal shows a logical line: a new row each time the next character would pass ``cols``
    cells (a wide character never straddles two rows); rows right-stripped."""
    if not line:
        return [""]
    rows, current, used = [], "", 0
    for ch in line:
        width = 2 if _wide(ch) else 1
        if used + width > cols:
            rows.append(current.rstrip())
            current, used = "", 0
        current += ch
        used += width
    rows.append(current.rstrip())
    return rows


def _wide(ch: str) -> bool:
    import unicodedata

    return unicodedata.east_asian_width(ch) in ("W", "F")
