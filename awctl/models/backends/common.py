"""Helpers shared by the generation backends: stop-string truncation, request grouping, chat rendering."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from awctl.backend import ChatRequest
from awctl.errors import AwctlError


def truncate_at_stop(text: str, stop: Iterable[str] | None) -> tuple[str, bool]:
    """``text`` cut before the earliest stop string, and whether one was found."""
    cut = -1
    for s in stop or ():
        if s:
            pos = text.find(s)
            if pos >= 0 and (cut < 0 or pos < cut):
                cut = pos
    return (text[:cut], True) if cut >= 0 else (text, False)


def sampling_key(req: ChatRequest) -> tuple[Any, ...]:
    """Requests with equal keys can share one batched ``generate`` call."""
    return (
        req.max_tokens,
        round(float(req.temperature), 6),
        round(float(req.top_p), 6),
        req.seed,
        req.logprobs,
    )


def check_request(req: ChatRequest, index: int) -> None:
    """Raise a clear error for a request no backend can serve."""
    where = f"request {index}"
    if not req.messages:
        raise AwctlError(f"{where}: has no messages", hint="pass at least one {'role', 'content'} message")
    for j, msg in enumerate(req.messages):
        if not isinstance(msg, dict) or "role" not in msg or "content" not in msg:
            raise AwctlError(f"{where}: messages[{j}] must be a dict with 'role' and 'content'")
    if req.n < 1:
        raise AwctlError(f"{where}: n must be at least 1, got {req.n}")
    if req.max_tokens < 1:
        raise AwctlError(f"{where}: max_tokens must be at least 1, got {req.max_tokens}")
    if req.temperature < 0:
        raise AwctlError(f"{where}: temperature must be >= 0, got {req.temperature}")


def render_chat(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """The prompt text for ``messages`` through the tokenizer's own chat template."""
    if not getattr(tokenizer, "chat_template", None):
        raise AwctlError(
            "the model's tokenizer has no chat template",
            hint="use an instruct model, or set tokenizer.chat_template in its tokenizer_config.json",
        )
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> list[int]:
    """Token ids that end a chat turn: eos ids of the tokenizer and generation config, and the end-of-turn
    markers of common chat templates when the vocabulary has them as single tokens."""
    ids: list[int] = []

    def add(value: Any) -> None:
        if isinstance(value, int) and value >= 0 and value not in ids:
            ids.append(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                add(v)

    add(getattr(tokenizer, "eos_token_id", None))
    if generation_config is not None:
        add(getattr(generation_config, "eos_token_id", None))
    vocab = tokenizer.get_vocab()
    for marker in ("<|end|>", "<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<end_of_turn>"):
        if marker in vocab:
            add(vocab[marker])
    return ids
