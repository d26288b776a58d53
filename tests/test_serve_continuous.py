"""Continuous batching on the serving path: the batcher hands a gathered batch to a backend that schedules
itself (vLLM) without waiting for the previous batch, and the vLLM backend's ``agenerate`` adds requests
to the running engine, so a short request never waits for a long one that started before it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from awctl.backend import Backend, ChatRequest, Completion
from awctl.sim.batcher import BatchingBackend


class Paced(Backend):
    """A backend whose calls take ``max_tokens`` milliseconds of the longest request (as a generation
    engine's batch does); ``continuous_batching`` says whether it may run several calls at once."""

    name = "paced"

    def __init__(self, continuous: bool) -> None:
        self.continuous_batching = continuous

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        time.sleep(max(r.max_tokens for r in requests) / 1000)
        return [[Completion(text=r.messages[-1]["content"])] for r in requests]


def _finish_order(continuous: bool, overlap: bool | None) -> list[str]:
    async def main() -> list[str]:
        be = BatchingBackend(Paced(continuous), window_ms=5, overlap=overlap)
        order: list[str] = []

        async def ask(text: str, tokens: int, delay: float) -> None:
            await asyncio.sleep(delay)
            await be.agenerate([ChatRequest([{"role": "user", "content": text}], max_tokens=tokens)])
            order.append(text)

        await asyncio.gather(ask("long", 600, 0.0), ask("short", 20, 0.1))
        return order

    return asyncio.run(main())


@pytest.mark.not_a_component("scheduling logic of the batcher")
def test_a_continuous_backend_gets_batches_without_waiting_for_the_previous_one():
    assert _finish_order(continuous=True, overlap=None) == ["short", "long"]  # overlap follows the backend
    assert _finish_order(continuous=False, overlap=None) == ["long", "short"]  # one batch at a time
    assert _finish_order(continuous=True, overlap=False) == ["long", "short"]


SCRIPT = textwrap.dedent("""
    import asyncio, json, sys, time

    def main():
        from awctl.backend import ChatRequest
        from awctl.models.backends.vllm_backend import VLLMBackend
        from awctl.sim.batcher import BatchingBackend

        be = VLLMBackend(sys.argv[1], enforce_eager=True, dtype="float32", max_model_len=1024,
                         gpu_memory_utilization=0.15, max_num_seqs=16)
        msgs = lambda t: [{"role": "system", "content": "You simulate a shell."}, {"role": "user", "content": t}]
        reqs = [ChatRequest(messages=msgs(f"cmd {i}"), max_tokens=(300 if i == 0 else 4), seed=i)
                for i in range(5)]
        sync = be.generate(reqs)

        async def run():
            batcher = BatchingBackend(be, window_ms=2)
            t0, done = time.perf_counter(), {}

            async def one(i):
                await asyncio.sleep(0 if i == 0 else 0.05)
                out = await batcher.agenerate([reqs[i]])
                done[i] = time.perf_counter() - t0
                return out[0][0]

            outs = await asyncio.gather(*(one(i) for i in range(5)))
            return outs, done, batcher.overlap

        outs, done, overlap = asyncio.run(run())
        print("RESULT " + json.dumps({
            "continuous": be.continuous_batching, "overlap": overlap,
            "same": [o.token_ids for o in outs] == [s[0].token_ids for s in sync],
            "long_tokens": outs[0].completion_tokens, "done": done,
            "after": be.generate(reqs[1:2])[0][0].token_ids == sync[1][0].token_ids,
        }))
        be.close()

    if __name__ == "__main__":
        main()
""")


def _vllm_python() -> str:
    explicit = os.environ.get("AWCTL_VLLM_PYTHON")
    if explicit:
        return explicit
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not importable here; set AWCTL_VLLM_PYTHON to a python with vllm(-cpu) and awctl")
    return sys.executable


@pytest.mark.slow
def test_vllm_agenerate_adds_requests_to_the_running_engine(tmp_path):
    from awctl.models.tiny import default_tiny_model

    python = _vllm_python()
    script = tmp_path / "continuous.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING",
           "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([python, str(script), str(default_tiny_model())], capture_output=True, text=True,
                          timeout=900, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = json.loads(lines[0][len("RESULT "):])
    assert out["continuous"] and out["overlap"]
    assert out["same"] and out["after"]  # the same greedy tokens as the synchronous path, before and after
    done = {int(k): v for k, v in out["done"].items()}
    if out["long_tokens"] > 50:  # the long request really was long: the short ones overtook it
        assert all(done[i] < done[0] for i in range(1, 5)), done
