"""Action and observation codecs of the web domain (BrowserGym's high-level actions and accessibility tree).

Actions
-------
One or more BrowserGym high-level action calls, one per line (BrowserGym's "multiaction" mode), e.g.::

    fill('12', 'blue mug')
    click('13')

Each call is parsed with :mod:`ast` (never evaluated): a plain function name from :data:`ACTIONS`, positional
and keyword arguments that are Python literals of the parameter's type. The canonical text writes required
arguments positionally, optional arguments as keywords only when they differ from their default, and every
literal with :func:`repr` (``click('12', button='right')``), one call per line. ``parse`` returns the calls as
a :class:`WebCalls` list that keeps the text it was read from, and ``render`` gives that text back byte for
byte while the list is unchanged (``fill('21',  'x')`` stays as written); :meth:`WebActionCodec.canonical`
gives the canonical text.

Observations
------------
Blocks separated by one blank line. The page is BrowserGym's flattened accessibility tree: one node per
line, indented by one tab per depth, ``[bid] role 'name'`` (no ``[bid]`` for nodes without one, ``generic``
without a name when it has none), then `` value='…'`` and comma-joined properties (``, focused``,
``, url='…'``, ``, checked='true'``). Header blocks give the open tabs (and so URL and title) and the error
of the last action, as the real environment writes them::

    # Open tabs
    Tab 0 (active tab):
        Title: Acme Shop
        URL: http://shop.test/

    # Last action error
    no element with bid '99' on the page

    # Accessibility tree
    RootWebArea 'Acme Shop', focused
    \t[5] heading 'Acme Shop'
    \t[6] link 'Cart (0)', url='http://shop.test/cart'

``URL: …`` / ``Title: …`` lines without a tabs block, any ``#`` heading level and trees without a heading are
read too. Blocks that are neither (free text, HTML, Markdown) are kept verbatim; the observation's
``representation`` says which page form it carries (``axtree``, ``html`` or ``text``). ``render(parse(x))``
returns ``x`` byte for byte. A block declared a tree by its heading (``# Accessibility tree``,
``## AXTree:``) whose later line is not a node raises :class:`~awctl.errors.CodecError` naming the line; a
block without such a heading that only starts like a tree (another program's layout) is kept as text with
the first offending line in ``problems``, and the ``lines_parse`` verifier judges it against the layout the
trajectory established.

WebArena's id-based action syntax (``click [42]``, ``type [57] [text] [1]``, ``scroll [down]``, ``stop
[answer]``) is read as a second dialect and written back in it; verifiers do not interpret it.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

# ── actions ──────────────────────────────────────────────────────────────────────────────────────────

_REQUIRED = object()
BUTTONS = ("left", "middle", "right")
MODIFIERS = ("Alt", "Control", "ControlOrMeta", "Meta", "Shift")


@dataclass(frozen=True)
class Param:
    """One parameter of an action: ``kind`` is ``str``, ``num``, ``int``, ``strs`` (a string or a list of
    strings), ``button`` or ``modifiers``."""

    name: str
    kind: str
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(frozen=True)
class ActionSpec:
    name: str
    params: tuple[Param, ...]
    description: str
    example: str

    def signature(self) -> str:
        types = {"str": "str", "num": "float", "int": "int", "strs": "str | list[str]",
                 "button": "Literal['left', 'middle', 'right']", "modifiers": "list[str]"}
        parts = []
        for p in self.params:
            text = f"{p.name}: {types[p.kind]}"
            if not p.required:
                text += f" = {_literal(list(p.default) if isinstance(p.default, tuple) else p.default)}"
            parts.append(text)
        return f"{self.name}({', '.join(parts)})"


def _spec(name: str, params: str, description: str, example: str) -> ActionSpec:
    out = []
    for item in filter(None, (s.strip() for s in params.split(","))):
        pname, _, rest = item.partition(":")
        kind, _, default = rest.partition("=")
        value: Any = _REQUIRED
        if default:
            value = ast.literal_eval(default)
            value = tuple(value) if isinstance(value, list) else value
        out.append(Param(pname, kind, value))
    return ActionSpec(name, tuple(out), description, example)


_BTN = "button:button='left'"
#: The BrowserGym high-level action set (chat, infeasible, bid, coordinate, navigation and tab actions).
ACTIONS: dict[str, ActionSpec] = {s.name: s for s in (
    _spec("noop", "wait_ms:num=1000", "Do nothing; optionally wait the given milliseconds.", "noop(500)"),
    _spec("send_msg_to_user", "text:str", "Send a message to the user.", "send_msg_to_user('The total is $42.')"),
    _spec("report_infeasible", "reason:str", "Tell the user the instructions cannot be followed.",
          "report_infeasible('There is no email field on this form.')"),
    _spec("scroll", "delta_x:num, delta_y:num", "Scroll by pixels (positive: right/down).", "scroll(0, 200)"),
    _spec("fill", "bid:str, value:str", "Focus a text field and set its text.", "fill('237', 'example value')"),
    _spec("select_option", "bid:str, options:strs", "Select option(s) of a <select> by value or label.",
          "select_option('48', 'blue')"),
    _spec("click", f"bid:str, {_BTN}, modifiers:modifiers=[]", "Click an element.", "click('51')"),
    _spec("dblclick", f"bid:str, {_BTN}, modifiers:modifiers=[]", "Double-click an element.", "dblclick('12')"),
    _spec("hover", "bid:str", "Hover the mouse over an element.", "hover('8')"),
    _spec("press", "bid:str, key_comb:str", "Focus an element and press a key combination.",
          "press('88', 'Enter')"),
    _spec("focus", "bid:str", "Focus an element.", "focus('455')"),
    _spec("clear", "bid:str", "Clear a text field.", "clear('996')"),
    _spec("drag_and_drop", "from_bid:str, to_bid:str", "Drag one element onto another.",
          "drag_and_drop('56', '498')"),
    _spec("upload_file", "bid:str, file:strs", "Click a file input and choose file(s).",
          "upload_file('572', 'receipt.pdf')"),
    _spec("mouse_move", "x:num, y:num", "Move the mouse to page coordinates.", "mouse_move(65.2, 158.5)"),
    _spec("mouse_up", f"x:num, y:num, {_BTN}", "Move the mouse there and release a button.", "mouse_up(250, 120)"),
    _spec("mouse_down", f"x:num, y:num, {_BTN}", "Move the mouse there and press a button.", "mouse_down(140, 580)"),
    _spec("mouse_click", f"x:num, y:num, {_BTN}", "Click at page coordinates.", "mouse_click(887.2, 68)"),
    _spec("mouse_dblclick", f"x:num, y:num, {_BTN}", "Double-click at page coordinates.", "mouse_dblclick(5, 236)"),
    _spec("mouse_drag_and_drop", "from_x:num, from_y:num, to_x:num, to_y:num",
          "Drag from one point to another.", "mouse_drag_and_drop(10.7, 325, 235.6, 24.5)"),
    _spec("mouse_upload_file", "x:num, y:num, file:strs", "Click a point and choose file(s).",
          "mouse_upload_file(132, 547, 'receipt.pdf')"),
    _spec("keyboard_down", "key:str", "Press and hold a key.", "keyboard_down('Shift')"),
    _spec("keyboard_up", "key:str", "Release a key.", "keyboard_up('Shift')"),
    _spec("keyboard_press", "key:str", "Press a key combination.", "keyboard_press('Control+a')"),
    _spec("keyboard_type", "text:str", "Type text key by key into the focused element.",
          "keyboard_type('Hello world!')"),
    _spec("keyboard_insert_text", "text:str", "Insert text into the focused element (input event only).",
          "keyboard_insert_text('Hello world!')"),
    _spec("goto", "url:str", "Navigate the active tab to a URL.", "goto('http://shop.test/cart')"),
    _spec("go_back", "", "Go back in the active tab's history.", "go_back()"),
    _spec("go_forward", "", "Go forward in the active tab's history.", "go_forward()"),
    _spec("new_tab", "", "Open a new (blank) tab; it becomes the active one.", "new_tab()"),
    _spec("tab_close", "", "Close the active tab; the last remaining tab becomes active.", "tab_close()"),
    _spec("tab_focus", "index:int", "Activate the tab at that index (0-based).", "tab_focus(1)"),
)}

#: Actions that act on one element by bid (the first argument) and stay on the page unless the page reacts.
BID_ACTIONS = frozenset({"fill", "select_option", "click", "dblclick", "hover", "press", "focus", "clear",
                         "upload_file", "drag_and_drop"})
#: Actions whose only effect is on the acted-on element (value, selection, focus or hover state).
LOCAL_EDITS = frozenset({"fill", "select_option", "hover", "focus", "clear"})


@dataclass(frozen=True)
class WebAction:
    """One call: the action ``name`` and every parameter's value (defaults filled in), in signature order.

    Lists are held as tuples, so two calls are equal exactly when they do the same thing.
    """

    name: str
    args: tuple[tuple[str, Any], ...] = ()
    dialect: str = "browsergym"

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.args:
            if k == key:
                return v
        return default

    @property
    def bids(self) -> tuple[str, ...]:
        """The bids this call refers to (``bid``, or ``from_bid`` and ``to_bid``)."""
        return tuple(v for k, v in self.args if k in ("bid", "from_bid", "to_bid"))


def _literal(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    return repr(value)


def render_call(action: WebAction) -> str:
    if action.dialect == "webarena":
        args = [str(v) for _, v in action.args]
        return action.name + "".join(f" [{a}]" for a in args)
    spec = ACTIONS[action.name]
    parts = []
    values = dict(action.args)
    for p in spec.params:
        value = values.get(p.name, p.default)
        if p.required:
            parts.append(_literal(value))
        elif value != p.default:
            parts.append(f"{p.name}={_literal(value)}")
    return f"{action.name}({', '.join(parts)})"


def _check_value(param: Param, value: Any, where: str) -> Any:
    """The value normalised (lists to tuples), or CodecError naming the call and parameter."""
    def bad(expected: str) -> CodecError:
        return CodecError(f"argument {param.name!r} must be {expected}, got {value!r}"[:300], where=where)

    if param.kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if param.kind in ("num", "int"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number" if param.kind == "num" else "an integer")
        if param.kind == "int" and not isinstance(value, int):
            raise bad("an integer")
        if isinstance(value, float) and not math.isfinite(value):
            raise bad("a finite number")
        return value
    if param.kind == "strs":
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise bad("a string or a list of strings")
    if param.kind == "button":
        if value not in BUTTONS:
            raise bad("one of 'left', 'middle', 'right'")
        return value
    if param.kind == "modifiers":
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v in MODIFIERS for v in value):
            return tuple(value)
        raise bad(f"a list of {', '.join(MODIFIERS)}")
    raise AssertionError(param.kind)


def _call_from_node(node: ast.stmt, where: str) -> WebAction:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        raise CodecError("expected an action call such as click('12')", where=where)
    call = node.value
    if not isinstance(call.func, ast.Name):
        raise CodecError("the action must be a plain function name such as click(...)", where=where)
    name = call.func.id
    spec = ACTIONS.get(name)
    if spec is None:
        raise CodecError(f"unknown action {name!r}", where=where,
                         hint="actions: " + ", ".join(ACTIONS))
    where = f"{where} ({name})"
    params = spec.params
    if len(call.args) > len(params):
        raise CodecError(f"takes at most {len(params)} arguments, got {len(call.args)}", where=where)
    given: dict[str, Any] = {}
    for param, arg in zip(params, call.args, strict=False):
        given[param.name] = _literal_value(arg, where)
    names = {p.name for p in params}
    for kw in call.keywords:
        if kw.arg is None:
            raise CodecError("**kwargs are not allowed in an action", where=where)
        if kw.arg not in names:
            raise CodecError(f"unknown argument {kw.arg!r}", where=where,
                             hint=f"signature: {spec.signature()}")
        if kw.arg in given:
            raise CodecError(f"argument {kw.arg!r} given twice", where=where)
        given[kw.arg] = _literal_value(kw.value, where)
    args = []
    for p in params:
        if p.name not in given:
            if p.required:
                raise CodecError(f"missing argument {p.name!r}", where=where, hint=f"signature: {spec.signature()}")
            args.append((p.name, p.default))
        else:
            args.append((p.name, _check_value(p, given[p.name], where)))
    return WebAction(name, tuple(args))


def _literal_value(node: ast.expr, where: str) -> Any:
    if isinstance(node, ast.Starred):
        raise CodecError("*args are not allowed in an action", where=where)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise CodecError("arguments must be literals (strings, numbers, lists)", where=where) from None


# WebArena's own id-based action syntax (its paper's prompt): ``click [42]``, ``type [57] [text] [1]``...
# Read as a second dialect and written back in it; verifiers do not interpret it (its ids are not bids).
WEBARENA_ACTIONS: dict[str, tuple[int, int]] = {  # op -> (min, max) bracketed arguments
    "click": (1, 1), "hover": (1, 1), "type": (2, 3), "press": (1, 1), "scroll": (1, 1), "new_tab": (0, 0),
    "tab_focus": (1, 1), "close_tab": (0, 0), "goto": (1, 1), "go_back": (0, 0), "go_forward": (0, 0),
    "stop": (0, 1), "noop": (0, 0),
}
_WEBARENA = re.compile(r"^\s*([a-z_]+)((?:\s*\[[^\n]*?\](?=\s*\[|\s*$))*)\s*$")
_WEBARENA_ARG = re.compile(r"\[([^\n]*?)\](?=\s*\[|\s*$)")


def parse_webarena(text: str) -> WebAction | None:
    """A one-line action in WebArena's syntax, or ``None`` when ``text`` is not one."""
    m = _WEBARENA.match(text)
    if not m or m.group(1) not in WEBARENA_ACTIONS:
        return None
    args = _WEBARENA_ARG.findall(m.group(2))
    low, high = WEBARENA_ACTIONS[m.group(1)]
    if not low <= len(args) <= high:
        return None
    return WebAction(m.group(1), tuple((f"arg{i}", a) for i, a in enumerate(args)), dialect="webarena")


