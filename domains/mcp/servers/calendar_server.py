"""A calendar server: events on dates, overlap detection, free-slot search.

State: ``DATA/calendar.json``. Seed (``DATA/seed.json``)::

    {"events": [{"title": "Standup", "date": "2026-03-02", "start": "09:00", "end": "09:15",
                 "attendees": ["ana"]}]}

Event ids are ``evt-1``, ``evt-2``... in creation order; no clock is read. Creating or moving an event onto
an occupied time fails with the conflicting ids unless ``allow_conflict`` is true. ``check_conflicts``
declares an outputSchema. (The module is not named ``calendar`` so it can never shadow the stdlib.)
Run: ``python -m awctl_domains.mcp.servers.calendar_server --data DIR``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from ._common import data_dir, dumps, load_seed, strict_server

DATE = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="date as YYYY-MM-DD")]
TIME = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="time as HH:MM (24h)")]
EVENT_ID = Annotated[str, Field(pattern=r"^evt-\d+$", description="event id such as 'evt-3'")]


class Conflict(BaseModel):
    first: str
    second: str


class ConflictReport(BaseModel):
    """``check_conflicts``'s result (and outputSchema): overlapping event pairs on one date."""

    date: str
    event_count: int
    conflicts: list[Conflict]


class CalendarError(Exception):
    """A rule violation; tool wrappers turn it into an MCP ToolError."""


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


class CalendarStore:
    """Events in one JSON file, rewritten atomically after each change."""

    def __init__(self, root: Path) -> None:
        self.path = root / "calendar.json"
        if self.path.exists():
            state = json.loads(self.path.read_text(encoding="utf-8"))
            self.events: list[dict[str, Any]] = state["events"]
            self.next_id: int = state["next_id"]
        else:
            self.events, self.next_id = [], 1
            for e in load_seed(root).get("events", []):
                self.add(
                    e["title"], e["date"], e["start"], e["end"], e.get("attendees", []), allow_conflict=True
                )

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(dumps({"events": self.events, "next_id": self.next_id}), encoding="utf-8")
        os.replace(tmp, self.path)

    @staticmethod
    def check_slot(date: str, start: str, end: str) -> None:
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise CalendarError(f"not a calendar date: {date}") from None
        if _minutes(end) <= _minutes(start):
            raise CalendarError(f"end {end} must be after start {start}")

    def on(self, date: str) -> list[dict[str, Any]]:
        return sorted(
            (e for e in self.events if e["date"] == date), key=lambda e: (e["start"], e["end"], e["id"])
        )

    def get(self, event_id: str) -> dict[str, Any]:
        for e in self.events:
            if e["id"] == event_id:
                return e
        raise CalendarError(f"unknown event: {event_id}")

    def overlapping(self, date: str, start: str, end: str, ignore: str = "") -> list[str]:
        s, t = _minutes(start), _minutes(end)
        return [
            e["id"]
            for e in self.on(date)
            if e["id"] != ignore and _minutes(e["start"]) < t and s < _minutes(e["end"])
        ]

    def add(
        self, title: str, date: str, start: str, end: str, attendees: list[str], allow_conflict: bool
    ) -> dict:
        self.check_slot(date, start, end)
        clash = self.overlapping(date, start, end)
        if clash and not allow_conflict:
            raise CalendarError(
                f"conflicts with {', '.join(clash)} (pass allow_conflict=true to book anyway)"
            )
        event = {
            "id": f"evt-{self.next_id}",
            "title": title,
            "date": date,
            "start": start,
            "end": end,
            "attendees": sorted(set(attendees)),
        }
        self.next_id += 1
        self.events.append(event)
        self.save()
        return event


