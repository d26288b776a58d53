"""How a simulator is told to play an Android phone: ten role phrasings, the simulation instruction, the
initial-state section, and what a rubric judge checks."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

ROLES: tuple[str, ...] = (
    "You are a world model that simulates an Android phone for an AI agent that operates it.",
    "Act as an Android device: the agent sends AndroidWorld JSON actions, you return the next screen.",
    "You simulate an Android emulator turn by turn, screen by screen, exactly as it would behave.",
    "Your job is to play an Android phone: answer each action with the UI the device would show.",
    "You are an Android device. Reply to every tap, swipe, key press or typed text with the resulting screen.",
    "Simulate a real Android phone's user interface; the agent sees only the screens you produce.",
    "You are an emulator of Android apps (Settings, Contacts, a notes app and others) driven over ADB.",
    "Pretend to be a real Android handset and show the true result of every action on its screen.",
    "You model how an Android phone's screen changes when an agent acts on its UI elements.",
    "As an Android environment simulator, predict the next UI element list or window dump for each action.",
)

SIMULATION_INSTRUCTION = (
    "Predict the phone's screen after the agent's latest action, given everything before. Write it in the "
    "representation the initial state uses: the same header lines (foreground app, activity, screen size), "
    "then either one `UI element <n>: UIElement(...)` line per element with the same fields in the same order, "
    "or a complete uiautomator XML dump. Indices count the elements of the screen the action acts on; a click, "
    "long press or double tap acts on the element's centre; input_text taps the field, types the text and "
    "presses Enter; an index that is not on the screen, a tap on a disabled element, and status, answer or "
    "unknown actions change nothing. Keep bounds inside the screen, flags boolean, and every element that "
    "the action does not touch exactly as it was. Do not help or correct the agent. " + DEFAULT_OUTPUT_RULES
)


def android_prompt_builder() -> PromptBuilder:
    """The android domain's :class:`PromptBuilder` (10 variants)."""
    return PromptBuilder(domain_title="Android phone", roles=ROLES, simulation_instruction=SIMULATION_INSTRUCTION)


def initial_state_text(first_screen: str, size: str | None, representation: str) -> str:
    """The initial-state section: the device, the screen size, the representation and the first screen."""
    kind = "a uiautomator XML window dump" if representation == "xml" else "a UI element list (AndroidWorld)"
    lines = [f"An Android phone (Android 11 emulator) driven over ADB. Screen size: {size or 'unknown'}.",
             f"Each observation is {kind} under Foreground app / Foreground activity / Screen size lines.",
             "The screen shows:", f"```\n{first_screen}\n```"]
    return "\n".join(lines)


#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is an Android phone driven by AndroidWorld JSON actions (click/long_press/double_tap by
element index or x/y, input_text, scroll, swipe, open_app, navigate_back/home, keyboard_enter, wait,
status, answer). Each observation is the next screen: header lines naming the foreground app and activity,
then a UI element list (`UI element <n>: UIElement(text=..., bbox_pixels=BoundingBox(...), is_checked=...)`)
or a uiautomator XML dump, in the representation the initial state uses. Check that the action's effect is
what the real app would do (a toggle flips its switch, typed text appears in the field that was tapped or
focused, back/home/open_app change the foreground activity), that untouched elements keep their text,
bounds and flags, that bounds stay inside the screen and flags are booleans, and that impossible actions
(a missing index, a disabled element, status/answer) leave the screen unchanged.
"""
