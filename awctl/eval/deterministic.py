"""A reference-grounded judge that needs no model: ``awctl eval judge --judge deterministic``.

It compares a predicted observation with the recorded one and maps a few measurable signals onto the
same five 1–5 dimensions the LLM judge uses. The rules are documented (with a table) in
docs/evaluation.md; in short:

Signals
  ``exact``      equal after the domain codec's ``normalize`` and the runtime-metadata masks below
  ``similarity`` mean of the multiset line F1 and the character ratio of the masked texts (0..1)
  ``metadata``   agreement of the sequences of masked runtime-metadata kinds (1 = same kinds, same order)
  ``verifiers``  of the domain verifiers that pass on the reference, the fraction that pass on the
                 prediction (1 when none applies)
  ``parse``      the prediction parses with the domain's observation codec (only counted when the
                 reference does)
  ``output``     diagnostics of the raw generation (:func:`awctl.sim.parse.parse_output`): missing or
                 unclosed tags, text after the closing tag, speculative wording, empty output

Runtime metadata (timestamps, clock times, UUIDs, hex ids and addresses, durations, PIDs) may differ
between two faithful runs, so each is replaced by a ``<KIND>`` token before comparison: values may
differ, but the kind and its position must agree (a malformed id is no longer masked as one).

A perfect copy of the reference scores 5 on every dimension; documented corruptions (dropped lines,
changed digits, broken format, malformed ids) lower the scores monotonically with their amount
(``tests/test_eval_deterministic.py``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from difflib import SequenceMatcher
from typing import Any

from awctl.domain import Domain, ObservationCodec, verifier_credit
from awctl.eval import SCORE_DIMENSIONS
from awctl.eval.judging import Judge, JudgeItem, Judgement
from awctl.formats.agentworldbench import OBSERVATION_MARKER
from awctl.trajectory import Trajectory

# Order matters: specific shapes first (a UUID contains hex runs, a timestamp contains a clock time).
METADATA_PATTERNS: tuple[tuple[str, str], ...] = (
    ("TIMESTAMP", r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\s?UTC)?"),
    (
        "TIMESTAMP",
        r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
        r"[a-z]* \d{4} \d{2}:\d{2}:\d{2}(?: ?(?:GMT|UTC|[+-]\d{4}))?",
    ),
    ("TIMESTAMP", r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +(?:\d{2}:\d{2}|\d{4})\b"),
    ("UUID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("TIME", r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"),
    ("HEX", r"\b0x[0-9a-fA-F]+\b"),
    ("HEX", r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"),
    ("DURATION", r"\b\d+m\d+(?:\.\d+)?s\b"),
    ("DURATION", r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?)\b"),
    ("PID", r"(?<=\b[Pp][Ii][Dd][ =:])\s*\d+"),
    ("PID", r"(?m)(?<=^\[\d\] )\d+$"),
)
_MASKS = [(kind, re.compile(p)) for kind, p in METADATA_PATTERNS]
_TOKEN = re.compile(r"<(TIMESTAMP|UUID|TIME|HEX|DURATION|PID)>")
CHAR_RATIO_LIMIT = 20_000  # characters (both texts); above it only the line F1 is used (difflib is quadratic)


def mask_metadata(text: str) -> str:
    """``text`` with runtime-metadata values replaced by ``<KIND>`` tokens."""
    for kind, pattern in _MASKS:
        text = pattern.sub(f"<{kind}>", text)
    return text


def metadata_kinds(masked: str) -> list[str]:
    return _TOKEN.findall(masked)


def line_f1(a: list[str], b: list[str]) -> float:
    """Multiset F1 of two line lists (1.0 when both are empty)."""
    if not a and not b:
        return 1.0
    common = sum((Counter(a) & Counter(b)).values())
    return 2 * common / (len(a) + len(b))


def similarity(a: str, b: str) -> float:
    """Mean of line F1 and difflib's character ratio (line F1 alone for very long texts)."""
    f1 = line_f1(a.splitlines(), b.splitlines())
    if len(a) + len(b) > CHAR_RATIO_LIMIT:
        return f1
    return (f1 + SequenceMatcher(None, a, b, autojunk=False).ratio()) / 2