def build_server(root: Path) -> Any:
    """The calendar ``MCPServer`` over the data folder ``root`` (seeded on first use)."""
    from mcp.server.mcpserver.exceptions import ToolError

    cal = CalendarStore(root)
    server = strict_server("awctl-calendar", instructions="A shared calendar with conflict checks.")

    def guarded(fn: Any) -> Any:
        try:
            return fn()
        except CalendarError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(structured_output=False)
    def list_events(date: DATE) -> str:
        """Events on a date as a JSON array of {id, title, date, start, end, attendees}, by start time."""
        return guarded(lambda: (cal.check_slot(date, "00:00", "00:01"), dumps(cal.on(date)))[1])

    @server.tool(structured_output=False)
    def get_event(event_id: EVENT_ID) -> str:
        """One event as a JSON object."""
        return guarded(lambda: dumps(cal.get(event_id)))

    @server.tool(structured_output=False)
    def create_event(
        title: Annotated[str, Field(min_length=1, max_length=120)],
        date: DATE,
        start: TIME,
        end: TIME,
        attendees: Annotated[list[str], Field(description="attendee handles")] = [],  # noqa: B006 - pydantic copies
        allow_conflict: Annotated[bool, Field(description="book even when the time is taken")] = False,
    ) -> str:
        """Create an event; fails when it overlaps another event unless allow_conflict is true."""
        return guarded(lambda: dumps(cal.add(title, date, start, end, attendees, allow_conflict)))

    @server.tool(structured_output=False)
    def move_event(
        event_id: EVENT_ID, date: DATE, start: TIME, end: TIME, allow_conflict: bool = False
    ) -> str:
        """Move an event to a new date/time; fails on overlap unless allow_conflict is true."""

        def run() -> str:
            event = cal.get(event_id)
            cal.check_slot(date, start, end)
            clash = cal.overlapping(date, start, end, ignore=event_id)
            if clash and not allow_conflict:
                raise CalendarError(
                    f"conflicts with {', '.join(clash)} (pass allow_conflict=true to book anyway)"
                )
            event.update(date=date, start=start, end=end)
            cal.save()
            return dumps(event)

        return guarded(run)

    @server.tool(structured_output=False)
    def delete_event(event_id: EVENT_ID) -> str:
        """Delete an event."""

        def run() -> str:
            cal.events.remove(cal.get(event_id))
            cal.save()
            return f"deleted {event_id}"

        return guarded(run)

    @server.tool(structured_output=False)
    def add_attendee(event_id: EVENT_ID, name: Annotated[str, Field(min_length=1, max_length=64)]) -> str:
        """Add an attendee to an event (no-op when already attending); returns the event."""

        def run() -> str:
            event = cal.get(event_id)
            event["attendees"] = sorted({*event["attendees"], name})
            cal.save()
            return dumps(event)

        return guarded(run)

    @server.tool(structured_output=True)
    def check_conflicts(date: DATE) -> ConflictReport:
        """Pairs of overlapping events on a date (ids in start order)."""

        def run() -> ConflictReport:
            cal.check_slot(date, "00:00", "00:01")
            events = cal.on(date)
            pairs = [
                Conflict(first=a["id"], second=b["id"])
                for i, a in enumerate(events)
                for b in events[i + 1 :]
                if _minutes(b["start"]) < _minutes(a["end"]) and _minutes(a["start"]) < _minutes(b["end"])
            ]
            return ConflictReport(date=date, event_count=len(events), conflicts=pairs)

        return guarded(run)

    @server.tool(structured_output=False)
    def find_free_slot(
        date: DATE,
        duration_minutes: Annotated[int, Field(ge=5, le=600)],
        earliest: TIME = "09:00",
        latest: TIME = "17:00",
    ) -> str:
        """The earliest free slot of the given length between earliest and latest, as 'HH:MM-HH:MM'."""

        def run() -> str:
            cal.check_slot(date, earliest, latest)
            cursor, stop = _minutes(earliest), _minutes(latest)
            for e in cal.on(date):
                if _minutes(e["start"]) - cursor >= duration_minutes:
                    break
                cursor = max(cursor, _minutes(e["end"]))
            if cursor + duration_minutes > stop:
                raise CalendarError(
                    f"no free {duration_minutes}-minute slot on {date} between {earliest} and {latest}"
                )
            return f"{_hhmm(cursor)}-{_hhmm(cursor + duration_minutes)}"

        return guarded(run)

    return server


def main(argv: list[str] | None = None) -> None:
    build_server(data_dir(argv if argv is not None else sys.argv[1:])).run()


if __name__ == "__main__":
    main()
