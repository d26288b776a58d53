"""Android screens as observation text: a UI element list or a uiautomator dump, under optional header lines.

An observation is one of three kinds:

* ``elements`` — AndroidWorld's textual UI element list, one line per element as its text agent (T3A)
  writes it: ``UI element 3: UIElement(text='Wi-Fi', content_description=None, class_name='android.widget.Switch',
  bbox=None, bbox_pixels=BoundingBox(x_min=912, x_max=1038, y_min=573, y_max=657), hint_text=None,
  is_checked=True, ..., resource_id=None)``: the dataclass ``repr`` of ``UIElement``, fields in the order
  the log has them, indices as listed (they may skip elements AndroidWorld filtered out);
* ``xml`` — a raw uiautomator window dump (:mod:`.uixml`);
* ``text`` — anything else (a prose description of the screen, as some datasets give). It is kept
  verbatim; verifiers abstain on it. Text with a line that *looks* like an element line or a dump but
  does not parse is an error, never prose.

Either structured kind may follow header lines ``Key: value`` (``Foreground app: com.android.settings``,
``Foreground activity: com.android.settings/.Settings``...), which give the foreground app/activity.

:func:`parse_screen` keeps everything :func:`render_screen` needs to give the text back byte for byte;
:func:`canonical_screen` is the canonical spelling (what ``normalize`` compares).
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

from awctl.errors import CodecError

from .uixml import XmlDocument, XmlNode, parse_bounds, parse_xml, render_xml

#: UIElement's fields in the order of AndroidWorld's ``representation_utils.UIElement``.
UI_ELEMENT_FIELDS: tuple[str, ...] = (
    "text", "content_description", "class_name", "bbox", "bbox_pixels", "hint_text", "is_checked",
    "is_checkable", "is_clickable", "is_editable", "is_enabled", "is_focused", "is_focusable",
    "is_long_clickable", "is_scrollable", "is_selected", "is_visible", "package_name", "resource_name",
    "tooltip", "resource_id",
)
FOREGROUND_APP = "Foreground app"
FOREGROUND_ACTIVITY = "Foreground activity"
SCREEN_SIZE = "Screen size"
MAX_SCREEN_CHARS = 4_000_000

_ELEMENT_LINE = re.compile(r"UI element (\d{1,6}): UIElement\((.*)\)")
_LOOKS_LIKE_ELEMENT = re.compile(r"^\s*UI element \d+\s*:", re.M)
_HEADER = re.compile(r"([A-Z][A-Za-z0-9 _/()&.-]{0,48}): (.*)")
_NAME = re.compile(r"([a-z_][a-z0-9_]{0,40})=")
_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_NUMBER = re.compile(r"-?(?:\d{1,20}\.\d{0,20}|\.\d{1,20}|\d{1,20})(?:[eE][+-]?\d{1,3})?")
_KEYWORDS = {"None": None, "True": True, "False": False}
_KEYWORD = re.compile(r"None|True|False")
_BOX = re.compile(r"BoundingBox\(x_min=([^,()]*), x_max=([^,()]*), y_min=([^,()]*), y_max=([^,()]*)\)")


@dataclass(frozen=True)
class BoundingBox:
    """AndroidWorld's ``BoundingBox`` (pixels in ``bbox_pixels``, fractions of the screen in ``bbox``)."""

    x_min: int | float
    x_max: int | float
    y_min: int | float
    y_max: int | float

    @property
    def center(self) -> tuple[int, int]:
        """The tap point AndroidWorld uses for an element: the centre, truncated to integers."""
        return int((self.x_min + self.x_max) / 2.0), int((self.y_min + self.y_max) / 2.0)

    def contains(self, x: float, y: float) -> bool:
        return self.x_min <= x <= self.x_max and self.y_min <= y <= self.y_max


@dataclass
class UIElement:
    """One UI element: its fields in the order the source gave them (values ``str``/``None``/``bool``/
    numbers/:class:`BoundingBox`). Accessors return None for a field the element does not have."""

    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        return self.fields.get(name)

    @property
    def text(self) -> str | None:
        value = self.fields.get("text")
        return value if isinstance(value, str) else None

    @property
    def bbox_pixels(self) -> BoundingBox | None:
        value = self.fields.get("bbox_pixels")
        return value if isinstance(value, BoundingBox) else None

    def flag(self, name: str) -> bool | None:
        """A boolean field (``is_enabled``...) when it holds a boolean, else None."""
        value = self.fields.get(name)
        return value if isinstance(value, bool) else None

    def label(self) -> str:
        """A short human description for messages: text, else content description, else resource/class."""
        for key in ("text", "content_description", "hint_text", "resource_name", "class_name"):
            value = self.fields.get(key)
            if isinstance(value, str) and value:
                return f"{key}={value[:40]!r}"
        return "an unlabeled element"


