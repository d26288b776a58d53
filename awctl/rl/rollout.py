"""Sampling groups of observations from the live policy and scoring their tokens.

Generation runs on the model being trained (``transformers`` ``generate`` with the KV cache), so there
is no weight copy to keep in sync on CPU. Prompts are rendered with the tokenizer's chat template and
left-padded; completions run to the first end-of-turn token (included: the model must learn to stop) or
``max_tokens``. Token ids are carried to the update unchanged — nothing is re-tokenized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from awctl.rl.expand import TurnPrompt


@dataclass
class Rollouts:
    """``G`` samples for each prompt, prompt-major: row ``i*G + g`` is sample ``g`` of prompt ``i``."""

    prompts: list[TurnPrompt]
    input_ids: Any  # [N, P + C] left-padded prompt then right-padded completion
    attention_mask: Any  # [N, P + C]
    completion_mask: Any  # [N, C]
    texts: list[str]
    group_size: int

    @property
    def completion_len(self) -> int:
        return int(self.completion_mask.shape[1])

    def groups(self, keep: list[int]) -> Rollouts:
        """Only the groups (prompts) at positions ``keep``, in that order."""
        rows = [i * self.group_size + g for i in keep for g in range(self.group_size)]
        return Rollouts([self.prompts[i] for i in keep], self.input_ids[rows], self.attention_mask[rows],
                        self.completion_mask[rows], [self.texts[r] for r in rows], self.group_size)


def merge_rollouts(parts: list[Rollouts], pad_id: int) -> Rollouts:
    """One batch of the groups of ``parts`` (sampled in separate calls): prompts re-padded on the left and
    completions on the right to the widest part, token ids unchanged."""
    import torch

    parts = [p for p in parts if p.prompts]
    if len(parts) == 1:
        return parts[0]
    widths = [p.input_ids.shape[1] - p.completion_len for p in parts]
    width, clen = max(widths), max(p.completion_len for p in parts)
    ids, att, cmask = [], [], []
    for part, w in zip(parts, widths, strict=True):
        n, c = part.input_ids.shape[0], part.completion_len
        left, right = width - w, clen - c
        ids.append(torch.cat([torch.full((n, left), pad_id, dtype=part.input_ids.dtype), part.input_ids,
                              torch.full((n, right), pad_id, dtype=part.input_ids.dtype)], 1))
        att.append(torch.cat([torch.zeros((n, left), dtype=part.attention_mask.dtype), part.attention_mask,
                              torch.zeros((n, right), dtype=part.attention_mask.dtype)], 1))
        cmask.append(torch.cat([part.completion_mask,
                                torch.zeros((n, right), dtype=part.completion_mask.dtype)], 1))
    return Rollouts([q for p in parts for q in p.prompts], torch.cat(ids), torch.cat(att), torch.cat(cmask),
                    [t for p in parts for t in p.texts], parts[0].group_size)


def sample_groups(model: Any, tokenizer: Any, prompts: list[TurnPrompt], *, group_size: int, max_tokens: int,
                  temperature: float = 1.0, top_p: float = 1.0, max_prompt_tokens: int | None = None) -> Rollouts:
    import torch

    from awctl.models.backends.common import stop_token_ids

    stops = stop_token_ids(tokenizer, getattr(model, "generation_config", None))
    texts = [tokenizer.apply_chat_template(p.messages, tokenize=False, add_generation_prompt=True) for p in prompts]
    encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
    if max_prompt_tokens:
        encoded = [e[-max_prompt_tokens:] for e in encoded]
    rows = [e for e in encoded for _ in range(group_size)]
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id
    device = next(model.parameters()).device
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    att = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r):] = torch.tensor(r)
        att[i, width - len(r):] = 1
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.generate(input_ids=ids.to(device), attention_mask=att.to(device), do_sample=temperature > 0,
                             temperature=temperature if temperature > 0 else None, top_p=top_p, top_k=0,
                             max_new_tokens=max_tokens, eos_token_id=stops or None, pad_token_id=pad,
                             use_cache=True)
    if was_training:
        model.train()
    completion = out[:, width:].cpu()
    cmask = torch.zeros_like(completion)
    decoded = []
    for i in range(completion.shape[0]):
        toks = completion[i].tolist()
        end = next((k for k, t in enumerate(toks) if t in stops), None)
        n = len(toks) if end is None else end + 1
        cmask[i, :n] = 1
        completion[i, n:] = pad
        decoded.append(tokenizer.decode(toks[: end if end is not None else n], skip_special_tokens=True))
    return Rollouts(prompts=prompts, input_ids=torch.cat([ids, completion], 1),
                    attention_mask=torch.cat([att, cmask], 1), completion_mask=cmask, texts=decoded,
                    group_size=group_size)
