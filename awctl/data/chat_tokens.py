"""Trajectories → token ids with per-token role spans and loss weights, via the tokenizer's chat template.

The conversation is the one the world model sees at simulation time, in the run's chat style
(:mod:`awctl.formats.view`: ``awctl`` or ``agentworldbench``): the system message, then per turn a
``user`` message (the agent's action) and an ``assistant`` message (the observation; the trained answer
with optional ``<think>`` reasoning and ``<predicted_observation>`` tags).

The whole conversation is rendered once with ``apply_chat_template`` and tokenized once; roles and weights
are assigned from character offsets (a token takes the role of the character it starts at), so tokens are
exactly those of the rendered text, never re-tokenized piecewise.

Roles: 0 template (markup between messages), 1 system, 2 action, 3 observation (the observation text,
its tags and the end-of-message token), 4 reasoning.
Loss weights:

* ``cpt`` — observation text tokens weigh 1 when their span is kept by :class:`InfoMaskPolicy`, else 0;
  the observation's tags and end-of-message token weigh 1 (the model must learn to close a turn);
  everything else 0.
* ``sft`` — every token of the target assistant messages weighs 1 (reasoning included): all turns with
  ``sft_target="all"`` (each is a target given its own prefix under causal attention, without the
  quadratic cost of one example per turn), only the last one with ``"last"``. With ``unchanged_weight``
  below 1, a target's leading lines that repeat the previous observation's leading lines weigh that much:
  a full-screen terminal redraws the whole screen every turn, and without it a few new lines are lost
  among hundreds of copied ones (the model learns to stop where the previous screen ended).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, Literal

import numpy as np

from awctl.data.masking import CATEGORY_IDS, SpanLabel, SpanRow
from awctl.errors import AwctlError
from awctl.formats.view import Style, View
from awctl.trajectory import Trajectory

ROLES: tuple[str, ...] = ("template", "system", "action", "observation", "reasoning")
ROLE_IDS: dict[str, int] = {r: i for i, r in enumerate(ROLES)}
NO_CATEGORY = -1


@dataclass
class Document:
    """One tokenized trajectory. All arrays have the same length."""

    input_ids: np.ndarray  # int32
    role_ids: np.ndarray  # uint8
    loss_weights: np.ndarray  # float32
    category_ids: np.ndarray  # int8, NO_CATEGORY outside observation text
    traj_id: str
    source: str = ""
    domain: str = ""

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class _Rendered:
    """A rendered conversation and its per-character values, piecewise constant: segment ``k`` (the
    four numbers ``segments[4k:4k+4]``: start, role, weight, category) covers the characters from its
    start to the next segment's start. The last segment starts at ``len(text)``: a sentinel for tokens
    starting at the very end."""

    text: str
    segments: list[float]


_DEFAULT = (ROLE_IDS["template"], 0.0, NO_CATEGORY)
_FIRST = itemgetter(0)


def repeated_head(text: str, previous: str) -> int:
    """Characters of ``text``'s leading whole lines (newline included) that ``previous`` starts with too."""
    n = 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n") or not previous.startswith(line, n):
            break
        n += len(line)
    return n


def _repeated_heads(traj: Trajectory, bodies: Sequence[tuple[str, int, int, int, int]]) -> list[tuple[int, int]]:
    """Per turn, where in its assistant message the observation's repeated head (:func:`repeated_head`,
    against the turn before) is: found verbatim in the rendered message, whatever the style wraps around
    it; ``(0, 0)`` for the first turn or when the rendering does not hold it verbatim."""
    heads = [(0, 0)]
    for t in range(1, len(traj.turns)):
        observation = traj.turns[t].observation
        head = observation[: repeated_head(observation, traj.turns[t - 1].observation)]
        at = bodies[t][0].find(head) if head else -1
        heads.append((at, at + len(head)) if at >= 0 else (0, 0))
    return heads