class WebCalls(list):  # type: ignore[type-arg]
    """The calls of one action text, in order, with ``source``: the text they were read from.

    A plain list of :class:`WebAction` to every reader (equal to a list of the same calls); the source is
    only used to render it back while the calls are still the ones read from it.
    """

    def __init__(self, calls: list[WebAction], source: str | None = None) -> None:
        super().__init__(calls)
        self.source = source
        self._read = tuple(calls)

    def source_if_unchanged(self) -> str | None:
        return self.source if self.source is not None and tuple(self) == self._read else None


class WebActionCodec(ActionCodec):
    """BrowserGym high-level action calls: ``parse`` gives a :class:`WebCalls` list of :class:`WebAction`
    (one per call) that remembers its text; ``render`` writes it back as read, ``canonical`` canonically."""

    def parse(self, text: str) -> WebCalls:
        return WebCalls(self._parse(text), text)

    def _parse(self, text: str) -> list[WebAction]:
        if not isinstance(text, str):
            raise CodecError(f"an action must be text, got {type(text).__name__}")
        if not text.strip():
            raise CodecError("empty action", hint="write one call per line, e.g. click('12')")
        try:
            tree = ast.parse(text, mode="exec")
        except SyntaxError as exc:
            foreign = parse_webarena(text)
            if foreign is not None:
                return [foreign]
            raise CodecError(f"not a Python call: {exc.msg}", where=f"line {exc.lineno or 1}",
                             hint="write one call per line, e.g. fill('12', 'text')") from None
        except (ValueError, MemoryError, RecursionError, OverflowError) as exc:
            raise CodecError(f"not a Python call: {type(exc).__name__}") from None
        if not tree.body:
            raise CodecError("no action call (only comments)", hint="write one call per line, e.g. click('12')")
        if len(tree.body) == 1 and not isinstance(getattr(tree.body[0], "value", None), ast.Call):
            foreign = parse_webarena(text)  # ``go_back`` or ``new_tab`` alone are Python names
            if foreign is not None:
                return [foreign]
        return [_call_from_node(node, f"line {node.lineno}") for node in tree.body]

    def render(self, action: WebAction | list[WebAction]) -> str:
        """The text the calls were read from when ``action`` is an unchanged :meth:`parse` result (lossless),
        else the canonical text (:meth:`canonical`)."""
        if isinstance(action, WebCalls):
            source = action.source_if_unchanged()
            if source is not None:
                return source
        return self.canonical(action)

    def canonical(self, action: WebAction | list[WebAction]) -> str:
        """The canonical text: one call per line, required arguments positionally, optional ones as keywords
        only when they differ from their default, literals as :func:`repr` writes them."""
        calls = [action] if isinstance(action, WebAction) else list(action)
        return "\n".join(render_call(a) for a in calls)

    def schema(self) -> str:
        lines = ["BrowserGym high-level actions, one call per line (several lines run in order); elements are "
                 "referred to by the [bid] the accessibility tree shows:"]
        for spec in ACTIONS.values():
            lines.append(f"- {spec.signature()}: {spec.description} Example: {spec.example}")
        return "\n".join(lines)

    def family(self, text: str) -> str:
        try:
            calls = self.parse(text)
        except CodecError:
            return "invalid"
        return calls[0].name if len(calls) == 1 else "multi"


