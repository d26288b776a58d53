"""Turn-level information-theoretic loss masking for continued pre-training (CPT).

Not every observation token teaches a world model the same amount: an echoed command or a repeated banner
is free to predict, a file's new contents is not. For every (action, observation) pair each observation
line (a span; its tokens share its category) is measured against the action and the trajectory so far:

* ``overlap``  — share of the line's word n-grams present in the action or the history (system prompt,
  earlier actions and observations);
* ``novelty``  — share of the line's n-grams not seen anywhere earlier in the trajectory, including the
  action and the earlier lines of the same observation;
* ``jaccard``  — Jaccard similarity of the line's and the action's word sets;
* ``length_ratio`` — words in the line / words in the action;
* ``word_novelty`` — share of the line's words (not n-grams) never seen before: separates new facts
  from known words in a new order;
* ``overlap_action`` — share of the line's words (letters/digits) that are arguments of the action
  (its words after the first, the command or tool name).

and put in one of seven categories, first rule that matches wins (docs/masking.md has worked examples):

1. ``boilerplate`` — no letter or digit (separators, braces, blank lines);
2. ``echo`` — the line restates the action: its text is contained in the action, or
   ``jaccard >= echo_jaccard`` with ``length_ratio`` within ``echo_length_ratio``;
3. ``error`` — an error or status line (``Error``, ``Traceback``, ``No such file``, ``exit code 2``,
   ``HTTP 404``...): rare and decisive feedback a simulator must get right, kept in full by default;
4. ``boilerplate`` — a short line (≤ ``boilerplate_max_words``) that appeared verbatim in an earlier
   observation (prompts, headers, banners the environment repeats);
5. ``action`` — ``overlap_action >= action_overlap``: the direct effect of the action, built from its
   arguments (``Created foo.py``, a tool result naming the queried entity);
6. ``expansion`` — ``novelty >= expansion_novelty`` and ``word_novelty >= expansion_word_novelty`` (share
   of the line's words never seen before): new information the environment reveals;
7. ``retrieval`` — ``overlap >= retrieval_overlap``: content recalled from the history (a file written
   earlier, the initial state) — the state-consistency skill;
8. ``transform`` — anything else: known pieces recombined (reformatted, sorted, summarised).

Each span is kept in the loss with its category's probability (retrieval/expansion/action/error 1.0,
transform 0.5, boilerplate 0.1, echo 0.05 by default). The decision is a seeded hash of
``(seed, trajectory id, turn, span)``, so it is reproducible and independent of order and sharding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from awctl.trajectory import Trajectory

CATEGORIES: tuple[str, ...] = (
    "retrieval",
    "expansion",
    "action",
    "transform",
    "boilerplate",
    "echo",
    "error",
)
CATEGORY_IDS: dict[str, int] = {name: i for i, name in enumerate(CATEGORIES)}

DEFAULT_KEEP: dict[str, float] = {
    "retrieval": 1.0,
    "expansion": 1.0,
    "action": 1.0,
    "transform": 0.5,
    "boilerplate": 0.1,
    "echo": 0.05,
    "error": 1.0,
}

_WORD = re.compile(r"\w+|[^\w\s]")
_ALNUM = re.compile(r"[^\W_]")
_SPACE = re.compile(r"\s+")
_ERROR = re.compile(
    r"(\b(?!is_?error\b)\w*(error|exception)\b|\b(errno|traceback|fatal|failed|failure|denied|refused|invalid|cannot|"
    r"unable|panic|segmentation fault|timed out|timeout|not found|no such|permission|warning|forbidden|"
    r"unauthorized|aborted|killed)\b|\bexit (code|status) [1-9]\d*|\bHTTP/?\d?(\.\d)? [45]\d\d\b|"
    r"\bstatus(code)?[:= ]+[45]\d\d\b|can't|couldn't|\"(isError|is_error)\": ?true)",
    re.IGNORECASE,
)
# Words one of which every _ERROR match contains: lines without any skip the regex (most lines).
_ERROR_TRIGGERS = frozenset(
    [
        "errno",
        "traceback",
        "fatal",
        "failed",
        "failure",
        "denied",
        "refused",
        "invalid",
        "cannot",
        "unable",
        "panic",
        "segmentation",
        "timed",
        "timeout",
        "not",
        "no",
        "permission",
        "warning",
        "forbidden",
        "unauthorized",
        "aborted",
        "killed",
        "exit",
        "status",
        "statuscode",
        "http",
        "can",
        "couldn",
    ]
)


# A word ending in "error"/"exception": words are maximal \w+ runs, so this is one followed by a non-word.
_ERROR_SUFFIX = re.compile(r"(error|exception)(?!\w)")


def _is_error_line(line: str, lower: str, words: list[str]) -> bool:
    """``_ERROR`` matches ``line``; ``lower`` and ``words`` (its lower-cased text and words) skip the
    regex for the many lines that hold no trigger word and no word ending in error/exception."""
    if _ERROR_TRIGGERS.isdisjoint(words) and _ERROR_SUFFIX.search(lower) is None:
        return False
    return _ERROR.search(line) is not None


class MaskConfig(BaseModel):
    """Keep probabilities per category and the classification thresholds (all configurable)."""

    model_config = ConfigDict(extra="forbid")

    keep: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_KEEP))
    ngram: int = Field(3, ge=1, le=8)
    echo_jaccard: float = 0.6
    echo_length_ratio: tuple[float, float] = (0.5, 2.0)
    boilerplate_max_words: int = 12
    action_overlap: float = 0.3
    expansion_novelty: float = 0.6
    expansion_word_novelty: float = 0.25
    retrieval_overlap: float = 0.6

    @field_validator("keep")
    @classmethod
    def _full_keep(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown masking categories {sorted(unknown)}; known: {list(CATEGORIES)}")
        bad = {k: v for k, v in value.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"keep probabilities must be within [0, 1], got {bad}")
        return {**DEFAULT_KEEP, **value}


@dataclass
class SpanLabel:
    """One observation line ``[start, end)`` (character offsets into the observation, newline included)."""

    start: int
    end: int
    category: str
    kept: bool
    features: dict[str, float] = field(default_factory=dict, compare=False)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _grams(words: list[str], n: int) -> set[Any]:
    """Word n-grams (tuples) of order ``n``; a line shorter than ``n`` words gives its words (strings)."""
    if len(words) < n or n == 1:
        return set(words)
    return set(zip(*[words[k:] for k in range(n)], strict=False))


def _words_and_grams(words: list[str], n: int) -> set[Any]:
    """The words (strings) and, when there are at least ``n``, the order-``n`` n-grams (tuples) of a
    text: what the history remembers of it, so that a later line of any length can be looked up.
    Strings and tuples never compare equal, so one set holds both."""
    found: set[Any] = set(words)
    if n > 1 and len(words) >= n:
        found.update(zip(*[words[k:] for k in range(n)], strict=False))
    return found


def split_lines(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each line of ``text``, the newline belonging to the line it ends."""
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((start, start + len(line)))
        start += len(line)
    return spans


