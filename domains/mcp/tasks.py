"""Agent task suites over the demo servers: ``notes``, ``shop`` and ``calendar`` (7 tasks each).

Every task has a setup (``server`` command and seed ``data``), a scripted reference solution (canonical
``tools/call`` texts) and a checker that only calls read tools through ``env.step`` and inspects the
responses -- so it judges a real ``McpEnv`` and a simulator alike. Checker requests use ids from 9001 up,
so they never collide with the agent's.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from awctl.domain import CheckResult, Task

from .codec import McpObservationCodec, ToolCall, is_error, result_of, text_of
from .servers import DEMO_SERVERS

if TYPE_CHECKING:
    from awctl.env import Environment

SUITES = ("notes", "shop", "calendar")
_observations = McpObservationCodec()


class CheckFailed(Exception):
    """Raised inside a checker to fail with a message."""


def call(tool: str, arguments: dict[str, Any] | None = None, request_id: int = 1) -> str:
    """Canonical action text for one tool call."""
    return json.dumps(ToolCall(tool, dict(arguments or {}), request_id).to_request(), ensure_ascii=False)


def _script(*steps: tuple[str, dict[str, Any]]) -> list[str]:
    return [call(tool, args, i) for i, (tool, args) in enumerate(steps, 1)]


class Probe:
    """Read-only tool calls a checker makes; ``json(...)`` parses a text result as JSON."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.ids = itertools.count(9001)

    def result(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        text = self.env.step(call(tool, arguments, next(self.ids))).observation
        try:
            obs = _observations.parse(text)
        except Exception as exc:
            raise CheckFailed(f"{tool}: unreadable response ({exc})") from None
        if is_error(obs):
            raise CheckFailed(f"{tool} failed: {text_of(obs)[:200]}")
        return result_of(obs) or {}

    def ok(self, tool: str, /, **arguments: Any) -> bool:
        """True when the call succeeds (used to test that something exists)."""
        try:
            self.result(tool, **arguments)
        except CheckFailed:
            return False
        return True

    def text(self, tool: str, /, **arguments: Any) -> str:
        return text_of({"result": self.result(tool, **arguments)})

    def json(self, tool: str, /, **arguments: Any) -> Any:
        text = self.text(tool, **arguments)
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise CheckFailed(f"{tool} did not return JSON: {text[:200]}") from None

    def structured(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        result = self.result(tool, **arguments)
        if not isinstance(result.get("structuredContent"), dict):
            raise CheckFailed(f"{tool} returned no structuredContent")
        return result["structuredContent"]


def checker(fn: Callable[[Probe], str | None]) -> Callable[[Environment], CheckResult]:
    """Wrap ``fn(probe) -> failure message | None`` as a Task checker."""

    def check(env: Environment) -> CheckResult:
        try:
            problem = fn(Probe(env))
        except CheckFailed as exc:
            return CheckResult(False, str(exc), 0.0)
        return CheckResult(problem is None, problem or "ok", 1.0 if problem is None else 0.0)

    return check


def _expect(cond: bool, message: str) -> str | None:
    return None if cond else message


def _task(
    suite: str, slug: str, instruction: str, data: dict[str, Any], solution: list[str], check: Any
) -> Task:
    return Task(
        id=f"mcp/{suite}/{slug}",
        domain="mcp",
        suite=suite,
        instruction=instruction,
        solution=solution,
        check=checker(check),
        setup={"server": ["python", "-m", DEMO_SERVERS[suite]], "data": data},
        max_turns=12,
        tags=(suite,),
    )


# ── notes ────────────────────────────────────────────────────────────────────────────────────────────

NOTES_SEED: dict[str, Any] = {
    "notes": {
        "todo.md": "- buy milk\n- call bob\n",
        "work/plan.md": "# Plan\nship v2 on friday\n",
        "work/ideas.md": "ideas:\n- dark mode\n",
        "archive/2025.md": "old stuff\nTODO: nothing\n",
        "recipes/pancakes.md": "flour, milk, eggs\n",
    },
    "readonly": ["archive/"],
}


def notes_tasks() -> list[Task]:
    seed = NOTES_SEED
    index_text = "".join(f"{p}\n" for p in sorted(seed["notes"]))
    archive = seed["notes"]["archive/2025.md"]
    return [
        _task(
            "notes",
            "create-meeting-note",
            "Create the note meetings/2026-03-02.md containing exactly 'Attendees: ana, bo' and a newline.",
            seed,
            _script(("write_note", {"path": "meetings/2026-03-02.md", "content": "Attendees: ana, bo\n"})),
            lambda p: _expect(
                p.text("read_note", path="meetings/2026-03-02.md") == "Attendees: ana, bo\n",
                "meetings/2026-03-02.md does not hold the attendee line",
            ),
        ),
        _task(
            "notes",
            "append-todo",
            "Add the item '- water plants' to the end of todo.md, keeping the existing items.",
            seed,
            _script(("append_note", {"path": "todo.md", "text": "- water plants\n"})),
            lambda p: _expect(
                p.text("read_note", path="todo.md") == "- buy milk\n- call bob\n- water plants\n",
                "todo.md is not the old list plus '- water plants'",
            ),
        ),
        _task(
            "notes",
            "rename-ideas",
            "Rename work/ideas.md to work/backlog.md.",
            seed,
            _script(("move_note", {"source": "work/ideas.md", "destination": "work/backlog.md"})),
            lambda p: _expect(
                p.json("list_notes", folder="work") == ["work/backlog.md", "work/plan.md"],
                "work/ should hold exactly backlog.md and plan.md",
            ),
        ),
        _task(
            "notes",
            "delete-recipe",
            "Delete the pancake recipe note; leave every other note alone.",
            seed,
            _script(("delete_note", {"path": "recipes/pancakes.md"})),
            lambda p: _expect(
                p.json("list_notes") == sorted(set(seed["notes"]) - {"recipes/pancakes.md"}),
                "the notes are not exactly the seed minus recipes/pancakes.md",
            ),
        ),
        _task(
            "notes",
            "fix-plan-day",
            "In work/plan.md the release moved from friday to monday; update the note accordingly.",
            seed,
            _script(
                ("read_note", {"path": "work/plan.md"}),
                ("write_note", {"path": "work/plan.md", "content": "# Plan\nship v2 on monday\n"}),
            ),
            lambda p: _expect(
                p.text("read_note", path="work/plan.md") == "# Plan\nship v2 on monday\n",
                "work/plan.md does not say monday (or changed otherwise)",
            ),
        ),
        _task(
            "notes",
            "write-index",
            "Write index.md listing every existing note path, one per line, sorted, each line ending in a newline.",
            seed,
            _script(("list_notes", {}), ("write_note", {"path": "index.md", "content": index_text})),
            lambda p: _expect(
                p.text("read_note", path="index.md") == index_text, "index.md is not the sorted list"
            ),
        ),
        _task(
            "notes",
            "copy-archived",
            "Copy archive/2025.md (read-only) to work/2025.md with identical content; keep the original.",
            seed,
            _script(
                ("read_note", {"path": "archive/2025.md"}),
                ("write_note", {"path": "work/2025.md", "content": archive}),
            ),
            lambda p: _expect(
                p.text("read_note", path="work/2025.md") == archive
                and p.text("read_note", path="archive/2025.md") == archive,
                "work/2025.md must equal archive/2025.md and the original must stay",
            ),
        ),
    ]


# ── shop ─────────────────────────────────────────────────────────────────────────────────────────────

SHOP_SEED: dict[str, Any] = {
    "products": [
        {"sku": "CAP-1", "name": "Cap", "price_cents": 1250, "stock": 0},
        {"sku": "MUG-1", "name": "Mug", "price_cents": 899, "stock": 10},
        {"sku": "PEN-3", "name": "Pen 3-pack", "price_cents": 450, "stock": 40},
        {"sku": "TEE-M", "name": "T-shirt M", "price_cents": 1999, "stock": 5},
    ],
    "orders": [
        {"customer": "ana", "items": [{"sku": "MUG-1", "qty": 2}]},
        {"customer": "bo", "items": [{"sku": "TEE-M", "qty": 1}], "status": "shipped"},
        {"customer": "ana", "items": [{"sku": "PEN-3", "qty": 5}]},
    ],
}


def _stock(p: Probe, sku: str) -> int:
    return int(p.json("get_product", sku=sku)["stock"])


def _orders(p: Probe, **filters: Any) -> list[dict[str, Any]]:
    return p.json("list_orders", **filters)


def shop_tasks() -> list[Task]:
    seed = SHOP_SEED

    def order_mugs(p: Probe) -> str | None:
        mine = _orders(p, customer="cleo")
        return _expect(
            [(o["status"], o["total_cents"]) for o in mine] == [("placed", 2697)] and _stock(p, "MUG-1") == 5,
            "cleo should have one placed order of 3 mugs (2697 cents) and 5 mugs left in stock",
        )

    def multi_item(p: Probe) -> str | None:
        mine = _orders(p, customer="eve")
        if len(mine) != 1:
            return f"eve should have exactly one order, has {len(mine)}"
        order = p.structured("get_order", order_id=mine[0]["order_id"])
        lines = sorted((li["sku"], li["qty"]) for li in order["items"])
        return _expect(
            lines == [("PEN-3", 2), ("TEE-M", 1)] and order["total_cents"] == 2899,
            f"eve's order should be 1 TEE-M + 2 PEN-3 = 2899 cents, got {lines}",
        )

    return [
        _task(
            "shop",
            "order-mugs",
            "Place an order for customer 'cleo' of 3 mugs (SKU MUG-1).",
            seed,
            _script(("create_order", {"customer": "cleo", "items": [{"sku": "MUG-1", "qty": 3}]})),
            order_mugs,
        ),
        _task(
            "shop",
            "cancel-pens",
            "Cancel order 1003 so its pens go back to stock.",
            seed,
            _script(("cancel_order", {"order_id": 1003})),
            lambda p: _expect(
                p.structured("get_order", order_id=1003)["status"] == "cancelled"
                and _stock(p, "PEN-3") == 40,
                "order 1003 must be cancelled and PEN-3 back at 40",
            ),
        ),
        _task(
            "shop",
            "ship-mugs",
            "Ship order 1001.",
            seed,
            _script(("ship_order", {"order_id": 1001})),
            lambda p: _expect(
                p.structured("get_order", order_id=1001)["status"] == "shipped", "order 1001 is not shipped"
            ),
        ),
        _task(
            "shop",
            "restock-caps",
            "The cap (CAP-1) is sold out; restock it with 12 units.",
            seed,
            _script(("restock", {"sku": "CAP-1", "qty": 12})),
            lambda p: _expect(_stock(p, "CAP-1") == 12, "CAP-1 stock should be 12"),
        ),
        _task(
            "shop",
            "restock-then-order-caps",
            "Customer 'dan' wants 2 caps (CAP-1), which are out of stock: restock exactly 2 and place his order.",
            seed,
            _script(
                ("restock", {"sku": "CAP-1", "qty": 2}),
                ("create_order", {"customer": "dan", "items": [{"sku": "CAP-1", "qty": 2}]}),
            ),
            lambda p: _expect(
                [o["total_cents"] for o in _orders(p, customer="dan")] == [2500] and _stock(p, "CAP-1") == 0,
                "dan needs one 2500-cent cap order, 0 caps left",
            ),
        ),
        _task(
            "shop",
            "multi-item-order",
            "Place one order for customer 'eve': 1 T-shirt M (TEE-M) and 2 pen packs (PEN-3).",
            seed,
            _script(
                (
                    "create_order",
                    {"customer": "eve", "items": [{"sku": "TEE-M", "qty": 1}, {"sku": "PEN-3", "qty": 2}]},
                )
            ),
            multi_item,
        ),
        _task(
            "shop",
            "cancel-all-ana",
            "Cancel every order of customer 'ana' that has not shipped yet.",
            seed,
            _script(
                ("list_orders", {"customer": "ana", "status": "placed"}),
                ("cancel_order", {"order_id": 1001}),
                ("cancel_order", {"order_id": 1003}),
            ),
            lambda p: _expect(
                _orders(p, customer="ana", status="placed") == []
                and len(_orders(p, customer="ana", status="cancelled")) == 2
                and _orders(p, status="shipped") != [],
                "ana's two placed orders must be cancelled (and bo's shipped one untouched)",
            ),
        ),
    ]


# ── calendar ─────────────────────────────────────────────────────────────────────────────────────────

DAY, NEXT_DAY = "2026-03-02", "2026-03-03"
CALENDAR_SEED: dict[str, Any] = {
    "events": [
        {"title": "Standup", "date": DAY, "start": "09:00", "end": "09:15", "attendees": ["ana", "bo"]},
        {"title": "Design review", "date": DAY, "start": "10:00", "end": "11:00", "attendees": ["ana"]},
        {"title": "Lunch", "date": DAY, "start": "12:00", "end": "13:00", "attendees": ["bo"]},
        {
            "title": "1:1 ana/cleo",
            "date": DAY,
            "start": "10:30",
            "end": "11:00",
            "attendees": ["ana", "cleo"],
        },
        {
            "title": "Planning",
            "date": NEXT_DAY,
            "start": "14:00",
            "end": "15:00",
            "attendees": ["ana", "bo", "cleo"],
        },
    ]
}


def _titled(p: Probe, date: str, title: str) -> list[dict[str, Any]]:
    return [e for e in p.json("list_events", date=date) if e["title"] == title]


def calendar_tasks() -> list[Task]:
    seed = CALENDAR_SEED

    def retro(p: Probe) -> str | None:
        found = _titled(p, NEXT_DAY, "Retro")
        return _expect(
            [(e["start"], e["end"], e["attendees"]) for e in found] == [("15:00", "16:00", ["ana", "bo"])],
            "expected one Retro on 2026-03-03 15:00-16:00 with ana and bo",
        )

    def interview(p: Probe) -> str | None:
        found = _titled(p, DAY, "Interview")
        report = p.structured("check_conflicts", date=DAY)
        new_ids = {e["id"] for e in found}
        clashes = [c for c in report["conflicts"] if {c["first"], c["second"]} & new_ids]
        return _expect(
            [(e["start"], e["end"]) for e in found] == [("09:15", "10:00")] and not clashes,
            "expected one conflict-free 45-minute Interview at the earliest free slot (09:15-10:00)",
        )

    def all_hands(p: Probe) -> str | None:
        found = _titled(p, DAY, "All hands")
        if len(found) != 1:
            return f"expected one 'All hands' on {DAY}, found {len(found)}"
        pairs = [{c["first"], c["second"]} for c in p.structured("check_conflicts", date=DAY)["conflicts"]]
        return _expect(
            {found[0]["id"], "evt-2"} in pairs, "All hands must be booked over the design review (evt-2)"
        )

    return [
        _task(
            "calendar",
            "book-retro",
            "Book 'Retro' on 2026-03-03 from 15:00 to 16:00 with attendees ana and bo.",
            seed,
            _script(
                (
                    "create_event",
                    {
                        "title": "Retro",
                        "date": NEXT_DAY,
                        "start": "15:00",
                        "end": "16:00",
                        "attendees": ["ana", "bo"],
                    },
                )
            ),
            retro,
        ),
        _task(
            "calendar",
            "resolve-conflict",
            "The 1:1 ana/cleo (evt-4) overlaps the design review on 2026-03-02; move it to 11:00-11:30 that day.",
            seed,
            _script(
                ("check_conflicts", {"date": DAY}),
                ("move_event", {"event_id": "evt-4", "date": DAY, "start": "11:00", "end": "11:30"}),
            ),
            lambda p: _expect(
                p.structured("check_conflicts", date=DAY)["conflicts"] == []
                and [(e["start"], e["end"]) for e in _titled(p, DAY, "1:1 ana/cleo")] == [("11:00", "11:30")],
                "2026-03-02 still has conflicts or the 1:1 is not at 11:00-11:30",
            ),
        ),
        _task(
            "calendar",
            "cancel-lunch",
            "Lunch on 2026-03-02 is cancelled; remove it from the calendar.",
            seed,
            _script(("delete_event", {"event_id": "evt-3"})),
            lambda p: _expect(
                _titled(p, DAY, "Lunch") == [] and len(p.json("list_events", date=DAY)) == 3,
                "Lunch must be gone and the other three events kept",
            ),
        ),
        _task(
            "calendar",
            "invite-dan",
            "Add dan to the Planning meeting (evt-5).",
            seed,
            _script(("add_attendee", {"event_id": "evt-5", "name": "dan"})),
            lambda p: _expect(
                p.json("get_event", event_id="evt-5")["attendees"] == ["ana", "bo", "cleo", "dan"],
                "evt-5 attendees should be ana, bo, cleo, dan",
            ),
        ),
        _task(
            "calendar",
            "book-interview",
            "Book a 45-minute 'Interview' on 2026-03-02 at the earliest free time between 09:00 and 17:00.",
            seed,
            _script(
                ("find_free_slot", {"date": DAY, "duration_minutes": 45}),
                ("create_event", {"title": "Interview", "date": DAY, "start": "09:15", "end": "10:00"}),
            ),
            interview,
        ),
        _task(
            "calendar",
            "move-planning",
            "Move Planning (evt-5) to 2026-03-04, 09:00-10:00.",
            seed,
            _script(
                ("move_event", {"event_id": "evt-5", "date": "2026-03-04", "start": "09:00", "end": "10:00"})
            ),
            lambda p: _expect(
                [(e["start"], e["end"]) for e in _titled(p, "2026-03-04", "Planning")] == [("09:00", "10:00")]
                and _titled(p, NEXT_DAY, "Planning") == [],
                "Planning must be on 2026-03-04 09:00-10:00 only",
            ),
        ),
        _task(
            "calendar",
            "force-all-hands",
            "Book 'All hands' on 2026-03-02 10:00-10:30 even though it overlaps the design review.",
            seed,
            _script(
                (
                    "create_event",
                    {
                        "title": "All hands",
                        "date": DAY,
                        "start": "10:00",
                        "end": "10:30",
                        "allow_conflict": True,
                    },
                )
            ),
            all_hands,
        ),
    ]


_SUITE_BUILDERS = {"notes": notes_tasks, "shop": shop_tasks, "calendar": calendar_tasks}


def tasks_for(suite: str) -> list[Task]:
    """The tasks of one suite (``notes``, ``shop``, ``calendar``) or of all with ``all``; [] for others."""
    if suite == "all":
        return [t for s in SUITES for t in _SUITE_BUILDERS[s]()]
    builder = _SUITE_BUILDERS.get(suite)
    return builder() if builder else []
