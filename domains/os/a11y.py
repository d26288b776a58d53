"""The desktop's accessibility tree in OSWorld's two text forms: AT-SPI XML and the linearized table.

**XML** (what OSWorld's desktop server returns from ``GET /accessibility`` as ``{"AT": ...}``): a root
``<desktop-frame>`` that declares the namespaces, one ``<application name=...>`` per accessible program,
below it one element per accessible object, tagged with its role (spaces → ``-``: ``push-button``,
``menu-item``). Attributes: ``name``, then ``st:<state>="true"`` per AT-SPI state, ``attr:<key>`` per
object attribute, ``cp:screencoord="(x, y)"`` and ``cp:size="(w, h)"`` for visible, showing objects,
``image``/``selection="true"``, ``val:value``/``min``/``max``/``step``, ``act:<action>_desc``/``_kb``;
the element text is the object's text. :data:`NAMESPACES` holds the Ubuntu (AT-SPI), Windows and macOS
namespace sets OSWorld uses.

**Table** (what OSWorld agents are shown, ``linearize_accessibility_tree``): the header
:data:`TABLE_HEADER` then one tab-separated row per kept node (:func:`keeps_node` is OSWorld's filter).
A text containing ``"`` is quoted with doubled quotes, an empty text is ``""``; text is not otherwise
escaped, so a row may span several lines when the text does. As in OSWorld, the ``class`` and
``description`` columns are read from the *Windows* attributes namespace (OSWorld's Ubuntu constant
points there), so on Ubuntu trees they stay empty.

Both forms may follow a preamble (any text before the root element or the header, e.g. a heading an
observation layout puts first) and be followed by an epilogue; both are kept verbatim.
:func:`render_xml` writes OSWorld's own layout (lxml's serialisation: declarations on the root, ``<a/>``
for empty elements, ``&#10;`` for newlines in attributes); an XML text in any other layout (indented,
single quotes...) is kept verbatim, so every text the parser accepts renders back byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from xml.etree.ElementTree import ParseError, XMLPullParser

from awctl.errors import CodecError

UBUNTU_NS: dict[str, str] = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
WINDOWS_NS: dict[str, str] = {
    **{k: v.replace("ubuntu", "windows") for k, v in UBUNTU_NS.items()},
    "class": "https://accessibility.windows.example.org/ns/class",
}
MACOS_NS: dict[str, str] = {
    **{k: v.replace("ubuntu", "macos") for k, v in UBUNTU_NS.items() if k != "docattr"},
    "role": "https://accessibility.macos.example.org/ns/role",
}
NAMESPACES: dict[str, dict[str, str]] = {"ubuntu": UBUNTU_NS, "windows": WINDOWS_NS, "macos": MACOS_NS}
KNOWN_URIS: frozenset[str] = frozenset(uri for ns in NAMESPACES.values() for uri in ns.values())
# Windows trees also use count/column/id namespaces (cnt, cols, id) that OSWorld builds on the fly.
_EXTRA_URI = re.compile(r"^https://accessibility\.(ubuntu|windows|macos)\.example\.org/ns/[a-z/_]+$")

TABLE_HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
TABLE_COLUMNS = 7
# OSWorld's linearizer reads class/description from this namespace for Ubuntu too (see module docstring).
_TABLE_ATTR_NS = "https://accessibility.windows.example.org/ns/attributes"
_PAIR = re.compile(r"^\((-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\)$")

# Characters XML 1.0 cannot carry at all (lxml refuses them; the reader drops them).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def known_namespace(uri: str) -> bool:
    """Whether ``uri`` is one of OSWorld's accessibility namespaces."""
    return uri in KNOWN_URIS or bool(_EXTRA_URI.match(uri))


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot represent."""
    return _XML_INVALID.sub("", text)


def parse_pair(value: str | None) -> tuple[float, float] | None:
    """``"(x, y)"`` → ``(x, y)``; None when absent or not in that form."""
    if not value:
        return None
    m = _PAIR.match(value)
    return (float(m.group(1)), float(m.group(2))) if m else None


# ── the tree ─────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Node:
    """One element: ``tag`` (role), attributes in document order with namespaced keys in Clark notation
    (``{uri}local``), text, children. ``nsdecl`` are the ``xmlns:prefix`` declarations on this element,
    in order; ``tail`` is the text after the element (whitespace in indented layouts)."""

    tag: str
    attrib: dict[str, str] = field(default_factory=dict)
    text: str | None = None
    children: list[Node] = field(default_factory=list)
    nsdecl: list[tuple[str, str]] = field(default_factory=list)
    tail: str | None = None

    def iter(self) -> Iterator[Node]:
        """This node and every descendant, depth first in document order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def walk(self, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Node]]:
        """``(child-index path, node)`` pairs, depth first."""
        yield path, self
        for i, child in enumerate(self.children):
            yield from child.walk((*path, i))

    @property
    def name(self) -> str:
        return self.attrib.get("name", "")

    def ns_get(self, ns: str, local: str, default: str | None = None) -> str | None:
        return self.attrib.get(f"{{{ns}}}{local}", default)

    def state(self, state: str, ns: str = UBUNTU_NS["st"]) -> bool:
        return self.attrib.get(f"{{{ns}}}{state}") == "true"

    def position(self, ns: str = UBUNTU_NS["cp"]) -> tuple[float, float] | None:
        return parse_pair(self.attrib.get(f"{{{ns}}}screencoord"))

    def size(self, ns: str = UBUNTU_NS["cp"]) -> tuple[float, float] | None:
        return parse_pair(self.attrib.get(f"{{{ns}}}size"))


