"""Shared real-server recordings for the MCP tests (one server process per episode, recorded once)."""

from __future__ import annotations

import pytest
from awctl_domains.mcp.env import McpEnv, record_episode
from awctl_domains.mcp.tasks import call, tasks_for

from awctl.trajectory import Trajectory

# Reference solutions plus calls that exercise error paths and repeated structured outputs, so the
# recordings cover every verifier's subject: invalid arguments, unknown tools, tool failures, structuredContent.
EXTRA_ACTIONS = {
    "mcp/notes/fix-plan-day": [
        call("read_note", {"path": "../etc/passwd"}, 10),
        call("read_note", {}, 11),
        call("write_note", {"path": "archive/x.md", "content": "nope"}, 12),
        call("rm_rf", {"path": "/"}, 13),
        call("list_notes", {}, 14),
        call("list_notes", {"folder": "work"}, 15),
        call("search_notes", {"query": "monday"}, 16),
    ],
    "mcp/shop/multi-item-order": [
        call("get_order", {"order_id": 1004}, 10),
        call("get_order", {"order_id": 1001}, 11),
        call("get_order", {"order_id": "1001"}, 12),
        call("create_order", {"customer": "zed", "items": [{"sku": "CAP-1", "qty": 1}]}, 13),
        call("cancel_order", {"order_id": 1002}, 14),
        call("list_products", {}, 15),
        call("refund", {"order_id": 1001}, 16),
    ],
    "mcp/calendar/force-all-hands": [
        call("check_conflicts", {"date": "2026-03-02"}, 10),
        call("check_conflicts", {"date": "2026-03-03"}, 11),
        call("create_event", {"title": "X", "date": "2026-03-02", "start": "9:00", "end": "10:00"}, 12),
        call("create_event", {"title": "Y", "date": "2026-03-02", "start": "09:00", "end": "09:10"}, 13),
        call("find_free_slot", {"date": "2026-03-02", "duration_minutes": 60}, 14),
        call("list_events", {"date": "2026-03-03"}, 15),
    ],
}


@pytest.fixture(scope="session")
def recorded() -> dict[str, Trajectory]:
    """Real trajectories from the three demo servers, keyed by task id (about 3 s to record)."""
    tasks = {t.id: t for t in tasks_for("all")}
    out = {}
    with McpEnv() as env:
        for task_id, extra in EXTRA_ACTIONS.items():
            task = tasks[task_id]
            out[task_id] = record_episode(env, task, [*task.solution, *extra])
    return out