class ChatEncoder:
    """Encodes trajectories for ``mode`` with a fast HF tokenizer that has a chat template."""

    def __init__(
        self,
        tokenizer: Any,
        mode: Literal["cpt", "sft"] = "cpt",
        sft_target: Literal["all", "last"] = "all",
        style: Style = "awctl",
        domains: Mapping[str, Any] | None = None,
        unchanged_weight: float = 1.0,
    ) -> None:
        if mode not in ("cpt", "sft"):
            raise AwctlError(f"unknown prep mode {mode!r}", hint="use --mode cpt or --mode sft")
        self.tokenizer = tokenizer
        self.mode = mode
        self.sft_target = sft_target
        self.style = style
        self.domains = domains or {}
        self.unchanged_weight = unchanged_weight

    def render(self, traj: Trajectory, system_text: str, labels: Sequence[Sequence[SpanRow]]) -> _Rendered:
        """The conversation's text and segments; ``labels``: each turn's ``(start, end, category, kept)``."""
        view = View(self.domains.get(traj.domain), self.style)
        targets = "all" if self.mode == "cpt" else self.sft_target
        messages, parts = view.conversation(traj, system_text, targets)
        bodies = [(p.body, p.r0, p.r1, p.o0, p.o1) for p in parts]
        # A domain hook that rewrote an observation beyond finding it: its turn is trained unmasked.
        labels = [rows if p.o1 - p.o0 == len(turn.observation) else []
                  for rows, p, turn in zip(labels, parts, traj.turns, strict=True)]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False)
        positions = []
        cursor = 0
        for m_index, msg in enumerate(messages):
            pos = text.find(msg["content"], cursor)
            if pos < 0:
                raise AwctlError(
                    f"trajectory {traj.id!r}: the tokenizer's chat template changes message {m_index}'s text",
                    hint="prep needs a template that inserts contents verbatim (no strip/trim filters)",
                )
            cursor = pos + len(msg["content"])
            positions.append(pos)
        heads = _repeated_heads(traj, bodies) if self.mode == "sft" and self.unchanged_weight != 1.0 else None
        segments = None if heads else self._segments(len(text), messages, positions, bodies, labels)
        if segments is None:
            segments = self._segments_painted(len(text), messages, positions, bodies, labels, heads)
        return _Rendered(text, segments)

    def _segments(
        self,
        n: int,
        messages: list[dict[str, str]],
        positions: list[int],
        bodies: list[tuple[str, int, int, int, int]],
        labels: Sequence[Sequence[SpanRow]],
    ) -> list[float] | None:
        """The segments of a conversation whose parts follow each other without overlapping (what any
        template that puts markup between messages gives): each message's content, an assistant's
        end-of-message character, its reasoning and its observation lines in order. ``None`` when they
        overlap (e.g. a template with nothing between messages, or labels out of order): then
        :meth:`_segments_painted` decides, character by character."""
        cpt = self.mode == "cpt"
        last = len(bodies) - 1
        segments: list[float] = []
        add = segments.extend
        painted = 0  # characters before this one are covered
        for m_index, (msg, pos) in enumerate(zip(messages, positions, strict=True)):
            if pos < painted:
                return None
            if pos > painted:
                add((painted, *_DEFAULT))
            end = pos + len(msg["content"])
            role = msg["role"]
            if role != "assistant":
                add((pos, ROLE_IDS["system" if role == "system" else "action"], 0.0, NO_CATEGORY))
                painted = end
                continue
            t_index = (m_index - 1) // 2
            _, r0, r1, o0, o1 = bodies[t_index]
            trained = self.mode == "cpt" or self.sft_target == "all" or t_index == last
            weight = 1.0 if trained else 0.0
            obs_role = ROLE_IDS["observation"]
            add((pos, obs_role, weight, NO_CATEGORY))
            if r1 > r0:
                reasoning_weight = 1.0 if (trained and self.mode == "sft") else 0.0
                add((pos + r0, ROLE_IDS["reasoning"], reasoning_weight, NO_CATEGORY))
                add((pos + r1, obs_role, weight, NO_CATEGORY))
            base = pos + o0
            done = 0  # observation characters covered
            for start, stop, category, kept in labels[t_index]:
                if stop <= start:
                    continue  # an empty span marks nothing
                if start < done or stop > o1 - o0:
                    return None
                if start > done:
                    add((base + done, obs_role, weight, NO_CATEGORY))
                add(
                    (
                        base + start,
                        obs_role,
                        (1.0 if kept else 0.0) if cpt else weight,
                        CATEGORY_IDS[category],
                    )
                )
                done = stop
            add((base + done, obs_role, weight, NO_CATEGORY))
            painted = end + 1  # the end-of-message token
        if painted > n:
            return None
        if painted < n:
            add((painted, *_DEFAULT))
        add((n, *_DEFAULT))
        return segments

    def _segments_painted(
        self,
        n: int,
        messages: list[dict[str, str]],
        positions: list[int],
        bodies: list[tuple[str, int, int, int, int]],
        labels: Sequence[Sequence[SpanRow]],
        heads: Sequence[tuple[int, int]] | None = None,
    ) -> list[float]:
        """The segments of any conversation: per-character arrays painted part by part (a later part wins
        where parts overlap), then cut where a value changes. ``heads``: per turn, the ``[start, end)`` of
        its answer's repeated head (:func:`_repeated_heads`), weighted ``unchanged_weight`` when trained."""
        role = np.zeros(n + 1, dtype=np.uint8)  # +1: a sentinel for tokens starting at the very end
        weight = np.zeros(n + 1, dtype=np.float32)
        category = np.full(n + 1, NO_CATEGORY, dtype=np.int8)
        last = len(bodies) - 1
        for m_index, (msg, pos) in enumerate(zip(messages, positions, strict=True)):
            end = pos + len(msg["content"])
            if msg["role"] == "system":
                role[pos:end] = ROLE_IDS["system"]
                continue
            if msg["role"] == "user":
                role[pos:end] = ROLE_IDS["action"]
                continue
            t_index = (m_index - 1) // 2
            _, r0, r1, o0, o1 = bodies[t_index]
            trained = self.mode == "cpt" or self.sft_target == "all" or t_index == last
            role[pos : end + 1] = ROLE_IDS["observation"]  # end + 1: the end-of-message token
            weight[pos : end + 1] = 1.0 if trained else 0.0
            if r1 > r0:
                role[pos + r0 : pos + r1] = ROLE_IDS["reasoning"]
                weight[pos + r0 : pos + r1] = 1.0 if (trained and self.mode == "sft") else 0.0
            base = pos + o0
            if heads and trained:  # heads: sft mode only
                h0, h1 = heads[t_index]
                weight[pos + h0 : pos + h1] *= self.unchanged_weight
            for start, stop, name, kept in labels[t_index]:
                s, e = base + start, base + stop
                category[s:e] = CATEGORY_IDS[name]
                if self.mode == "cpt":
                    weight[s:e] = 1.0 if kept else 0.0
        # The sentinel slot past the end belongs to nothing.
        role[n], weight[n], category[n] = 0, 0.0, NO_CATEGORY
        change = (role[1:] != role[:-1]) | (weight[1:] != weight[:-1]) | (category[1:] != category[:-1])
        starts = [0, *(np.flatnonzero(change) + 1).tolist()]
        if starts[-1] != n:
            starts.append(n)
        return [x for s in starts for x in (s, int(role[s]), float(weight[s]), int(category[s]))]

    def encode(
        self, items: Sequence[tuple[Trajectory, str, Sequence[Sequence[SpanLabel]]]]
    ) -> list[Document]:
        """Encode ``(trajectory, system_text, span_labels)`` items in one tokenizer batch call."""
        return self.encode_rows(
            [
                (traj, system_text, [[(x.start, x.end, x.category, x.kept) for x in turn] for turn in labels])
                for traj, system_text, labels in items
            ]
        )

    def encode_rows(
        self, items: Sequence[tuple[Trajectory, str, Sequence[Sequence[SpanRow]]]]
    ) -> list[Document]:
        """:meth:`encode` for span rows (:meth:`InfoMaskPolicy.spans`) instead of span labels."""
        if not items:
            return []
        rendered = [self.render(t, s, lab) for t, s, lab in items]
        # The Rust tokenizer directly: same tokens as tokenizer(text, add_special_tokens=False), without
        # transformers' per-encoding Python conversion (which would cost more than the tokenization).
        encodings = self.tokenizer.backend_tokenizer.encode_batch(
            [r.text for r in rendered], add_special_tokens=False
        )
        # The whole batch at once: the documents' characters laid end to end (each with its sentinel),
        # every token's start looked up among every segment's start in one call.
        counts = np.array([len(enc) for enc in encodings], dtype=np.int64)
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(enc.ids for enc in encodings), dtype=np.int32, count=total)
        # Each document's offsets list is freed as soon as it is read: its memory serves the next one.
        offsets = np.fromiter(
            map(_FIRST, chain.from_iterable(enc.offsets for enc in encodings)), dtype=np.int64, count=total
        )
        lengths = np.array([len(r.text) for r in rendered], dtype=np.int64)
        firsts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])  # each document's first character
        starts = np.minimum(offsets, np.repeat(lengths, counts)) + np.repeat(firsts, counts)
        # The segments' (start, role, weight, category), all as float64 (exact for these values).
        n_segments = [len(r.segments) // 4 for r in rendered]
        segments = np.array(list(chain.from_iterable(r.segments for r in rendered)), dtype=np.float64)
        segments = segments.reshape(-1, 4)
        seg_starts = segments[:, 0].astype(np.int64) + np.repeat(firsts, n_segments)
        # A token's segment: the last one starting at or before its first character (a later one wins
        # a tie: segments may be empty).
        index = np.searchsorted(seg_starts, starts, side="right") - 1
        roles = segments[index, 1].astype(np.uint8)
        weights = segments[index, 2].astype(np.float32)
        categories = segments[index, 3].astype(np.int8)
        docs = []
        bounds = [0, *np.cumsum(counts).tolist()]
        for (traj, _, _), a, b in zip(items, bounds, bounds[1:], strict=False):
            docs.append(
                Document(
                    input_ids=ids[a:b],
                    role_ids=roles[a:b],
                    loss_weights=weights[a:b],
                    category_ids=categories[a:b],
                    traj_id=traj.id,
                    domain=traj.domain,
                )
            )
        return docs