def _clark_to_prefixed(key: str, prefixes: dict[str, str], where: str, attribute: bool = False) -> str:
    if not key.startswith("{"):
        return key
    uri, _, local = key[1:].partition("}")
    prefix = prefixes.get(uri)
    if prefix is None or (attribute and not prefix):
        raise CodecError(f"namespace {uri!r} is not declared with a prefix", where=where)
    return f"{prefix}:{local}" if prefix else local


def _escape_attr(value: str) -> str:
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;"))


def _escape_text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def render_xml(root: Node) -> str:
    """OSWorld's serialisation of ``root`` (lxml ``tostring(..., encoding="unicode")``)."""
    out: list[str] = []

    def emit(node: Node, prefixes: dict[str, str]) -> None:
        if node.nsdecl:
            prefixes = {**prefixes, **{uri: p for p, uri in node.nsdecl}}
        tag = _clark_to_prefixed(node.tag, prefixes, f"element <{node.tag}>")
        parts = [f"<{tag}"]
        parts += [f' xmlns{":" + p if p else ""}="{_escape_attr(uri)}"' for p, uri in node.nsdecl]
        for key, value in node.attrib.items():
            name = _clark_to_prefixed(key, prefixes, f"element <{tag}>", attribute=True)
            parts.append(f' {name}="{_escape_attr(value)}"')
        if node.text is None and not node.children:
            parts.append("/>")
            out.append("".join(parts))
        else:
            parts.append(">")
            out.append("".join(parts))
            if node.text:
                out.append(_escape_text(node.text))
            for child in node.children:
                emit(child, prefixes)
            out.append(f"</{tag}>")
        if node.tail:
            out.append(_escape_text(node.tail))

    emit(root, {})
    return "".join(out)


# OSWorld's server stops at depth 50; anything far deeper is not an accessibility tree.
MAX_DEPTH = 200
_DOCTYPE = re.compile(r"<!(DOCTYPE|ENTITY)", re.I)


def parse_xml(text: str, where: str = "observation") -> Node:
    """The tree of an XML text (one root element). Raises :class:`CodecError` naming line and column."""
    if _DOCTYPE.search(text):
        # Entity declarations are how XML bombs work; accessibility trees never carry them.
        raise CodecError("DOCTYPE/ENTITY declarations are not allowed in an accessibility tree", where=where)
    parser = XMLPullParser(events=("start-ns", "start", "end"))
    pending_ns: list[tuple[str, str]] = []
    stack: list[Node] = []
    root: Node | None = None
    try:
        parser.feed(text)
        parser.close()
        events = list(parser.read_events())
    except ParseError as exc:
        line, col = getattr(exc, "position", (0, 0))
        raise CodecError(f"XML is not well-formed at line {line}, column {col}: {exc}", where=where,
                         hint="an accessibility tree is one <desktop-frame> element (OSWorld XML)") from None
    except (ValueError, RecursionError) as exc:
        raise CodecError(f"XML could not be read: {exc}", where=where) from None
    for event, item in events:
        if event == "start-ns":
            pending_ns.append((item[0], item[1]))
        elif event == "start":
            if len(stack) >= MAX_DEPTH:
                raise CodecError(f"XML nests deeper than {MAX_DEPTH} levels", where=where)
            node = Node(str(item.tag), dict(item.attrib), None, [], pending_ns, None)
            pending_ns = []
            if stack:
                stack[-1].children.append(node)
            else:
                root = node
            stack.append(node)
            node._element = item  # type: ignore[attr-defined]  # text/tail are final only at "end"
        else:
            node = stack.pop()
            element = node.__dict__.pop("_element")
            node.text = element.text
            node.tail = element.tail if stack else None
            element.clear()  # keep memory flat for big trees
    if root is None:
        raise CodecError("no XML element found", where=where)
    return root


