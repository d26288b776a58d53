"""Desktop actions in their two public forms, parsed without running anything.

**Python code** (AgentWorldBench's os actions and OSWorld's ``pyautogui`` action space): free-form code,
usually ``pyautogui`` calls, optionally in ```` ```python ```` fences, where a block's last line may be
``WAIT``, ``DONE`` or ``FAIL``. The code is parsed with :mod:`ast`, never executed here; every
``pyautogui`` call (also through ``import pyautogui as pg`` and ``from pyautogui import click``) becomes a
:class:`GuiCall` with its literal arguments bound by pyautogui's signatures. Literal key names are checked
against :data:`KEYBOARD_KEYS` (OSWorld's list, pyautogui's names) and literal coordinates must not be
negative, nor (when a screen size is known) outside the screen.

**computer_13 JSON** (OSWorld's ``computer_13`` action space): one object per action, optionally in
```` ```json ```` fences, ``{"action_type": "CLICK", "parameters": {"x": 10, "y": 20, "button": "left"}}``
or with the parameters flat beside ``action_type`` (OSWorld's controller reads both). The 16 types and
their parameters follow OSWorld's ``ACTION_SPACE``; a parameter it does not list is an error.

**Special strings**: ``WAIT``, ``DONE``, ``FAIL`` alone.

:class:`OsAction` keeps the text verbatim (``render`` returns it), so any accepted text round-trips byte
for byte; :func:`computer13_text` and :func:`code_text` write new actions canonically.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from awctl.errors import CodecError

SPECIAL = ("WAIT", "DONE", "FAIL")

# pyautogui's key names (its KEY_NAMES): OSWorld's desktop_env.actions.KEYBOARD_KEYS plus "space", which
# pyautogui accepts and OSWorld's list spells " ".
KEYBOARD_KEYS: tuple[str, ...] = (
    "\t", "\n", "\r", " ", "!", '"', "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/",
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", ":", ";", "<", "=", ">", "?", "@", "[", "\\", "]",
    "^", "_", "`", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q",
    "r", "s", "t", "u", "v", "w", "x", "y", "z", "{", "|", "}", "~", "accept", "add", "alt", "altleft",
    "altright", "apps", "backspace", "browserback", "browserfavorites", "browserforward", "browserhome",
    "browserrefresh", "browsersearch", "browserstop", "capslock", "clear", "convert", "ctrl", "ctrlleft",
    "ctrlright", "decimal", "del", "delete", "divide", "down", "end", "enter", "esc", "escape", "execute",
    "f1", "f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f2", "f20", "f21", "f22",
    "f23", "f24", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "final", "fn", "hanguel", "hangul", "hanja",
    "help", "home", "insert", "junja", "kana", "kanji", "launchapp1", "launchapp2", "launchmail",
    "launchmediaselect", "left", "modechange", "multiply", "nexttrack", "nonconvert", "num0", "num1",
    "num2", "num3", "num4", "num5", "num6", "num7", "num8", "num9", "numlock", "pagedown", "pageup",
    "pause", "pgdn", "pgup", "playpause", "prevtrack", "print", "printscreen", "prntscrn", "prtsc",
    "prtscr", "return", "right", "scrolllock", "select", "separator", "shift", "shiftleft", "shiftright",
    "sleep", "stop", "subtract", "tab", "up", "volumedown", "volumemute", "volumeup", "win", "winleft",
    "winright", "yen", "command", "option", "optionleft", "optionright", "space",
)
_KEYS = frozenset(KEYBOARD_KEYS)
BUTTONS = ("left", "right", "middle")


def normalize_key(key: str) -> str:
    """pyautogui's own normalisation: names longer than one character are case-insensitive."""
    return key.lower() if len(key) > 1 else key


def known_key(key: str) -> bool:
    return normalize_key(key) in _KEYS


