"""OpenAI chat-completions wire format: request validation and response/stream chunk building.

Pure functions, no web framework, so the server and the tests share them. Covers what OpenAI's own
client and AgentWorldBench's ``eval.py`` send: ``model``, ``messages`` (string or text-part content),
``max_tokens``/``max_completion_tokens``, ``temperature``, ``top_p``, ``n``, ``seed``, ``stop``,
``logprobs``, ``stream``, ``stream_options.include_usage``. Unknown fields are ignored, as OpenAI
compatible servers usually do.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

from awctl.backend import ChatRequest, Completion

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


class BadRequest(ValueError):
    """A request the server refuses with HTTP 400 (``param`` names the offending field)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        parts = []
        for k, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                raise BadRequest(f"{where}.content[{k}]: only text parts are supported", f"{where}.content")
        return "".join(parts)
    raise BadRequest(f"{where}.content must be a string or a list of text parts", f"{where}.content")


def _number(
    body: dict[str, Any], key: str, default: Any, kind: type, lo: float | None = None, hi: float | None = None
) -> Any:
    value = body.get(key)
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (kind is int and not isinstance(value, int))
    ):
        raise BadRequest(f"{key} must be {'an integer' if kind is int else 'a number'}, got {value!r}", key)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise BadRequest(f"{key} must be between {lo} and {hi}, got {value!r}", key)
    return kind(value)


def parse_chat_request(body: Any, default_max_tokens: int = 1024) -> tuple[ChatRequest, dict[str, Any]]:
    """``(request, options)`` from a JSON body; options: ``model``, ``stream``, ``include_usage``."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list", "messages")
    msgs = []
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise BadRequest(f"{where} must be an object", "messages")
        role = ROLES.get(msg.get("role", ""))
        if role is None:
            raise BadRequest(
                f"{where}.role must be one of {sorted(ROLES)}, got {msg.get('role')!r}", "messages"
            )
        msgs.append({"role": role, "content": _content_text(msg.get("content"), where)})
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    max_tokens = _number({"max_tokens": max_tokens}, "max_tokens", default_max_tokens, int, 1)
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise BadRequest("stop must be a string or a list of strings", "stop")
    req = ChatRequest(
        messages=msgs,
        max_tokens=max_tokens,
        temperature=_number(body, "temperature", 1.0, float, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, float, 0.0, 1.0),
        n=_number(body, "n", 1, int, 1, 128),
        seed=_number(body, "seed", None, int),
        stop=stop or None,
        logprobs=bool(body.get("logprobs", False)),
    )
    if req.top_p == 0:
        req.top_p = 1e-6  # top_p=0 means "only the top token"; keep the nucleus non-empty
    stream_options = body.get("stream_options") or {}
    options = {
        "model": body.get("model"),
        "stream": bool(body.get("stream", False)),
        "include_usage": bool(isinstance(stream_options, dict) and stream_options.get("include_usage")),
    }
    return req, options


def _logprobs_block(comp: Completion, decode: Any) -> dict[str, Any] | None:
    if comp.logprobs is None:
        return None
    ids = comp.token_ids or []
    content = []
    for k, lp in enumerate(comp.logprobs):
        token = decode(ids[k]) if decode is not None and k < len(ids) else ""
        content.append({"token": token, "logprob": lp, "bytes": list(token.encode()), "top_logprobs": []})
    return {"content": content}


def new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def usage_of(completions: list[Completion]) -> dict[str, int]:
    prompt = completions[0].prompt_tokens if completions else 0
    completion = sum(c.completion_tokens for c in completions)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _message(comp: Completion, split_reasoning: bool) -> dict[str, Any]:
    text, reasoning = comp.text, comp.reasoning
    if split_reasoning:
        from awctl.sim.parse import strip_reasoning

        text, reasoning = strip_reasoning(text, reasoning)
        text = text.lstrip("\n")
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        msg["reasoning_content"] = reasoning
    return msg


def chat_completion(
    model: str, completions: list[Completion], *, decode: Any = None, split_reasoning: bool = False
) -> dict[str, Any]:
    """A ``chat.completion`` object for one request's completions."""
    return {
        "id": new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": i,
                "message": _message(c, split_reasoning),
                "logprobs": _logprobs_block(c, decode),
                "finish_reason": c.finish_reason,
            }
            for i, c in enumerate(completions)
        ],
        "usage": usage_of(completions),
    }


_PIECES = re.compile(r"\s*\S+|\s+")


def stream_chunks(
    model: str, completions: list[Completion], *, include_usage: bool = False, split_reasoning: bool = False
) -> Iterator[dict[str, Any]]:
    """``chat.completion.chunk`` objects for already generated completions: a role chunk, then the
    (reasoning and) content in word-sized deltas, then a finish chunk per choice, then usage if asked."""
    cid, created = new_id(), int(time.time())

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            **extra,
        }

    for i, comp in enumerate(completions):
        msg = _message(comp, split_reasoning)
        yield chunk(
            [
                {
                    "index": i,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ]
        )
        for key in ("reasoning_content", "content"):
            for piece in _PIECES.findall(msg.get(key) or ""):
                yield chunk([{"index": i, "delta": {key: piece}, "logprobs": None, "finish_reason": None}])
        yield chunk([{"index": i, "delta": {}, "logprobs": None, "finish_reason": comp.finish_reason}])
    if include_usage:
        yield chunk([], usage=usage_of(completions))


def error_body(
    message: str, kind: str = "invalid_request_error", param: str | None = None, code: str | int | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
