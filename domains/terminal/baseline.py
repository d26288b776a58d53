"""The terminal's copy baseline: what a rule that knows nothing predicts for a turn.

It echoes the typed command after the current prompt and shows the same prompt again on the next line,
in the screen form the trajectory uses (the whole screen, scrolled at its height when the trajectory states
one; or only the new output). That is exactly right for a command that prints nothing and keeps the
prompt, and wrong whenever a world model has something to predict.
"""

from __future__ import annotations

from awctl.domain import TurnContext
from awctl.trajectory import Trajectory

from .codec import wrap_line
from .session import action_text, facts_before


def copy_baseline(trajectory: Trajectory, index: int) -> str | None:
    """The copy-baseline observation of turn ``index``; ``None`` when the screen before it does not end
    at a known prompt or the action is not plain typed text."""
    facts = facts_before(TurnContext.at(trajectory, index))
    typed, enter = action_text(trajectory.turns[index].action)
    if typed is None or facts.prompt is None:
        return None
    prompt = facts.prompt.text
    echoed = facts.prompt_line + typed
    rows = wrap_line(echoed, facts.cols) if facts.cols else [echoed]
    if facts.form == "incremental":
        # Incremental output starts where the cursor was: the echo of what was typed, then the prompt.
        body = typed + ("\n" + prompt if enter else "")
        return body
    before = list(facts.before or [])
    if not before:
        return None
    lines = before[:-1] + rows + ([prompt] if enter else [])
    if facts.rows and len(lines) > facts.rows:
        lines = lines[len(lines) - facts.rows:]
    return "\n".join(lines)