# ── structured forms ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class GuiCall:
    """One input event group an action performs, in either form.

    ``name`` is pyautogui's function name (computer_13 actions map onto the call OSWorld's controller makes:
    ``CLICK`` → ``click``, ``TYPING`` → ``typewrite``, ``HOTKEY`` → ``hotkey``...). ``point`` is the literal
    absolute target (None when absent, relative or computed), ``keys`` the literal key names pressed in
    order, ``text`` the literal text typed, ``line`` the line in the action text (1-based).
    """

    name: str
    line: int = 1
    point: tuple[float, float] | None = None
    keys: tuple[str, ...] = ()
    text: str | None = None
    button: str | None = None
    clicks: int | None = None


@dataclass(frozen=True)
class Computer13:
    """One computer_13 action: ``action_type`` and its parameters (in the text's order)."""

    action_type: str
    parameters: tuple[tuple[str, Any], ...] = ()

    def param(self, key: str, default: Any = None) -> Any:
        return dict(self.parameters).get(key, default)


@dataclass(frozen=True)
class OsAction:
    """A parsed action. ``form`` is ``code``, ``computer_13`` or ``special``; ``text`` the verbatim text.

    ``code`` is the Python source (fences and a trailing special line removed), ``commands`` the computer_13
    actions, ``calls`` the input events of either, ``special`` a ``WAIT``/``DONE``/``FAIL`` that ends the
    action (alone or as a code block's last line).
    """

    form: Literal["code", "computer_13", "special"]
    text: str
    code: str = ""
    commands: tuple[Computer13, ...] = ()
    calls: tuple[GuiCall, ...] = ()
    special: str | None = None
    other_calls: tuple[str, ...] = field(default=())

    @property
    def family(self) -> str:
        if self.form == "computer_13" and self.commands:
            return self.commands[0].action_type
        if self.calls:
            return f"pyautogui.{self.calls[0].name}"
        if self.special:
            return self.special
        return "code"

    def typed_text(self) -> str | None:
        """The text this action types, when every typing call is literal and the other calls only move the
        pointer, click, wait or move the caret (``None`` otherwise): what a text field receiving the
        keystrokes gains. Enter counts as a line break."""
        parts: list[str] = []
        for call in self.calls:
            if call.name in ("typewrite", "write") and call.text is not None:
                parts.append(call.text)
            elif call.name in ("typewrite", "write") and call.keys and all(len(k) == 1 for k in call.keys):
                parts.append("".join(call.keys))
            elif call.name == "press" and call.keys and all(k in ("enter", "return", "\n") for k in call.keys):
                parts.append("\n" * len(call.keys) * max(1, call.clicks or 1))
            elif call.name in _POINTER_CALLS or call.name == "sleep" or (
                call.name in ("press", "hotkey") and call.keys and _caret_only(call.keys)
            ):
                continue
            else:
                return None
        return "".join(parts) if parts else None

    def focus_point(self) -> tuple[float, float] | None:
        """Where the last click before the first typed character lands (the field that gets the text), or
        None when the action types without clicking first (or clicks where its code does not say)."""
        point = None
        for call in self.calls:
            if call.name in ("typewrite", "write", "press"):
                break
            if call.name in _POINTER_CALLS and call.name not in ("moveTo", "move", "moveRel"):
                point = call.point
        return point


_POINTER_CALLS = frozenset({"moveTo", "move", "moveRel", "click", "leftClick", "doubleClick", "tripleClick"})
_CARET_KEYS = frozenset({"home", "end", "up", "down", "left", "right", "pageup", "pagedown", "pgup", "pgdn"})
_MODIFIERS = frozenset({"ctrl", "ctrlleft", "ctrlright", "shift", "shiftleft", "shiftright"})


def _caret_only(keys: tuple[str, ...]) -> bool:
    """Keys that move the caret or select (Ctrl+End, Shift+Down, Ctrl+A...) and insert nothing."""
    rest = [k for k in keys if k not in _MODIFIERS]
    if keys == ("ctrl", "a"):
        return True
    return bool(rest) and all(k in _CARET_KEYS for k in rest)


