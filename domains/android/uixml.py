"""uiautomator XML window dumps: :class:`XmlDocument`, a parser that keeps every byte, and a renderer.

``adb shell uiautomator dump`` writes one line: ``<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>``
then ``<hierarchy rotation="0">`` holding nested ``<node .../>`` elements whose attributes are, in this
order, ``index text resource-id class package content-desc checkable checked clickable enabled focusable
focused scrollable long-clickable password selected bounds`` (newer Android versions add
``visible-to-user``, ``hint``, ``drawing-order``...). Leaves are written ``<node ... />``, values are
escaped as Android's XML serializer does (``&amp; &lt; &gt; &quot;`` and ``&#10;`` for a newline).

:func:`parse_xml` accepts exactly that shape (a ``hierarchy`` root, ``node`` descendants, whitespace
between tags, any attributes) and keeps the decoded attribute values in document order, the whitespace
between tags and the spelling of each tag's end. :func:`render_xml` writes the uiautomator style; the
screen codec keeps the original text for anything it would spell differently. Problems raise
:class:`~awctl.errors.CodecError` naming the line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from awctl.errors import CodecError

DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
#: The attributes of a node in the order uiautomator writes them.
NODE_ATTRIBUTES: tuple[str, ...] = (
    "index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
    "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds",
)
#: Attributes whose value is a boolean (``true``/``false``).
BOOLEAN_ATTRIBUTES: frozenset[str] = frozenset({
    "checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable", "long-clickable",
    "password", "selected", "visible-to-user", "showing-hint", "important-for-accessibility",
})
MAX_DEPTH = 256  # real view hierarchies stay far below this; deeper input is not a window dump
BOUNDS = re.compile(r"\[(-?\d{1,7}),(-?\d{1,7})\]\[(-?\d{1,7}),(-?\d{1,7})\]")

_DECL = re.compile(r"<\?xml\b[^<>]*?\?>")
_NAME = r"[A-Za-z_][\w.:-]*"
_START = re.compile(rf"<({_NAME})")
_ATTR = re.compile(rf"(\s+)({_NAME})(\s*=\s*)(\"[^\"<]*\"|'[^'<]*')")
_TAG_END = re.compile(r"(\s*)(/?)>")
_END = re.compile(rf"</({_NAME})(\s*)>")
_SPACE = re.compile(r"\s*")
_ENTITY = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#(\d{1,7})|#x([0-9A-Fa-f]{1,6}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_TO_ESCAPE = re.compile(r"[&<>\"\n\r\t]")


@dataclass
class XmlNode:
    """One element: its tag, attributes (decoded, in document order), children and layout."""

    tag: str
    attrs: list[tuple[str, str]] = field(default_factory=list)
    children: list[XmlNode] = field(default_factory=list)
    self_closing: bool = True
    lead: str = ""  # whitespace before the start tag
    inner_tail: str = ""  # whitespace before the end tag (elements with an end tag only)
    close_space: str = " "  # whitespace before "/>" (uiautomator writes one space) or ">" (none)

    def get(self, name: str, default: str | None = None) -> str | None:
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def set(self, name: str, value: str) -> None:
        """Change an attribute's value (appending it when absent)."""
        for i, (key, _) in enumerate(self.attrs):
            if key == name:
                self.attrs[i] = (key, value)
                return
        self.attrs.append((name, value))

    def walk(self) -> list[XmlNode]:
        """This node and its descendants in document order."""
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass
class XmlDocument:
    """A whole dump: the XML declaration (exact text, or None), the ``hierarchy`` root, and whitespace."""

    root: XmlNode
    declaration: str | None = DECLARATION
    lead: str = ""  # between the declaration and the root
    tail: str = ""  # after the root

    def nodes(self) -> list[XmlNode]:
        """Every ``node`` element (not the ``hierarchy`` root) in document order."""
        return self.root.walk()[1:]

    @property
    def rotation(self) -> int | None:
        value = self.root.get("rotation")
        return int(value) if value is not None and value.isdigit() else None


def parse_bounds(value: str) -> tuple[int, int, int, int] | None:
    """``"[l,t][r,b]"`` as ``(left, top, right, bottom)``; None when it is not in that form."""
    m = BOUNDS.fullmatch(value)
    return None if m is None else (int(m[1]), int(m[2]), int(m[3]), int(m[4]))


def _position(text: str, offset: int, line0: int) -> str:
    line = text.count("\n", 0, offset) + line0
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line} column {col}"


def _decode(raw: str, text: str, offset: int, line0: int) -> str:
    out: list[str] = []
    pos = 0
    while True:
        amp = raw.find("&", pos)
        if amp < 0:
            out.append(raw[pos:])
            return "".join(out)
        out.append(raw[pos:amp])
        m = _ENTITY.match(raw, amp)
        if m is None:
            raise CodecError("a bare '&' in an attribute value (write &amp;)",
                             where=f"uiautomator XML {_position(text, offset + amp, line0)}")
        if m.group(1):
            out.append(_NAMED[m.group(1)])
        else:
            code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
            if not (0 < code <= 0x10FFFF) or 0xD800 <= code <= 0xDFFF:
                raise CodecError(f"character reference {m.group(0)} is not a character",
                                 where=f"uiautomator XML {_position(text, offset + amp, line0)}")
            out.append(chr(code))
        pos = m.end()