class _Line:
    """What the rules need from one observation line, computed once: its text, the text with whitespace
    collapsed, its words, its n-grams (words when shorter than ``n``) and its alphanumeric words (a
    ``_WORD`` token is ``\\w+`` or one punctuation mark, so its first character decides)."""

    __slots__ = ("alnum", "grams", "lower", "normalized", "text", "words")

    def __init__(self, text: str, n: int) -> None:
        self.text = text
        self.lower = text.lower()
        self.normalized = " ".join(text.split())
        self.words = _WORD.findall(self.lower)  # = _words(text)
        self.grams = _grams(self.words, n)
        self.alnum = [w for w in self.words if w[0].isalnum()]


class _TurnView:
    """What the rules need from one action, computed once per turn."""

    def __init__(self, action: str, n: int) -> None:
        self.words = _words(action)
        self.word_set = set(self.words)
        self.n_words = max(1, len(self.words))
        self.args = {w for w in self.words[1:] if w[0].isalnum()}
        self.normalized = _SPACE.sub(" ", action)
        self.grams = _words_and_grams(self.words, n)


class InfoMaskPolicy:
    """Classifies observation spans and decides which stay in the loss (see the module docstring)."""

    def __init__(self, config: MaskConfig | None = None, seed: int = 0) -> None:
        self.config = config or MaskConfig()
        self.seed = seed

    def _category(
        self, line: _Line, turn: _TurnView, history: set[Any], local: set[Any], earlier_obs_lines: set[str]
    ) -> str:
        """The rules of the module docstring, in order; each feature is computed only when its rule is
        reached. ``history`` holds the system prompt and the earlier turns, ``local`` this turn's action
        plus the earlier lines of this observation."""
        cfg = self.config
        words, grams, alnum = line.words, line.grams, line.alnum
        if not alnum:
            return "boilerplate"
        if line.normalized in turn.normalized:
            return "echo"
        lo, hi = cfg.echo_length_ratio
        if lo <= len(words) / turn.n_words <= hi and _jaccard(words, turn.word_set) >= cfg.echo_jaccard:
            return "echo"
        if _is_error_line(line.text, line.lower, words):
            return "error"
        if len(words) <= cfg.boilerplate_max_words and line.normalized in earlier_obs_lines:
            return "boilerplate"
        # map(set.__contains__) counts repeated words, as a share of the line's words must.
        if sum(map(turn.args.__contains__, alnum)) / len(alnum) >= cfg.action_overlap:
            return "action"
        n_grams = len(grams) or 1
        in_history = grams & history
        if 1.0 - len(in_history | (grams & local)) / n_grams >= cfg.expansion_novelty:
            word_novelty = sum(1 for w in alnum if w not in history and w not in local) / len(alnum)
            if word_novelty >= cfg.expansion_word_novelty:
                return "expansion"
        if len(in_history | (grams & turn.grams)) / n_grams >= cfg.retrieval_overlap:
            return "retrieval"
        return "transform"

    @staticmethod
    def _features(line: _Line, turn: _TurnView, history: set[Any], local: set[Any]) -> dict[str, float]:
        """Every feature of one line (for reports and docs; the rules compute only what they need)."""
        words, grams, alnum = line.words, line.grams, line.alnum
        n_grams, n_alnum = len(grams) or 1, len(alnum) or 1
        in_history = grams & history
        feats = {
            "overlap": len(in_history | (grams & turn.grams)) / n_grams,
            "novelty": (1.0 - len(in_history | (grams & local)) / n_grams) if grams else 0.0,
            "jaccard": _jaccard(words, turn.word_set),
            "length_ratio": len(words) / turn.n_words,
            "overlap_action": sum(1 for w in alnum if w in turn.args) / n_alnum,
            "overlap_history": len(in_history) / n_grams,
            "word_novelty": sum(1 for w in alnum if w not in history and w not in local) / n_alnum,
        }
        return {k: round(v, 4) for k, v in feats.items()}

    def label(
        self, traj: Trajectory, system_text: str | None = None, with_features: bool = False
    ) -> list[list[SpanLabel]]:
        """Span labels of every turn's observation; ``system_text`` defaults to the rendered sections.
        ``with_features`` fills each label's ``features`` (for reports and docs; prep leaves it off).

        One pass over the trajectory: the history's word/n-gram set grows turn by turn (never rebuilt),
        and each line's words and n-grams are computed once and shared by every rule that needs them.
        """
        cfg = self.config
        keep, n = cfg.keep, cfg.ngram
        # The system prompt + earlier actions and observations.
        history = _words_and_grams(
            _words(system_text if system_text is not None else traj.system.render()), n
        )
        earlier_obs_lines: set[str] = set()
        # A line's words and n-grams depend on its text alone; screens and listings repeat lines.
        known_lines: dict[str, _Line] = {}
        out: list[list[SpanLabel]] = []
        draw = _KeepDraw(self.seed, traj.id)
        for t_index, turn in enumerate(traj.turns):
            view = _TurnView(turn.action, n)
            local = set(view.grams)  # this action + the earlier lines of this observation
            labels = []
            start = 0
            lines = []
            for text in turn.observation.splitlines(keepends=True):
                line = known_lines.get(text)
                if line is None:
                    line = known_lines[text] = _Line(text, n)
                lines.append(line)
            for s_index, line in enumerate(lines):
                cat = self._category(line, view, history, local, earlier_obs_lines)
                feats = self._features(line, view, history, local) if with_features else {}
                end = start + len(line.text)
                # Probabilities 0 and 1 need no draw: u < p is decided whatever u in [0, 1) is.
                p = keep[cat]
                kept = p >= 1.0 or (p > 0.0 and draw(t_index, s_index) < p)
                labels.append(SpanLabel(start, end, cat, kept, feats))
                start = end
                local |= line.grams
                if len(line.words) >= n:
                    local.update(line.words)
            out.append(labels)
            history |= local
            earlier_obs_lines.update(line.normalized for line in lines)
        return out


