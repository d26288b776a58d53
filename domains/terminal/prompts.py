"""How a simulator is told to play a Linux terminal: ten role phrasings and the simulation instruction."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

from .prompt_shapes import Prompt, render_prompt

ROLES: tuple[str, ...] = (
    "You are a world model that simulates a Linux terminal running bash for an AI agent.",
    "Act as a bash shell inside a terminal emulator: the agent types keystrokes, you show the screen.",
    "You simulate a sandboxed Linux machine's terminal, turn by turn, exactly as it would look.",
    "Your job is to play a terminal session: render the screen a real bash shell would display.",
    "You are a Linux terminal. Reply to each batch of keystrokes with the resulting terminal screen.",
    "Simulate an interactive bash session in a fixed-size terminal; the agent only sees your screens.",
    "You are an emulator of a command-line environment (bash on Linux, GNU coreutils).",
    "Pretend to be a real shell in a terminal window and show the true result of every keystroke.",
    "You model how a Linux terminal's screen changes when an agent types into it.",
    "As a terminal emulator with a bash shell behind it, predict the next screen for each action.",
)

# The simulation instructions name the prompt the trajectory's shell shows: awctl's own by default, another
# shell's in a trajectory recorded with another prompt style (see prompt_phrase).
AWCTL_PROMPT_PHRASE = "`root@sandbox:<cwd># ` with the absolute working directory"

_SCREEN_HEAD = (
    "Predict the terminal screen after the agent's latest keystrokes, given everything before. "
    "Typed text is echoed after the prompt; Enter runs the command and its output follows, then a new "
    "prompt "
)
_SCREEN_TAIL = (
    ". Keystrokes without Enter only "
    "echo. Keep files, variables and the working directory consistent with the history, wrap lines at "
    "the terminal width, and show only the visible screen (the last rows when output scrolls). Do not "
    "help or correct the agent. " + DEFAULT_OUTPUT_RULES
)
_INCREMENTAL_HEAD = (
    "Predict what the terminal adds after the agent's latest keystrokes, given everything before. Show only "
    "the new output since the previous observation: the echo of the typed text (continuing the current prompt "
    "line), the output of any command that ran, and the new prompt "
)
_INCREMENTAL_TAIL = (
    " and its trailing space. Keystrokes without Enter only echo. Keep files, variables and "
    "the working directory consistent with the history and wrap lines at the terminal width. Do not help or "
    "correct the agent. " + DEFAULT_OUTPUT_RULES
)


def simulation_instruction(prompt: str = AWCTL_PROMPT_PHRASE) -> str:
    """The instruction for whole-screen observations, naming the shell's ``prompt`` (a
    :func:`prompt_phrase`)."""
    return _SCREEN_HEAD + prompt + _SCREEN_TAIL


def incremental_simulation_instruction(prompt: str = AWCTL_PROMPT_PHRASE) -> str:
    """The instruction for incremental observations (only the new output), naming the shell's ``prompt``."""
    return _INCREMENTAL_HEAD + prompt + _INCREMENTAL_TAIL


SIMULATION_INSTRUCTION = simulation_instruction()
INCREMENTAL_SIMULATION_INSTRUCTION = incremental_simulation_instruction()


def incremental_for(instruction: str) -> str | None:
    """The incremental counterpart of a whole-screen instruction this module wrote (same prompt), else
    ``None`` (an instruction written elsewhere is left to its author)."""
    if instruction.startswith(_SCREEN_HEAD) and instruction.endswith(_SCREEN_TAIL) and \
            len(instruction) > len(_SCREEN_HEAD) + len(_SCREEN_TAIL):
        return incremental_simulation_instruction(instruction[len(_SCREEN_HEAD): -len(_SCREEN_TAIL)])
    return None


def prompt_shape(prompt: Prompt) -> str:
    """A shell prompt's shape in backticks, the directory as ``<cwd>`` (an absolute path) or ``<dir>`` (as
    the prompt shows it): ``root@sandbox:<cwd># ``, ``alice@devbox:<dir>$ ``, ``bash-5.2$ ``."""
    if prompt.path is None:
        return f"`{prompt.text}`"
    slot = "<cwd>" if prompt.family == "userhost" and prompt.path.startswith("/") else "<dir>"
    return "`" + render_prompt(prompt.family, prompt.prefix, prompt.user, prompt.host, slot, prompt.sigil) + "`"


def prompt_phrase(prompt: Prompt) -> str:
    """How the instructions name a shell's prompt, read from the prompt a screen shows: its shape and what
    its directory part shows (``AWCTL_PROMPT_PHRASE`` for awctl's own)."""
    shape = prompt_shape(prompt)
    if prompt.path is None:
        return f"{shape} (the same in every directory)"
    if "<cwd>" in shape:
        return f"{shape} with the absolute working directory"
    if prompt.family == "bracket":
        return f"{shape} (`<dir>` the last part of the working directory, `~` at the home directory)"
    return f"{shape} (`<dir>` the working directory, `~` for the home directory)"


def terminal_prompt_builder() -> PromptBuilder:
    """The terminal domain's :class:`PromptBuilder` (10 variants)."""
    return PromptBuilder(domain_title="Linux terminal", roles=ROLES, simulation_instruction=SIMULATION_INSTRUCTION)

#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a Linux shell (bash) in a terminal. Each action is a command line or keystrokes; the
answer is what the terminal shows afterwards: standard output and error interleaved as a terminal would,
exit-status effects, prompts, and nothing else. Check command-specific formats (ls columns, git, grep,
python tracebacks), the file system state implied by earlier commands, and error messages with the exact
wording the real programs print.
"""
