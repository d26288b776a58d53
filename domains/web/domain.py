"""The ``web`` domain object: ties codecs, verifiers, prompts, importers, tasks and the browser together."""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.errors import CodecError
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import WebActionCodec, WebObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment

# An action body may come fenced (```python ... ```) or in <action> tags, as agents write it.
_FENCED = re.compile(r"^\s*```[a-z]*\n(.*?)\n?```\s*$", re.S)
_TAGGED = re.compile(r"^\s*<action>\s*(.*?)\s*</action>\s*$", re.S)

INITIAL_STATE_INTRO = (
    "A headless Chromium browser, viewport 1280x720, on two local web applications: Acme Shop "
    "(http://shop.test/: products, cart, checkout, orders, reviews) and Bugsy, an issue tracker "
    "(http://tracker.test/: issues, comments, labels). No other host is reachable. The browser shows:"
)


class WebDomain(Domain):
    """A real browser driven with BrowserGym's high-level actions, observed as an accessibility tree."""

    name = "web"
    modality = "gui"
    description = ("a web browser driven by BrowserGym high-level actions; observations are the open tabs and "
                   "the page's flattened accessibility tree (real env: Chromium + Playwright on a shop and an "
                   "issue tracker served on 127.0.0.1)")

    def __init__(self) -> None:
        self.action_codec = WebActionCodec()
        self.observation_codec = WebObservationCodec()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import web_prompt_builder

        return web_prompt_builder()

    def first_observation(self, sections: SystemPrompt) -> str:
        """The first page :meth:`sections_for` put after the browser's description."""
        head = INITIAL_STATE_INTRO + "\n\n"
        state = sections.initial_state
        return state[len(head):] if state.startswith(head) else state

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """Five sections; the initial state describes the apps and holds the first observation verbatim."""
        state = INITIAL_STATE_INTRO + ("\n\n" + initial_state if initial_state else "")
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state=state,
            simulation_instruction=self.prompt_builder.simulation_instruction,
        )

    def verifiers(self) -> list[Verifier]:
        from .verifiers import VERIFIERS

        return list(VERIFIERS)

    def faults(self) -> list[Fault]:
        from .faults import FAULTS

        return list(FAULTS)

    def importers(self) -> list[Importer]:
        from .importers import IMPORTERS

        return list(IMPORTERS)

    def suites(self) -> list[str]:
        return ["shop", "tracker", "cross", "all"]

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import tasks_for

        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    # AgentWorldBench bodies: an action possibly fenced or tagged becomes its canonical calls when it parses;
    # observations are the codec's lossless text and pass unchanged.
    def from_awb_action(self, body: str) -> str:
        m = _FENCED.match(body) or _TAGGED.match(body)
        text = m.group(1) if m else body
        try:
            return self.action_codec.canonical(self.action_codec.parse(text))
        except CodecError:
            return body

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        from .env import WebEnv

        return WebEnv(config)

    def real_env_status(self) -> tuple[bool, str]:
        from .env import playwright_status

        return playwright_status()