# ── observations ─────────────────────────────────────────────────────────────────────────────────────

# Properties BrowserGym prints as a bare word when true.
FLAG_PROPERTIES = ("required", "focused", "atomic")
_ROLE = re.compile(r"[A-Za-z][\w-]*")
_BID = re.compile(r"\[([^\]\s]+)\] ")
_PROP_NAME = re.compile(r"[A-Za-z][\w-]*")
_HEADING = re.compile(r"^(#{1,6}) ?(.*?)(:?)$")
_TAB_LINE = re.compile(r"^Tab (\d+)( \(active tab\))?:$")
_TAB_FIELD = re.compile(r"^([ \t]+)(Title|URL): ?(.*)$")
_TREE_HEADING = re.compile(r"tree|axtree|accessibility", re.I)
_FIELD_LINE = re.compile(r"^(URL|Title|Url|Page title|Current URL): (.*)$")


class _Flag:
    """A property printed as a bare word (``focused``) rather than ``name=value``."""

    def __repr__(self) -> str:
        return "FLAG"

    # A singleton: copies (deepcopy of an observation) and pickles stay the same object.
    def __copy__(self) -> _Flag:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Flag:
        return self

    def __reduce__(self) -> str:
        return "FLAG"


FLAG: Any = _Flag()


@dataclass
class AXNode:
    """One line of the tree. ``props`` holds ``(name, value)`` pairs in line order, ``value`` being
    :data:`FLAG` for a bare-word property (``focused``). ``raw`` keeps the line when its canonical form
    would differ (a string quoted otherwise than :func:`repr` quotes it)."""

    depth: int
    role: str
    name: str | None
    bid: str | None = None
    value: Any = None
    has_value: bool = False
    props: list[tuple[str, Any]] = field(default_factory=list)
    line: int = 0
    raw: str | None = None

    def prop(self, key: str, default: Any = None) -> Any:
        """A property's value (``True`` for a flag), or ``default``."""
        for k, v in self.props:
            if k == key:
                return True if v is FLAG else v
        return default

    @property
    def focused(self) -> bool:
        return self.prop("focused") is True

    def render(self) -> str:
        return self.raw if self.raw is not None else render_node(self)

    def signature(self) -> tuple[Any, ...]:
        """What the node shows apart from focus: role, name, value and the other properties."""
        return (self.role, self.name, self.value if self.has_value else None,
                tuple((k, repr(v)) for k, v in self.props if k != "focused"))


