"""A rubric judge over any generation backend: ``awctl eval judge --judge llm --backend NAME``.

Prompts are awctl's own: ``awctl/eval/prompts/_rubric.txt`` (the five dimensions and the required answer
block) filled with the domain's ``judge_guidance`` (``default.txt`` for a domain that gives none or is not
registered). The user message carries the context the official judge gets: the earlier turns
(prompt and response of each turn before ``turn_idx``), the current action, the prediction and the
ground truth, both with the response marker removed.

The answer must end with a ``<final_evaluation>`` block holding a JSON object (optionally in a ```json
fence) with ``scores`` for all five dimensions; ``strengths``/``weaknesses`` are optional lists. Parsing
(:func:`parse_final_evaluation`) is strict about that block and lenient inside it: numbers may be floats
(rounded) or strings like ``"4/5"``, and every score is clamped to 1..5. An answer that does not parse
is retried (``max_retries`` calls in all); when none parses the row fails with ``"Judge scoring failed"``.

Manipulation: a prediction that itself contains a ``final_evaluation`` tag (an attempt to smuggle a
verdict to the judge) scores 1 on every dimension without a call; the prompt tells the judge to do the
same for predictions that address it or ask for a score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from awctl.backend import Backend, ChatRequest
from awctl.errors import AwctlError
from awctl.eval import SCORE_DIMENSIONS
from awctl.eval.extract import clean_marker
from awctl.eval.judging import Judge, JudgeItem, Judgement

if TYPE_CHECKING:
    from awctl.domain import Domain

TAG = "final_evaluation"
_OPEN = re.compile(rf"<{TAG}>", re.IGNORECASE)
_CLOSE = re.compile(rf"</{TAG}>", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*\n?([\s\S]*?)```", re.IGNORECASE)
_MANIPULATION = re.compile(rf"</?{TAG}\b", re.IGNORECASE)


class JudgeParseError(ValueError):
    """The judge's answer has no usable ``<final_evaluation>`` block; the message says why."""


@cache
def _prompt_file(name: str) -> str | None:
    path = resources.files("awctl.eval.prompts") / f"{name}.txt"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def system_prompt(guidance: str = "") -> str:
    """The judge's system prompt: the rubric with a domain's guidance (``Domain.judge_guidance``; empty
    gives the generic guidance)."""
    guidance = guidance or _prompt_file("default") or ""
    return (_prompt_file("_rubric") or "").format(domain_guidance=guidance.strip()).strip()


def _fenced(text: str) -> str:
    # A fence longer than any backtick run inside, so a prediction cannot close the block early.
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def user_prompt(item: JudgeItem) -> str:
    """The user message: earlier turns, current action, prediction and reference."""
    parts = []
    if item.view.history:
        turns = "\n\n".join(f"{p}\n{r}" for p, r in item.view.history)
        parts.append(f"# Earlier turns\n\n{turns}")
    parts.append(f"# Current action\n\n{item.view.current_prompt}")
    parts.append(f"# Prediction (world model)\n\n{_fenced(clean_marker(item.prediction))}")
    parts.append(f"# Reference (real environment)\n\n{_fenced(item.view.ground_truth)}")
    return "\n\n".join(parts)


def judge_messages(item: JudgeItem, guidance: str = "") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(guidance)},
        {"role": "user", "content": user_prompt(item)},
    ]


def _score(value: Any, dim: str) -> int:
    if isinstance(value, bool):
        raise JudgeParseError(f"score {dim!r} is a boolean")
    if isinstance(value, str):
        head = value.split("/")[0].strip()
        try:
            value = float(head)
        except ValueError:
            raise JudgeParseError(f"score {dim!r} is not a number: {value!r}") from None
    if not isinstance(value, (int, float)) or value != value:  # NaN check
        raise JudgeParseError(f"score {dim!r} is not a number: {value!r}")
    return max(1, min(5, int(round(value))))


def _list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [value] if isinstance(value, str) and value else []


