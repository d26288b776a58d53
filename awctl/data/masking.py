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
import itertools
import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from awctl.data.config import CATEGORIES, CATEGORY_IDS, DEFAULT_KEEP, MaskConfig  # noqa: F401 - re-exported
from awctl.trajectory import Trajectory

_WORD = re.compile(r"\w+|[^\w\s]")
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


# The pre-filter of the error rule: only lines holding a trigger word or a word ending in one of these
# go through the ``_ERROR`` regex, and most lines hold none.
_ERROR_SUFFIXES = ("error", "exception")


@dataclass
class SpanLabel:
    """One observation line ``[start, end)`` (character offsets into the observation, newline included)."""

    start: int
    end: int
    category: str
    kept: bool
    features: dict[str, float] = field(default_factory=dict, compare=False)


def split_lines(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each line of ``text``, the newline belonging to the line it ends."""
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((start, start + len(line)))
        start += len(line)
    return spans


# A labelled line as prep consumes it: ``(start, end, category, kept)``, as in :class:`SpanLabel`.
SpanRow = tuple[int, int, str, bool]

# How the policy reads a batch of trajectories: as a stream of units (each system prompt, action and
# observation line in reading order), of three kinds.
_SYSTEM, _ACTION, _LINE = 0, 1, 2
# Words and unit ends in one pass: "\n" is the only token that is whitespace.
_WORD_OR_NEWLINE = re.compile(r"\w+|[^\w\s]|\n")
# Codes (products of ranks) are re-ranked before they could overflow int64.
_CODE_LIMIT = 1 << 62
# A table indexed by (trajectory, word) is used when it is at most this many times the batch's words.
_SPARSE = 4


class _Units:
    """The text of a batch of trajectories as units, with what the rules need from Python: the words
    of every unit in reading order, each unit ended by "\n" (whitespace, so never a word), the units'
    layout (each trajectory's system prompt, then per turn its action and its observation's lines, as
    groups of units) and, per observation line, its text and the two rules that compare whole lines
    (rule 2's containment in the action, rule 4's repeat)."""

    def __init__(self, items: Sequence[tuple[Trajectory, str | None]]) -> None:
        self.group_kinds: list[int] = []
        self.group_sizes: list[int] = []
        self.texts: list[str] = []  # per line
        self.echo: list[bool] = []  # per line: whitespace-collapsed, inside the action's
        self.repeated: list[bool] = []  # per line: as an earlier observation's line
        self.observations: list[tuple[int, int, int]] = []  # (item, turn, lines) per observation
        # The whole batch as one text with one unit per line: a prompt's or an action's own line ends
        # become spaces, an observation line's end (whatever str.splitlines takes for one) becomes
        # "\n". Whitespace is never part of a word, so each unit keeps its words; the text is
        # lower-cased and split into words in one call each.
        parts: list[str] = []
        for index, (traj, system_text) in enumerate(items):
            self._add_trajectory(parts, index, traj, system_text)
        self.tokens: list[str] = _WORD_OR_NEWLINE.findall("".join(parts).lower())

    def _add_trajectory(
        self, parts: list[str], index: int, traj: Trajectory, system_text: str | None
    ) -> None:
        kinds, sizes = self.group_kinds, self.group_sizes
        text = system_text if system_text is not None else traj.system.render()
        parts += (_one_line(text), "\n")
        kinds.append(_SYSTEM)
        sizes.append(1)
        earlier: set[str] = set()  # an earlier observation's lines, whitespace collapsed
        for t_index, turn in enumerate(traj.turns):
            lines = turn.observation.splitlines(keepends=True)
            parts += (_one_line(turn.action), "\n")
            if lines:
                parts += ("\n".join(turn.observation.splitlines()), "\n")
            kinds += (_ACTION, _LINE)
            sizes += (1, len(lines))
            collapsed = list(map(" ".join, map(str.split, lines)))
            # Rule 2: the line, whitespace runs collapsed, inside the action collapsed the same way.
            self.echo.extend(map(" ".join(turn.action.split()).__contains__, collapsed))
            self.repeated.extend(map(earlier.__contains__, collapsed))
            earlier.update(collapsed)
            self.texts.extend(lines)
            self.observations.append((index, t_index, len(lines)))

    def layout(self) -> tuple[Any, Any, Any]:
        """Per unit: its kind, its turn's action unit (a system prompt: itself) and its trajectory."""
        group_kind = np.array(self.group_kinds, dtype=np.int64)
        group_size = np.array(self.group_sizes, dtype=np.int64)
        group_start = np.cumsum(group_size) - group_size
        # A group of lines follows its action.
        group_action = np.where(group_kind == _LINE, np.roll(group_start, 1), group_start)
        kind = np.repeat(group_kind, group_size)
        return kind, np.repeat(group_action, group_size), np.cumsum(kind == _SYSTEM) - 1


def _one_line(text: str) -> str:
    """``text`` with its line ends made spaces: the same words, one unit. (Lower-casing is the same too:
    neither is a cased or case-ignorable character, all final sigma looks at.)"""
    return " ".join(text.splitlines()) if "\n" in text or not text.isprintable() else text


def _rank(codes: Any) -> tuple[Any, int]:
    """Dense ranks of ``codes`` (equal codes, equal ranks) and how many distinct codes there are."""
    distinct, ranks = np.unique(codes, return_inverse=True)
    return ranks, len(distinct)


def _members(sorted_codes: Any, probes: Any) -> Any:
    """Which ``probes`` are in ``sorted_codes`` (ascending)."""
    if len(sorted_codes) == 0:
        return np.zeros(len(probes), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_codes, probes), len(sorted_codes) - 1)
    return sorted_codes[at] == probes


