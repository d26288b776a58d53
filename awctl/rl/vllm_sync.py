"""RL generation through a colocated vLLM engine whose weights follow the policy (``generation = "vllm"``).

:class:`VLLMSampler` starts :class:`~awctl.models.backends.vllm_backend.VLLMBackend` in this process on
the stage's starting model and, before each sampling round, pushes the policy's current weights into it
when the optimizer has stepped since the last push (so after every optimizer step, and once at the start,
which also covers ``--resume``). A LoRA policy is sent as full weights: each adapted layer's
``base + scale * B @ A`` under the base model's names.

Prompts are rendered and truncated exactly as :func:`awctl.rl.rollout.sample_groups` does and handed to
vLLM as token ids; the completion token ids vLLM returns go to the update unchanged. vLLM's own
log-probs are *not* used as the old-policy log-probs: its kernels (and precision) differ from the
training forward pass, so the GSPO loop recomputes them with the policy on the same tokens, as it does
for ``generation = "policy"``.
"""

from __future__ import annotations

from typing import Any

from awctl.errors import AwctlError
from awctl.rl.expand import TurnPrompt
from awctl.rl.rollout import Rollouts


def policy_weights(module: Any) -> list[tuple[str, Any]]:
    """The policy's weights under plain Hugging Face names, ready for ``VLLMBackend.load_weights``.

    A peft LoRA model yields its base model's names with every active adapter's delta added (the same
    values ``merge_and_unload`` would give, without copying or modifying the model); ``lora_*`` tensors
    are left out. Tied parameters appear once (``named_parameters`` deduplicates them)."""
    import torch

    from awctl.train.model import is_peft

    if not is_peft(module):
        return [(name, p.detach()) for name, p in module.named_parameters()]
    from peft.tuners.lora import LoraLayer

    inner = module.get_base_model()
    deltas: dict[str, Any] = {}
    with torch.no_grad():
        for name, layer in inner.named_modules():
            if not isinstance(layer, LoraLayer) or getattr(layer, "merged", False):
                continue
            for adapter in layer.active_adapters:
                if adapter in layer.lora_A:
                    key = f"{name}.weight"
                    delta = layer.get_delta_weight(adapter)
                    deltas[key] = delta if key not in deltas else deltas[key] + delta
        out = []
        for name, p in inner.named_parameters():
            if ".lora_" in name:
                continue
            plain = name.replace(".base_layer.", ".")
            value = p.detach()
            if plain in deltas:
                value = value + deltas[plain].to(value.dtype)
            out.append((plain, value))
    return out


class WeightSynced:
    """An in-process vLLM engine (``self.backend``) whose weights follow a training policy: ``sync`` pushes
    them once per optimizer step. Subclasses set ``backend``, ``synced_step = None`` and ``syncs = 0``."""

    backend: Any
    synced_step: int | None
    syncs: int

    def sync(self, module: Any, step: int) -> bool:
        """Push ``module``'s weights unless they were already pushed at optimizer step ``step``."""
        if self.synced_step == step:
            return False
        self.backend.load_weights(policy_weights(module))
        self.synced_step = step
        self.syncs += 1
        return True


class VLLMSampler(WeightSynced):
    """Samples GSPO groups through an in-process vLLM engine kept in sync with the policy.

    ``options`` go to :class:`~awctl.models.backends.vllm_backend.VLLMBackend` (e.g. ``dtype``,
    ``max_model_len``, ``gpu_memory_utilization``, ``enforce_eager``). Single process only: with several
    training ranks every rank would start its own engine."""

    def __init__(self, model_path: str, tokenizer: Any, *, seed: int, world_size: int = 1,
                 options: dict[str, Any] | None = None) -> None:
        if world_size != 1:
            raise AwctlError(f"generation = 'vllm' runs in a single training process, not {world_size}",
                             hint="use generation = 'policy' with several ranks, or launch one process")
        from awctl.models.backends.vllm_backend import VLLMBackend

        self.tokenizer = tokenizer
        self.seed = seed
        self.backend = VLLMBackend(model_path, seed=seed, weight_sync=True, **(options or {}))
        self.stops: list[int] = []
        self.synced_step: int | None = None
        self.syncs = 0

    def sample(self, module: Any, step: int, prompts: list[TurnPrompt], *, group_size: int, max_tokens: int,
               temperature: float = 1.0, top_p: float = 1.0, max_prompt_tokens: int | None = None) -> Rollouts:
        """``group_size`` completions per prompt from the engine after syncing it to ``module``; the layout
        is :class:`~awctl.rl.rollout.Rollouts`' (left-padded prompts, right-padded completions that keep
        their end-of-turn token)."""
        import torch
        from vllm import SamplingParams

        from awctl.models.backends.common import stop_token_ids

        # The same end-of-turn tokens as transformers sampling from the policy uses.
        self.stops = stop_token_ids(self.tokenizer, getattr(module, "generation_config", None))
        self.sync(module, step)
        tok = self.tokenizer
        texts = [tok.apply_chat_template(p.messages, tokenize=False, add_generation_prompt=True) for p in prompts]
        encoded = tok(texts, add_special_tokens=False)["input_ids"]
        if max_prompt_tokens:
            encoded = [e[-max_prompt_tokens:] for e in encoded]
        # One seed per (run seed, step): a resumed run samples what the uninterrupted run sampled. vLLM
        # refuses n > 1 for greedy decoding, so greedy groups are sent as one request per row.
        n = group_size if temperature > 0 else 1
        params = SamplingParams(n=n, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                seed=self.seed * 1_000_003 + step, stop_token_ids=self.stops or None)
        requests = [{"prompt_token_ids": e} for e in encoded for _ in range(group_size // n)]
        with self.backend._lock:
            outputs = self.backend.llm.generate(requests, params, use_tqdm=False)
        completions: list[list[int]] = []
        for out in outputs:
            for comp in out.outputs[:n]:
                toks = list(comp.token_ids)
                # vLLM 0.32 keeps a stop token in token_ids; should a version drop it, put it back: the
                # policy must learn to emit it.
                if comp.finish_reason == "stop" and (not toks or toks[-1] not in self.stops) and \
                        isinstance(comp.stop_reason, int):
                    toks.append(comp.stop_reason)
                completions.append(toks)
        rows = [e for e in encoded for _ in range(group_size)]
        width = max(len(r) for r in rows)
        clen = max(1, max(len(c) for c in completions))
        pad = tok.pad_token_id
        ids = torch.full((len(rows), width + clen), pad, dtype=torch.long)
        att = torch.zeros((len(rows), width + clen), dtype=torch.long)
        cmask = torch.zeros((len(rows), clen), dtype=torch.long)
        decoded = []
        for i, (r, c) in enumerate(zip(rows, completions, strict=True)):
            ids[i, width - len(r):width] = torch.tensor(r)
            att[i, width - len(r):width] = 1
            if c:
                ids[i, width:width + len(c)] = torch.tensor(c)
                att[i, width:width + len(c)] = 1
                cmask[i, :len(c)] = 1
            body = c[:-1] if c and c[-1] in self.stops else c
            decoded.append(tok.decode(body, skip_special_tokens=True))
        return Rollouts(prompts=prompts, input_ids=ids, attention_mask=att, completion_mask=cmask, texts=decoded,
                        group_size=group_size)

    def close(self) -> None:
        self.backend.close()
