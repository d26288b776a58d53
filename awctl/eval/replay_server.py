"""A small OpenAI-compatible chat-completions server that answers from a Python function.

Used by awctl's tests and benchmarks (and handy for offline demos) to exercise the real HTTP path of the
``openai`` backend without a model: ``responder(messages, body) -> str`` produces each answer, and
``latency`` seconds of sleep per request stand in for generation time. Serves ``GET /v1/models`` and
``POST /v1/chat/completions`` on 127.0.0.1 with one thread per connection; a responder that raises yields
HTTP 500 with the error message. Counters record requests and the most requests seen in flight at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, str]], dict[str, Any]], str]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gives up on a request (a cancelled batch) closes its socket: not a server error.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ReplayServer:
    """``with ReplayServer(responder) as srv: srv.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, responder: Responder, *, latency: float = 0.0, model: str = "replay") -> None:
        self.responder = responder
        self.latency = latency
        self.model = model
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests += 1
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    if outer.latency:
                        time.sleep(outer.latency)
                    n = int(body.get("n") or 1)
                    texts = [outer.responder(body.get("messages") or [], body) for _ in range(n)]
                except Exception as exc:  # the responder's failure is the server's 500
                    self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
                    return
                finally:
                    with outer._lock:
                        outer.in_flight -= 1
                self._send(
                    200,
                    {
                        "id": "cmpl",
                        "object": "chat.completion",
                        "model": body.get("model", outer.model),
                        "choices": [
                            {
                                "index": i,
                                "message": {"role": "assistant", "content": t},
                                "finish_reason": "stop",
                            }
                            for i, t in enumerate(texts)
                        ],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
                    },
                )

        return Handler

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