# ── table ────────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Row:
    """One table row's seven cells, verbatim (``text`` is the cell as written, maybe quoted)."""

    tag: str
    name: str
    text: str
    cls: str
    description: str
    position: str
    size: str

    def cells(self) -> list[str]:
        return [self.tag, self.name, self.text, self.cls, self.description, self.position, self.size]

    @property
    def value(self) -> str:
        """The text cell decoded: quotes removed and doubled quotes undone."""
        t = self.text
        if len(t) >= 2 and t.startswith('"') and t.endswith('"'):
            return t[1:-1].replace('""', '"')
        return t

    @property
    def xy(self) -> tuple[float, float] | None:
        return parse_pair(self.position)

    @property
    def wh(self) -> tuple[float, float] | None:
        return parse_pair(self.size)


def table_text(value: str) -> str:
    """A text cell as OSWorld writes it."""
    if not value:
        return '""'
    return f'"{value.replace(chr(34), chr(34) * 2)}"' if '"' in value else value


def _row_from_record(record: str, where: str) -> Row:
    cells = record.split("\t")
    if len(cells) < TABLE_COLUMNS:
        raise CodecError(
            f"table row has {len(cells)} tab-separated cells, expected {TABLE_COLUMNS}: {record[:120]!r}",
            where=where, hint=f"columns: {TABLE_HEADER.replace(chr(9), ' | ')}",
        )
    # A text may hold tabs: tag and name come from the left, the four last cells from the right.
    tag, name, *middle, cls, desc, pos, size = cells
    return Row(tag, name, "\t".join(middle), cls, desc, pos, size)


_ROW_END = re.compile(r"\t(\(-?\d+(?:\.\d+)?, -?\d+(?:\.\d+)?\))?\t(\(-?\d+(?:\.\d+)?, -?\d+(?:\.\d+)?\))?$")


def parse_table_rows(lines: list[str], first_line: int, where: str) -> list[Row]:
    """Rows of the table body; a row whose text holds newlines continues until a line ends the row."""
    rows: list[Row] = []
    record: list[str] = []
    start = first_line
    for i, line in enumerate(lines):
        if not record:
            start = first_line + i
        record.append(line)
        joined = "\n".join(record)
        if joined.count("\t") >= TABLE_COLUMNS - 1 and _ROW_END.search(joined):
            rows.append(_row_from_record(joined, f"{where}: line {start}"))
            record = []
    if record:
        joined = "\n".join(record)
        rows.append(_row_from_record(joined, f"{where}: line {start}"))
    return rows


# ── OSWorld's node filter and linearizer ─────────────────────────────────────────────────────────────

_KEEP_SUFFIXES = ("item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link",
                  "tabelement", "textfield", "textarea", "menu")
_KEEP_TAGS = frozenset({
    "alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph", "scroll-bar",
    "section", "slider", "static", "table-cell", "terminal", "text", "netuiribbontab", "start",
    "trayclockwclass", "traydummysearchcontrol", "uiimage", "uiproperty", "uiribboncommandbar",
})


def platform_of(root: Node) -> str:
    """``ubuntu``/``windows``/``macos`` from the namespaces the tree declares (ubuntu when none match)."""
    uris = {uri for node in root.iter() for _, uri in node.nsdecl}
    for platform, ns in NAMESPACES.items():
        if ns["st"] in uris or ns["cp"] in uris:
            return platform
    return "ubuntu"


