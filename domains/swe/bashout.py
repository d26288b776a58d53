"""The forms a bash tool's result takes, and which one a trajectory uses.

Agents' harnesses print a command's result differently:

* ``awctl``: the output, then one footer line ``[exit_code: N] [cwd: DIR]`` (``[timed_out]`` appended when
  the command hit its limit; exit code 124);
* ``openhands``: the output, then OpenHands' metadata lines ``[The command completed with exit code N.]``,
  ``[Current working directory: DIR]``, ``[Python interpreter: PATH]``, ``[Command finished with exit code
  N]`` (each optional; a command still running has none of the exit-code lines);
* ``state``: SWE-agent in a conversation: the output (or ``Your command ran successfully and did not produce
  any output.``), then ``(Open file: PATH)``, ``(Current directory: DIR)`` and ``bash-$``;
* ``raw``: the output alone (SWE-agent's ``trajectory`` steps).

:func:`parse_result` reads any of them; :func:`convention` says which one a trajectory has established
before a given turn, so a verifier can require it (or abstain where nothing is established).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from awctl.trajectory import Trajectory

from .classic import split_state
from .codec import BashCall, parse_bash

NO_OUTPUT = "Your command ran successfully and did not produce any output."
_OH_COMPLETED = re.compile(r"^\[The command completed with exit code (-?\d+)\.\]$")
_OH_CWD = re.compile(r"^\[Current working directory: (.+)\]$")
_OH_PY = re.compile(r"^\[Python interpreter: (.+)\]$")
_OH_FINISHED = re.compile(r"^\[Command finished with exit code (-?\d+)\]$")
_OH_OTHER_SUFFIX = re.compile(r"^\[The command (?:timed out|has no new output) .*\]$")
OH_PREFIX = "[Below is the output of the previous command.]\n"
STYLES = ("awctl", "openhands", "state", "raw")


@dataclass(frozen=True)
class BashResult:
    """A bash result split into its output and what its footer says (``None``: not shown)."""

    style: str
    output: str
    exit_code: int | None = None
    cwd: str | None = None
    timed_out: bool = False
    open_file: str | None = None
    # OpenHands prints the exit code twice; a disagreement is a finding, so both are kept.
    completed_code: int | None = None


def parse_openhands(text: str) -> BashResult | None:
    """OpenHands' form, or None when ``text`` ends with none of its metadata lines."""
    lines = text.rstrip("\n").split("\n")
    completed = finished = None
    cwd = None
    seen = False
    cut = len(lines)
    # The metadata lines come last, in this order; walk back over them.
    for pattern in (_OH_FINISHED, _OH_PY, _OH_CWD, _OH_COMPLETED):
        if cut and (m := pattern.match(lines[cut - 1])):
            seen = True
            cut -= 1
            if pattern is _OH_FINISHED:
                finished = int(m.group(1))
            elif pattern is _OH_CWD:
                cwd = m.group(1)
            elif pattern is _OH_COMPLETED:
                completed = int(m.group(1))
    timed_out = False
    if cut and _OH_OTHER_SUFFIX.match(lines[cut - 1]):
        seen, timed_out = True, "timed out" in lines[cut - 1]
        cut -= 1
    if not seen:
        return None
    output = "\n".join(lines[:cut])
    if output.startswith(OH_PREFIX):
        output = output[len(OH_PREFIX) :]
    code = finished if finished is not None else completed
    return BashResult("openhands", output, code, cwd, timed_out, completed_code=completed)


def parse_result(text: str) -> BashResult:
    """The bash result in whichever form ``text`` has (``raw`` when it has no footer)."""
    awctl = parse_bash(text)
    if awctl is not None:
        return BashResult("awctl", awctl.text, awctl.exit_code, awctl.cwd, awctl.timed_out)
    body, state = split_state(text)
    if state is not None:
        output = "" if body.strip() == NO_OUTPUT else body
        return BashResult("state", output, None, state.cwd, open_file=state.open_file)
    oh = parse_openhands(text)
    if oh is not None:
        return oh
    return BashResult("raw", text)


# What a system prompt says about the footer (the awctl action space names its footer line).
_SAYS_AWCTL = re.compile(r"\[exit_code: N\] \[cwd: DIR\]")
_SAYS_OPENHANDS = re.compile(r"\[Command finished with exit code|\[Current working directory:")


def convention(trajectory: Trajectory, index: int) -> str | None:
    """The footer style the trajectory established before turn ``index``: from its metadata, its system
    prompt, or its earlier bash results (the first one with a footer decides); None when nothing says."""
    declared = trajectory.metadata.get("bash_observation_format")
    if declared in STYLES:
        return str(declared)
    from .replay import parse_action

    styles = []
    for turn in trajectory.turns[:index]:
        if isinstance(parse_action(turn.action), BashCall):
            styles.append(parse_result(turn.observation).style)
    known = [s for s in styles if s != "raw"]
    if known:
        return known[0]
    if state_line_established(trajectory, index):
        return "state"
    system = trajectory.system.render()
    if _SAYS_AWCTL.search(system):
        return "awctl"
    if _SAYS_OPENHANDS.search(system):
        return "openhands"
    if len(styles) >= 2:
        # Two or more earlier results without any footer: this harness prints none.
        return "raw"
    return None


def state_line_established(trajectory: Trajectory, index: int) -> bool:
    """Whether the trajectory established that every observation ends with SWE-agent's state line before
    turn ``index``: its importer says so (``metadata["bash_observation_format"] == "state"``), every
    earlier observation (at least one) carries it, or, before the first turn, the initial state ends with
    it."""
    declared = trajectory.metadata.get("bash_observation_format")
    if declared in STYLES:
        return declared == "state"
    earlier = [split_state(turn.observation)[1] is not None for turn in trajectory.turns[:index]]
    if earlier:
        return all(earlier)
    return split_state(trajectory.system.initial_state or "")[1] is not None
