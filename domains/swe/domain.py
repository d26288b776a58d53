"""The ``swe`` domain: a git repository in a sandbox, a str_replace_editor and a bash shell.

Registered through the public hook like any third-party domain. Module-level imports stay light (stdlib
and awctl core only); tasks, the environment and importers load when asked for.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import SweActionCodec, SweObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment


class SweDomain(Domain):
    """Software engineering in a repository (SWE-agent / SWE-bench tools)."""

    name = "swe"
    modality = "text"
    description = "Fix and extend a git repository at /testbed with str_replace_editor and bash (SWE-agent tools)"

    def __init__(self) -> None:
        self.action_codec = SweActionCodec()
        self.observation_codec = SweObservationCodec()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import swe_prompt_builder

        return swe_prompt_builder()

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """Sections for simulating ``task``; the initial state defaults to the repository's directory view."""
        description = task.instruction if task else "Work on the Python repository checked out at /testbed."
        if task is not None:
            repo = task.setup.get("repo", "")
            description += f"\n\nThe repository ({repo}) is a git checkout at /testbed; its tests run with python3 -m unittest."
        if not initial_state and task is not None:
            initial_state = _initial_view(task.setup.get("repo", ""))
        return SystemPrompt(
            task_description=description,
            action_space=self.action_codec.schema(),
            initial_state=initial_state,
            simulation_instruction=self.prompt_builder.simulation_instruction,
        )

    def verifiers(self) -> list[Verifier]:
        from .verifiers import ALL_VERIFIERS

        return list(ALL_VERIFIERS)

    def importers(self) -> list[Importer]:
        from .importers import IMPORTERS

        return list(IMPORTERS)

    def suites(self) -> list[str]:
        from .tasks import SUITES

        return list(SUITES)

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import tasks

        return tasks(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    def faults(self) -> list[Fault]:
        from .faults import FAULTS

        return list(FAULTS)

    # ── AgentWorldBench: a fenced JSON tool call; observations are the text itself ──
    def from_awb_action(self, body: str) -> str:
        """The canonical action for an AWB action body (fenced JSON, function-call JSON, CLI form...).

        A body that is no tool call is a shell command line, as SWE-agent's classic interface sends bash."""
        from awctl.errors import CodecError

        from .codec import BashCall

        try:
            return self.action_codec.canonical(body)
        except CodecError:
            text = body.strip()
            if not text or text.startswith(("{", "[", "```")):
                raise
            return self.action_codec.render(BashCall(text))

    def to_awb_action(self, action: str) -> str:
        return "```json\n" + self.action_codec.canonical(action) + "\n```"

    def from_awb_observation(self, body: str) -> str:
        return body

    def to_awb_observation(self, observation: str) -> str:
        return observation

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        from .env import SweEnv

        return SweEnv(config)

    def real_env_status(self) -> tuple[bool, str]:
        from .env import real_env_status

        return real_env_status()


def _initial_view(repo: str) -> str:
    """The directory view the real environment shows on reset, computed from the fixture (no sandbox)."""
    from .editor import Editor
    from .env import REPOS_DIR

    if not repo or not (REPOS_DIR / repo).is_dir():
        return ""
    return Editor(REPOS_DIR / repo, "/testbed").run("view", "/testbed").observation