def _jaccard(words: list[str], other: set[str]) -> float:
    mine = set(words)
    union = len(mine | other)
    return len(mine & other) / union if union else 0.0


class _KeepDraw:
    """``u`` in [0, 1) from BLAKE2b(seed, trajectory id, turn, span); the prefix is hashed once."""

    def __init__(self, seed: int, traj_id: str) -> None:
        self._prefix = hashlib.blake2b(f"{seed}\x00{traj_id}\x00".encode(), digest_size=8)

    def __call__(self, turn: int, span: int) -> float:
        h = self._prefix.copy()
        h.update(f"{turn}\x00{span}".encode())
        return int.from_bytes(h.digest(), "big") / 2**64


@dataclass
class MaskReport:
    """Per-category counts over a run: spans, tokens, kept tokens; merged across shards by addition."""

    spans: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    kept_spans: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    kept_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))

    def add_spans(self, labels: Iterable[SpanLabel]) -> None:
        for lab in labels:
            self.spans[lab.category] += 1
            self.kept_spans[lab.category] += int(lab.kept)

    def add_tokens(self, category: str, tokens: int, kept: int) -> None:
        self.tokens[category] += tokens
        self.kept_tokens[category] += kept

    def merge(self, other: MaskReport) -> None:
        for table in ("spans", "kept_spans", "tokens", "kept_tokens"):
            mine, theirs = getattr(self, table), getattr(other, table)
            for k in CATEGORIES:
                mine[k] += theirs.get(k, 0)

    def to_dict(self, keep: dict[str, float] | None = None) -> dict[str, Any]:
        total = sum(self.tokens.values()) or 1
        rows = {}
        for k in CATEGORIES:
            rows[k] = {
                "spans": self.spans[k],
                "kept_spans": self.kept_spans[k],
                "tokens": self.tokens[k],
                "kept_tokens": self.kept_tokens[k],
                "token_share": round(self.tokens[k] / total, 6),
                "kept_share": round(self.kept_tokens[k] / self.tokens[k], 6) if self.tokens[k] else None,
                "kept_span_share": round(self.kept_spans[k] / self.spans[k], 6) if self.spans[k] else None,
            }
            if keep is not None:
                rows[k]["target"] = keep[k]
        return {
            "categories": rows,
            "tokens": sum(self.tokens.values()),
            "kept_tokens": sum(self.kept_tokens.values()),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MaskReport:
        rep = cls()
        for k, row in data.get("categories", {}).items():
            if k in CATEGORIES:
                rep.spans[k] = row["spans"]
                rep.kept_spans[k] = row["kept_spans"]
                rep.tokens[k] = row["tokens"]
                rep.kept_tokens[k] = row["kept_tokens"]
        return rep
