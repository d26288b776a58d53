"""The generation-backend interface shared by world-model and agent inference.

Every backend (``transformers``, ``vllm``, ``openai``, or a plugin's) takes a batch of chat requests and
returns, for each request, ``n`` completions with their text, token ids and log-probs where the backend
gives them. Backends are registered through the ``register_backends`` hook as factories, so nothing heavy
is imported until one is built.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatRequest:
    """One chat completion request. ``messages`` are ``{"role", "content"}`` dicts."""

    messages: list[dict[str, str]]
    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int | None = None
    stop: list[str] | None = None
    logprobs: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Completion:
    """One generated completion. ``reasoning`` is set when the backend returns reasoning separately
    (e.g. an OpenAI-compatible ``reasoning_content``); ``token_ids``/``logprobs`` cover the completion."""

    text: str
    reasoning: str | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Backend(ABC):
    """A generation backend. Implementations batch internally; callers pass as many requests as they have."""

    name: str = ""
    model: str = ""

    @abstractmethod
    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        """For each request, ``request.n`` completions, in request order."""

    async def agenerate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        return await asyncio.to_thread(self.generate, requests)

    def close(self) -> None:  # noqa: B027 - optional
        """Release model memory, worker processes or HTTP sessions."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