class _LineStats:
    """Per observation line of a batch, every count the rules compare (numpy arrays, in line order).

    A unit's items are its words and, when it has at least ``n`` words (``n > 1``), its word
    n-grams; a line's "grams" are its n-grams when it has them, else its words. Everything a line is
    compared with is an earlier unit of its trajectory: each (trajectory, item) is first seen in one
    unit, and an item is in the history of a line when that unit comes before the line's action, in
    the history plus the action when it is the action or before, and seen when it comes before the
    line itself (earlier lines of the same observation included). Codes pack (unit, value) pairs into
    one int64 with shifts, so that sorting them sorts by unit then value."""

    def __init__(self, units: _Units, n: int) -> None:
        kind, action, item = units.layout()
        n_units = len(kind)
        is_line = kind == _LINE
        # A word's rank: its place among the batch's distinct words (one of which, "\n", ends units),
        # from where each was first seen (one dictionary pass over the words).
        seen: dict[str, int] = {}
        n_tokens = len(units.tokens)
        ids = np.fromiter(map(seen.setdefault, units.tokens, itertools.count()), np.int64, n_tokens)
        words = list(seen)
        n_ranks = len(words)
        table = np.zeros(n_tokens, dtype=np.int64)
        table[np.fromiter(seen.values(), np.int64, n_ranks)] = np.arange(n_ranks)
        ids = table[ids]
        ends = ids == table[seen["\n"]]
        word_unit = np.cumsum(ends)[~ends]  # a word's unit: the units ended before it
        ranks = ids[~ends]
        alnum = np.fromiter(map(str.isalnum, map(_FIRST, words)), bool, n_ranks)[ranks]
        may_error = (
            np.fromiter(map(_ERROR_TRIGGERS.__contains__, words), bool, n_ranks)
            | np.fromiter(map(_ENDS_LIKE_ERROR, words), bool, n_ranks)
        )[ranks]
        n_words = np.bincount(word_unit, minlength=n_units)
        long = (n_words >= n) if n > 1 else np.zeros(n_units, dtype=bool)
        n_trajectories = int(item[-1]) + 1 if n_units else 0
        unit_bits = max(n_units, 1).bit_length()
        rank_bits = max(n_ranks, 1).bit_length()
        assert unit_bits + rank_bits < 62  # see _label

        def per_unit(units_of: Any) -> Any:
            return np.bincount(units_of, minlength=n_units)

        # Words: where each (trajectory, word) is first seen; each unit's distinct words.
        word_key = item[word_unit] * n_ranks + ranks
        n_keys = n_trajectories * n_ranks
        if n_keys > _SPARSE * len(word_key):  # a sparse table: number the (trajectory, word)s present
            word_key, n_keys = _rank(word_key)
        first_seen = np.full(n_keys, n_units, dtype=np.int64)
        np.minimum.at(first_seen, word_key, word_unit)
        word_first = first_seen[word_key]
        # (unit, word) pairs, each once, ascending; any of a pair's words tells where it was first seen.
        codes = (word_unit << rank_bits) | ranks
        order = np.argsort(codes)
        codes = codes[order]
        leads = np.ones(len(codes), dtype=bool)
        leads[1:] = codes[1:] != codes[:-1]
        pairs, pair_first = codes[leads], word_first[order[leads]]
        pair_unit, pair_rank = pairs >> rank_bits, pairs & ((1 << rank_bits) - 1)
        n_distinct = per_unit(pair_unit)
        # A line's grams when it is short: its distinct words.
        short = is_line[pair_unit] & ~long[pair_unit]
        self._grams = [(pair_unit[short], pair_first[short], action[pair_unit[short]])]
        if n > 1 and len(ranks) >= n:
            self._grams.append(self._ngrams(word_unit, ranks, n_ranks, n, item, action, is_line))
        # Alphanumeric words (repeats counted): how many, how many never seen, how many action arguments.
        n_alnum = per_unit(word_unit[alnum])
        novel = per_unit(word_unit[alnum & (word_first == word_unit)])
        position = np.arange(len(ranks)) - (np.cumsum(n_words) - n_words)[word_unit]
        is_arg = (kind[word_unit] == _ACTION) & (position >= 1)
        arg_codes = np.sort((word_unit[is_arg] << rank_bits) | ranks[is_arg])
        probe = alnum & is_line[word_unit]
        hits = _members(arg_codes, (action[word_unit[probe]] << rank_bits) | ranks[probe])
        in_args = per_unit(word_unit[probe][hits])
        # The Jaccard similarity of a line's and its action's word sets.
        action_pairs = pairs[kind[pair_unit] == _ACTION]  # still ascending
        line_pair = is_line[pair_unit]
        shared = _members(action_pairs, (action[pair_unit[line_pair]] << rank_bits) | pair_rank[line_pair])
        inter = per_unit(pair_unit[line_pair][shared])

        self._n_units = n_units
        self.lines = np.flatnonzero(is_line)
        line_action = action[self.lines]
        self.n_words = n_words[self.lines]
        self.n_alnum = n_alnum[self.lines]
        self.novel = novel[self.lines]
        self.in_args = in_args[self.lines]
        self.inter = inter[self.lines]
        self.union = n_distinct[self.lines] + n_distinct[line_action] - self.inter
        self.action_words = np.maximum(n_words[line_action], 1)
        self.may_error = per_unit(word_unit[may_error])[self.lines] > 0
        self.n_grams = self._count(lambda unit, first, act: np.ones(len(unit), dtype=bool))
        self.in_seen = self._count(lambda unit, first, act: first < unit)
        self.in_base = self._count(lambda unit, first, act: first <= act)

    @property
    def in_history(self) -> Any:
        return self._count(lambda unit, first, act: first < act)

    def _count(self, where: Any) -> Any:
        """Per line, how many of its grams (unit, unit first seen, action unit) satisfy ``where``."""
        total = np.zeros(self._n_units, dtype=np.int64)
        for unit, first, act in self._grams:
            total += np.bincount(unit[where(unit, first, act)], minlength=self._n_units)
        return total[self.lines]

    @staticmethod
    def _ngrams(
        word_unit: Any, ranks: Any, n_ranks: int, n: int, item: Any, action: Any, is_line: Any
    ) -> tuple[Any, Any, Any]:
        """The distinct n-grams of each long line: (unit, unit first seen, action unit) of each."""
        n_units = len(item)
        start = np.flatnonzero(word_unit[: len(word_unit) - n + 1] == word_unit[n - 1 :])
        codes, span = ranks[start], n_ranks
        for k in range(1, n):
            if span > _CODE_LIMIT // n_ranks:
                codes, span = _rank(codes)
            codes = codes * n_ranks + ranks[start + k]
            span *= n_ranks
        unit = word_unit[start]
        unit_bits = max(n_units, 1).bit_length()
        if (int(item[-1]) + 1) * span >= _CODE_LIMIT:
            codes, span = _rank(codes)
        key = item[unit] * span + codes  # (trajectory, n-gram)
        if int(key.max(initial=0)).bit_length() + unit_bits >= 62:
            key, _ = _rank(key)
        # Distinct (n-gram, unit) pairs, sorted by n-gram then unit: its first unit leads its group.
        pairs = np.unique((key << unit_bits) | unit)
        pair_key, pair_unit = pairs >> unit_bits, pairs & ((1 << unit_bits) - 1)
        leads = np.ones(len(pairs), dtype=bool)
        leads[1:] = pair_key[1:] != pair_key[:-1]
        first = pair_unit[np.flatnonzero(leads)][np.cumsum(leads) - 1]
        mine = is_line[pair_unit]
        return pair_unit[mine], first[mine], action[pair_unit[mine]]