def render_node(node: AXNode) -> str:
    """The canonical line of ``node`` (BrowserGym's layout)."""
    text = "\t" * node.depth
    if node.bid is not None:
        text += f"[{node.bid}] "
    text += node.role if node.name is None else f"{node.role} {node.name!r}"
    if node.has_value:
        text += f" value={node.value!r}"
    for k, v in node.props:
        text += f", {k}" if v is FLAG else f", {k}={v!r}"
    return text


def _scan_literal(text: str, i: int) -> int:
    """End index of the Python literal starting at ``text[i]`` (string, number, bool, list...)."""
    depth = 0
    quote = ""
    j = i
    while j < len(text):
        c = text[j]
        if quote:
            if c == "\\":
                j += 2
                continue
            if c == quote:
                quote = ""
                if depth == 0:
                    return j + 1
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
            if depth == 0:
                return j + 1
            if depth < 0:
                return j
        elif c == "," and depth == 0:
            return j
        j += 1
    if quote or depth:
        return -1
    return j


def _eval_literal(src: str) -> Any:
    try:
        value = ast.literal_eval(src)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"not a literal: {src[:60]!r}") from None
    if isinstance(value, (set, dict, bytes, complex)):
        raise ValueError(f"not a node literal: {src[:60]!r}")
    return value


