"""AndroidWorld's JSON action schema: :class:`AndroidAction`, its parser and its renderer.

An action is one JSON object ``{"action_type": ..., ...}`` with the keys of AndroidWorld's
``JSONAction``: ``action_type`` (one of :data:`ACTION_TYPES`), ``index`` (an element of the screen's UI
element list) or ``x``/``y`` (pixels), never both, ``text``, ``direction`` (up/down/left/right),
``app_name``, ``goal_status`` (complete/infeasible), ``keycode`` (``KEYCODE_...``) and ``clear_text``.
A ``null`` value means the key is absent, as in AndroidWorld.

``parse`` is strict where AndroidWorld would reject the action (an unknown key, an index with x/y, a bad
direction or keycode) or could not execute it (a click with no target, a scroll with no direction), and
every problem is a :class:`~awctl.errors.CodecError` naming the key. ``render`` gives the canonical text
(``json.dumps`` spacing, keys in AndroidWorld's order); an action that came from ``parse`` renders back to
exactly the text it came from (see :class:`AndroidAction`), whether AndroidWorld's compact ``json_str`` or
an agent's spaced output.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, fields
from typing import Any

from awctl.errors import CodecError

CLICK, DOUBLE_TAP, LONG_PRESS = "click", "double_tap", "long_press"
INPUT_TEXT, KEYBOARD_ENTER = "input_text", "keyboard_enter"
NAVIGATE_HOME, NAVIGATE_BACK = "navigate_home", "navigate_back"
SCROLL, SWIPE, OPEN_APP, WAIT = "scroll", "swipe", "open_app", "wait"
STATUS, ANSWER, UNKNOWN = "status", "answer", "unknown"

#: The 14 action types of AndroidWorld's ``json_action.py``.
ACTION_TYPES: tuple[str, ...] = (
    CLICK, DOUBLE_TAP, SCROLL, SWIPE, INPUT_TEXT, NAVIGATE_HOME, NAVIGATE_BACK, KEYBOARD_ENTER,
    OPEN_APP, STATUS, WAIT, LONG_PRESS, ANSWER, UNKNOWN,
)
DIRECTIONS: tuple[str, ...] = ("up", "down", "left", "right")
GOAL_STATUSES: tuple[str, ...] = ("complete", "infeasible")
#: Keys in the order AndroidWorld's ``JSONAction`` declares them (the canonical rendering order).
KEYS: tuple[str, ...] = (
    "action_type", "index", "x", "y", "text", "direction", "goal_status", "app_name", "keycode", "clear_text",
)
#: Action types that act on one point of the screen (an element by index, or x/y).
POINT_ACTIONS: frozenset[str] = frozenset({CLICK, DOUBLE_TAP, LONG_PRESS})
_KEYCODE = re.compile(r"KEYCODE_[A-Z0-9_]+")
_MAX_JSON = 100_000  # an action is a few hundred bytes; anything huge is not an action


@dataclass(frozen=True)
class AndroidAction:
    """One AndroidWorld action. Equality compares the action's meaning, never its spacing.

    ``_source`` remembers the exact text :func:`parse_action` read together with the canonical text of
    the same action, so :func:`render_action` returns the original bytes while the action is unchanged
    (``dataclasses.replace`` keeps ``_source``, but the canonical texts then differ and it is ignored).
    """

    action_type: str
    index: int | None = None
    x: int | float | None = None
    y: int | float | None = None
    text: str | None = None
    direction: str | None = None
    goal_status: str | None = None
    app_name: str | None = None
    keycode: str | None = None
    clear_text: bool | None = None
    _source: tuple[str, str] | None = field(default=None, compare=False, repr=False)

    @property
    def target(self) -> str:
        """``"index"``, ``"xy"`` or ``"none"``: how the action names its target."""
        if self.index is not None:
            return "index"
        return "xy" if self.x is not None and self.y is not None else "none"

    def as_dict(self) -> dict[str, Any]:
        """The keys that are set, in AndroidWorld's order."""
        return {k: getattr(self, k) for k in KEYS if getattr(self, k) is not None}


