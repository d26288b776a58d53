"""System-prompt building for simulators: five sections rendered in several wording variants.

Training on several phrasings of the same prompt (the paper uses 10 templates in SFT) keeps a world model
from over-fitting one wording. A variant changes the role sentence, the section headings' style and the
order of the introductory text; the sections' contents are never altered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from awctl.trajectory import SECTION_NAMES, SECTION_TITLES, SystemPrompt

OBSERVATION_TAG = "predicted_observation"

DEFAULT_OUTPUT_RULES = (
    "Think about what the environment would do inside <think></think>, then write exactly the "
    f"observation the environment returns inside <{OBSERVATION_TAG}></{OBSERVATION_TAG}>. Write nothing "
    "after the closing tag."
)

_GENERIC_ROLES = (
    "You are a world model that simulates the {title} environment an AI agent interacts with.",
    "Act as the {title} environment: given the agent's action, produce what the environment returns.",
    "You simulate a {title} environment faithfully, turn by turn.",
    "Your job is to play the role of a {title} environment for an agent.",
    "You are the {title} environment. Respond to each agent action exactly as the real system would.",
    "Simulate the {title} environment. The agent cannot see you; it only sees your observations.",
    "You are an environment simulator for {title} tasks.",
    "Pretend to be a real {title} environment and answer every action with its true result.",
    "You model how a {title} environment reacts to an agent's actions.",
    "As a {title} environment emulator, predict the next observation for each action.",
)

_SIMULATION_INSTRUCTION = (
    "Predict the environment's response to the agent's latest action given everything that happened "
    "before. Stay consistent with the initial state and every earlier observation; do not help or "
    "correct the agent. " + DEFAULT_OUTPUT_RULES
)


def _md(level: str) -> Callable[[str, str], str]:
    return lambda title, body: f"{level} {title}\n{body}"


_HEADING_STYLES: tuple[Callable[[str, str], str], ...] = (
    _md("##"),
    _md("###"),
    lambda t, b: f"**{t}:**\n{b}",
    lambda t, b: f"<{t.lower().replace(' ', '_')}>\n{b}\n</{t.lower().replace(' ', '_')}>",
    lambda t, b: f"{t.upper()}\n{b}",
    lambda t, b: f"[{t}]\n{b}",
    _md("#"),
    lambda t, b: f"{t}:\n{b}",
    lambda t, b: f"=== {t} ===\n{b}",
    lambda t, b: f"--- {t} ---\n{b}",
)


@dataclass
class PromptBuilder:
    """Builds a simulator system prompt from :class:`SystemPrompt` sections in one of ``variants`` wordings.

    * ``domain_title``: how the generic role sentences name the environment (``{title}`` in ``roles``).
    * ``roles``: the opening sentences, one per variant (``{title}`` is replaced by ``domain_title``); a
      domain passes its own ten — the conformance kit requires 10 distinct wordings.
    * ``simulation_instruction``: the default text of that section for new trajectories (what
      ``Domain.sections_for`` puts there); end it with :data:`DEFAULT_OUTPUT_RULES` so a simulator writes
      its answer inside the ``<predicted_observation>`` tag.
    * ``titles``: the section headings, by section name.
    """

    domain_title: str
    roles: Sequence[str] = _GENERIC_ROLES
    simulation_instruction: str = _SIMULATION_INSTRUCTION
    titles: dict[str, str] = field(default_factory=lambda: dict(SECTION_TITLES))

    @property
    def variants(self) -> int:
        """How many wordings ``build`` has: the larger of the number of roles and of heading styles (10)."""
        return max(len(self.roles), len(_HEADING_STYLES))

    def build(self, sections: SystemPrompt, variant: int = 0) -> str:
        """The system prompt text for ``sections`` in wording ``variant`` (``sections.raw`` verbatim when set).

        A variant changes the role sentence, the heading style and whether the role comes first; the
        sections' contents are never altered. A variant outside ``0..variants-1`` raises ``AwctlError``."""
        if not 0 <= variant < self.variants:
            from awctl.errors import AwctlError

            raise AwctlError(
                f"prompt variant {variant} does not exist", hint=f"use 0..{self.variants - 1}"
            )
        if sections.raw is not None:
            return sections.raw
        role = self.roles[variant % len(self.roles)].format(title=self.domain_title)
        heading = _HEADING_STYLES[variant % len(_HEADING_STYLES)]
        body = [
            heading(self.titles[name], getattr(sections, name).strip())
            for name in SECTION_NAMES
            if getattr(sections, name).strip()
        ]
        if sections.extra.strip():
            body.append(sections.extra.strip())
        # Odd variants put the role after the sections, so position is not a shortcut either.
        parts = [role, *body] if variant % 2 == 0 else [*body, role]
        return "\n\n".join(parts)
