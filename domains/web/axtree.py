"""Reading a page as BrowserGym's flattened accessibility tree, with stable bids.

Bids: :data:`MARK_BIDS_JS` gives every element of the document that has none a ``bid`` attribute, counting
up per document in document order, so an element keeps its bid for as long as it lives and a page loaded
twice gets the same bids. The tree: Chrome's full accessibility tree (CDP ``Accessibility.getFullAXTree``),
flattened by BrowserGym's rules — ``LineBreak`` nodes and nodes without a name are skipped (their children
move up a level), ``generic`` nodes without properties are skipped, ``StaticText`` whose text is part of its
parent's name is dropped, and the properties ``editable``, ``readonly``, ``level``, ``settable``,
``multiline``, ``invalid`` and ``focusable`` are left out. Each DOM element's bid reaches its tree node
through the node's ``backendDOMNodeId`` (CDP ``DOM.getDocument``).
"""

from __future__ import annotations

from typing import Any

from .codec import FLAG, AXNode

BID_ATTRIBUTE = "bid"
MARK_BIDS_JS = """() => {
  let n = window.__awctlBidCounter || 0;
  for (const el of document.querySelectorAll('*')) {
    if (!el.hasAttribute('bid')) el.setAttribute('bid', String(++n));
  }
  window.__awctlBidCounter = n;
  return n;
}"""

# InlineTextBox nodes only repeat their StaticText (BrowserGym output never shows them).
IGNORED_ROLES = frozenset({"LineBreak"})
DROPPED_ROLES = frozenset({"InlineTextBox"})
IGNORED_PROPERTIES = frozenset({"editable", "readonly", "level", "settable", "multiline", "invalid", "focusable"})
FLAG_PROPERTIES = frozenset({"required", "focused", "atomic"})


def bids_by_backend_id(document: dict[str, Any]) -> dict[int, str]:
    """``backendNodeId -> bid`` for every element of a ``DOM.getDocument(depth=-1)`` result."""
    out: dict[int, str] = {}
    stack = [document.get("root", document)]
    while stack:
        node = stack.pop()
        attrs = node.get("attributes") or []
        for i in range(0, len(attrs) - 1, 2):
            if attrs[i] == BID_ATTRIBUTE:
                out[int(node["backendNodeId"])] = attrs[i + 1]
                break
        stack.extend(node.get("children") or [])
    return out


def _properties(node: dict[str, Any]) -> list[tuple[str, Any]]:
    props: list[tuple[str, Any]] = []
    for prop in node.get("properties", []):
        value = prop.get("value")
        if not isinstance(value, dict) or "value" not in value:
            continue
        name, v = prop["name"], value["value"]
        if name in IGNORED_PROPERTIES:
            continue
        if name in FLAG_PROPERTIES:
            if v:
                props.append((name, FLAG))
        else:
            props.append((name, v))
    return props


def flatten(ax_nodes: list[dict[str, Any]], bids: dict[int, str]) -> list[AXNode]:
    """The tree's printed nodes in order (depth, bid, role, name, value, properties)."""
    if not ax_nodes:
        return []
    index = {n["nodeId"]: n for n in ax_nodes}
    out: list[AXNode] = []
    # (node, depth, parent's name); iterative so deep pages cannot exhaust Python's recursion limit
    stack: list[tuple[dict[str, Any], int, str]] = [(ax_nodes[0], 0, "")]
    while stack:
        node, depth, parent_name = stack.pop()
        role = str((node.get("role") or {}).get("value", ""))
        if role in DROPPED_ROLES:
            continue
        name = ""
        skip = role in IGNORED_ROLES or "name" not in node
        if not skip:
            name = str(node["name"].get("value", ""))
            props = _properties(node)
            if role == "generic" and not props:
                skip = True
            if role == "StaticText" and name in parent_name:
                skip = True
            if not skip:
                backend = node.get("backendDOMNodeId")
                bid = bids.get(int(backend)) if backend is not None and role != "StaticText" else None
                value = node.get("value")
                has_value = isinstance(value, dict) and "value" in value
                out.append(AXNode(
                    depth=depth, role=role, name=None if role == "generic" and not name else name.strip(),
                    bid=bid, value=value["value"] if has_value else None, has_value=has_value, props=props))
        child_depth = depth if skip else depth + 1
        children = [index[c] for c in node.get("childIds", []) if c in index and c != node["nodeId"]]
        stack.extend((c, child_depth, name) for c in reversed(children))
    return out
