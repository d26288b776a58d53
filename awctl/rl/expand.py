"""One-turn expansion: every turn of a trajectory becomes one prompt for the world model.

A :class:`TurnPrompt` is what the simulator sees for one turn — the messages of
:mod:`awctl.formats.view` in the run's chat style, with the trajectory's system-prompt wording variant
(:func:`awctl.formats.view.prompt_variant`, the same draw prep makes) — plus the recorded observation the
answer is judged against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from awctl.formats.view import Style, prompt_variant, view_for
from awctl.trajectory import Trajectory


@dataclass(frozen=True)
class TurnPrompt:
    trajectory: Trajectory
    index: int
    messages: list[dict[str, str]]
    reference: str
    system: str
    style: Style = "awctl"

    @property
    def key(self) -> str:
        return f"{self.trajectory.id}#{self.index}"


def expand(trajectories: Iterable[Trajectory], domains: Mapping[str, Any], *, seed: int = 0,
           turns: str = "all", style: str = "awctl") -> list[TurnPrompt]:
    """One :class:`TurnPrompt` per turn (``turns="last"``: only each trajectory's last turn), in ``style``
    (``awctl`` or ``agentworldbench``: see :mod:`awctl.formats.view`)."""
    out = []
    for traj in trajectories:
        view = view_for(traj, domains, style)
        variants = view.domain.prompt_variants if view.domain is not None else 1
        variant = prompt_variant(seed, traj.id, variants)
        system = view.system(traj, variant)
        indices = range(len(traj.turns)) if turns == "all" else [len(traj.turns) - 1]
        for i in indices:
            if i < 0:
                continue
            messages = view.messages_at(traj, i, variant)
            out.append(TurnPrompt(traj, i, messages, traj.turns[i].observation, system, view.style))
    return out
