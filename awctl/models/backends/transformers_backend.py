"""The ``transformers`` backend: a local Hugging Face model directory or GGUF file, batched generation.

Requests with the same sampling settings are generated together: prompts are rendered through the
tokenizer's chat template, left-padded into one batch (sorted by length, so padding stays small) and
decoded with the KV cache. ``n > 1`` repeats a prompt inside the batch. Seeds: a request with a seed
re-seeds torch before its group is generated, so the same requests with the same seeds give the same
completions; without one, torch's global generator (seeded from ``seed`` when the backend is built) continues.
Log-probs, when asked, are the model's untempered log-probabilities of the generated tokens.

Shared prefixes: simulator requests in one batch usually start with the same system prompt. When every
row of a batch shares at least ``min_shared_prefix`` leading tokens, that prefix is prefilled once and
its KV cache repeated for the batch (``prefix_sharing=False`` turns this off); outputs are the same as
without sharing, up to floating-point rounding.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from awctl.backend import Backend, ChatRequest, Completion
from awctl.errors import AwctlError
from awctl.models.backends.common import (
    check_request,
    render_chat,
    sampling_key,
    stop_token_ids,
    truncate_at_stop,
)
from awctl.models.backends.cpu_runtime import (
    import_torch,
    limit_threads,
    release_freed_memory,
    reuse_freed_memory,
)


def resolve_model_path(model: str | Path, gguf_file: str | None = None) -> tuple[Path, str | None]:
    """``(directory, gguf file name or None)`` for a model directory, a ``.gguf`` path (or
    ``pkg:<package>/<file>.gguf``) or ``"tiny"``."""
    from awctl.models.paths import expand_pkg

    model = expand_pkg(str(model))
    if str(model) == "tiny":
        from awctl.models.tiny import default_tiny_model

        return default_tiny_model(), None
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise AwctlError(f"GGUF file {path} does not exist", hint="pass the path of a .gguf file")
        return path.parent, path.name
    if not path.is_dir():
        raise AwctlError(
            f"model {str(model)!r} is not a local directory or .gguf file",
            hint="pass a Hugging Face save_pretrained directory, a .gguf file, or 'tiny'; "
            "nothing is downloaded at run time",
        )
    if gguf_file is None and not (path / "config.json").is_file():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return path, ggufs[0].name
        raise AwctlError(
            f"{path} has no config.json" + (f" and {len(ggufs)} .gguf files" if ggufs else ""),
            hint="pass a save_pretrained directory or the exact .gguf file",
        )
    return path, gguf_file


class TransformersBackend(Backend):
    """Local generation with ``transformers``. Thread-safe: concurrent ``generate`` calls run one at a time.

    ``model``: a save_pretrained directory, a ``.gguf`` file (or a directory holding exactly one), or
    ``"tiny"`` (the project's random-init test model). ``device``: ``auto`` (cuda when available), ``cpu``
    or ``cuda[:i]``. ``batch_size`` bounds the rows of one forward batch and ``max_batch_tokens`` its padded
    prompt tokens (rows × longest prompt; a longer prompt goes alone), so long prompts (GUI screens, deep
    histories) do not exhaust memory. A prompt that would not leave ``max_tokens`` in the model's context
    window (``max_position_embeddings``), or is longer than ``max_prompt_tokens``, keeps its most recent
    tokens (``truncated_prompts`` counts them). ``num_threads`` sets torch's
    intra-op threads (process-wide; default: torch's count capped at the cores this process may use,
    :func:`~awctl.models.backends.cpu_runtime.usable_cores`). Building one also makes idle OpenMP workers
    sleep (when torch is not imported yet) and makes glibc reuse freed tensor memory, process-wide
    (:mod:`awctl.models.backends.cpu_runtime`).
    """

    name = "transformers"

    def __init__(
        self,
        model: str | Path = "tiny",
        *,
        tokenizer: str | Path | None = None,
        gguf_file: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 16,
        max_batch_tokens: int = 32768,
        seed: int = 0,
        max_prompt_tokens: int | None = None,
        num_threads: int | None = None,
        prefix_sharing: bool = True,
        min_shared_prefix: int = 32,
    ) -> None:
        # Before transformers imports torch: OpenMP workers that sleep when idle, a thread pool no
        # larger than the cores this process may use, and freed tensors reused instead of unmapped
        # (awctl.models.backends.cpu_runtime says why and what each one saves). All process-wide.
        torch = import_torch()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.num_threads = limit_threads(num_threads)
        reuse_freed_memory()
        path, gguf = resolve_model_path(model, gguf_file)
        self.model = str(model)
        self.batch_size = max(1, int(batch_size))
        self.max_batch_tokens = max(1, int(max_batch_tokens))
        self.max_prompt_tokens = max_prompt_tokens
        self.truncated_prompts = 0
        self.prefix_sharing = prefix_sharing
        self.min_shared_prefix = max(1, int(min_shared_prefix))
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        kwargs: dict[str, Any] = {"local_files_only": True}
        if gguf:
            kwargs["gguf_file"] = gguf
        tok_src = str(tokenizer) if tokenizer else str(path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                tok_src, **(kwargs if not tokenizer else {"local_files_only": True})
            )
            torch_dtype = (
                getattr(torch, dtype)
                if dtype != "auto"
                else (torch.float32 if self.device.type == "cpu" else "auto")
            )
            self.lm = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype, **kwargs)
        except (OSError, ValueError) as exc:
            raise AwctlError(
                f"cannot load model {self.model!r}: {str(exc).splitlines()[0]}",
                hint="check the directory holds config.json + weights (or a .gguf) and a tokenizer",
            ) from None
        self.lm.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._stop_ids = stop_token_ids(self.tokenizer, getattr(self.lm, "generation_config", None))
        self._generator_seed = seed
        torch.manual_seed(seed)
        self._lock = threading.Lock()

    # ── generation ──
    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        for i, req in enumerate(requests):
            check_request(req, i)
        prompts = [render_chat(self.tokenizer, req.messages) for req in requests]
        rows: list[tuple[int, int]] = [(i, j) for i, req in enumerate(requests) for j in range(req.n)]
        results: list[list[Completion | None]] = [[None] * req.n for req in requests]
        groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        for i, j in rows:
            groups.setdefault(sampling_key(requests[i]), []).append((i, j))
        with self._lock:
            try:
                for members in groups.values():
                    self._generate_group(requests, prompts, members, results)
            finally:
                release_freed_memory()
        return [[c for c in per if c is not None] for per in results]

    def _encode(self, prompts: list[str], max_new_tokens: int) -> list[list[int]]:
        # The chat template already writes BOS where the model wants it.
        ids = self.tokenizer(prompts, add_special_tokens=False)["input_ids"]
        window = getattr(self.lm.config, "max_position_embeddings", None)
        limits = [n for n in (self.max_prompt_tokens, window and max(1, window - max_new_tokens)) if n]
        if limits:
            limit = min(limits)
            self.truncated_prompts += sum(len(x) > limit for x in ids)
            ids = [x[-limit:] for x in ids]
        return ids

    def _chunks(self, order: list[tuple[int, int]], lengths: dict[int, int]) -> list[list[tuple[int, int]]]:
        """``order`` (shortest prompt first) cut into batches of at most ``batch_size`` rows and
        ``max_batch_tokens`` padded prompt tokens; a row over the token budget alone is a batch."""
        chunks: list[list[tuple[int, int]]] = []
        for member in order:
            last = chunks[-1] if chunks else None
            if last and len(last) < self.batch_size and (len(last) + 1) * lengths[member[0]] <= self.max_batch_tokens:
                last.append(member)
            else:
                chunks.append([member])
        return chunks

    def _generate_group(
        self,
        requests: list[ChatRequest],
        prompts: list[str],
        members: list[tuple[int, int]],
        results: list[list[Completion | None]],
    ) -> None:
        import torch

        req0 = requests[members[0][0]]
        if req0.seed is not None:
            torch.manual_seed(req0.seed)
        distinct = sorted({i for i, _ in members})
        encoded = dict(zip(distinct, self._encode([prompts[i] for i in distinct], req0.max_tokens), strict=True))
        order = sorted(members, key=lambda m: len(encoded[m[0]]))
        pad_id = self.tokenizer.pad_token_id
        for chunk in self._chunks(order, {i: len(ids) for i, ids in encoded.items()}):
            rows = [encoded[i] for i, _ in chunk]
            shared = self._shared_prefix_len(rows)
            # Layout per row: [shared prefix][left padding][own suffix]; positions come from the attention
            # mask, so a row's tokens sit at the same positions as when it is generated alone.
            suffix_width = max(len(ids) - shared for ids in rows)
            width = shared + suffix_width
            input_ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, ids in enumerate(rows):
                input_ids[row, :shared] = torch.tensor(ids[:shared], dtype=torch.long)
                attention[row, :shared] = 1
                input_ids[row, width - (len(ids) - shared) :] = torch.tensor(ids[shared:], dtype=torch.long)
                attention[row, width - (len(ids) - shared) :] = 1
            sample = req0.temperature > 0
            gen_kwargs: dict[str, Any] = {
                "max_new_tokens": req0.max_tokens,
                "do_sample": sample,
                "pad_token_id": pad_id,
                "eos_token_id": self._stop_ids or None,
                "use_cache": True,
                "return_dict_in_generate": True,
                "output_logits": req0.logprobs,
            }
            if sample:
                gen_kwargs.update(temperature=req0.temperature, top_p=req0.top_p, top_k=0)
            else:
                # Greedy: neutralise sampling knobs a model's generation_config may carry.
                gen_kwargs.update(temperature=None, top_p=None, top_k=None)
            with torch.inference_mode():
                if shared:
                    gen_kwargs["past_key_values"] = self._prefix_cache(input_ids[:1, :shared], len(chunk))
                out = self.lm.generate(
                    input_ids=input_ids.to(self.device),
                    attention_mask=attention.to(self.device),
                    **gen_kwargs,
                )
            new_tokens = out.sequences[:, width:].cpu()
            logits = torch.stack(out.logits, dim=1).float().log_softmax(-1).cpu() if req0.logprobs else None
            for row, (i, j) in enumerate(chunk):
                results[i][j] = self._completion(
                    new_tokens[row], logits[row] if logits is not None else None, req0, len(encoded[i])
                )

    def _shared_prefix_len(self, rows: list[list[int]]) -> int:
        """Tokens every row starts with (minus one, so each row keeps a token to prefill), or 0 when
        sharing is off, the batch has one row, or the prefix is too short to be worth a separate pass."""
        if len(rows) < 2 or not self.prefix_sharing:
            return 0
        shortest = min(len(r) for r in rows)
        n = 0
        first = rows[0]
        while n < shortest - 1 and all(r[n] == first[n] for r in rows):
            n += 1
        return n if n >= self.min_shared_prefix else 0

    def _prefix_cache(self, prefix: Any, batch: int) -> Any:
        """The KV cache of ``prefix`` (one row) computed once and repeated for ``batch`` rows."""
        out = self.lm(input_ids=prefix.to(self.device), use_cache=True)
        cache = out.past_key_values
        cache.batch_repeat_interleave(batch)
        return cache

    def _completion(self, tokens: Any, logprob_rows: Any, req: ChatRequest, prompt_len: int) -> Completion:
        ids = tokens.tolist()
        finish = "length"
        for k, tok in enumerate(ids):
            if tok in self._stop_ids:
                ids, finish = ids[:k], "stop"
                break
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        text, stopped = truncate_at_stop(text, req.stop)
        if stopped:
            finish = "stop"
        logprobs = None
        if logprob_rows is not None:
            logprobs = [float(logprob_rows[k, tok]) for k, tok in enumerate(ids)]
        return Completion(
            text=text,
            token_ids=ids,
            logprobs=logprobs,
            finish_reason=finish,
            prompt_tokens=prompt_len,
            completion_tokens=len(ids),
        )

    def close(self) -> None:
        self.lm = None
        import gc

        gc.collect()