def parse_xml(text: str, line0: int = 1) -> XmlDocument:
    """Parse a uiautomator dump (see the module docstring). ``line0`` numbers the first line in errors."""
    pos = 0
    declaration = None
    m = _SPACE.match(text, pos)
    lead_before = m.group(0)
    pos = m.end()
    m = _DECL.match(text, pos)
    if m:
        if lead_before:
            raise CodecError("whitespace before the XML declaration", where=f"uiautomator XML line {line0}")
        declaration = m.group(0)
        pos = m.end()
    doc_lead = ""
    stack: list[XmlNode] = []
    root: XmlNode | None = None
    pending_space = "" if declaration else lead_before
    while pos < len(text):
        m = _SPACE.match(text, pos)
        space = m.group(0)
        pos = m.end()
        if pos >= len(text):
            pending_space += space
            break
        pending_space += space
        where = f"uiautomator XML {_position(text, pos, line0)}"
        if text.startswith("</", pos):
            end = _END.match(text, pos)
            if end is None:
                raise CodecError("malformed end tag", where=where)
            if not stack:
                raise CodecError(f"end tag </{end.group(1)}> closes nothing", where=where)
            node = stack.pop()
            if end.group(1) != node.tag:
                raise CodecError(f"end tag </{end.group(1)}> does not close <{node.tag}>", where=where)
            if end.group(2):
                raise CodecError("whitespace inside an end tag", where=where)
            node.inner_tail = pending_space
            pending_space = ""
            pos = end.end()
            continue
        if text[pos] != "<":
            raise CodecError(f"text {text[pos:pos + 20]!r} outside a tag (a dump holds only elements)",
                             where=where, hint="a uiautomator dump is <hierarchy> with nested <node .../>")
        start = _START.match(text, pos)
        if start is None:
            raise CodecError(f"expected a tag, got {text[pos:pos + 20]!r}", where=where)
        tag = start.group(1)
        if root is None and tag != "hierarchy":
            raise CodecError(f"the root element is <{tag}>, expected <hierarchy>", where=where,
                             hint="a uiautomator dump starts with <hierarchy rotation=\"0\">")
        if root is not None and not stack:
            raise CodecError(f"<{tag}> after the end of <hierarchy>", where=where)
        if root is not None and tag != "node":
            raise CodecError(f"<{tag}> inside the hierarchy, expected <node>", where=where)
        node = XmlNode(tag, lead=pending_space)
        if root is None:
            doc_lead, node.lead = pending_space, ""
        pending_space = ""
        pos = start.end()
        seen: set[str] = set()
        while True:
            attr = _ATTR.match(text, pos)
            if attr is None:
                break
            name, quoted = attr.group(2), attr.group(4)
            if name in seen:
                raise CodecError(f"attribute {name!r} given twice", where=f"uiautomator XML {_position(text, pos, line0)}")
            seen.add(name)
            value = _decode(quoted[1:-1], text, attr.start(4) + 1, line0)
            if name == "bounds" and parse_bounds(value) is None:
                raise CodecError(f"bounds {value!r} is not [left,top][right,bottom]",
                                 where=f"uiautomator XML {_position(text, attr.start(4), line0)}")
            node.attrs.append((name, value))
            pos = attr.end()
        close = _TAG_END.match(text, pos)
        if close is None:
            raise CodecError(f"malformed tag <{tag}> near {text[pos:pos + 20]!r}",
                             where=f"uiautomator XML {_position(text, pos, line0)}")
        node.close_space = close.group(1)
        node.self_closing = bool(close.group(2))
        pos = close.end()
        if stack:
            stack[-1].children.append(node)
        if root is None:
            root = node
        if not node.self_closing:
            if len(stack) >= MAX_DEPTH:
                raise CodecError(f"elements nested deeper than {MAX_DEPTH}", where=where)
            stack.append(node)
    if root is None:
        raise CodecError("no <hierarchy> element", where=f"uiautomator XML line {line0}",
                         hint="a uiautomator dump starts with <hierarchy rotation=\"0\">")
    if stack:
        raise CodecError(f"<{stack[-1].tag}> is never closed (the dump is cut off)",
                         where=f"uiautomator XML {_position(text, len(text), line0)}")
    return XmlDocument(root=root, declaration=declaration, lead=doc_lead, tail=pending_space)


def compact(doc: XmlDocument) -> XmlDocument:
    """``doc`` in place spelled as ``uiautomator dump`` writes it: one line, the standard declaration, no
    whitespace between tags (what the observation codec's ``normalize`` compares)."""
    doc.declaration, doc.lead, doc.tail = DECLARATION, "", ""
    for node in doc.root.walk():
        node.lead = node.inner_tail = ""
        node.close_space = " " if node.self_closing and not node.children else ""
    return doc


def escape(value: str) -> str:
    """An attribute value escaped as Android's XML serializer writes it."""
    return _TO_ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], value)


def make_node(attrs: list[tuple[str, str]], children: list[XmlNode] | None = None) -> XmlNode:
    """A ``node`` element spelled as uiautomator spells it (leaves self-closing)."""
    kids = list(children or [])
    return XmlNode("node", list(attrs), kids, self_closing=not kids, close_space=" " if not kids else "")


def _render_node(node: XmlNode, out: list[str]) -> None:
    out.append(node.lead)
    out.append(f"<{node.tag}")
    for name, value in node.attrs:
        out.append(f' {name}="{escape(value)}"')
    if node.self_closing and not node.children:
        out.append(f"{node.close_space}/>")
        return
    # A leaf that gained children is written as uiautomator writes a container: no space before ">".
    out.append(f"{'' if node.self_closing else node.close_space}>")
    for child in node.children:
        _render_node(child, out)
    out.append(f"{node.inner_tail}</{node.tag}>")


def render_xml(doc: XmlDocument) -> str:
    """The dump's text in uiautomator's spelling (exact for real dumps; see the module docstring)."""
    out = [doc.declaration or "", doc.lead]
    _render_node(doc.root, out)
    out.append(doc.tail)
    return "".join(out)
