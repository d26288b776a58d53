"""Parsing a world model's raw output into the observation an agent sees, plus per-turn diagnostics.

A simulator is asked to think inside ``<think>…</think>`` and to answer inside
``<predicted_observation>…</predicted_observation>``. Real models break that format in predictable ways
(an unclosed ``<think>``, a chat template that opens ``<think>`` in the prompt so only ``</think>``
appears, several observation blocks, text after the closing tag, no tags at all), so :func:`parse_output`
is total: it never raises, always returns an observation (possibly empty) and records what it had to
repair in ``diagnostics``.

Rules, in order:

1. Reasoning: every closed ``<think>…</think>`` block is removed and kept as reasoning. A ``</think>``
   without an opening tag means the template opened it: everything before it is reasoning. An unclosed
   ``<think>`` runs up to the next ``<predicted_observation>`` tag, or to the end of the text.
2. Observation: the content of the *last* ``<predicted_observation>`` block; an unclosed last block runs
   to the end of the text. Without any start tag, text before a stray end tag is used; without any tag
   at all, the whole remaining text is the observation (``diagnostics["tagged"]`` is then False).
3. A leading ``**Environment Observation:**`` marker (the AgentWorldBench response prefix, which models
   trained on AWB targets emit inside the tags) is removed by :func:`awctl.sim.env.SimEnv`, not here,
   because it is the domain's codec that decodes it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from awctl.prompts import OBSERVATION_TAG

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
OBS_OPEN, OBS_CLOSE = f"<{OBSERVATION_TAG}>", f"</{OBSERVATION_TAG}>"

# Hedged wording a faithful environment never prints: a simulator that writes "the output would likely
# be…" is describing instead of simulating. Word-bounded, case-insensitive.
SPECULATIVE_PATTERNS: tuple[str, ...] = (
    r"\bwould (?:likely |probably )?(?:be|show|return|display|output|print|contain)\b",
    r"\b(?:probably|possibly|presumably|perhaps|maybe)\b",
    r"\bit (?:seems|appears) (?:that|like)\b",
    r"\bI (?:think|assume|expect|believe|would)\b",
    r"\blet'?s assume\b",
    r"\bmight (?:be|show|return|look)\b",
    r"\bsimulat(?:ed|ing|e) (?:output|response|observation)\b",
)
_SPECULATIVE = re.compile("|".join(f"(?:{p})" for p in SPECULATIVE_PATTERNS), re.IGNORECASE)


@dataclass
class ParsedOutput:
    """The observation extracted from one raw output, the reasoning removed from it, and diagnostics.

    ``diagnostics`` keys (always all present): ``think_open``, ``think_close``, ``obs_open``,
    ``obs_close`` (tag counts in the raw text), ``unclosed_think``, ``unclosed_observation``, ``tagged``
    (an observation tag was found), ``empty`` (the observation is blank), ``trailing_chars`` (non-blank
    characters after the last closing observation tag), ``output_chars``, ``observation_chars``,
    ``speculative`` (hedged wording found) and ``speculative_phrases`` (up to five matches).
    """

    observation: str
    reasoning: str | None
    diagnostics: dict[str, Any] = field(default_factory=dict)


def strip_reasoning(text: str, reasoning: str | None = None) -> tuple[str, str | None]:
    """``(text without reasoning, reasoning)``. ``reasoning`` given by the backend is kept first."""
    parts: list[str] = [reasoning.strip()] if reasoning and reasoning.strip() else []
    # A close tag before any open tag: the chat template opened the block inside the prompt.
    first_close, first_open = text.find(THINK_CLOSE), text.find(THINK_OPEN)
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        parts.append(text[:first_close].strip())
        text = text[first_close + len(THINK_CLOSE) :]
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(THINK_OPEN, pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        body_start = start + len(THINK_OPEN)
        end = text.find(THINK_CLOSE, body_start)
        if end < 0:
            # Unclosed: the reasoning ends where the answer visibly begins, else at the end of the text.
            obs = text.find(OBS_OPEN, body_start)
            stop = obs if obs >= 0 else len(text)
            parts.append(text[body_start:stop].strip())
            pos = stop
            if obs < 0:
                break
            continue
        parts.append(text[body_start:end].strip())
        pos = end + len(THINK_CLOSE)
    remaining = "".join(out).replace(THINK_CLOSE, "")
    kept = [p for p in parts if p]
    return remaining, ("\n\n".join(kept) if kept else None)


def _trim_block(text: str) -> str:
    # Tags are usually written on their own lines; drop exactly those line breaks, keep inner spacing.
    if text.startswith("\r\n"):
        text = text[2:]
    elif text.startswith("\n"):
        text = text[1:]
    return text.rstrip()


def extract_observation(text: str) -> tuple[str, dict[str, Any]]:
    """The last observation block of reasoning-free ``text`` and the extraction diagnostics."""
    diag: dict[str, Any] = {"tagged": True, "unclosed_observation": False, "trailing_chars": 0}
    start = text.rfind(OBS_OPEN)
    if start >= 0:
        body_start = start + len(OBS_OPEN)
        end = text.find(OBS_CLOSE, body_start)
        if end < 0:
            diag["unclosed_observation"] = True
            return _trim_block(text[body_start:]), diag
        diag["trailing_chars"] = len(text[end + len(OBS_CLOSE) :].strip())
        return _trim_block(text[body_start:end]), diag
    end = text.rfind(OBS_CLOSE)
    if end >= 0:
        diag["trailing_chars"] = len(text[end + len(OBS_CLOSE) :].strip())
        before = text[:end]
        prev = before.rfind(OBS_CLOSE)  # several stray close tags: the last segment is the answer
        return _trim_block(before[prev + len(OBS_CLOSE) :] if prev >= 0 else before.strip()), diag
    diag["tagged"] = False
    return text.strip(), diag


def speculative_phrases(text: str, limit: int = 5) -> list[str]:
    """Hedged phrases found in ``text`` (at most ``limit``), in order of appearance."""
    return [m.group(0) for m in itertools.islice(_SPECULATIVE.finditer(text), limit)]


def parse_output(text: str, reasoning: str | None = None) -> ParsedOutput:
    """Parse one raw completion (``reasoning``: what the backend returned separately, if anything)."""
    text = text or ""
    body, thought = strip_reasoning(text, reasoning)
    observation, diag = extract_observation(body)
    phrases = speculative_phrases(observation)
    diag.update(
        think_open=text.count(THINK_OPEN),
        think_close=text.count(THINK_CLOSE),
        obs_open=text.count(OBS_OPEN),
        obs_close=text.count(OBS_CLOSE),
        unclosed_think=text.count(THINK_OPEN) > text.count(THINK_CLOSE),
        empty=not observation.strip(),
        output_chars=len(text),
        observation_chars=len(observation),
        speculative=bool(phrases),
        speculative_phrases=phrases,
    )
    return ParsedOutput(observation, thought, diag)