_FIRST = operator.itemgetter(0)
_CATEGORY_AND_KEPT = operator.itemgetter(2, 3)
_ENDS_LIKE_ERROR = operator.methodcaller("endswith", _ERROR_SUFFIXES)
_CATEGORY_INDEX = {name: i for i, name in enumerate(CATEGORIES)}


class InfoMaskPolicy:
    """Classifies observation spans and decides which stay in the loss (see the module docstring).

    The rules run on a whole batch of trajectories at once (:meth:`spans_batch`): Python reads each
    text once (its words, and the two whole-line comparisons) and numpy computes every count the rules
    compare for every line together, so the cost per line is a few array elements, not a few sets."""

    def __init__(self, config: MaskConfig | None = None, seed: int = 0) -> None:
        self.config = config or MaskConfig()
        self.seed = seed

    def label(
        self, traj: Trajectory, system_text: str | None = None, with_features: bool = False
    ) -> list[list[SpanLabel]]:
        """Span labels of every turn's observation; ``system_text`` defaults to the rendered sections.
        ``with_features`` fills each label's ``features`` (for reports and docs; prep leaves it off)."""
        rows = self._label([(traj, system_text)], with_features)[0]
        return [[SpanLabel(*row) for row in turn] for turn in rows]

    def spans(self, traj: Trajectory, system_text: str | None = None) -> list[list[SpanRow]]:
        """What :meth:`label` says as plain ``(start, end, category, kept)`` tuples, one list per turn."""
        return self.spans_batch([(traj, system_text)])[0]

    def spans_batch(self, items: Sequence[tuple[Trajectory, str | None]]) -> list[list[list[SpanRow]]]:
        """:meth:`spans` of each ``(trajectory, system_text)`` item, computed together (what prep uses)."""
        return self._label(items, False)  # type: ignore[return-value]

    def _categories(self, units: _Units, stats: _LineStats) -> Any:
        """Each line's category index: the rules of the module docstring, first match wins."""
        cfg = self.config
        lo, hi = cfg.echo_length_ratio
        # Rules past the first only matter for lines with an alphanumeric word: 1 keeps the zeros away.
        n_alnum = np.maximum(stats.n_alnum, 1)
        n_grams = np.maximum(stats.n_grams, 1)
        ratio = stats.n_words / stats.action_words
        jaccard = np.divide(stats.inter, stats.union, out=np.zeros(len(ratio)), where=stats.union > 0)
        no_words = stats.n_alnum == 0
        echo = np.array(units.echo, dtype=bool) | (
            (lo <= ratio) & (ratio <= hi) & (jaccard >= cfg.echo_jaccard)
        )
        error = np.zeros(len(ratio), dtype=bool)
        for i in np.flatnonzero(stats.may_error & ~no_words & ~echo).tolist():
            error[i] = _ERROR.search(units.texts[i]) is not None
        rules = [
            (no_words, "boilerplate"),
            (echo, "echo"),
            (error, "error"),
            (
                (stats.n_words <= cfg.boilerplate_max_words) & np.array(units.repeated, dtype=bool),
                "boilerplate",
            ),
            (stats.in_args / n_alnum >= cfg.action_overlap, "action"),
            (
                (1.0 - stats.in_seen / n_grams >= cfg.expansion_novelty)
                & (stats.novel / n_alnum >= cfg.expansion_word_novelty),
                "expansion",
            ),
            (stats.in_base / n_grams >= cfg.retrieval_overlap, "retrieval"),
        ]
        return np.select(
            [rule for rule, _ in rules],
            [_CATEGORY_INDEX[name] for _, name in rules],
            _CATEGORY_INDEX["transform"],
        )

    @staticmethod
    def _features(stats: _LineStats) -> list[dict[str, float]]:
        """Every feature of every line (for reports and docs; the rules use only what they need)."""
        n_grams, n_alnum = np.maximum(stats.n_grams, 1), np.maximum(stats.n_alnum, 1)
        union = stats.union
        columns = {
            "overlap": stats.in_base / n_grams,
            "novelty": np.where(stats.n_grams > 0, 1.0 - stats.in_seen / n_grams, 0.0),
            "jaccard": np.divide(stats.inter, union, out=np.zeros(len(union)), where=union > 0),
            "length_ratio": stats.n_words / stats.action_words,
            "overlap_action": stats.in_args / n_alnum,
            "overlap_history": stats.in_history / n_grams,
            "word_novelty": stats.novel / n_alnum,
        }
        values = {k: v.tolist() for k, v in columns.items()}
        return [{k: round(v[i], 4) for k, v in values.items()} for i in range(len(union))]

    def _label(
        self, items: Sequence[tuple[Trajectory, str | None]], with_features: bool
    ) -> list[list[list[tuple[Any, ...]]]]:
        if not items:
            return []
        units = _Units(items)
        # (trajectory, item, unit) codes must fit in int64: halve a batch too large for that (never in
        # practice: it takes billions of words).
        if len(items) > 1 and (len(units.tokens) + 1).bit_length() * 2 >= 62:
            half = len(items) // 2
            return self._label(items[:half], with_features) + self._label(items[half:], with_features)
        stats = _LineStats(units, self.config.ngram)
        categories = self._categories(units, stats)
        counts = np.array([count for _, _, count in units.observations], dtype=np.int64)
        first_line = np.cumsum(counts) - counts  # each observation's
        # Each line's [start, end) within its observation.
        lengths = np.fromiter(map(len, units.texts), dtype=np.int64, count=len(units.texts))
        offsets = np.concatenate([[0], np.cumsum(lengths)])  # from the batch's first line
        ends = offsets[1:] - np.repeat(offsets[first_line], counts)
        columns = [
            (ends - lengths).tolist(),
            ends.tolist(),
            list(map(CATEGORIES.__getitem__, categories.tolist())),
            self._kept(items, units, categories, first_line),
        ]
        if with_features:
            columns.append(self._features(stats))
        rows = list(zip(*columns, strict=True))
        out: list[list[list[tuple[Any, ...]]]] = [[] for _ in items]
        for (index, _, count), first in zip(units.observations, first_line.tolist(), strict=True):
            out[index].append(rows[first : first + count])
        return out

    def _kept(
        self, items: Sequence[tuple[Trajectory, str | None]], units: _Units, categories: Any, first_line: Any
    ) -> list[bool]:
        """Each line's keep decision: its category's probability, drawn per span (see _KeepDraw)."""
        keep = np.array([self.config.keep[name] for name in CATEGORIES])[categories]
        kept = (keep >= 1.0).tolist()
        # Probabilities 0 and 1 need no draw: u < p is decided whatever u in [0, 1) is.
        uncertain = np.flatnonzero((keep > 0.0) & (keep < 1.0))
        if not len(uncertain):
            return kept
        obs_of = np.searchsorted(first_line, uncertain, side="right") - 1
        draws: dict[int, _KeepDraw] = {}
        for line, obs, span, p in zip(
            uncertain.tolist(),
            obs_of.tolist(),
            (uncertain - first_line[obs_of]).tolist(),
            keep[uncertain].tolist(),
            strict=True,
        ):
            index, t_index, _ = units.observations[obs]
            draw = draws.get(index) or draws.setdefault(index, _KeepDraw(self.seed, items[index][0].id))
            kept[line] = draw(t_index, span) < p
        return kept


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

    def add_rows(self, rows: Iterable[SpanRow]) -> None:
        """Count the spans of :meth:`InfoMaskPolicy.spans` rows, per category, and the kept ones."""
        for (category, kept), count in Counter(map(_CATEGORY_AND_KEPT, rows)).items():
            self.spans[category] += count
            if kept:
                self.kept_spans[category] += count

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