def parse_final_evaluation(text: str) -> tuple[dict[str, int], list[str], list[str]]:
    """``(scores, strengths, weaknesses)`` from a judge answer; raises :class:`JudgeParseError`."""
    from awctl.sim.parse import strip_reasoning

    body, _ = strip_reasoning(text or "")
    starts = list(_OPEN.finditer(body))
    if not starts:
        raise JudgeParseError(f"no <{TAG}> block")
    start = starts[-1].end()
    close = _CLOSE.search(body, start)
    block = body[start : close.start() if close else len(body)].strip()
    fences = _FENCE.findall(block)
    candidate = fences[-1].strip() if fences else block
    if not candidate.startswith("{"):
        first = candidate.find("{")
        candidate = candidate[first:] if first >= 0 else candidate
    try:
        obj, _ = json.JSONDecoder().raw_decode(candidate)
    except json.JSONDecodeError as exc:
        raise JudgeParseError(f"<{TAG}> does not hold valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("scores"), dict):
        raise JudgeParseError(f"<{TAG}> JSON has no 'scores' object")
    missing = [d for d in SCORE_DIMENSIONS if d not in obj["scores"]]
    if missing:
        raise JudgeParseError(f"'scores' lacks {', '.join(missing)}")
    scores = {d: _score(obj["scores"][d], d) for d in SCORE_DIMENSIONS}
    return scores, _list(obj.get("strengths")), _list(obj.get("weaknesses"))


class LLMJudge(Judge):
    """Judges with a chat model; all items of a call go to the backend as one batch, retries batched too."""

    name = "llm"

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        backend_name: str = "openai",
        backend_options: dict[str, Any] | None = None,
        max_retries: int = 3,
        max_tokens: int = 4096,
        temperature: float = 0.6,
        domains: Mapping[str, Domain] | None = None,
        build_backend: Callable[..., Backend] | None = None,
    ) -> None:
        if backend is None:
            if build_backend is None:
                raise AwctlError("the llm judge needs a backend", hint="pass backend=... or build_backend=...")
            backend = build_backend(backend_name, **(backend_options or {}))
        self.backend = backend
        self.max_retries = max(1, int(max_retries))
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.domains = domains or {}

    def guidance(self, domain: str) -> str:
        found = self.domains.get(domain)
        return found.judge_guidance if found is not None else ""

    def judge(self, items: list[JudgeItem]) -> list[Judgement]:
        results: list[Judgement | None] = [None] * len(items)
        last_error = ["Judge scoring failed"] * len(items)
        last_raw = [""] * len(items)
        todo = []
        for i, item in enumerate(items):
            if _MANIPULATION.search(item.prediction):
                results[i] = Judgement(
                    scores=dict.fromkeys(SCORE_DIMENSIONS, 1),
                    weaknesses=[f"the prediction contains a <{TAG}> tag: an attempt to manipulate the judge"],
                    details={"manipulation": True},
                )
            else:
                todo.append(i)
        for _ in range(self.max_retries):
            if not todo:
                break
            requests = [
                ChatRequest(
                    judge_messages(items[i], self.guidance(items[i].domain)), max_tokens=self.max_tokens, temperature=self.temperature
                )
                for i in todo
            ]
            try:
                outputs = self.backend.generate(requests)
            except Exception as exc:  # a failed call is retried like an unparsable answer
                for i in todo:
                    last_error[i] = f"Judge call failed: {type(exc).__name__}: {exc}"
                continue
            again = []
            for i, completions in zip(todo, outputs, strict=True):
                raw = completions[0].text if completions else ""
                last_raw[i] = raw
                try:
                    scores, strengths, weaknesses = parse_final_evaluation(raw)
                except JudgeParseError as exc:
                    last_error[i] = f"Judge scoring failed: {exc}"
                    again.append(i)
                    continue
                results[i] = Judgement(
                    scores=scores, strengths=strengths, weaknesses=weaknesses, raw_output=raw
                )
            todo = again
        return [
            r if r is not None else Judgement.failure(last_error[i], last_raw[i])
            for i, r in enumerate(results)
        ]

    def close(self) -> None:
        self.backend.close()


def llm_judge(
    domains: Mapping[str, Domain] | None = None, build_backend: Callable[..., Backend] | None = None, **options: Any
) -> LLMJudge:
    """Factory registered as the ``llm`` judge: ``backend`` (a Backend) or ``backend_name``/``backend_options``
    (built with ``build_backend``, which the registry passes)."""
    return LLMJudge(domains=domains, build_backend=build_backend, **options)