@dataclass
class Screen:
    """One parsed observation (see the module docstring for the three kinds)."""

    kind: Literal["elements", "xml", "text"]
    header: list[tuple[str, str]] = field(default_factory=list)
    elements: list[tuple[int, UIElement]] = field(default_factory=list)  # kind "elements"
    document: XmlDocument | None = None  # kind "xml"
    text: str = ""  # kind "text": the whole observation
    lines_before_body: int = 0  # 1-based line numbers of the body start at this + 1
    _source: tuple[str, str] | None = field(default=None, compare=False, repr=False)

    @property
    def structured(self) -> bool:
        return self.kind != "text"

    def header_value(self, key: str) -> str | None:
        for k, v in self.header:
            if k.lower() == key.lower():
                return v
        return None

    @property
    def foreground_activity(self) -> str | None:
        return self.header_value(FOREGROUND_ACTIVITY) or self.header_value("Activity")

    @property
    def foreground_package(self) -> str | None:
        app = self.header_value(FOREGROUND_APP) or self.header_value("Package")
        if app:
            return app
        activity = self.foreground_activity
        return activity.split("/", 1)[0] if activity and "/" in activity else None

    def ui_elements(self) -> list[tuple[int, UIElement]]:
        """``(index, element)`` pairs an action's ``index`` refers to.

        For an element list, the listed indices. For a dump, AndroidWorld's rule applied to the nodes
        in document order: a node is an element when it is a leaf, has a content description or is
        scrollable; indices count those elements from 0.
        """
        if self.kind == "elements":
            return list(self.elements)
        if self.kind == "xml" and self.document is not None:
            return list(enumerate(xml_elements(self.document)))
        return []


# ── values of the UIElement repr ──────────────────────────────────────────────────────────────────


def _number(token: str) -> int | float:
    return float(token) if any(c in token for c in ".eE") else int(token)


def render_value(value: Any) -> str:
    """A field value as Python's ``repr`` writes it (what AndroidWorld's logs hold)."""
    if isinstance(value, BoundingBox):
        return (f"BoundingBox(x_min={render_value(value.x_min)}, x_max={render_value(value.x_max)}, "
                f"y_min={render_value(value.y_min)}, y_max={render_value(value.y_max)})")
    return repr(value)


def _value(body: str, pos: int, where: str) -> tuple[Any, int]:
    m = _STRING.match(body, pos)
    if m:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an odd escape ("\q") is kept as Python keeps it
            try:
                return ast.literal_eval(m.group(0)), m.end()
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise CodecError(f"bad string literal {m.group(0)[:40]}", where=where) from None
    m = _KEYWORD.match(body, pos)
    if m:
        return _KEYWORDS[m.group(0)], m.end()
    m = _BOX.match(body, pos)
    if m:
        parts = []
        for token in m.groups():
            if not _NUMBER.fullmatch(token):
                raise CodecError(f"bounding box coordinate {token!r} is not a number", where=where)
            parts.append(_number(token))
        return BoundingBox(*parts), m.end()
    m = _NUMBER.match(body, pos)
    if m:
        return _number(m.group(0)), m.end()
    raise CodecError(f"cannot read a value at {body[pos:pos + 30]!r}", where=where,
                     hint="values are Python literals: 'text', None, True/False, numbers, BoundingBox(...)")


def parse_element_fields(body: str, where: str) -> UIElement:
    """The keyword list inside ``UIElement(...)``, separated by ``", "``."""
    fields_: dict[str, Any] = {}
    pos = 0
    while pos < len(body):
        m = _NAME.match(body, pos)
        if m is None:
            raise CodecError(f"expected field=value at {body[pos:pos + 30]!r}", where=where)
        name = m.group(1)
        if name in fields_:
            raise CodecError(f"field {name!r} given twice", where=where)
        value, pos = _value(body, m.end(), f"{where} field {name}")
        fields_[name] = value
        if pos < len(body):
            if not body.startswith(", ", pos):
                raise CodecError(f"expected ', ' after field {name!r}, got {body[pos:pos + 20]!r}", where=where)
            pos += 2
            if pos == len(body):
                raise CodecError("trailing ', ' after the last field", where=where)
    return UIElement(fields_)


def render_element(index: int, element: UIElement) -> str:
    inner = ", ".join(f"{k}={render_value(v)}" for k, v in element.fields.items())
    return f"UI element {index}: UIElement({inner})"


# ── the XML view as UI elements ──────────────────────────────────────────────────────────────────


def _flag(value: str | None) -> Any:
    if value is None:
        return None
    return {"true": True, "false": False}.get(value, value)


def element_nodes(doc: XmlDocument) -> list[XmlNode]:
    """The dump's nodes that are UI elements by AndroidWorld's rule, in document order."""
    return [n for n in doc.nodes()
            if not n.children or n.get("content-desc") or n.get("scrollable") == "true"]


