"""A tiny server-rendered web-app framework on the standard library (``http.server`` + ``sqlite3``).

An :class:`App` answers requests from its own SQLite database (one file per episode, seeded from the task);
pages are plain HTML forms, no JavaScript. An :class:`AppServer` listens on a free ``127.0.0.1`` port for
the life of an environment and serves whichever app instance is current, so every episode gets a fresh
database behind the same address (the browser maps the app's host name, e.g. ``shop.test``, onto it).
"""

from __future__ import annotations

import html
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

E = html.escape


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, list[str]]

    def get(self, key: str, default: str = "") -> str:
        values = self.form.get(key)
        return values[0] if values else self.query.get(key, default)


@dataclass
class Response:
    body: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def redirect(location: str) -> Response:
    """A 303 See Other to a path on the same host (relative, so the host name the browser used is kept)."""
    return Response(status=303, headers={"Location": location})


def not_found(what: str = "page") -> Response:
    return Response(page("Not found", f"<h1>Not found</h1><p>No such {E(what)}.</p>", []), status=404)


def page(title: str, body: str, nav: list[tuple[str, str]], brand: str = "") -> str:
    """A whole HTML document: a navigation bar (``nav`` is ``(label, href)`` pairs), then ``body``."""
    links = "".join(f'<li><a href="{E(href)}">{E(label)}</a></li>' for label, href in nav)
    header = f'<header><nav aria-label="Main"><ul>{links}</ul></nav></header>' if nav else ""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{E(title)}</title></head>'
            f"<body>{header}<main>{body}</main>"
            f"<footer><p>{E(brand)}</p></footer></body></html>")


def options(choices: list[tuple[str, str]], selected: str = "") -> str:
    return "".join(f'<option value="{E(v)}"{" selected" if v == selected else ""}>{E(label)}</option>'
                   for v, label in choices)


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


Route = tuple[str, "re.Pattern[str]", Callable[..., Response]]


class App:
    """Base class: subclasses define ``name``, ``host``, ``title``, ``schema`` (SQL), ``seed(setup)`` and
    routes with :meth:`route`. One instance is one episode's state."""

    name = ""
    host = ""
    title = ""
    schema = ""

    def __init__(self, db_path: Path, setup: dict[str, Any] | None = None) -> None:
        self.db_path = Path(db_path)
        self.db = sqlite3.connect(str(self.db_path), check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.lock = threading.Lock()
        self.routes: list[Route] = []
        with self.db:
            self.db.executescript(self.schema)
            self.seed(setup or {})
        self.register()

    # ── for subclasses ──
    def seed(self, setup: dict[str, Any]) -> None:
        """Insert the default rows, overridden or extended by ``setup`` (the task's data for this app)."""

    def register(self) -> None:
        """Add routes with :meth:`route`."""

    def route(self, method: str, pattern: str, handler: Callable[..., Response]) -> None:
        self.routes.append((method, re.compile(f"^{pattern}$"), handler))

    def q(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return list(self.db.execute(sql, args))

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        rows = self.q(sql, *args)
        return rows[0] if rows else None

    def x(self, sql: str, *args: Any) -> int:
        cur = self.db.execute(sql, args)
        return int(cur.lastrowid or 0)

    # ── serving ──
    def handle(self, request: Request) -> Response:
        with self.lock:
            for method, pattern, handler in self.routes:
                m = pattern.match(request.path)
                if m and method == request.method:
                    with self.db:
                        return handler(request, *m.groups())
            if any(p.match(request.path) for _, p, _ in self.routes):
                return Response("method not allowed", status=405)
            return not_found()

    def close(self) -> None:
        self.db.close()


class _Handler(BaseHTTPRequestHandler):
    server: AppServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        form: dict[str, list[str]] = {}
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            form = parse_qs(raw, keep_blank_values=True)
        app = self.server.app
        if app is None:
            response = Response("no app is running", status=503)
        else:
            try:
                response = app.handle(Request(method, parts.path or "/", query, form))
            except Exception as exc:  # an app bug is a 500 page, as on a real server
                response = Response(page("Server error", f"<h1>Server error</h1><p>{E(str(exc))}</p>", []),
                                    status=500)
        body = response.body.encode("utf-8")
        self.send_response(response.status)
        headers = {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", **response.headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._serve("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass


class AppServer(ThreadingHTTPServer):
    """Serves the current :attr:`app` on ``127.0.0.1:<free port>`` from a daemon thread."""

    daemon_threads = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.app: App | None = None
        self._thread = threading.Thread(target=self.serve_forever, name="awctl-web-app", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def swap(self, app: App | None) -> None:
        """Serve ``app`` from now on and close the previous one."""
        old, self.app = self.app, app
        if old is not None:
            with old.lock:
                old.close()

    def stop(self) -> None:
        self.swap(None)
        self.shutdown()
        self.server_close()
