"""Micro-batching: concurrent callers' requests gathered into one backend call.

:class:`BatchingBackend` wraps any backend. Its ``agenerate`` puts the caller's requests on a queue and
awaits them; one worker task per event loop waits ``window_ms`` after the first arrival (or until
``max_batch`` requests are queued), sends everything queued in one ``inner.agenerate`` call and hands
each caller its own completions. While a batch is running new requests keep queueing, so under load the
batch size grows by itself. An error in a batch fails exactly the callers in that batch.

With ``overlap`` (the default for an ``inner`` backend whose ``continuous_batching`` is true, such as the
vLLM engine, which schedules requests into its running batch itself) a gathered batch is handed to
``inner`` without waiting for the previous one to finish, so a short request never waits for the longest
one of an earlier batch.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from awctl.backend import Backend, ChatRequest, Completion


@dataclass
class BatchStats:
    batches: int = 0
    requests: int = 0
    largest: int = 0
    errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        mean = self.requests / self.batches if self.batches else 0.0
        return {
            "batches": self.batches,
            "requests": self.requests,
            "largest_batch": self.largest,
            "mean_batch": round(mean, 2),
            "errors": self.errors,
        }


class BatchingBackend(Backend):
    """A backend that batches concurrent ``agenerate`` calls into shared calls to ``inner``.

    Synchronous ``generate`` passes straight through. Use one instance per event loop (the server has
    exactly one).
    """

    def __init__(
        self, inner: Backend, *, max_batch: int = 64, window_ms: float = 5.0, overlap: bool | None = None
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.max_batch = max(1, int(max_batch))
        self.window = max(0.0, float(window_ms)) / 1000.0
        self.overlap = bool(getattr(inner, "continuous_batching", False)) if overlap is None else overlap
        self.stats = BatchStats()
        self._inflight: set[asyncio.Task[None]] = set()
        self._queue: list[tuple[list[ChatRequest], asyncio.Future[list[list[Completion]]]]] = []
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    @property
    def model(self) -> str:  # type: ignore[override]
        return self.inner.model

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        return self.inner.generate(requests)

    @property
    def queued(self) -> int:
        return sum(len(r) for r, _ in self._queue)

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        if not requests:
            return []
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done():
            self._wake = asyncio.Event()
            self._worker = loop.create_task(self._run())
        fut: asyncio.Future[list[list[Completion]]] = loop.create_future()
        self._queue.append((list(requests), fut))
        assert self._wake is not None
        self._wake.set()
        return await fut

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            if self.window and self.queued < self.max_batch:
                await asyncio.sleep(self.window)
            taken: list[tuple[list[ChatRequest], asyncio.Future[list[list[Completion]]]]] = []
            count = 0
            # Whole callers only; the first is always taken, even when it alone exceeds max_batch.
            while self._queue and (not taken or count + len(self._queue[0][0]) <= self.max_batch):
                item = self._queue.pop(0)
                if item[1].cancelled():
                    continue
                taken.append(item)
                count += len(item[0])
            if not self._queue:
                self._wake.clear()
            if not taken:
                continue
            if self.overlap:
                task = asyncio.get_running_loop().create_task(self._dispatch(taken))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            else:
                await self._dispatch(taken)

    async def _dispatch(
        self, taken: list[tuple[list[ChatRequest], asyncio.Future[list[list[Completion]]]]]
    ) -> None:
        flat = [r for reqs, _ in taken for r in reqs]
        self.stats.batches += 1
        self.stats.requests += len(flat)
        self.stats.largest = max(self.stats.largest, len(flat))
        try:
            outs = await self.inner.agenerate(flat)
        except Exception as exc:  # fail this batch's callers, keep serving the next ones
            self.stats.errors += 1
            for _, fut in taken:
                if not fut.done():
                    fut.set_exception(exc)
            return
        pos = 0
        for reqs, fut in taken:
            if not fut.done():
                fut.set_result(outs[pos : pos + len(reqs)])
            pos += len(reqs)

    async def stop(self) -> None:
        """Cancel the batching task and the batches in flight, and wait until they are gone (on this
        backend's loop); the inner backend stays open."""
        tasks = [t for t in (self._worker, *self._inflight) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._worker = None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
        for task in list(self._inflight):
            task.cancel()
        self.inner.close()