def parse_node_line(line: str, lineno: int = 0) -> AXNode:
    """One tree line as an :class:`AXNode`; ``ValueError`` says what is wrong."""
    depth = len(line) - len(line.lstrip("\t"))
    rest = line[depth:]
    bid = None
    m = _BID.match(rest)
    if m:
        bid = m.group(1)
        rest = rest[m.end():]
    m = _ROLE.match(rest)
    if not m:
        raise ValueError("expected a role after the indentation and optional [bid]")
    role = m.group(0)
    pos = m.end()
    name = None
    if pos < len(rest) and rest[pos] == " " and pos + 1 < len(rest) and rest[pos + 1] in "'\"":
        end = _scan_literal(rest, pos + 1)
        if end < 0:
            raise ValueError("unterminated name string")
        name = _eval_literal(rest[pos + 1:end])
        if not isinstance(name, str):
            raise ValueError("the name must be a string")
        pos = end
    elif role != "generic" and not (pos < len(rest) and rest[pos] == ",") and pos != len(rest):
        raise ValueError("expected the quoted name after the role")
    node = AXNode(depth, role, name, bid, line=lineno)
    if rest.startswith(" value=", pos):
        start = pos + len(" value=")
        end = _scan_literal(rest, start)
        if end < 0 or end == start:
            raise ValueError("bad value literal")
        node.value, node.has_value = _eval_literal(rest[start:end]), True
        pos = end
    while pos < len(rest):
        if not rest.startswith(", ", pos):
            raise ValueError(f"expected ', ' before a property at column {pos + depth + 1}")
        pos += 2
        m = _PROP_NAME.match(rest, pos)
        if not m:
            raise ValueError(f"expected a property name at column {pos + depth + 1}")
        key = m.group(0)
        pos = m.end()
        if rest.startswith("=", pos):
            end = _scan_literal(rest, pos + 1)
            if end < 0 or end == pos + 1:
                raise ValueError(f"bad literal for property {key!r}")
            node.props.append((key, _eval_literal(rest[pos + 1:end])))
            pos = end
        else:
            node.props.append((key, FLAG))
    if render_node(node) != line:
        node.raw = line
    return node