# ── pyautogui signatures (positional parameter names) ────────────────────────────────────────────────

_SIGNATURES: dict[str, tuple[str, ...]] = {
    "click": ("x", "y", "clicks", "interval", "button", "duration", "tween"),
    "leftClick": ("x", "y", "interval", "duration", "tween"),
    "rightClick": ("x", "y", "interval", "duration", "tween"),
    "middleClick": ("x", "y", "interval", "duration", "tween"),
    "doubleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "tripleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "moveTo": ("x", "y", "duration", "tween"),
    "dragTo": ("x", "y", "duration", "tween", "button", "mouseDownUp"),
    "mouseDown": ("x", "y", "button", "duration", "tween"),
    "mouseUp": ("x", "y", "button", "duration", "tween"),
    "scroll": ("clicks", "x", "y"),
    "hscroll": ("clicks", "x", "y"),
    "vscroll": ("clicks", "x", "y"),
    "moveRel": ("xOffset", "yOffset", "duration", "tween"),
    "move": ("xOffset", "yOffset", "duration", "tween"),
    "dragRel": ("xOffset", "yOffset", "duration", "tween", "button", "mouseDownUp"),
    "drag": ("xOffset", "yOffset", "duration", "tween", "button", "mouseDownUp"),
    "typewrite": ("message", "interval"),
    "write": ("message", "interval"),
    "press": ("keys", "presses", "interval"),
    "keyDown": ("key",),
    "keyUp": ("key",),
    "hotkey": (),  # *args
    "sleep": ("seconds",),
}
_CLICKS = {"doubleClick": 2, "tripleClick": 3}
_BUTTON_OF = {"rightClick": "right", "middleClick": "middle", "leftClick": "left"}

_NOT_LITERAL = object()


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass
class _Context:
    where: str
    screen: tuple[int, int] | None
    line_offset: int = 0


def _check_point(x: Any, y: Any, ctx: _Context, line: int, what: str) -> tuple[float, float] | None:
    if not (_is_number(x) and _is_number(y)):
        return None
    if x < 0 or y < 0:
        raise CodecError(f"{what} ({x}, {y}) has a negative coordinate", where=f"{ctx.where}: line {line}")
    if ctx.screen is not None and (x >= ctx.screen[0] or y >= ctx.screen[1]):
        raise CodecError(
            f"{what} ({x}, {y}) lies outside the {ctx.screen[0]}x{ctx.screen[1]} screen",
            where=f"{ctx.where}: line {line}",
        )
    return (float(x), float(y))


def _check_keys(keys: list[str], ctx: _Context, line: int, fn: str) -> tuple[str, ...]:
    for key in keys:
        if not known_key(key):
            raise CodecError(
                f"pyautogui.{fn}: unknown key name {key!r}", where=f"{ctx.where}: line {line}",
                hint="key names are pyautogui's (OSWorld's KEYBOARD_KEYS): 'enter', 'ctrl', 'alt', 'f4', 'space', 'a'...",
            )
    return tuple(normalize_key(k) for k in keys)


def _bind(fn: str, call: ast.Call) -> dict[str, ast.AST]:
    params = _SIGNATURES.get(fn, ())
    bound: dict[str, ast.AST] = {}
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(params):
            bound[params[i]] = arg
    for kw in call.keywords:
        if kw.arg is not None:
            bound[kw.arg] = kw.value
    return bound