def keeps_node(node: Node, platform: str = "ubuntu") -> bool:
    """OSWorld's ``judge_node``: interactive or textual, showing, enabled, named, with a box on screen."""
    ns = NAMESPACES[platform]
    tag = node.tag
    if not (tag.startswith("document") or tag.endswith(_KEEP_SUFFIXES) or tag in _KEEP_TAGS):
        return False
    st = ns["st"]
    if platform == "ubuntu":
        if not (node.state("showing", st) and node.state("visible", st)):
            return False
    elif not node.state("visible", st):
        return False
    if not any(node.state(s, st) for s in ("enabled", "editable", "expandable", "checkable")):
        return False
    if not (node.name or node.text):
        return False
    pos, size = node.position(ns["cp"]), node.size(ns["cp"])
    return bool(pos and size and pos[0] >= 0 and pos[1] >= 0 and size[0] > 0 and size[1] > 0)


def linearize(root: Node, platform: str | None = None) -> list[Row]:
    """The table rows OSWorld's linearizer makes of ``root`` (header not included)."""
    platform = platform or platform_of(root)
    ns = NAMESPACES[platform]
    rows = []
    for node in root.iter():
        if not keeps_node(node, platform):
            continue
        if node.text:
            text = table_text(node.text)
        elif node.attrib.get(f"{{{WINDOWS_NS['class']}}}class", "").endswith("EditWrapper") and node.ns_get(
            ns["val"], "value"
        ):
            text = table_text(node.ns_get(ns["val"], "value") or "")
        else:
            text = '""'
        cls_ns = _TABLE_ATTR_NS if platform == "ubuntu" else WINDOWS_NS["class"]
        rows.append(Row(
            node.tag, node.name, text, node.attrib.get(f"{{{cls_ns}}}class", ""),
            node.attrib.get(f"{{{_TABLE_ATTR_NS}}}description", ""),
            node.ns_get(ns["cp"], "screencoord", "") or "", node.ns_get(ns["cp"], "size", "") or "",
        ))
    return rows


# ── building a tree from the AT-SPI reader's JSON ────────────────────────────────────────────────────


def role_tag(role: str) -> str:
    """OSWorld's element name for an AT-SPI role name (``push button`` → ``push-button``)."""
    return (role.strip() or "unknown").replace(" ", "-")


def _fmt(v: Any) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def node_from_atspi(data: dict[str, Any], *, prune_hidden: bool = False) -> Node:
    """An XML node (OSWorld's attribute order) from one node the AT-SPI reader printed."""
    st, attr_ns, cp, val, act = (UBUNTU_NS[k] for k in ("st", "attr", "cp", "val", "act"))
    attrib: dict[str, str] = {"name": xml_safe(str(data.get("name") or ""))}
    for state in data.get("states") or []:
        attrib[f"{{{st}}}{state}"] = "true"
    for key, value in (data.get("attributes") or {}).items():
        if key:
            attrib[f"{{{attr_ns}}}{key}"] = xml_safe(str(value))
    extents = data.get("extents")
    if extents:
        x, y, w, h = extents
        attrib[f"{{{cp}}}screencoord"] = f"({_fmt(x)}, {_fmt(y)})"
        attrib[f"{{{cp}}}size"] = f"({_fmt(w)}, {_fmt(h)})"
    if data.get("image"):
        attrib["image"] = "true"
    if data.get("selection"):
        attrib["selection"] = "true"
    for key, value in (data.get("value") or {}).items():
        attrib[f"{{{val}}}{key}"] = str(value)
    for name, desc, kb in data.get("actions") or []:
        name = name.replace(" ", "-")
        attrib[f"{{{act}}}{name}_desc"] = xml_safe(desc)
        attrib[f"{{{act}}}{name}_kb"] = xml_safe(kb)
    text = xml_safe(data.get("text") or "")
    children = [
        node_from_atspi(c, prune_hidden=prune_hidden)
        for c in data.get("children") or []
        if not prune_hidden or "showing" in (c.get("states") or [])
    ]
    return Node(role_tag(str(data.get("role") or "")), attrib, text or None, children)