@dataclass
class Tab:
    index: int
    title: str
    url: str
    active: bool = False


@dataclass
class Block:
    """One blank-line-separated block. ``kind``: ``tabs``, ``fields``, ``tree``, ``error`` or ``text``."""

    kind: str
    text: str
    heading: str | None = None
    tabs: list[Tab] = field(default_factory=list)
    fields: list[tuple[str, str]] = field(default_factory=list)
    nodes: list[AXNode] = field(default_factory=list)
    first_line: int = 1
    indent: str = "    "  # of a tabs block's Title/URL lines
    problem: str | None = None  # a text block that starts like a tree: its first line that is not a node


@dataclass
class WebObservation:
    """A parsed observation: its blocks in order plus the trailing newlines."""

    blocks: list[Block]
    trailing: str = ""

    @property
    def tree(self) -> Block | None:
        return next((b for b in self.blocks if b.kind == "tree"), None)

    @property
    def nodes(self) -> list[AXNode]:
        tree = self.tree
        return tree.nodes if tree else []

    @property
    def tabs(self) -> list[Tab] | None:
        block = next((b for b in self.blocks if b.kind == "tabs"), None)
        return block.tabs if block else None

    @property
    def active_tab(self) -> Tab | None:
        tabs = self.tabs or []
        active = [t for t in tabs if t.active]
        return active[0] if len(active) == 1 else None

    def field_value(self, *keys: str) -> str | None:
        for b in self.blocks:
            for k, v in b.fields:
                if k.lower() in keys:
                    return v
        return None

    @property
    def url(self) -> str | None:
        tab = self.active_tab
        return tab.url if tab else self.field_value("url", "current url")

    @property
    def title(self) -> str | None:
        tab = self.active_tab
        if tab:
            return tab.title
        found = self.field_value("title", "page title")
        if found is not None:
            return found
        root = self.root
        return root.name if root is not None else None

    @property
    def root(self) -> AXNode | None:
        nodes = self.nodes
        return nodes[0] if nodes and nodes[0].role == "RootWebArea" and nodes[0].depth == 0 else None

    @property
    def error(self) -> str | None:
        block = next((b for b in self.blocks if b.kind == "error"), None)
        if block is None:
            return None
        return block.text.split("\n", 1)[1] if "\n" in block.text else ""

    @property
    def problems(self) -> list[str]:
        """For blocks that start like a tree without being declared one, the first line that is not a node."""
        return [b.problem for b in self.blocks if b.problem]

    @property
    def representation(self) -> str:
        """``axtree`` when a tree block is present, else ``html`` when a page block starts with ``<``, else
        ``text`` (Markdown or any other free text, or nothing)."""
        if self.tree is not None:
            return "axtree"
        for b in self.blocks:
            if b.kind == "text" and b.text.lstrip().startswith("<"):
                return "html"
        return "text"

    def find(self, role: str, name: str) -> list[AXNode]:
        """The nodes with exactly this role and name, in order."""
        return [n for n in self.nodes if n.role == role and n.name == name]

    def bid_of(self, role: str, name: str) -> str:
        """The bid of the one element with this role and name; ``KeyError`` when there is not exactly one."""
        found = [n.bid for n in self.find(role, name) if n.bid is not None]
        if len(found) != 1:
            raise KeyError(f"{len(found)} elements {role} {name!r} with a bid")
        return found[0]

    def by_bid(self) -> dict[str, AXNode]:
        return {n.bid: n for n in self.nodes if n.bid is not None}

    def subtree(self, bid: str) -> list[AXNode]:
        """The node with ``bid`` and its descendants (empty when absent)."""
        nodes = self.nodes
        for i, n in enumerate(nodes):
            if n.bid == bid:
                out = [n]
                for m in nodes[i + 1:]:
                    if m.depth <= n.depth:
                        break
                    out.append(m)
                return out
        return []


