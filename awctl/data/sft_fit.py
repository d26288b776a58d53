"""Fitting an SFT example longer than a block into one block without losing what its target answers.

Cutting a long example into block-sized pieces (what CPT packing does) would restart the context in
every piece: the piece holding the target no longer sees the action it answers, and pieces without a
target cost training steps for nothing. An SFT example is instead cut so that one block keeps, in order:

1. the whole target (the last run of loss-weighted tokens, through the end of the example);
2. the action that target answers (the user message right before it, with its template markup);
3. the system prompt (it states the task and the environment's initial state), from its start;
4. as much of the history immediately preceding that action as still fits (the oldest turns go first).

When the system prompt does not fit next to action + target, only its start is kept. When action +
target alone exceed the block the example cannot be trained honestly and :func:`fit_sft_document`
returns ``None`` (prep counts it as dropped). Kept history tokens before the first kept action lose
their loss weight: an earlier target whose own action was cut away would teach the wrong thing.
"""

from __future__ import annotations

import numpy as np

from awctl.data.chat_tokens import ROLE_IDS, Document

_TEMPLATE = ROLE_IDS["template"]
_SYSTEM = ROLE_IDS["system"]
_ACTION = ROLE_IDS["action"]


def target_span(doc: Document) -> tuple[int, int] | None:
    """``[start, end)`` of the last run of loss-weighted tokens, or ``None`` when nothing is weighted."""
    weighted = np.flatnonzero(doc.loss_weights > 0)
    if len(weighted) == 0:
        return None
    end = int(weighted[-1]) + 1
    # The run's start: the first index after the last gap in the weighted positions.
    gaps = np.flatnonzero(np.diff(weighted) > 1)
    start = int(weighted[gaps[-1] + 1]) if len(gaps) else int(weighted[0])
    return start, end


def action_start(doc: Document, target_start: int) -> int:
    """Where the action answered by the target starts: walking back from the target over template
    markup, then the action's tokens, then the markup that opens the action's message."""
    roles = doc.role_ids
    i = target_start
    while i > 0 and roles[i - 1] == _TEMPLATE:
        i -= 1
    while i > 0 and roles[i - 1] == _ACTION:
        i -= 1
    while i > 0 and roles[i - 1] == _TEMPLATE:
        i -= 1
    return i


def fit_sft_document(doc: Document, block_size: int) -> Document | None:
    """``doc`` itself when it fits ``block_size``; else the cut described in the module docstring, or
    ``None`` when the target and its action alone are longer than a block."""
    n = len(doc)
    if n <= block_size:
        return doc
    span = target_span(doc)
    if span is None:  # nothing to train on: a block's worth of context would be wasted steps
        return None
    a0 = action_start(doc, span[0])
    tail = n - a0
    if tail > block_size:
        return None
    room = block_size - tail
    system = np.flatnonzero(doc.role_ids[:a0] == _SYSTEM)
    s1 = int(system[-1]) + 1 if len(system) else 0
    if s1 >= room:
        head = np.arange(room)  # the system prompt's start (its opening markup included)
        history = np.arange(0)
    else:
        head = np.arange(s1)
        history = np.arange(max(s1, a0 - (room - s1)), a0)
    keep = np.concatenate([head, history, np.arange(a0, n)])
    weights = doc.loss_weights[keep].copy()
    # History before its first kept action has lost what it answered: no loss there.
    hist_roles = doc.role_ids[history]
    first_action = np.flatnonzero(hist_roles == _ACTION)
    lost = len(history) if len(first_action) == 0 else int(first_action[0])
    weights[len(head) : len(head) + lost] = 0.0
    return Document(
        input_ids=doc.input_ids[keep],
        role_ids=doc.role_ids[keep],
        loss_weights=weights,
        category_ids=doc.category_ids[keep],
        traj_id=doc.traj_id,
        source=doc.source,
        domain=doc.domain,
    )