def _bucket(value: float, cuts: tuple[float, float, float]) -> int:
    """4, 3, 2 or 1 for ``value`` at or above each cut in turn."""
    for score, cut in zip((4, 3, 2), cuts, strict=True):
        if value >= cut - 1e-12:
            return score
    return 1


def _parses(codec: ObservationCodec | None, text: str) -> bool | None:
    if codec is None:
        return None
    try:
        codec.parse(text)
    except Exception:  # any parse failure is a format signal, never an error of the judge
        return False
    return True


def decode_candidate(domain: Domain | None, prediction: str) -> str:
    """A prediction as the domain's observation text: marker removed, then ``from_awb_observation``."""
    text = prediction
    if text.startswith(OBSERVATION_MARKER):
        text = text[len(OBSERVATION_MARKER) :]
        text = text[1:] if text.startswith("\n") else text.lstrip()
    else:
        text = text.replace(OBSERVATION_MARKER, "")
    if domain is not None:
        try:
            out = domain.from_awb_observation(text)
            text = out if isinstance(out, str) else text
        except Exception:  # a failing hook means "no opinion"
            pass
    return text


def comparable(domain: Domain | None, text: str) -> str:
    """``text`` as exact match compares it: the domain codec's ``normalize``, then runtime metadata masked."""
    codec = domain.observation_codec if domain is not None else None
    return mask_metadata(codec.normalize(text) if codec is not None else _default_normalize(text))


def compare(
    domain: Domain | None,
    reference: str,
    candidate: str,
    *,
    trajectory: Trajectory | None = None,
    index: int | None = None,
    output_diagnostics: Mapping[str, Any] | None = None,
) -> Judgement:
    """Score ``candidate`` against ``reference`` (both domain observation texts) on the five dimensions.

    ``trajectory``/``index`` locate the turn for the domain's verifiers (skipped without them);
    ``output_diagnostics`` are the raw generation's :func:`awctl.sim.parse.parse_output` diagnostics.
    """
    codec = domain.observation_codec if domain is not None else None
    ref_m, cand_m = comparable(domain, reference), comparable(domain, candidate)
    exact = ref_m == cand_m
    sim = 1.0 if exact else similarity(ref_m, cand_m)
    ref_kinds, cand_kinds = metadata_kinds(ref_m), metadata_kinds(cand_m)
    meta = (
        1.0
        if ref_kinds == cand_kinds
        else SequenceMatcher(None, ref_kinds, cand_kinds, autojunk=False).ratio()
    )

    ref_parses, cand_parses = _parses(codec, reference), _parses(codec, candidate)
    parse_broken = bool(ref_parses) and cand_parses is False

    verifier_rate, regressions, abstained = 1.0, [], 0
    if domain is not None and trajectory is not None and index is not None:
        try:
            credit = verifier_credit(domain, trajectory, index, candidate, reference)
        except Exception:  # a domain whose verifiers cannot even be listed: judge without them
            credit = None
        if credit is not None and credit.rate is not None:
            # A verifier that applied to the reference and abstains on the prediction is a regression.
            verifier_rate, regressions, abstained = credit.rate, credit.failed, credit.abstained

    diag = dict(output_diagnostics or {})
    empty = not candidate.strip() or bool(diag.get("empty"))
    tag_defect = bool(diag) and (
        not diag.get("tagged", True)
        or diag.get("unclosed_observation")
        or diag.get("unclosed_think")
        or diag.get("trailing_chars", 0) > 0
    )
    ref_phrases = set(_speculative(reference))
    speculative = [p for p in _speculative(candidate) if p not in ref_phrases]

    ref_lines, cand_lines = ref_m.splitlines(), cand_m.splitlines()
    line_ratio = _ratio(len(ref_lines), len(cand_lines))
    length_ratio = _ratio(len(ref_m), len(cand_m))

    weaknesses: list[str] = []
    fmt = 5
    if parse_broken:
        fmt -= 2
        weaknesses.append("does not parse as this domain's observation format")
    if meta < 1:
        fmt -= 1
        weaknesses.append(f"runtime metadata differs in kind or format ({ref_kinds} vs {cand_kinds})")
    if tag_defect:
        fmt -= 1
        weaknesses.append("output tags missing, unclosed or followed by extra text")
    if len(ref_lines) >= 2 and line_ratio < 0.5:
        fmt -= 1
        weaknesses.append(f"line structure differs ({len(cand_lines)} lines vs {len(ref_lines)})")

    factuality = 5 if exact else _bucket(sim, (0.95, 0.8, 0.5))
    consistency = (
        5
        if exact and verifier_rate == 1
        else min(4, _bucket(verifier_rate * meta, (1.0, 0.75, 0.5)), factuality + 1)
    )
    if regressions:
        weaknesses.append(f"verifiers that pass on the reference fail: {', '.join(regressions)}")

    realism = 5
    if speculative:
        realism -= 2
        weaknesses.append(f"speculative wording: {', '.join(speculative[:3])}")
    if parse_broken:
        realism -= 1
    if meta < 1:
        realism -= 1
    if length_ratio < 0.5:
        realism -= 1
    if empty and reference.strip():
        fmt = realism = factuality = consistency = 1
        weaknesses.append("empty prediction")

    # Structure and realism cannot outscore the content by more than a point: a cut-down observation that
    # happens to parse again must not climb back above a less damaged one.
    dims = {
        "format": max(1, min(fmt, factuality + 1)),
        "factuality": factuality,
        "consistency": consistency,
        "realism": max(1, min(realism, factuality + 1)),
    }
    quality = 5 if all(v == 5 for v in dims.values()) else min(4, math.floor(sum(dims.values()) / 4))
    scores = {**dims, "quality": max(1, quality)}
    strengths = []
    if exact:
        strengths.append("matches the reference exactly (after normalisation and metadata masking)")
    if not regressions and verifier_rate == 1 and domain is not None and trajectory is not None:
        strengths.append("passes every verifier the reference passes")
    details = {
        "exact": exact,
        "similarity": round(sim, 4),
        "metadata": round(meta, 4),
        "verifier_rate": round(verifier_rate, 4),
        "verifier_regressions": regressions,
        "verifier_abstained": abstained,
        "parse": cand_parses,
        "reference_parses": ref_parses,
        "speculative": speculative,
        "tag_defect": tag_defect,
        "empty": empty,
    }
    return Judgement(
        scores={d: scores[d] for d in SCORE_DIMENSIONS},
        strengths=strengths,
        weaknesses=weaknesses,
        raw_output="",
        details=details,
    )


