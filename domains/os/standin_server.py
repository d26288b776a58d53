"""A local stand-in for OSWorld's desktop server: the same HTTP endpoints over a real Xvfb desktop session.

:class:`StandInServer` serves a :class:`~.desktop.DesktopSession` on ``127.0.0.1`` (a free port) with the
endpoints :mod:`.osworld_http` uses — ``/accessibility``, ``/execute`` (and ``/setup/execute``),
``/run_python``, ``/screen_size``, ``/platform``, ``/screenshot``, ``/cursor_position``, ``/setup/launch``,
``/setup/upload``, ``/file`` — with OSWorld's request and answer shapes. Commands run inside the session
as the desktop user (``python`` is awctl's interpreter, which has pyautogui); file paths are confined to
the session's home (``~/…`` or ``/home/user/…``). :meth:`reset` replaces the desktop with a fresh one,
as a VM snapshot revert would. It exists to test the adapter without a VM; it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import shlex
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .a11y import render_xml
from .desktop import DesktopSession


class StandInServer:
    """OSWorld's desktop-server API over a real desktop session (``with StandInServer() as s: s.url``)."""

    def __init__(self, width: int = 1920, height: int = 1080, **session_options: Any) -> None:
        self.width, self.height = width, height
        self.session_options = session_options
        self.session: DesktopSession | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandInServer:
        self.reset()
        handler = type("Handler", (_Handler,), {"server_obj": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="osworld-standin", daemon=True)
        self._thread.start()
        return self

    def reset(self) -> None:
        """A fresh desktop (the old one and everything in it ends)."""
        with self._lock:
            if self.session is not None:
                self.session.close()
            self.session = DesktopSession(width=self.width, height=self.height, **self.session_options).start()

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            if self.session is not None:
                self.session.close()
                self.session = None

    def __enter__(self) -> StandInServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ── helpers the handler uses ──
    def host_path(self, file_path: str) -> Path | None:
        """The host path of a desktop path inside the user's home, or None (outside: refused)."""
        session = self.session
        assert session is not None
        home = session.user_home
        if file_path == "~" or file_path.startswith("~/"):
            rel = file_path[2:]
        elif file_path == home or file_path.startswith(home.rstrip("/") + "/"):
            rel = file_path[len(home):].lstrip("/")
        else:
            return None
        path = (session.home / rel).resolve()
        return path if path.is_relative_to(session.home.resolve()) else None

    def argv(self, command: Any, shell: bool) -> list[str]:
        session = self.session
        assert session is not None
        if shell:
            return ["/bin/sh", "-c", str(command)]
        args = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if args and args[0] in ("python", "python3"):
            args[0] = sys.executable  # awctl's interpreter has pyautogui, as the VM's python does
        return [session.user_home + a[1:] if a.startswith("~/") else a for a in args]


class _Handler(BaseHTTPRequestHandler):
    server_obj: StandInServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        return  # quiet: tests and recordings print their own progress

    # ── plumbing ──
    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _payload(self) -> dict[str, Any]:
        try:
            data = json.loads(self._body() or b"{}")
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def _form(self) -> dict[str, Any]:
        body = self._body()
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("multipart/form-data"):
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {ctype}\r\n\r\n".encode() + body)
            fields: dict[str, Any] = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if name:
                    payload = part.get_payload(decode=True) or b""
                    fields[str(name)] = payload if part.get_filename() else payload.decode()
            return fields
        return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}

    # ── endpoints ──
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        srv = self.server_obj
        session = srv.session
        assert session is not None
        if self.path == "/accessibility":
            self._json(200, {"AT": render_xml(session.tree())})
        elif self.path == "/platform":
            self._send(200, b"Linux", "text/html; charset=utf-8")
        elif self.path == "/screenshot":
            from PIL import ImageGrab

            buffer = io.BytesIO()
            ImageGrab.grab(xdisplay=session.display).save(buffer, "PNG")
            self._send(200, buffer.getvalue(), "image/png")
        elif self.path == "/cursor_position":
            result = session.run_code("print(*pyautogui.position())")
            x, y = (int(v) for v in result.output.split()[-2:])
            self._json(200, [x, y])
        else:
            self._json(404, {"error": f"no endpoint {self.path}"})

    def do_POST(self) -> None:  # noqa: N802
        srv = self.server_obj
        session = srv.session
        assert session is not None
        if self.path in ("/execute", "/setup/execute"):
            data = self._payload()
            shell = bool(data.get("shell", False))
            argv, env = session._jail(srv.argv(data.get("command", "" if shell else []), shell))
            try:
                result = subprocess.run(argv, env=env, cwd=str(session.home), capture_output=True, text=True,
                                        timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                self._json(500, {"status": "error", "message": str(exc)})
                return
            self._json(200, {"status": "success", "output": result.stdout, "error": result.stderr,
                             "returncode": result.returncode})
        elif self.path == "/run_python":
            result = session.run_code(str(self._payload().get("code", "")))
            self._json(200, {"status": "success" if result.ok else "error", "output": result.output,
                             "error": result.error or "", "returncode": 0 if result.ok else 1})
        elif self.path == "/screen_size":
            self._json(200, {"width": session.width, "height": session.height})
        elif self.path == "/setup/launch":
            data = self._payload()
            shell = bool(data.get("shell", False))
            argv = srv.argv(data.get("command", "" if shell else []), shell)
            if not argv:
                self._json(400, {"status": "error", "message": "empty command"})
                return
            try:
                session.launch(*argv)
            except Exception as exc:  # noqa: BLE001 - reported to the client as OSWorld's server does
                self._json(500, {"status": "error", "message": str(exc)})
                return
            self._send(200, f"{' '.join(argv)} launched successfully".encode(), "text/html; charset=utf-8")
        elif self.path == "/setup/upload":
            form = self._form()
            path = srv.host_path(str(form.get("file_path", "")))
            if path is None or not isinstance(form.get("file_data"), bytes):
                self._json(400, {"error": "file_path (inside the home directory) and file_data are required"})
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(form["file_data"])
            self._send(200, b"File Uploaded", "text/html; charset=utf-8")
        elif self.path == "/file":
            path = srv.host_path(str(self._form().get("file_path", "")))
            if path is None or not path.is_file():
                self._json(404, {"error": "File not found"})
                return
            self._send(200, path.read_bytes(), "application/octet-stream")
        else:
            self._json(404, {"error": f"no endpoint {self.path}"})