def _gui_call(fn: str, call: ast.Call, ctx: _Context) -> GuiCall:
    line = getattr(call, "lineno", 1) + ctx.line_offset
    bound = _bind(fn, call)
    point = None
    keys: tuple[str, ...] = ()
    text = None
    button = _BUTTON_OF.get(fn)
    clicks = _CLICKS.get(fn)
    if "x" in bound:
        x = _literal(bound["x"])
        y = _literal(bound.get("y"))
        if isinstance(x, (tuple, list)) and len(x) == 2 and "y" not in bound:
            x, y = x  # pyautogui.click((x, y))
        point = _check_point(x, y, ctx, line, f"pyautogui.{fn} target")
    if fn == "hotkey":
        values = [_literal(a) for a in call.args]
        if all(isinstance(v, str) for v in values):
            keys = _check_keys(values, ctx, line, fn)  # type: ignore[arg-type]
    elif fn in ("press", "keyDown", "keyUp"):
        v = _literal(bound.get("keys", bound.get("key")))
        if isinstance(v, str):
            keys = _check_keys([v], ctx, line, fn)
        elif isinstance(v, (list, tuple)) and all(isinstance(k, str) for k in v):
            keys = _check_keys(list(v), ctx, line, fn)
        presses = _literal(bound.get("presses"))
        clicks = presses if isinstance(presses, int) and not isinstance(presses, bool) else None
    elif fn in ("typewrite", "write"):
        v = _literal(bound.get("message"))
        if isinstance(v, str):
            text = v
        elif isinstance(v, (list, tuple)) and all(isinstance(k, str) for k in v):
            keys = _check_keys(list(v), ctx, line, fn)
    if fn in _SIGNATURES and "button" in bound:
        b = _literal(bound["button"])
        if isinstance(b, str):
            if b not in BUTTONS and b not in ("primary", "secondary"):
                raise CodecError(f"pyautogui.{fn}: unknown mouse button {b!r}", where=f"{ctx.where}: line {line}",
                                 hint="buttons: 'left', 'middle', 'right'")
            button = b
    if fn == "click" and "clicks" in bound:
        c = _literal(bound["clicks"])
        clicks = c if isinstance(c, int) and not isinstance(c, bool) else None
    return GuiCall(fn, line, point, keys, text, button, clicks)


