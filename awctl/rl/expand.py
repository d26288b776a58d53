"""One-turn expansion: every turn of a trajectory becomes one prompt for the world model.

A :class:`TurnPrompt` is the chat the simulator sees — system prompt (one of the domain's wording
variants, drawn by a seeded hash of the trajectory id and turn), the earlier turns as user/assistant pairs
(observations inside ``<predicted_observation>`` tags, as the model is trained to write them), then the
agent's action at turn ``index`` — plus the recorded observation the answer is judged against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from awctl.trajectory import Trajectory


@dataclass(frozen=True)
class TurnPrompt:
    trajectory: Trajectory
    index: int
    messages: list[dict[str, str]]
    reference: str
    system: str
    awb: bool = False  # messages (and expected answers) in AgentWorldBench format

    @property
    def key(self) -> str:
        return f"{self.trajectory.id}#{self.index}"


def variant_for(seed: int, key: str, variants: int) -> int:
    digest = hashlib.sha256(f"{seed}\x00variant\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % max(1, variants)


def system_text(traj: Trajectory, domain: Any, variant: int) -> str:
    if domain is None:
        return traj.system.render()
    return domain.system_prompt(traj.system, variant)


def turn_messages(traj: Trajectory, index: int, system: str) -> list[dict[str, str]]:
    """System, the first ``index`` turns as user/assistant pairs, then turn ``index``'s action."""
    from awctl.data.chat_tokens import assistant_body

    messages = [{"role": "system", "content": system}]
    for turn in traj.turns[:index]:
        messages.append({"role": "user", "content": turn.action})
        messages.append({"role": "assistant", "content": assistant_body(turn.observation, None, True)[0]})
    messages.append({"role": "user", "content": traj.turns[index].action})
    return messages


def expand(trajectories: Iterable[Trajectory], domains: Mapping[str, Any], *, seed: int = 0,
           turns: str = "all", chat_format: str = "native") -> list[TurnPrompt]:
    """One :class:`TurnPrompt` per turn (``turns="last"``: only each trajectory's last turn).

    ``chat_format="native"``: the chat prep trains on (raw actions, tagged observations, a system prompt
    variant per prompt). ``"awb"``: exactly the messages AgentWorldBench inference sends
    (:func:`awctl.eval.extract.inference_messages` on the trajectory's AWB rows), so a model trained
    on them is evaluated in the format it learned.
    """
    out = []
    for traj in trajectories:
        domain = domains.get(traj.domain)
        variants = domain.prompt_variants if domain is not None else 1
        indices = range(len(traj.turns)) if turns == "all" else [len(traj.turns) - 1]
        rows = None
        if chat_format == "awb":
            from awctl.formats.agentworldbench import trajectory_to_rows

            rows = trajectory_to_rows(traj, domains)
        for i in indices:
            if i < 0:
                continue
            if rows is not None:
                from awctl.eval.extract import inference_messages

                messages = inference_messages(rows[i])
                system = str(rows[i].get("system_str") or "")
            else:
                system = system_text(traj, domain, variant_for(seed, f"{traj.id}#{i}", variants))
                messages = turn_messages(traj, i, system)
            out.append(TurnPrompt(traj, i, messages, traj.turns[i].observation, system, rows is not None))
    return out