def _render_tabs(heading: str, tabs: list[Tab], indent: str) -> str:
    lines = [heading]
    for t in tabs:
        lines.append(f"Tab {t.index}{' (active tab)' if t.active else ''}:")
        lines.append(f"{indent}Title: {t.title}")
        lines.append(f"{indent}URL: {t.url}")
    return "\n".join(lines)


def _is_heading(line: str) -> bool:
    return line.startswith("#") or (line.endswith(":") and len(line) < 80 and "\t" not in line)


def _looks_like_root(line: str) -> bool:
    try:
        node = parse_node_line(line)
    except ValueError:
        return False
    return node.depth == 0 and (node.name is not None or node.role == "generic")


def _classify(chunk: str, first_line: int) -> Block:
    lines = chunk.split("\n")
    head = lines[0]
    # tabs: a heading naming tabs, then "Tab i[ (active tab)]:" with indented Title/URL lines
    if len(lines) >= 4 and _is_heading(head) and "tab" in head.lower() and (len(lines) - 1) % 3 == 0:
        tabs, indent, ok = [], None, True
        for k in range(1, len(lines), 3):
            m = _TAB_LINE.match(lines[k])
            t = _TAB_FIELD.match(lines[k + 1])
            u = _TAB_FIELD.match(lines[k + 2])
            if not (m and t and u and t.group(2) == "Title" and u.group(2) == "URL"):
                ok = False
                break
            indent = indent or t.group(1)
            tabs.append(Tab(int(m.group(1)), t.group(3), u.group(3), bool(m.group(2))))
        if ok and indent is not None and _render_tabs(head, tabs, indent) == chunk:
            return Block("tabs", chunk, heading=head, tabs=tabs, first_line=first_line, indent=indent)
    if all(_FIELD_LINE.match(line) for line in lines):
        fields = [(m.group(1), m.group(2)) for m in (_FIELD_LINE.match(line) for line in lines) if m]
        return Block("fields", chunk, fields=fields, first_line=first_line)
    if _is_heading(head) and "error" in head.lower():
        return Block("error", chunk, heading=head, first_line=first_line)
    # a tree: an optional heading, then a depth-0 node, then node lines only
    start = 1 if _is_heading(head) and len(lines) > 1 and _looks_like_root(lines[1]) else 0
    if _looks_like_root(lines[start]):
        nodes = []
        for k in range(start, len(lines)):
            try:
                nodes.append(parse_node_line(lines[k], first_line + k))
            except ValueError as exc:
                message = f"not an accessibility-tree node: {exc}: {lines[k][:120]!r}"
                if start and _TREE_HEADING.search(head):
                    raise CodecError(message, where=f"line {first_line + k}",
                                     hint="each tree line is <tabs>[bid] role 'name'[ value='...'][, property]...") from None
                # Not declared a tree: another program's layout that merely starts like one; kept as text.
                return Block("text", chunk, first_line=first_line, problem=f"line {first_line + k}: {message}")
        return Block("tree", chunk, heading=head if start else None, nodes=nodes, first_line=first_line)
    return Block("text", chunk, first_line=first_line)