def _where(key: str) -> str:
    return f"action key {key!r}"


def _int_like(value: Any, key: str) -> int:
    """AndroidWorld turns ``index`` into ``int(index)``: ints and digit strings are accepted."""
    if isinstance(value, bool):
        raise CodecError(f"must be an integer, got {value!r}", where=_where(key))
    if (isinstance(value, int) or (isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,9}\s*", value))
            or (isinstance(value, float) and value.is_integer() and abs(value) < 1e9)):
        out = int(value)
    else:
        raise CodecError(f"must be an integer, got {value!r}", where=_where(key), hint='e.g. "index": 3')
    if out < 0:
        raise CodecError(f"must not be negative, got {out}", where=_where(key))
    return out


def _coordinate(value: Any, key: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CodecError(f"must be a number of pixels, got {value!r}", where=_where(key), hint='e.g. "x": 540')
    if isinstance(value, float) and not math.isfinite(value):
        raise CodecError(f"must be a finite number, got {value!r}", where=_where(key))
    if value < 0:
        raise CodecError(f"must not be negative, got {value!r}", where=_where(key))
    return value


def _choice(value: Any, key: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise CodecError(f"must be one of {', '.join(choices)}; got {value!r}", where=_where(key))
    return str(value)


def action_from_dict(obj: Any) -> AndroidAction:
    """Validate a decoded JSON object (see the module docstring); raises :class:`CodecError`."""
    if not isinstance(obj, dict):
        raise CodecError(f"an action is a JSON object, got {type(obj).__name__}",
                         hint='e.g. {"action_type": "click", "index": 3}')
    unknown = [k for k in obj if k not in KEYS]
    if unknown:
        raise CodecError(f"unknown key {unknown[0]!r}", where="action",
                         hint=f"AndroidWorld action keys: {', '.join(KEYS)}")
    kind = obj.get("action_type")
    if kind is None:
        raise CodecError("missing", where=_where("action_type"), hint=f"one of {', '.join(ACTION_TYPES)}")
    kind = _choice(kind, "action_type", ACTION_TYPES)
    values: dict[str, Any] = {"action_type": kind}
    if obj.get("index") is not None:
        values["index"] = _int_like(obj["index"], "index")
    for key in ("x", "y"):
        if obj.get(key) is not None:
            values[key] = _coordinate(obj[key], key)
    if "index" in values and ("x" in values or "y" in values):
        raise CodecError("give either an element index or x/y coordinates, never both", where="action",
                         hint='e.g. {"action_type": "click", "index": 3} or {"action_type": "click", "x": 540, '
                              '"y": 1200}')
    if ("x" in values) != ("y" in values):
        missing = "y" if "x" in values else "x"
        raise CodecError(f"coordinates need both x and y; {missing!r} is missing", where="action")
    if obj.get("text") is not None:
        text = obj["text"]
        if isinstance(text, (dict, list)):
            raise CodecError(f"must be a string, got {type(text).__name__}", where=_where("text"))
        values["text"] = text if isinstance(text, str) else str(text)  # AndroidWorld: str(5) == "5"
    if obj.get("direction") not in (None, ""):
        values["direction"] = _choice(obj["direction"], "direction", DIRECTIONS)
    if obj.get("goal_status") is not None:
        values["goal_status"] = _choice(obj["goal_status"], "goal_status", GOAL_STATUSES)
    if obj.get("app_name") is not None:
        if not isinstance(obj["app_name"], str) or not obj["app_name"].strip():
            raise CodecError(f"must be a non-empty string, got {obj['app_name']!r}", where=_where("app_name"))
        values["app_name"] = obj["app_name"]
    if obj.get("keycode") is not None:
        code = obj["keycode"]
        if not isinstance(code, str) or not _KEYCODE.fullmatch(code):
            raise CodecError(f"must be an Android key code name starting KEYCODE_, got {code!r}",
                             where=_where("keycode"), hint='e.g. "KEYCODE_ENTER"')
        values["keycode"] = code
    if obj.get("clear_text") is not None:
        if not isinstance(obj["clear_text"], bool):
            raise CodecError(f"must be true or false, got {obj['clear_text']!r}", where=_where("clear_text"))
        values["clear_text"] = obj["clear_text"]
    action = AndroidAction(**values)
    _require(action)
    return action


def _require(a: AndroidAction) -> None:
    """What each action type needs to be executable (AndroidWorld raises or does nothing otherwise)."""
    need: str | None = None
    if a.action_type in POINT_ACTIONS and a.target == "none":
        need = 'an element "index" or "x"/"y" coordinates'
    elif a.action_type == INPUT_TEXT and a.text is None:
        need = 'the "text" to type'
    elif a.action_type in (SCROLL, SWIPE) and a.direction is None:
        need = 'a "direction" (up, down, left or right)'
    elif a.action_type == OPEN_APP and a.app_name is None:
        need = 'an "app_name"'
    elif a.action_type == STATUS and a.goal_status is None:
        need = 'a "goal_status" (complete or infeasible)'
    elif a.action_type == ANSWER and a.text is None:
        need = 'the answer "text"'
    if need:
        raise CodecError(f"a {a.action_type} action needs {need}", where="action")


def canonical_action(action: AndroidAction) -> str:
    """The canonical text: ``json.dumps`` with default spacing, keys in AndroidWorld's order."""
    return json.dumps(action.as_dict(), ensure_ascii=False)


def parse_action(text: str) -> AndroidAction:
    """Parse one JSON action object (surrounding whitespace allowed); raises only :class:`CodecError`."""
    if not isinstance(text, str):
        raise CodecError(f"an action is text, got {type(text).__name__}")
    if len(text) > _MAX_JSON:
        raise CodecError(f"{len(text)} characters is far too long for one action")
    body = text.strip()
    if not body:
        raise CodecError("empty action", hint='e.g. {"action_type": "navigate_back"}')
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise CodecError(f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", where="action",
                         hint='an action is one JSON object, e.g. {"action_type": "click", "index": 3}') from None
    except (ValueError, RecursionError) as exc:  # over-long integers, absurd nesting
        raise CodecError(f"invalid JSON ({type(exc).__name__})", where="action") from None
    action = action_from_dict(obj)
    return _with_source(action, text)


def _with_source(action: AndroidAction, text: str) -> AndroidAction:
    canon = canonical_action(action)
    if canon == text:
        return action
    values = {f.name: getattr(action, f.name) for f in fields(action) if f.name != "_source"}
    return AndroidAction(**values, _source=(canon, text))


def render_action(action: AndroidAction) -> str:
    """The text of ``action``: the exact parsed text while unchanged, else :func:`canonical_action`."""
    canon = canonical_action(action)
    if action._source is not None and action._source[0] == canon:
        return action._source[1]
    return canon


_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n?[ \t]*```", re.S)
_ACTION_LABEL = re.compile(r"(?:^|\n)\s*(?:\*\*)?Action(?:\*\*)?\s*:\s*(?:\*\*)?\s*", re.I)


def extract_action_json(text: str) -> str:
    """The JSON object inside an agent's or a log's wrapping: a ```json fence, a ``Reason: ... Action:
    {...}`` answer (AndroidWorld's T3A/M3A output), or the bare object. Returns the object's text (or the
    stripped input when nothing better is found, so the parser reports the problem)."""
    fence = _FENCE.search(text)
    if fence:
        return fence.group(1).strip()
    labels = list(_ACTION_LABEL.finditer(text))
    if labels:
        label = labels[-1]  # the last "Action:" wins (a reason may quote an earlier one)
        rest = text[label.end():].strip()
        if rest.startswith("{"):
            return _balanced(rest) or rest
    return text.strip()


def _balanced(text: str) -> str | None:
    """The leading ``{...}`` of ``text`` (string-aware brace matching), or None."""
    depth, in_string, escape = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return None