def _pyautogui_names(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """Names bound to the pyautogui module, and names imported from it (local → function)."""
    modules = {"pyautogui"}  # OSWorld runs action code after `import pyautogui`
    functions: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "pyautogui":
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module == "pyautogui":
            for alias in node.names:
                functions[alias.asname or alias.name] = alias.name
    return modules, functions


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        inner = _call_name(func.value)
        return f"{inner}.{func.attr}" if inner else func.attr
    return ""


def parse_code(code: str, where: str, screen: tuple[int, int] | None, line_offset: int = 0) -> tuple[
    tuple[GuiCall, ...], tuple[str, ...]
]:
    """The pyautogui calls (and the names of the other calls) of Python ``code``, in source order."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        line = (exc.lineno or 1) + line_offset
        raise CodecError(f"not valid Python: {exc.msg}", where=f"{where}: line {line}",
                         hint="an os action is Python code (pyautogui calls), computer_13 JSON, or WAIT/DONE/FAIL"
                         ) from None
    except (ValueError, MemoryError, RecursionError) as exc:
        raise CodecError(f"not valid Python: {exc}", where=where) from None
    ctx = _Context(where, screen, line_offset)
    modules, functions = _pyautogui_names(tree)
    calls: list[tuple[int, int, GuiCall]] = []
    others: list[tuple[int, int, str]] = []
    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        raise CodecError("Python code nests too deeply", where=where) from None
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        fn = None
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.value.id in modules:
                fn = node.func.attr
        elif isinstance(node.func, ast.Name) and node.func.id in functions:
            fn = functions[node.func.id]
        pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if fn is not None:
            calls.append((*pos, _gui_call(fn, node, ctx)))
        else:
            others.append((*pos, _call_name(node.func)))
    calls.sort(key=lambda t: (t[0], t[1]))
    others.sort(key=lambda t: (t[0], t[1]))
    return tuple(c for _, _, c in calls), tuple(n for _, _, n in others if n)


# ── computer_13 ──────────────────────────────────────────────────────────────────────────────────────

_C13_PARAMS: dict[str, dict[str, bool]] = {  # parameter -> optional
    "MOVE_TO": {"x": False, "y": False},
    "CLICK": {"button": True, "x": True, "y": True, "num_clicks": True},
    "MOUSE_DOWN": {"button": True},
    "MOUSE_UP": {"button": True},
    "RIGHT_CLICK": {"x": True, "y": True},
    "DOUBLE_CLICK": {"x": True, "y": True},
    "DRAG_TO": {"x": False, "y": False},
    "SCROLL": {"dx": False, "dy": False},
    "TYPING": {"text": False},
    "PRESS": {"key": False},
    "KEY_DOWN": {"key": False},
    "KEY_UP": {"key": False},
    "HOTKEY": {"keys": False},
    "WAIT": {},
    "FAIL": {},
    "DONE": {},
}
ACTION_TYPES: tuple[str, ...] = tuple(_C13_PARAMS)
_C13_CALL = {"MOVE_TO": "moveTo", "CLICK": "click", "MOUSE_DOWN": "mouseDown", "MOUSE_UP": "mouseUp",
             "RIGHT_CLICK": "rightClick", "DOUBLE_CLICK": "doubleClick", "DRAG_TO": "dragTo",
             "SCROLL": "scroll", "TYPING": "typewrite", "PRESS": "press", "KEY_DOWN": "keyDown",
             "KEY_UP": "keyUp", "HOTKEY": "hotkey"}


def parse_computer13(obj: Any, where: str, screen: tuple[int, int] | None, line: int = 1) -> tuple[
    Computer13, GuiCall | None
]:
    """Validate one computer_13 action object against OSWorld's ACTION_SPACE."""
    ctx = _Context(where, screen)
    if not isinstance(obj, dict):
        raise CodecError(f"a computer_13 action is a JSON object, got {type(obj).__name__}", where=where)
    kind = obj.get("action_type")
    if not isinstance(kind, str) or kind not in _C13_PARAMS:
        raise CodecError(f"unknown action_type {kind!r}", where=where,
                         hint=f"computer_13 action types: {', '.join(ACTION_TYPES)}")
    if "parameters" in obj:
        extra = sorted(set(obj) - {"action_type", "parameters"})
        if extra:
            raise CodecError(f"{kind}: keys {extra} beside 'parameters'", where=where)
        params = obj["parameters"]
        if not isinstance(params, dict):
            raise CodecError(f"{kind}: 'parameters' must be an object", where=where)
    else:
        params = {k: v for k, v in obj.items() if k != "action_type"}
    spec = _C13_PARAMS[kind]
    unknown = [k for k in params if k not in spec]
    if unknown:
        raise CodecError(f"{kind}: unknown parameter {unknown[0]!r}", where=where,
                         hint=f"{kind} takes {', '.join(spec) or 'no parameters'}")
    missing = [k for k, optional in spec.items() if not optional and k not in params]
    if missing:
        raise CodecError(f"{kind}: missing parameter {missing[0]!r}", where=where)
    if ("x" in params) != ("y" in params):
        raise CodecError(f"{kind}: give x and y together", where=where)
    for k in ("x", "y"):
        if k in params and not _is_number(params[k]):
            raise CodecError(f"{kind}: {k} must be a number, got {params[k]!r}", where=where)
    for k in ("dx", "dy"):
        if k in params and not (isinstance(params[k], int) and not isinstance(params[k], bool)):
            raise CodecError(f"{kind}: {k} must be an integer, got {params[k]!r}", where=where)
    if "button" in params and params["button"] not in BUTTONS:
        raise CodecError(f"{kind}: button must be one of {list(BUTTONS)}, got {params['button']!r}", where=where)
    if "num_clicks" in params and (params["num_clicks"] not in (1, 2, 3) or isinstance(params["num_clicks"], bool)):
        raise CodecError(f"{kind}: num_clicks must be 1, 2 or 3, got {params['num_clicks']!r}", where=where)
    if "text" in params and not isinstance(params["text"], str):
        raise CodecError(f"{kind}: text must be a string", where=where)
    keys: tuple[str, ...] = ()
    if "key" in params:
        if not isinstance(params["key"], str) or not known_key(params["key"]):
            raise CodecError(f"{kind}: unknown key {params['key']!r}", where=where,
                             hint="key names are OSWorld's KEYBOARD_KEYS (pyautogui's)")
        keys = (normalize_key(params["key"]),)
    if "keys" in params:
        ks = params["keys"]
        if not isinstance(ks, list) or not ks or not all(isinstance(k, str) and known_key(k) for k in ks):
            raise CodecError(f"{kind}: keys must be a non-empty list of key names, got {ks!r}", where=where,
                             hint="key names are OSWorld's KEYBOARD_KEYS (pyautogui's)")
        keys = tuple(normalize_key(k) for k in ks)
    point = None
    if "x" in params:
        point = _check_point(params["x"], params["y"], ctx, line, f"{kind} target")
    command = Computer13(kind, tuple(params.items()))
    if kind in ("WAIT", "FAIL", "DONE"):
        return command, None
    clicks = params.get("num_clicks") if kind == "CLICK" else 2 if kind == "DOUBLE_CLICK" else None
    button = params.get("button") or ("right" if kind == "RIGHT_CLICK" else None)
    return command, GuiCall(_C13_CALL[kind], line, point, keys, params.get("text"), button, clicks)


def computer13_to_python(command: Computer13) -> str:
    """The pyautogui code OSWorld's controller runs for ``command`` (without its random tweening)."""
    p = dict(command.parameters)
    kind = command.action_type
    xy = f"x={p['x']!r}, y={p['y']!r}" if "x" in p else ""

    def args(*parts: str) -> str:
        return ", ".join(x for x in parts if x)

    if kind == "MOVE_TO":
        return f"pyautogui.moveTo({p['x']!r}, {p['y']!r})"
    if kind == "CLICK":
        return "pyautogui.click({})".format(args(
            f"button={p['button']!r}" if "button" in p else "", xy,
            f"clicks={p['num_clicks']!r}" if "num_clicks" in p else ""))
    if kind in ("MOUSE_DOWN", "MOUSE_UP"):
        fn = "mouseDown" if kind == "MOUSE_DOWN" else "mouseUp"
        button = f"button={p['button']!r}" if "button" in p else ""
        return f"pyautogui.{fn}({button})"
    if kind == "RIGHT_CLICK":
        return f"pyautogui.rightClick({xy})"
    if kind == "DOUBLE_CLICK":
        return f"pyautogui.doubleClick({xy})"
    if kind == "DRAG_TO":
        return f"pyautogui.dragTo({p['x']!r}, {p['y']!r}, duration=0.5, button='left', mouseDownUp=True)"
    if kind == "SCROLL":
        return f"pyautogui.hscroll({p['dx']!r})\npyautogui.vscroll({p['dy']!r})"
    if kind == "TYPING":
        return f"pyautogui.typewrite({p['text']!r})"
    if kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        fn = {"PRESS": "press", "KEY_DOWN": "keyDown", "KEY_UP": "keyUp"}[kind]
        return f"pyautogui.{fn}({p['key']!r})"
    if kind == "HOTKEY":
        return "pyautogui.hotkey({})".format(", ".join(repr(k) for k in p["keys"]))
    return ""


# ── whole action texts ───────────────────────────────────────────────────────────────────────────────

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.S)


