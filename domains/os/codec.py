"""Action and observation codecs of the ``os`` (desktop) domain.

Actions (:mod:`.actions`): AgentWorldBench's free-form Python code blocks (``pyautogui`` calls and any
other code, parsed with :mod:`ast`, never executed here), OSWorld's ``computer_13`` JSON actions, and
the special strings ``WAIT``/``DONE``/``FAIL``. Key names are checked against OSWorld's key list and
literal coordinates against the screen when the codec knows it (``OsActionCodec(screen=(w, h))``).

Observations (:mod:`.a11y`): the accessibility tree as OSWorld's AT-SPI XML or as its linearized table,
each optionally after a preamble. Every accepted text renders back byte for byte.

Both codecs raise only :class:`awctl.errors.CodecError` on bad input.
"""

from __future__ import annotations

import re

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

from .a11y import A11yObservation, parse_observation, render_observation
from .actions import ACTION_TYPES, OsAction, parse_action

_SCHEMA = """\
Either Python code using pyautogui (run on the desktop; write it in a ```python fence), e.g.
```python
pyautogui.click(480, 320)
pyautogui.write('hello')
pyautogui.hotkey('ctrl', 's')
```
or one OSWorld computer_13 action as JSON, e.g. {"action_type": "CLICK", "parameters": {"x": 480, "y": 320}}.
computer_13 types: MOVE_TO(x, y), CLICK(button?, x?, y?, num_clicks?), MOUSE_DOWN(button?), MOUSE_UP(button?),
RIGHT_CLICK(x?, y?), DOUBLE_CLICK(x?, y?), DRAG_TO(x, y), SCROLL(dx, dy), TYPING(text), PRESS(key),
KEY_DOWN(key), KEY_UP(key), HOTKEY(keys), WAIT, FAIL, DONE.
Key names are pyautogui's ('enter', 'tab', 'ctrl', 'alt', 'shift', 'f4', 'a'...). Coordinates are screen
pixels from the top-left corner. Answer WAIT to wait, DONE when the task is complete, FAIL when it cannot
be done."""


class OsActionCodec(ActionCodec):
    """Parses desktop actions (see :mod:`.actions`); ``screen`` (width, height) also bounds coordinates."""

    def __init__(self, screen: tuple[int, int] | None = None) -> None:
        self.screen = screen

    def parse(self, text: str) -> OsAction:
        return parse_action(text, screen=self.screen)

    def render(self, action: OsAction) -> str:
        if not isinstance(action, OsAction):
            raise CodecError(f"expected an OsAction, got {type(action).__name__}")
        return action.text

    def schema(self) -> str:
        return _SCHEMA

    def family(self, text: str) -> str:
        try:
            return self.parse(text).family
        except CodecError:
            return "invalid"

    @staticmethod
    def action_types() -> tuple[str, ...]:
        return ACTION_TYPES


_TRAILING_WS = re.compile(r" +$", re.M)


class OsObservationCodec(ObservationCodec):
    """Parses accessibility-tree observations (OSWorld XML or linearized table, see :mod:`.a11y`)."""

    def parse(self, text: str) -> A11yObservation:
        return parse_observation(text)

    def render(self, observation: A11yObservation) -> str:
        if not isinstance(observation, A11yObservation):
            raise CodecError(f"expected an A11yObservation, got {type(observation).__name__}")
        return render_observation(observation)

    def normalize(self, text: str) -> str:
        """Exact-match form: surrounding blank space and trailing spaces removed (XML is one line in OSWorld's
        layout, so this mostly trims)."""
        return _TRAILING_WS.sub("", text.strip())
