"""Trajectories → token ids with per-token role spans and loss weights, via the tokenizer's chat template.

The chat view is the one the world model sees at simulation time: the system message is the domain's
simulator prompt, each turn is a ``user`` message (the agent's action) and an ``assistant`` message
(optional ``<think>`` reasoning, then the observation inside ``<predicted_observation>`` tags).

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
  quadratic cost of one example per turn), only the last one with ``"last"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from awctl.data.masking import CATEGORY_IDS, SpanLabel
from awctl.errors import AwctlError
from awctl.prompts import OBSERVATION_TAG
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
    text: str
    role: np.ndarray
    weight: np.ndarray
    category: np.ndarray


def assistant_body(observation: str, reasoning: str | None, wrap: bool) -> tuple[str, int, int, int, int]:
    """``(body, reasoning_start, reasoning_end, obs_start, obs_end)`` of an assistant message."""
    body, r0, r1 = "", 0, 0
    if reasoning:
        body = "<think>\n"
        r0 = len(body)
        body += reasoning
        r1 = len(body)
        body += "\n</think>\n"
    if wrap:
        body += f"<{OBSERVATION_TAG}>\n"
    o0 = len(body)
    body += observation
    o1 = len(body)
    if wrap:
        body += f"\n</{OBSERVATION_TAG}>"
    return body, r0, r1, o0, o1


class ChatEncoder:
    """Encodes trajectories for ``mode`` with a fast HF tokenizer that has a chat template."""

    def __init__(
        self,
        tokenizer: Any,
        mode: Literal["cpt", "sft"] = "cpt",
        wrap_observation: bool = True,
        sft_target: Literal["all", "last"] = "all",
    ) -> None:
        if mode not in ("cpt", "sft"):
            raise AwctlError(f"unknown prep mode {mode!r}", hint="use --mode cpt or --mode sft")
        self.tokenizer = tokenizer
        self.mode = mode
        self.wrap = wrap_observation
        self.sft_target = sft_target

    def render(self, traj: Trajectory, system_text: str, labels: Sequence[Sequence[SpanLabel]]) -> _Rendered:
        messages = [{"role": "system", "content": system_text}]
        bodies = []
        for turn in traj.turns:
            body = assistant_body(turn.observation, turn.reasoning, self.wrap)
            bodies.append(body)
            messages.append({"role": "user", "content": turn.action})
            messages.append({"role": "assistant", "content": body[0]})
        text = self.tokenizer.apply_chat_template(messages, tokenize=False)
        n = len(text)
        role = np.zeros(n + 1, dtype=np.uint8)  # +1: a sentinel for tokens starting at the very end
        weight = np.zeros(n + 1, dtype=np.float32)
        category = np.full(n + 1, NO_CATEGORY, dtype=np.int8)
        cursor = 0
        last = len(traj.turns) - 1
        for m_index, msg in enumerate(messages):
            content = msg["content"]
            pos = text.find(content, cursor)
            if pos < 0:
                raise AwctlError(
                    f"trajectory {traj.id!r}: the tokenizer's chat template changes message {m_index}'s text",
                    hint="prep needs a template that inserts contents verbatim (no strip/trim filters)",
                )
            end = pos + len(content)
            cursor = end
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
            for lab in labels[t_index]:
                s, e = base + lab.start, base + lab.end
                category[s:e] = CATEGORY_IDS[lab.category]
                if self.mode == "cpt":
                    weight[s:e] = 1.0 if lab.kept else 0.0
        # The sentinel slot past the end belongs to nothing.
        role[n], weight[n], category[n] = 0, 0.0, NO_CATEGORY
        return _Rendered(text, role, weight, category)

    def encode(
        self, items: Sequence[tuple[Trajectory, str, Sequence[Sequence[SpanLabel]]]]
    ) -> list[Document]:
        """Encode ``(trajectory, system_text, span_labels)`` items in one tokenizer batch call."""
        rendered = [self.render(t, s, lab) for t, s, lab in items]
        # The Rust tokenizer directly: same tokens as tokenizer(text, add_special_tokens=False), without
        # transformers' per-encoding Python conversion (which would cost more than the tokenization).
        encodings = self.tokenizer.backend_tokenizer.encode_batch(
            [r.text for r in rendered], add_special_tokens=False
        )
        docs = []
        for (traj, _, _), r, enc in zip(items, rendered, encodings, strict=True):
            offsets = enc.offsets
            starts = np.fromiter((o[0] for o in offsets), dtype=np.int64, count=len(offsets))
            np.minimum(starts, len(r.text), out=starts)
            docs.append(
                Document(
                    input_ids=np.asarray(enc.ids, dtype=np.int32),
                    role_ids=r.role[starts],
                    loss_weights=r.weight[starts],
                    category_ids=r.category[starts],
                    traj_id=traj.id,
                    domain=traj.domain,
                )
            )
        return docs
