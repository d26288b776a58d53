"""The ``openai`` backend: any OpenAI-compatible ``/v1/chat/completions`` endpoint.

Works against vLLM and SGLang servers, ``awctl simulate serve`` and hosted APIs. Requests run
concurrently up to ``concurrency``; each is retried on connection errors, timeouts and HTTP 408/409/425/
429/5xx with exponential backoff and jitter (a ``Retry-After`` header wins); other 4xx errors fail at
once with the server's message. Reasoning: ``message.reasoning_content`` (vLLM, DeepSeek) or
``message.reasoning`` (newer servers) becomes :attr:`Completion.reasoning`; a ``null`` content (a model
that spent its whole budget thinking) becomes ``""``. When a server returns fewer than ``n`` choices
(some APIs ignore ``n``), the missing ones are requested separately.

The HTTP client is ``httpx2`` (the ``openai`` package's own dependency), imported lazily.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import weakref
from typing import Any

from awctl.backend import Backend, ChatRequest, Completion
from awctl.errors import AwctlError
from awctl.models.backends.common import check_request

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIBackend(Backend):
    """Chat completions over HTTP. ``model=None`` takes the first model the server lists."""

    name = "openai"
    # The server schedules concurrent requests itself: a batcher in front hands it batches without
    # waiting for the previous one (awctl.sim.batcher.BatchingBackend ``overlap``).
    continuous_batching = True

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 16,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "http://127.0.0.1:8000/v1").rstrip(
            "/"
        )
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self._model = model
        self._semaphores: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()

    # ── plumbing ──
    @property
    def model(self) -> str:  # type: ignore[override]
        if self._model is None:
            self._model = (
                asyncio.run(self._first_model()) if not _in_loop() else _run_in_thread(self._first_model())
            )
        return self._model

    def _client(self) -> Any:
        import httpx2

        headers = {"Content-Type": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return httpx2.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx2.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            limits=httpx2.Limits(
                max_connections=self.concurrency, max_keepalive_connections=self.concurrency
            ),
        )

    def _semaphore(self) -> asyncio.Semaphore:
        # One limit per event loop shared by every concurrent call on it (semaphores bind to one loop).
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.concurrency)
        return sem

    async def _first_model(self) -> str:
        async with self._client() as client:
            data = await self._send(client, "GET", "/models", None)
        models = [m.get("id") for m in data.get("data", []) if isinstance(m, dict)]
        if not models:
            raise AwctlError(f"{self.base_url}/models lists no models", hint="pass model=... explicitly")
        return str(models[0])

    async def _send(self, client: Any, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        import httpx2

        attempt = 0
        while True:
            delay: float | None = None
            try:
                resp = await client.request(method, path, json=body)
                if resp.status_code < 400:
                    return resp.json()
                if resp.status_code not in RETRY_STATUS or attempt >= self.max_retries:
                    raise AwctlError(
                        f"{method} {self.base_url}{path} failed with HTTP {resp.status_code}: {_error_message(resp)}",
                        hint="check the model name, the request settings and the server log",
                    )
                delay = _retry_after(resp.headers.get("retry-after"))
            except (httpx2.TransportError, httpx2.TimeoutException) as exc:
                if attempt >= self.max_retries:
                    raise AwctlError(
                        f"{method} {self.base_url}{path}: {type(exc).__name__}: {exc} "
                        f"(after {attempt + 1} attempts)",
                        hint="is the server running and reachable? raise timeout= for slow models",
                    ) from None
            attempt += 1
            if delay is None:
                delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random())
            await asyncio.sleep(delay)

    # ── generation ──
    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        if _in_loop():
            return _run_in_thread(self.agenerate(requests))
        return asyncio.run(self.agenerate(requests))

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        for i, req in enumerate(requests):
            check_request(req, i)
        model = self._model or await self._first_model()
        self._model = model
        sem = self._semaphore()
        async with self._client() as client:

            async def one(req: ChatRequest) -> list[Completion]:
                out: list[Completion] = []
                while len(out) < req.n:
                    async with sem:
                        data = await self._send(
                            client, "POST", "/chat/completions", self._body(req, model, req.n - len(out))
                        )
                    got = _completions(data)
                    if not got:
                        raise AwctlError(
                            f"{self.base_url}/chat/completions returned no choices: {data!r:.300}"
                        )
                    out.extend(got[: req.n - len(out)])
                return out

            return list(await asyncio.gather(*(one(r) for r in requests)))

    def _body(self, req: ChatRequest, model: str, n: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": req.messages,
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "top_p": req.top_p,
        }
        if n != 1:
            body["n"] = n
        if req.seed is not None:
            body["seed"] = req.seed
        if req.stop:
            body["stop"] = req.stop
        if req.logprobs:
            body["logprobs"] = True
        body.update(self.extra_body)
        body.update(req.extra)
        return body


def _completions(data: dict[str, Any]) -> list[Completion]:
    usage = data.get("usage") or {}
    choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
    out = []
    for choice in choices:
        msg = choice.get("message") or {}
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        logprobs = None
        content_lp = (choice.get("logprobs") or {}).get("content")
        if isinstance(content_lp, list):
            logprobs = [float(t.get("logprob", 0.0)) for t in content_lp]
        token_ids = choice.get("token_ids")  # vLLM returns these when asked (return_token_ids)
        out.append(
            Completion(
                text=msg.get("content") or "",
                reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
                token_ids=list(token_ids) if isinstance(token_ids, list) else None,
                logprobs=logprobs,
                finish_reason=choice.get("finish_reason") or "stop",
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=len(logprobs)
                if logprobs is not None and len(choices) > 1
                else int(usage.get("completion_tokens") or 0) // max(1, len(choices)),
            )
        )
    return out


def _error_message(resp: Any) -> str:
    try:
        data = resp.json()
        err = data.get("error", data)
        return str(err.get("message", err) if isinstance(err, dict) else err)[:500]
    except Exception:  # not JSON: show the start of the body
        return resp.text[:500]


def _retry_after(value: str | None) -> float | None:
    try:
        return min(60.0, max(0.0, float(value))) if value else None
    except ValueError:
        return None


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def _run_in_thread(coro: Any) -> Any:
    """Run ``coro`` on a fresh event loop in a helper thread (sync call made from inside a running loop)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