def _blocks(text: str) -> list[tuple[str, str, int]] | None:
    """``(language, content, first line)`` of each fence when the text is only fenced blocks, else None."""
    blocks = []
    pos = 0
    for m in _FENCE.finditer(text):
        if text[pos:m.start()].strip():
            return None
        first_line = text.count("\n", 0, m.start(2)) + 1
        blocks.append((m.group(1).lower(), m.group(2), first_line))
        pos = m.end()
    if not blocks or text[pos:].strip():
        return None
    return blocks


def parse_action(text: str, where: str = "action", screen: tuple[int, int] | None = None) -> OsAction:
    """Parse an action text (see the module docstring); raises :class:`CodecError` naming the line."""
    if not isinstance(text, str):
        raise CodecError(f"expected text, got {type(text).__name__}", where=where)
    stripped = text.strip()
    if not stripped:
        raise CodecError("empty action", where=where,
                         hint="give Python code (pyautogui calls), a computer_13 JSON object, or WAIT/DONE/FAIL")
    if stripped in SPECIAL:
        return OsAction("special", text, special=stripped)
    blocks = _blocks(text)
    if blocks is None:
        blocks = [("", text, 1)]
    json_blocks = [b for b in blocks if b[0] == "json" or (not b[0] and b[1].lstrip().startswith(("{", "[")))]
    if json_blocks and len(json_blocks) != len(blocks):
        raise CodecError("mixes computer_13 JSON and Python code blocks", where=where)
    if json_blocks:
        return _json_action(text, blocks, where, screen)
    code_parts: list[str] = []
    calls: list[GuiCall] = []
    others: list[str] = []
    special = None
    for i, (_, content, first_line) in enumerate(blocks):
        if special is not None:
            raise CodecError(f"code follows {special}", where=f"{where}: line {first_line}")
        lines = content.rstrip().split("\n")
        last = lines[-1].strip() if lines else ""
        if last in SPECIAL:
            special = last
            content = "\n".join(lines[:-1])
        if not content.strip():
            continue
        c, o = parse_code(content, where if len(blocks) == 1 else f"{where} (block {i + 1})", screen, first_line - 1)
        calls.extend(c)
        others.extend(o)
        code_parts.append(content.strip("\n"))
    if not code_parts:
        if special is None:
            raise CodecError("no code in the code block", where=where)
        return OsAction("special", text, special=special)
    return OsAction("code", text, code="\n".join(code_parts), calls=tuple(calls), special=special,
                    other_calls=tuple(others))