def _default_normalize(text: str) -> str:
    # The base codec's rule, for domains no plugin registered (e.g. AWB's android/web/os here).
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _ratio(a: int, b: int) -> float:
    if a == b:
        return 1.0
    return min(a, b) / max(a, b)


def _speculative(text: str) -> list[str]:
    from awctl.sim.parse import speculative_phrases

    return [p.lower() for p in speculative_phrases(text, limit=20)]


class DeterministicJudge(Judge):
    """Judges AWB prediction rows with :func:`compare`, running the domain's verifiers on the turn."""

    name = "deterministic"

    def __init__(self, domains: Mapping[str, Domain]) -> None:
        self.domains = domains

    def judge(self, items: list[JudgeItem]) -> list[Judgement]:
        return [self._one(item) for item in items]

    def _one(self, item: JudgeItem) -> Judgement:
        from awctl.formats.agentworldbench import rows_to_trajectories
        from awctl.sim.parse import parse_output

        domain = self.domains.get(item.domain)
        try:
            traj = next(iter(rows_to_trajectories([item.row], self.domains)))
        except Exception as exc:  # a row the converter rejects is a failed judgement, not a crash
            return Judgement.failure(f"row cannot be read as a trajectory: {exc}")
        t = item.view.turn
        if t < len(traj.turns):
            reference = traj.turns[t].observation
            index: int | None = t
        else:
            reference, index = decode_candidate(domain, item.view.ground_truth_raw), None
        candidate = decode_candidate(domain, item.prediction)
        diagnostics = parse_output(item.gen).diagnostics if item.gen else None
        return compare(
            domain,
            reference,
            candidate,
            trajectory=traj if index is not None else None,
            index=index,
            output_diagnostics=diagnostics,
        )


def deterministic_judge(domains: Mapping[str, Domain]) -> DeterministicJudge:
    """Factory registered as the ``deterministic`` judge (the registry passes its domains)."""
    return DeterministicJudge(domains)
