"""The calc domain: a calculator REPL with variables, assembled from this package's modules.

Every part is imported where it is used, so listing the domain (``awctl domains``) stays cheap.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.prompts import PromptBuilder

from .codec import CalcActionCodec, CalcObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment


class CalcDomain(Domain):
    name = "calc"
    modality = "text"
    description = "Example third-party domain: a calculator REPL with variables"

    def __init__(self) -> None:
        self.action_codec = CalcActionCodec()
        self.observation_codec = CalcObservationCodec()

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import calc_prompt_builder

        return calc_prompt_builder()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    def verifiers(self) -> list[Verifier]:
        from .verifiers import VERIFIERS

        return list(VERIFIERS)

    def importers(self) -> list[Importer]:
        from .importers import TRANSCRIPT

        return [TRANSCRIPT]

    def suites(self) -> list[str]:
        from .tasks import SUITES

        return list(SUITES)

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import tasks_for

        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    def faults(self) -> list[Fault]:
        from .faults import FAULTS

        return list(FAULTS)

    def real_env(self, config: dict[str, Any] | None = None) -> Environment:
        from .env import CalcEnv

        return CalcEnv()

    def real_env_status(self) -> tuple[bool, str]:
        return True, "in-process calculator"
