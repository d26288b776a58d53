"""Reads the AT-SPI accessibility tree of one desktop session and prints it as JSON (a helper process).

Runs under the system Python that has the AT-SPI GObject bindings (Debian ``python3-gi`` +
``gir1.2-atspi-2.0``, which ``python3-pyatspi`` pulls in), not under awctl's virtual environment: the
bindings are compiled against the system interpreter. :class:`awctl_domains.os.desktop.DesktopSession`
starts it as ``/usr/bin/python3 -I atspi_reader.py`` with the session's ``DBUS_SESSION_BUS_ADDRESS``.

Protocol: one request per stdin line, ``dump`` (the whole tree) or ``dump showing`` (only objects in the
SHOWING state below each application: closed menus and hidden pages are skipped, which saves most of the
D-Bus round trips), one JSON line per answer on stdout::

    {"ok": true, "apps": [NODE, ...]}          NODE = {"role", "name", "states", "attributes", "extents",
                                                        "text", "image", "selection", "value", "actions",
                                                        "children"}
    {"ok": false, "error": "..."}

The fields follow what OSWorld's desktop server reads for each node (states, attributes, screen extents of
visible and showing nodes, text, image/selection/value/action interfaces); awctl builds the OSWorld XML
from them (``codec.tree_from_atspi``). This file imports nothing from awctl.
"""

import json
import sys

MAX_DEPTH = 50
MAX_WIDTH = 1024


def _states(acc, Atspi):
    out = []
    for st in acc.get_state_set().get_states():
        # OSWorld names states after pyatspi's STATE_* constants: "multi_line", not the nick "multi-line".
        name = st.value_name[len("ATSPI_STATE_"):].lower()
        if name:
            out.append(name)
    return out


def _node(acc, Atspi, depth, showing_only):
    node = {"role": "", "name": "", "states": [], "attributes": {}, "extents": None, "text": None,
            "image": False, "selection": False, "value": None, "actions": [], "children": []}
    try:
        node["name"] = acc.get_name() or ""
        node["states"] = _states(acc, Atspi)
        node["attributes"] = dict(acc.get_attributes() or {})
        node["role"] = (acc.get_role_name() or "").strip()
        interfaces = set(acc.get_interfaces() or [])
    except Exception as exc:  # an object that vanished mid-walk: keep what was read
        node["error"] = str(exc)
        return node
    if "visible" in node["states"] and "showing" in node["states"] and "Component" in interfaces:
        try:
            r = acc.get_extents(Atspi.CoordType.SCREEN)
            node["extents"] = [r.x, r.y, r.width, r.height]
        except Exception:
            pass
    if "Text" in interfaces:
        try:
            text = acc.get_text(0, acc.get_character_count()) or ""
            node["text"] = text.replace("\ufffc", "").replace("\ufffd", "")
        except Exception:
            pass
    node["image"] = "Image" in interfaces
    node["selection"] = "Selection" in interfaces
    if "Value" in interfaces:
        value = {}
        for key, fn in (("value", acc.get_current_value), ("min", acc.get_minimum_value),
                        ("max", acc.get_maximum_value), ("step", acc.get_minimum_increment)):
            try:  # noqa: SIM105 - same style as the other optional reads
                value[key] = str(fn())
            except Exception:
                pass
        node["value"] = value
    if "Action" in interfaces:
        try:
            for i in range(acc.get_n_actions()):
                node["actions"].append([acc.get_action_name(i) or "", acc.get_action_description(i) or "",
                                        acc.get_key_binding(i) or ""])
        except Exception:  # noqa: SIM105 - contextlib costs an import in a process started per episode
            pass
    if depth >= MAX_DEPTH:
        return node
    try:
        count = min(acc.get_child_count(), MAX_WIDTH)
    except Exception:
        count = 0
    for i in range(count):
        try:
            child = acc.get_child_at_index(i)
        except Exception:
            continue
        if child is None:
            continue
        if showing_only:
            try:
                if not child.get_state_set().contains(Atspi.StateType.SHOWING):
                    continue
            except Exception:
                continue
        node["children"].append(_node(child, Atspi, depth + 1, showing_only))
    return node


def dump(Atspi, showing_only=False):
    desktop = Atspi.get_desktop(0)
    apps = []
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None:
            continue
        # Without this a long-lived reader returns names and states cached from an earlier dump.
        app.clear_cache()
        apps.append(_node(app, Atspi, 1, showing_only))
    return apps


def main():
    import gi

    gi.require_version("Atspi", "2.0")
    from gi.repository import Atspi

    for line in sys.stdin:
        request = line.strip()
        if not request:
            continue
        if request not in ("dump", "dump showing"):
            answer = {"ok": False, "error": f"unknown request {request!r}"}
        else:
            try:
                answer = {"ok": True, "apps": dump(Atspi, showing_only=request == "dump showing")}
            except Exception as exc:
                answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
