"""The micro-batcher behind ``awctl simulate serve``: gathering, ordering, limits and error isolation."""

from __future__ import annotations

import asyncio

import pytest

from awctl.backend import Backend, ChatRequest, Completion
from awctl.sim.batcher import BatchingBackend


class Recording(Backend):
    name = "recording"
    model = "m"

    def __init__(self, fail_when=None):
        self.batches: list[list[str]] = []
        self.fail_when = fail_when

    def generate(self, requests):
        texts = [r.messages[0]["content"] for r in requests]
        self.batches.append(texts)
        if self.fail_when and self.fail_when in texts:
            raise RuntimeError("backend exploded")
        return [[Completion(text=t.upper())] for t in texts]


def req(text: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}])


def test_concurrent_callers_share_a_batch_and_get_their_own_answers():
    inner = Recording()
    be = BatchingBackend(inner, max_batch=64, window_ms=20)

    async def main():
        return await asyncio.gather(*(be.agenerate([req(f"a{i}"), req(f"b{i}")]) for i in range(10)))

    outs = asyncio.run(main())
    assert [[c[0].text for c in o] for o in outs] == [[f"A{i}", f"B{i}"] for i in range(10)]
    assert len(inner.batches) == 1 and len(inner.batches[0]) == 20
    assert be.stats.to_dict()["largest_batch"] == 20


def test_max_batch_splits_whole_callers():
    inner = Recording()
    be = BatchingBackend(inner, max_batch=4, window_ms=10)

    async def main():
        return await asyncio.gather(
            *(be.agenerate([req(f"{i}x"), req(f"{i}y"), req(f"{i}z")]) for i in range(3))
        )

    outs = asyncio.run(main())
    assert all(len(o) == 3 for o in outs)
    assert [len(b) for b in inner.batches] == [3, 3, 3]  # 3+3 would exceed 4: callers are never split


def test_a_failing_batch_fails_only_its_callers():
    inner = Recording(fail_when="boom")
    be = BatchingBackend(inner, max_batch=64, window_ms=10)

    async def main():
        first = await asyncio.gather(
            be.agenerate([req("boom")]), be.agenerate([req("ok")]), return_exceptions=True
        )
        second = await be.agenerate([req("later")])
        return first, second

    first, second = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) for r in first)
    assert second[0][0].text == "LATER" and be.stats.errors == 1


def test_sync_generate_passes_through():
    inner = Recording()
    assert BatchingBackend(inner).generate([req("x")])[0][0].text == "X"
    assert inner.batches == [["x"]]


@pytest.mark.parametrize("window", [0.0, 5.0])
def test_empty_and_zero_window(window):
    be = BatchingBackend(Recording(), window_ms=window)
    assert asyncio.run(be.agenerate([])) == []
    assert asyncio.run(be.agenerate([req("q")]))[0][0].text == "Q"
