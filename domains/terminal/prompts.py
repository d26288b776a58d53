"""How a simulator is told to play a Linux terminal: ten role phrasings and the simulation instruction."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

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

SIMULATION_INSTRUCTION = (
    "Predict the terminal screen after the agent's latest keystrokes, given everything before. "
    "Typed text is echoed after the prompt; Enter runs the command and its output follows, then a new "
    "prompt `root@sandbox:<cwd># ` with the absolute working directory. Keystrokes without Enter only "
    "echo. Keep files, variables and the working directory consistent with the history, wrap lines at "
    "the terminal width, and show only the visible screen (the last rows when output scrolls). Do not "
    "help or correct the agent. " + DEFAULT_OUTPUT_RULES
)


INCREMENTAL_SIMULATION_INSTRUCTION = (
    "Predict what the terminal adds after the agent's latest keystrokes, given everything before. Show only "
    "the new output since the previous observation: the echo of the typed text (continuing the current prompt "
    "line), the output of any command that ran, and the new prompt `root@sandbox:<cwd># ` with the absolute "
    "working directory and its trailing space. Keystrokes without Enter only echo. Keep files, variables and "
    "the working directory consistent with the history and wrap lines at the terminal width. Do not help or "
    "correct the agent. " + DEFAULT_OUTPUT_RULES
)


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
