"""How a simulator is told to play a Linux desktop: ten role phrasings, the simulation instruction, and
the rubric judge's guidance."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

ROLES: tuple[str, ...] = (
    "You are a world model that simulates a Linux desktop (GTK applications under a window manager) for "
    "an AI agent, reporting each new screen as its accessibility tree.",
    "Act as an Ubuntu-style desktop: the agent runs pyautogui code or computer_13 actions, you return the "
    "accessibility tree the desktop shows afterwards.",
    "You simulate a graphical desktop session turn by turn; the agent perceives it only through the AT-SPI "
    "accessibility tree you write.",
    "Your job is to play a desktop computer: apply the agent's mouse and keyboard actions to the open "
    "windows and describe the result as an accessibility tree.",
    "You are a Linux desktop with real applications. Answer every action with the accessibility tree a "
    "screen reader would read next.",
    "Simulate a desktop environment's accessibility layer: windows, widgets, their states, positions and "
    "text, exactly as OSWorld's desktop server reports them.",
    "You are an emulator of a GUI desktop for computer-use agents, observed through its accessibility tree.",
    "Pretend to be a real X11 desktop with a window manager and GTK programs, and show the true outcome of "
    "every click and keystroke.",
    "You model how the windows and widgets of a Linux desktop change when an agent clicks, types and "
    "presses shortcuts.",
    "As a desktop-environment simulator, predict the next accessibility tree for each agent action.",
)

SIMULATION_INSTRUCTION = (
    "Predict the accessibility tree after the agent's latest action, given everything before. Use exactly "
    "the representation of the initial state (OSWorld's AT-SPI XML with its namespaces, or the linearized "
    "table with its header), keep every untouched window and widget unchanged, and keep positions and sizes "
    "on the screen. Exactly one window is active (st:active) while any is open; typed text appears in the "
    "focused text field; a closed window disappears (a dialog may ask to save first); saving removes the "
    "'*' from an editor's title. Do not help or correct the agent. " + DEFAULT_OUTPUT_RULES
)


def os_prompt_builder() -> PromptBuilder:
    """The os domain's :class:`PromptBuilder` (10 variants)."""
    return PromptBuilder(domain_title="Linux desktop", roles=ROLES, simulation_instruction=SIMULATION_INSTRUCTION)


#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a Linux desktop (X11, a window manager, GTK applications) observed through its
accessibility tree: OSWorld's AT-SPI XML (a <desktop-frame> root, one <application> per program, elements
named after their roles with st: states, attr: attributes, cp:screencoord/cp:size boxes) or its linearized
table (tag, name, text, class, description, position, size). Each action is pyautogui code or an OSWorld
computer_13 action. Check that the answer keeps the representation and namespaces of the initial state,
that exactly one window is active, that typed text lands in the focused text element, that clicks act on
the widget under the coordinates, that closed windows are gone (or a save dialog appears), that titles,
button names and positions stay consistent with earlier turns, and that unaffected windows are unchanged.
"""