def render_block(block: Block) -> str:
    if block.kind == "tree":
        body = "\n".join(n.render() for n in block.nodes)
        return body if block.heading is None else f"{block.heading}\n{body}"
    if block.kind == "tabs":
        return _render_tabs(block.heading or "", block.tabs, block.indent)
    if block.kind == "fields":
        return "\n".join(f"{k}: {v}" for k, v in block.fields)
    return block.text


class WebObservationCodec(ObservationCodec):
    """The accessibility-tree observation with its header blocks; see the module docstring."""

    def parse(self, text: str) -> WebObservation:
        if not isinstance(text, str):
            raise CodecError(f"an observation must be text, got {type(text).__name__}")
        body = text.rstrip("\n")
        trailing = text[len(body):]
        blocks: list[Block] = []
        line = 1
        for chunk in body.split("\n\n") if body else []:
            blocks.append(_classify(chunk, line))
            line += chunk.count("\n") + 2
        return WebObservation(blocks, trailing)

    def render(self, observation: WebObservation) -> str:
        return "\n\n".join(render_block(b) for b in observation.blocks) + observation.trailing


def render_observation(tabs: list[Tab], nodes: list[AXNode], error: str | None = None) -> str:
    """The real environment's layout: tabs, the last action's error (if any), then the tree."""
    parts = [_render_tabs("# Open tabs", tabs, "    ")]
    if error:
        parts.append("# Last action error\n" + error.strip())
    parts.append("# Accessibility tree\n" + "\n".join(render_node(n) for n in nodes))
    return "\n\n".join(parts)
