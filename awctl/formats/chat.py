"""The chat view of a trajectory: the messages a world model sees when it predicts turn ``t``.

``messages_at(traj, t)`` is::

    system     the rendered system prompt (AgentWorldBench-sourced: the row's system_str verbatim;
               omitted when empty, as the official eval does)
    user       "### Turn 1\\n**Action:**\\n<action 1>"          ┐ ground-truth history,
    assistant  "**Environment Observation:**\\n<observation 1>" ┘ turns 1..t (0-based t excluded)
    ...
    user       the action prompt of turn t (AWB: the row's current_prompt when it has one)

For a trajectory read from AgentWorldBench this equals what the official ``eval.py`` (run_inference)
builds for the row whose ``turn_idx`` is ``t + 1``, including that row's own list lengths.
``target_at(traj, t)`` is the assistant content a model is trained to produce for turn ``t``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from awctl.domain import Domain
from awctl.formats import agentworldbench as awb
from awctl.prompts import OBSERVATION_TAG
from awctl.trajectory import Trajectory

Message = dict[str, str]


def _domain(traj: Trajectory, domains: Mapping[str, Domain] | None) -> Domain | None:
    table = awb.registry_domains() if domains is None else domains
    return table.get(traj.domain)


def system_text(traj: Trajectory, domains: Mapping[str, Domain] | None = None) -> str:
    """The system prompt as the world model sees it (raw text wins; else the domain's variant 0)."""
    return awb.system_text_for(traj, _domain(traj, domains))


def _row_for_turn(traj: Trajectory, t: int) -> dict[str, Any] | None:
    meta = awb.awb_metadata(traj)
    if meta is None:
        return None
    for rec in meta["rows"]:
        turn_idx = rec.get("fields", {}).get("turn_idx", 1)
        if isinstance(turn_idx, int) and not isinstance(turn_idx, bool) and max(turn_idx - 1, 0) == t:
            return rec
    return None


def messages_at(traj: Trajectory, t: int, domains: Mapping[str, Domain] | None = None) -> list[Message]:
    """Chat messages for predicting turn ``t`` (0-based) of ``traj``; raises IndexError when out of range."""
    if not 0 <= t < len(traj.turns):
        raise IndexError(f"trajectory {traj.id!r} has {len(traj.turns)} turns; no turn {t}")
    domain = _domain(traj, domains)
    codec = awb.TurnCodec(domain)
    messages: list[Message] = []
    system = awb.system_text_for(traj, domain)
    if system:
        messages.append({"role": "system", "content": system})

    rec = _row_for_turn(traj, t)
    meta = awb.awb_metadata(traj)
    if rec is not None and meta is not None:
        # Reproduce the evaluated row exactly: its own list lengths bound the history.
        prompts, responses = awb.full_lists(traj, codec, meta)
        row = awb.rebuild_row(rec, meta["task"], system, prompts, responses)
        row_prompts = row.get("prompt", [])
        row_responses = row.get("response", [])
        row_prompts = [row_prompts] if isinstance(row_prompts, str) else row_prompts
        row_responses = [row_responses] if isinstance(row_responses, str) else row_responses
        for j in range(min(t, len(row_prompts), len(row_responses))):
            messages.append({"role": "user", "content": row_prompts[j]})
            messages.append({"role": "assistant", "content": row_responses[j]})
        current = row.get("current_prompt", "")
        if not current and t < len(row_prompts):
            current = row_prompts[t]
        messages.append({"role": "user", "content": current})
        return messages

    for j in range(t):
        turn = traj.turns[j]
        messages.append({"role": "user", "content": codec.prompt_text(turn, j)})
        messages.append({"role": "assistant", "content": codec.response_text(turn)})
    messages.append({"role": "user", "content": codec.prompt_text(traj.turns[t], t)})
    return messages


def target_at(
    traj: Trajectory,
    t: int,
    domains: Mapping[str, Domain] | None = None,
    style: Literal["tagged", "plain"] = "tagged",
) -> str:
    """The assistant content to train on for turn ``t``.

    ``plain``: the observation exactly as history messages show it (``**Environment Observation:**...``).
    ``tagged`` (default): ``<think>reasoning</think>`` when the turn has reasoning, then the plain text
    inside ``<predicted_observation>`` tags — the output format the default system prompt asks for and
    the official judge extracts.
    """
    if not 0 <= t < len(traj.turns):
        raise IndexError(f"trajectory {traj.id!r} has {len(traj.turns)} turns; no turn {t}")
    turn = traj.turns[t]
    plain = awb.TurnCodec(_domain(traj, domains)).response_text(turn)
    if style == "plain":
        return plain
    think = f"<think>\n{turn.reasoning}\n</think>\n\n" if turn.reasoning else ""
    return f"{think}<{OBSERVATION_TAG}>\n{plain}\n</{OBSERVATION_TAG}>"


def chat_records(
    traj: Trajectory,
    domains: Mapping[str, Domain] | None = None,
    style: Literal["tagged", "plain"] = "tagged",
) -> Iterator[dict[str, Any]]:
    """One record per turn: ``{id, trajectory_id, domain, turn, messages, target}``.

    For AgentWorldBench-sourced trajectories only the evaluated turns (the rows' ``turn_idx``) appear.
    """
    meta = awb.awb_metadata(traj)
    if meta is not None:
        indices = []
        for rec in meta["rows"]:
            turn_idx = rec.get("fields", {}).get("turn_idx", 1)
            if isinstance(turn_idx, int) and not isinstance(turn_idx, bool):
                t = max(turn_idx - 1, 0)
                if t < len(traj.turns) and t not in indices:
                    indices.append(t)
    else:
        indices = list(range(len(traj.turns)))
    for t in indices:
        yield {
            "id": f"{traj.id}_turn{t + 1}",
            "trajectory_id": traj.id,
            "domain": traj.domain,
            "turn": t,
            "messages": messages_at(traj, t, domains),
            "target": target_at(traj, t, domains, style),
        }
