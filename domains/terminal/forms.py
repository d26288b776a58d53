"""Turn a full-screen trajectory into the same session in incremental form.

Training uses both screen forms a trajectory can establish (see :mod:`.session`). awctl's own recorder
and the asciinema importer write full screens; :func:`to_incremental` cuts, from each pair of
consecutive screens, what the terminal added after the cursor: the echo of the keystrokes, the output and
the new prompt (with the trailing space a prompt has on a live terminal). A turn whose starting line
scrolled off the screen cannot be cut faithfully, so the conversion gives ``None`` rather than a guess.
"""

from __future__ import annotations

from awctl.domain import TurnContext
from awctl.trajectory import Trajectory, Turn

from .codec import INCREMENTAL_OBSERVATION, SCREEN_OBSERVATION, display_width
from .prompts import incremental_for
from .session import Facts, cut_cells, facts_before, initial_screen, split_observation, stated_form

_SCREEN_SENTENCE = "Each observation is the whole visible screen."
_INCREMENTAL_SENTENCE = ("Each observation is only the new output: the echo, what the command printed and the "
                         "new prompt.")


def _start(facts: Facts, lines: list[str]) -> int | None:
    """Where the line the cursor was on before the turn sits in the new screen (None: scrolled off)."""
    before = facts.before
    if not before:
        return None
    base = len(before) - 1
    head = before[base]
    for k in range(0, base + 1):
        at = base - k
        if at < len(lines) and lines[:at] == before[k:base] and lines[at].startswith(head):
            return at
    return None


def _cut(facts: Facts, lines: list[str], at: int) -> str:
    cursor = facts.prompt_line if facts.prompt is not None else (facts.before or [""])[-1]
    first = cut_cells(lines[at], display_width(cursor))
    return "\n".join([first, *lines[at + 1:]])


def to_incremental(traj: Trajectory) -> Trajectory | None:
    """The trajectory with incremental observations, or ``None`` when it cannot be converted faithfully
    (a turn whose start scrolled away, Terminus screens, a flat system prompt that states its own form).
    A trajectory already in incremental form is returned unchanged."""
    if stated_form(traj) == "incremental":
        return traj
    if traj.system.raw is not None or initial_screen(traj) is None:
        return None
    turns: list[Turn] = []
    for i, turn in enumerate(traj.turns):
        facts = facts_before(TurnContext.at(traj, i))
        header, lines = split_observation(turn.observation)
        if header is not None or facts.header is not None:
            return None
        at = _start(facts, lines)
        if at is None:
            return None
        text = _cut(facts, lines, at)
        after = facts_before(TurnContext.at(traj, i), i + 1)
        if after.prompt is not None and lines and lines[-1] == (
                after.glue + after.prompt.text + after.pending).rstrip():
            text += " " * (len(after.glue + after.prompt.text + after.pending) - len(lines[-1]))
        turns.append(turn.model_copy(update={"observation": text}))
    system = traj.system.model_copy(deep=True)
    # awctl's own instructions (for any prompt style) become their incremental counterparts.
    system.simulation_instruction = incremental_for(system.simulation_instruction) or system.simulation_instruction
    system.initial_state = system.initial_state.replace(_SCREEN_SENTENCE, _INCREMENTAL_SENTENCE)
    system.action_space = system.action_space.replace(SCREEN_OBSERVATION, INCREMENTAL_OBSERVATION)
    return traj.model_copy(update={"id": traj.id + "~incremental", "system": system, "turns": turns,
                                   "metadata": {**traj.metadata, "screen_form": "incremental"}})


#: What an earlier full screen shows in the history once a later screen still shows all of it.
SUPERSEDED_SCREEN = "(this screen is still shown at the top of a later screen)"


def superseded_screen(traj: Trajectory, index: int, at: int) -> str | None:
    """The stand-in for turn ``index``'s screen in the history of turn ``at``: :data:`SUPERSEDED_SCREEN`
    when the trajectory is in full-screen form and the latest screen before ``at`` starts with that screen
    (nothing scrolled off or was cleared since, so the stand-in hides nothing), else ``None``: as
    recorded. The latest screen itself and incremental observations are always shown."""
    if not 0 <= index < at - 1 or at > len(traj.turns) or stated_form(traj) == "incremental":
        return None
    header, earlier = split_observation(traj.turns[index].observation)
    latest_header, latest = split_observation(traj.turns[at - 1].observation)
    if header is not None or latest_header is not None or not earlier or len(latest) < len(earlier):
        return None
    n = len(earlier) - 1
    if latest[:n] == earlier[:n] and latest[n].startswith(earlier[n]):
        return SUPERSEDED_SCREEN
    return None
