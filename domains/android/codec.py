"""The android domain's codecs: AndroidWorld JSON actions and Android screens.

* :class:`AndroidActionCodec` — the 14 ``action_type``s of AndroidWorld's ``json_action.py`` with its
  rules (:mod:`.actions`); ``family`` is the action type.
* :class:`AndroidObservationCodec` — a UI element list or a uiautomator XML dump under optional
  ``Key: value`` header lines (foreground app/activity), or a prose description (:mod:`.screens`,
  :mod:`.uixml`). Both codecs give a parsed text back byte for byte and raise only ``CodecError``.
"""

from __future__ import annotations

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

from .actions import ACTION_TYPES, AndroidAction, parse_action, render_action
from .screens import Screen, canonical_screen, parse_screen, render_screen
from .uixml import compact

ACTION_SPACE = """\
Each action is one JSON object (AndroidWorld's action schema):
- {"action_type": "click", "index": <element index>}  (or "x": <px>, "y": <px> instead of "index")
- {"action_type": "double_tap", "index": <element index>}  (or "x"/"y")
- {"action_type": "long_press", "index": <element index>}  (or "x"/"y")
- {"action_type": "input_text", "text": "<text>", "index": <element index>}  (taps the field, types the text,
  presses Enter; "clear_text": true empties the field first; without a target it types into the focused field)
- {"action_type": "keyboard_enter"}  (optional "keycode": "KEYCODE_..." presses that key instead)
- {"action_type": "navigate_home"}
- {"action_type": "navigate_back"}
- {"action_type": "scroll", "direction": "up|down|left|right", "index": <optional element to scroll>}
- {"action_type": "swipe", "direction": "up|down|left|right"}  (a whole-screen swipe, the inverse of scroll)
- {"action_type": "open_app", "app_name": "<app name>"}
- {"action_type": "wait"}
- {"action_type": "status", "goal_status": "complete|infeasible"}  (ends the episode)
- {"action_type": "answer", "text": "<answer to the user>"}
- {"action_type": "unknown"}  (does nothing)
An action names its target by "index" (an element of the screen's UI element list) or by "x" and "y" pixel
coordinates, never both. Key codes start with KEYCODE_."""


class AndroidActionCodec(ActionCodec):
    """AndroidWorld JSON actions (see :mod:`.actions`)."""

    def parse(self, text: str) -> AndroidAction:
        return parse_action(text)

    def render(self, action: AndroidAction) -> str:
        if not isinstance(action, AndroidAction):
            raise CodecError(f"cannot render {type(action).__name__} as an android action")
        return render_action(action)

    def schema(self) -> str:
        return ACTION_SPACE

    def family(self, text: str) -> str:
        try:
            return self.parse(text).action_type
        except CodecError:
            return "invalid"

    @property
    def action_types(self) -> tuple[str, ...]:
        return ACTION_TYPES


class AndroidObservationCodec(ObservationCodec):
    """Android screens (see :mod:`.screens`): element lists, uiautomator dumps, or prose."""

    def parse(self, text: str) -> Screen:
        return parse_screen(text)

    def render(self, observation: Screen) -> str:
        if not isinstance(observation, Screen):
            raise CodecError(f"cannot render {type(observation).__name__} as an android screen")
        return render_screen(observation)

    def normalize(self, text: str) -> str:
        """The canonical spelling of a structured screen (quote style, blank lines, whitespace between a
        dump's tags and its attribute spacing do not count); prose is compared line by line without
        trailing spaces."""
        try:
            screen = parse_screen(text)
        except CodecError:
            return super().normalize(text)
        if screen.kind == "text":
            return super().normalize(text)
        if screen.document is not None:
            compact(screen.document)
        return canonical_screen(screen).strip()