def _json_action(text: str, blocks: list[tuple[str, str, int]], where: str,
                 screen: tuple[int, int] | None) -> OsAction:
    commands: list[Computer13] = []
    calls: list[GuiCall] = []
    special = None
    for i, (_, content, first_line) in enumerate(blocks):
        w = where if len(blocks) == 1 else f"{where} (block {i + 1})"
        try:
            obj = json.loads(content)
        except (json.JSONDecodeError, RecursionError) as exc:
            detail = f"{exc.msg} at line {exc.lineno + first_line - 1}" if isinstance(exc, json.JSONDecodeError) \
                else "nested too deeply"
            raise CodecError(f"invalid computer_13 JSON ({detail})", where=w) from None
        command, call = parse_computer13(obj, w, screen, first_line)
        if special is not None:
            raise CodecError(f"an action follows {special}", where=w)
        commands.append(command)
        if call is not None:
            calls.append(call)
        if command.action_type in SPECIAL:
            special = command.action_type
    return OsAction("computer_13", text, commands=tuple(commands), calls=tuple(calls), special=special)


def action_python(action: OsAction) -> str:
    """The Python code that performs ``action`` (empty for WAIT/DONE/FAIL)."""
    if action.form == "code":
        return action.code
    if action.form == "computer_13":
        return "\n".join(p for p in (computer13_to_python(c) for c in action.commands) if p)
    return ""


def computer13_text(action_type: str, **parameters: Any) -> str:
    """Canonical text of a computer_13 action: ``{"action_type": ..., "parameters": {...}}``."""
    return json.dumps({"action_type": action_type, "parameters": parameters}, ensure_ascii=False)


def code_text(code: str) -> str:
    """Canonical text of a Python action: the code in a ```python fence."""
    return f"```python\n{code.strip()}\n```"