def tree_from_atspi(apps: list[dict[str, Any]], *, prune_hidden: bool = False) -> Node:
    """The ``<desktop-frame>`` root over the reader's applications, declaring OSWorld's Ubuntu namespaces.

    ``prune_hidden`` drops objects (and their subtrees) that are not showing, e.g. the items of closed
    menus; applications are always kept.
    """
    children = [node_from_atspi(app, prune_hidden=prune_hidden) for app in apps]
    return Node("desktop-frame", {}, None, children, list(UBUNTU_NS.items()))


# ── observations ─────────────────────────────────────────────────────────────────────────────────────


@dataclass
class A11yObservation:
    """A parsed observation. ``kind`` is ``xml`` or ``table``; ``preamble``/``epilogue`` are the verbatim
    text around the tree or table. For XML, ``tree`` is the root and ``verbatim`` the original text of the
    XML part when it is not in OSWorld's layout (``None`` when :func:`render_xml` reproduces it). For a
    table, ``header`` is the header line and ``rows`` the rows."""

    kind: Literal["xml", "table"]
    preamble: str = ""
    epilogue: str = ""
    tree: Node | None = None
    verbatim: str | None = None
    header: str = TABLE_HEADER
    rows: list[Row] = field(default_factory=list)

    @property
    def platform(self) -> str:
        return platform_of(self.tree) if self.tree is not None else "ubuntu"

    def table_rows(self) -> list[Row]:
        """The rows of the table form (linearized from the tree for XML)."""
        return self.rows if self.kind == "table" else linearize(self.tree) if self.tree else []


_TABLE_HEADER_RE = re.compile(r"^tag\tname\ttext\t", re.M)
_XML_START = re.compile(r"<[A-Za-z_]")


def parse_observation(text: str, where: str = "observation") -> A11yObservation:
    """Parse an accessibility-tree observation (XML or table, with optional preamble/epilogue)."""
    if not isinstance(text, str):
        raise CodecError(f"expected text, got {type(text).__name__}", where=where)
    header = _TABLE_HEADER_RE.search(text)
    xml_start = _XML_START.search(text)
    if header and (not xml_start or header.start() < xml_start.start()):
        return _parse_table(text, header.start(), where)
    if xml_start:
        return _parse_xml_observation(text, xml_start.start(), where)
    raise CodecError(
        "not an accessibility tree: expected OSWorld's XML (<desktop-frame ...>) or the linearized table",
        where=where, hint=f"a table starts with the header line {TABLE_HEADER!r}",
    )


def _parse_xml_observation(text: str, start: int, where: str) -> A11yObservation:
    end = text.rfind(">") + 1
    body = text[start:end]
    preamble = text[:start]
    line0 = preamble.count("\n") + 1
    root = parse_xml(body, where=f"{where} (XML from line {line0})")
    try:
        canonical = render_xml(root)
    except CodecError:
        canonical = None
    return A11yObservation(
        "xml", preamble=preamble, epilogue=text[end:], tree=root, verbatim=None if canonical == body else body
    )


def _parse_table(text: str, start: int, where: str) -> A11yObservation:
    preamble = text[:start]
    header, *lines = text[start:].split("\n")
    if header.rstrip("\r") != TABLE_HEADER:
        cols = header.split("\t")
        raise CodecError(
            f"table header has {len(cols)} columns {cols!r}, expected {TABLE_HEADER.split(chr(9))!r}",
            where=f"{where}: line {preamble.count(chr(10)) + 1}",
        )
    # Line breaks after the last row (a final newline, blank lines) are the epilogue, kept verbatim.
    epilogue = ""
    while lines and lines[-1] == "":
        lines.pop()
        epilogue += "\n"
    rows = parse_table_rows(lines, preamble.count("\n") + 2, where)
    return A11yObservation("table", preamble=preamble, epilogue=epilogue, header=header, rows=rows)


def render_observation(obs: A11yObservation) -> str:
    """The text of an observation; ``parse_observation(render_observation(o)) == o``."""
    if obs.kind == "xml":
        if obs.tree is None and obs.verbatim is None:
            raise CodecError("an XML observation needs a tree")
        body = obs.verbatim if obs.verbatim is not None else render_xml(obs.tree)  # type: ignore[arg-type]
        return obs.preamble + body + obs.epilogue
    return obs.preamble + "\n".join([obs.header, *("\t".join(r.cells()) for r in obs.rows)]) + obs.epilogue
