"""The openai backend's HTTP behaviour (retries, backoff, timeouts, reasoning content, missing choices)
against a small real HTTP server on 127.0.0.1 whose answers the test scripts."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from awctl.backend import ChatRequest
from awctl.errors import AwctlError
from awctl.plugins import build_backend


class Scripted(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list[tuple[int, dict, dict[str, str], float]] = []  # status, body, headers, delay
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._reply(200, {"object": "list", "data": [{"id": "m1", "object": "model"}]})

    def do_POST(self):
        srv: Scripted = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.bodies.append(body)
            srv.active += 1
            srv.peak = max(srv.peak, srv.active)
            step = srv.script.pop(0) if srv.script else (200, ok("default"), {}, 0.0)
        try:
            status, reply, headers, delay = step
            time.sleep(delay)
            self._reply(status, reply, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with srv.lock:
                srv.active -= 1


def ok(*texts, reasoning=None, usage=None):
    return {
        "choices": [
            {
                "index": i,
                "message": {
                    "role": "assistant",
                    "content": t,
                    **({"reasoning_content": reasoning} if reasoning else {}),
                },
                "finish_reason": "stop",
            }
            for i, t in enumerate(texts)
        ],
        "usage": usage or {"prompt_tokens": 3, "completion_tokens": 2 * len(texts)},
    }


@pytest.fixture
def server():
    srv = Scripted()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def backend(srv, **kw):
    return build_backend(
        "openai", base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1", backoff=0.01, **kw
    )


def req(**kw):
    return ChatRequest(messages=[{"role": "user", "content": "ls"}], **kw)


def test_model_is_discovered_and_body_carries_settings(server):
    be = backend(server, extra_body={"top_k": 5})
    out = be.generate([req(max_tokens=7, temperature=0.3, seed=4, stop=["\n"], logprobs=True)])
    assert be.model == "m1" and out[0][0].text == "default"
    body = server.bodies[0]
    assert body["model"] == "m1" and body["max_tokens"] == 7 and body["temperature"] == 0.3
    assert body["seed"] == 4 and body["stop"] == ["\n"] and body["logprobs"] is True and body["top_k"] == 5


def test_retries_on_429_and_5xx_then_succeeds(server):
    server.script = [
        (429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}, 0.0),
        (503, {"error": {"message": "busy"}}, {}, 0.0),
        (200, ok("fine"), {}, 0.0),
    ]
    out = backend(server, model="m1").generate([req()])
    assert out[0][0].text == "fine" and len(server.bodies) == 3


def test_gives_up_after_max_retries_with_the_server_message(server):
    server.script = [(500, {"error": {"message": "boom"}}, {}, 0.0)] * 3
    with pytest.raises(AwctlError, match="HTTP 500: boom"):
        backend(server, model="m1", max_retries=2).generate([req()])
    assert len(server.bodies) == 3


def test_client_errors_are_not_retried(server):
    server.script = [(400, {"error": {"message": "max_tokens too large"}}, {}, 0.0)]
    with pytest.raises(AwctlError, match="max_tokens too large"):
        backend(server, model="m1").generate([req()])
    assert len(server.bodies) == 1


def test_timeouts_are_retried(server):
    server.script = [(200, ok("late"), {}, 1.0), (200, ok("quick"), {}, 0.0)]
    out = backend(server, model="m1", timeout=0.3).generate([req()])
    assert out[0][0].text == "quick"


def test_reasoning_content_and_null_content(server):
    server.script = [
        (200, ok("answer", reasoning="because"), {}, 0.0),
        (
            200,
            {
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "reasoning": "ran out"},
                        "finish_reason": "length",
                    }
                ]
            },
            {},
            0.0,
        ),
    ]
    be = backend(server, model="m1", concurrency=1)
    a, b = be.generate([req(), req()])
    assert (a[0].text, a[0].reasoning) == ("answer", "because")
    assert (b[0].text, b[0].reasoning, b[0].finish_reason) == ("", "ran out", "length")


def test_missing_choices_are_requested_again(server):
    server.script = [(200, ok("one"), {}, 0.0), (200, ok("two", "three"), {}, 0.0)]
    out = backend(server, model="m1").generate([req(n=3)])
    assert [c.text for c in out[0]] == ["one", "two", "three"]
    assert [b.get("n", 1) for b in server.bodies] == [3, 2]


def test_concurrency_limit_is_respected(server):
    server.script = [(200, ok(str(i)), {}, 0.15) for i in range(8)]
    out = backend(server, model="m1", concurrency=2).generate([req() for _ in range(8)])
    assert len(out) == 8 and server.peak <= 2


def test_unreachable_server_fails_clearly():
    be = build_backend(
        "openai", base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, backoff=0.01, timeout=2
    )
    with pytest.raises(AwctlError, match="after 2 attempts"):
        be.generate([req()])


def test_generate_works_inside_a_running_event_loop(server):
    import asyncio

    be = backend(server, model="m1")

    async def main():
        return be.generate([req()]), await be.agenerate([req()])

    sync_out, async_out = asyncio.run(main())
    assert sync_out[0][0].text == async_out[0][0].text == "default"


def test_concurrency_limit_spans_concurrent_calls(server):
    import asyncio

    server.script = [(200, ok(str(i)), {}, 0.15) for i in range(8)]
    be = backend(server, model="m1", concurrency=2)

    async def main():
        return await asyncio.gather(
            be.agenerate([req() for _ in range(4)]), be.agenerate([req() for _ in range(4)])
        )

    a, b = asyncio.run(main())
    assert len(a) == len(b) == 4 and server.peak <= 2