def xml_elements(doc: XmlDocument) -> list[UIElement]:
    """A dump's UI elements as AndroidWorld derives them (see :meth:`Screen.ui_elements`)."""
    out = []
    for node in element_nodes(doc):
        bounds = parse_bounds(node.get("bounds") or "")
        cls = node.get("class") or None
        visible = node.get("visible-to-user")
        out.append(UIElement({
            "text": node.get("text") or None,
            "content_description": node.get("content-desc") or None,
            "class_name": cls,
            "bbox": None,
            "bbox_pixels": BoundingBox(bounds[0], bounds[2], bounds[1], bounds[3]) if bounds else None,
            "hint_text": node.get("hint") or None,
            "is_checked": _flag(node.get("checked")),
            "is_checkable": _flag(node.get("checkable")),
            "is_clickable": _flag(node.get("clickable")),
            # uiautomator does not dump "editable"; text fields are EditText (or subclasses).
            "is_editable": bool(cls and "EditText" in cls),
            "is_enabled": _flag(node.get("enabled")),
            "is_focused": _flag(node.get("focused")),
            "is_focusable": _flag(node.get("focusable")),
            "is_long_clickable": _flag(node.get("long-clickable")),
            "is_scrollable": _flag(node.get("scrollable")),
            "is_selected": _flag(node.get("selected")),
            "is_visible": True if visible is None else _flag(visible),
            "package_name": node.get("package") or None,
            "resource_name": node.get("resource-id") or None,
            "tooltip": None,
            "resource_id": None,
        }))
    return out


# ── whole screens ─────────────────────────────────────────────────────────────────────────────────


def _is_element_line(line: str) -> bool:
    return line.startswith("UI element ")


def parse_screen(text: str) -> Screen:
    """Parse an observation (see the module docstring); raises only :class:`CodecError`."""
    if not isinstance(text, str):
        raise CodecError(f"an observation is text, got {type(text).__name__}")
    if len(text) > MAX_SCREEN_CHARS:
        raise CodecError(f"{len(text)} characters is too long for one screen")
    screen = _parse_structured(text)
    if screen is None:
        if _LOOKS_LIKE_ELEMENT.search(text):
            line = text.count("\n", 0, _LOOKS_LIKE_ELEMENT.search(text).start()) + 1  # type: ignore[union-attr]
            raise CodecError("a UI element line among lines that are neither header lines nor elements",
                             where=f"observation line {line}",
                             hint="an element list is optional 'Key: value' header lines, then only "
                                  "'UI element <n>: UIElement(...)' lines")
        if "<hierarchy" in text or "<node " in text:
            raise CodecError("uiautomator XML after text that is not a header line",
                             where="observation", hint="put only 'Key: value' lines before the dump")
        screen = Screen("text", text=text)
    return _with_source(screen, text)


def _parse_structured(text: str) -> Screen | None:
    lines = text.split("\n")
    header: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_element_line(line) or line.lstrip().startswith("<"):
            break
        m = _HEADER.fullmatch(line)
        if m is None:
            if line.strip() == "" and header:
                # Blank lines may separate the header from the body.
                j = i
                while j < len(lines) and lines[j].strip() == "":
                    j += 1
                if j < len(lines) and (_is_element_line(lines[j]) or lines[j].lstrip().startswith("<")):
                    i = j
                    break
            return None
        header.append((m.group(1), m.group(2)))
        i += 1
    if i >= len(lines):
        return None  # header-like lines with no body: prose such as "Result: the app opened."
    body_start = i
    if lines[i].lstrip().startswith("<"):
        offset = sum(len(line) + 1 for line in lines[:i])
        doc = parse_xml(text[offset:], line0=i + 1)
        return Screen("xml", header=header, document=doc, lines_before_body=body_start)
    elements: list[tuple[int, UIElement]] = []
    last = -1
    for j in range(i, len(lines)):
        line = lines[j]
        if line == "" and all(rest == "" for rest in lines[j:]):
            break
        m = _ELEMENT_LINE.fullmatch(line)
        where = f"observation line {j + 1}"
        if m is None:
            raise CodecError(f"expected 'UI element <n>: UIElement(...)', got {line[:60]!r}", where=where)
        index = int(m.group(1))
        if index <= last:
            raise CodecError(f"element index {index} does not follow {last} (indices must increase)", where=where)
        last = index
        elements.append((index, parse_element_fields(m.group(2), where)))
    return Screen("elements", header=header, elements=elements, lines_before_body=body_start)


def canonical_screen(screen: Screen) -> str:
    """The canonical text: header lines, then the body (uiautomator's one-line dump, or one element per
    line), no blank lines, no trailing newline."""
    if screen.kind == "text":
        return screen.text
    parts = [f"{k}: {v}" for k, v in screen.header]
    if screen.kind == "xml":
        assert screen.document is not None
        parts.append(render_xml(screen.document))
    else:
        parts.extend(render_element(i, e) for i, e in screen.elements)
    return "\n".join(parts)


def _with_source(screen: Screen, text: str) -> Screen:
    canon = canonical_screen(screen)
    if canon != text:
        screen._source = (canon, text)
    return screen


def render_screen(screen: Screen) -> str:
    """The text of ``screen``: exactly the parsed text while unchanged, else :func:`canonical_screen`."""
    canon = canonical_screen(screen)
    if screen._source is not None and screen._source[0] == canon:
        return screen._source[1]
    return canon
