"""The ``os`` domain object: ties codecs, verifiers, prompts, importers, tasks and the real desktop together."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import OsActionCodec, OsObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment

_APP_NOTES = {"mousepad": "Mousepad (text editor)", "galculator": "galculator (calculator)"}


class OsDomain(Domain):
    """A Linux desktop driven by pyautogui code or computer_13 actions, observed as its accessibility tree."""

    name = "os"
    modality = "gui"
    description = (
        "a Linux desktop (Xvfb, openbox, GTK apps: mousepad, galculator); actions are pyautogui Python code or "
        "OSWorld computer_13 JSON, observations are OSWorld's AT-SPI accessibility tree (XML or linearized table)"
    )

    def __init__(self) -> None:
        self.action_codec = OsActionCodec()
        self.observation_codec = OsObservationCodec()
        # The settings of the last real env made: the recorder builds an episode's prompt right after its env,
        # and the prompt must state that env's screen size and representation.
        self._env_settings: dict[str, Any] | None = None

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import os_prompt_builder

        return os_prompt_builder()

    def _settings(self) -> dict[str, Any]:
        from .env import DEFAULTS

        if self._env_settings is not None:
            return self._env_settings
        from awctl.config import load_project_config

        return {**DEFAULTS, **load_project_config().domain_settings("os")}

    def first_observation(self, sections: SystemPrompt) -> str:
        """The first accessibility tree :meth:`sections_for` fenced into the initial state."""
        from awctl.domain import fenced_block_after

        tree = fenced_block_after(sections.initial_state, "The accessibility tree shows:")
        return sections.initial_state if tree is None else tree

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """Five sections; the initial state names the screen size, the open applications and files, and shows
        the first accessibility tree in a fence (```xml for XML, ``` for the table)."""
        settings = self._settings()
        w, h = int(settings["width"]), int(settings["height"])
        lines = [
            f"An Ubuntu-style Linux desktop (X11 under Xvfb, the openbox window manager) with a {w}x{h} screen. "
            "The user's home directory is /home/user."
        ]
        if task is not None:
            apps = [a if isinstance(a, str) else a[0] for a in task.setup.get("apps") or []]
            if apps:
                lines.append("Open applications: " + ", ".join(_APP_NOTES.get(a, a) for a in apps) + ".")
            files = task.setup.get("files") or {}
            if files:
                lines.append("Files in the home directory: " + ", ".join(sorted(files)) + ".")
        if initial_state:
            fence = "xml" if initial_state.lstrip().startswith("<") else ""
            lines.append(f"The accessibility tree shows:\n```{fence}\n{initial_state}\n```")
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state="\n".join(lines),
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
        return ["basic"]

    def tasks(self, suite: str) -> list[Task]:
        from .tasks import BASIC

        return list(BASIC) if suite == "basic" else []

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    def copy_baseline(self, trajectory: Any, index: int) -> str | None:
        """Nothing changes: the previous tree (the initial one for the first turn)."""
        if index > 0:
            return trajectory.turns[index - 1].observation
        from .verifiers import initial_observation

        start = initial_observation(trajectory.system)
        if start is None:
            return None
        from .a11y import render_observation

        return render_observation(start)

    # AgentWorldBench bodies: the action is a free-form code block (kept as written, fence included); the
    # observation is the tree text as is.
    def from_awb_action(self, body: str) -> str:
        return body

    def to_awb_action(self, action: str) -> str:
        return action

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        from .env import DEFAULTS, OsDesktopEnv

        env = OsDesktopEnv(config)
        self._env_settings = {**DEFAULTS, **env.settings}
        return env

    def real_env_status(self) -> tuple[bool, str]:
        from .desktop import missing_components

        missing = missing_components()
        if missing:
            return False, "missing " + "; ".join(missing) + (
                " (apt-get install -y xvfb dbus-daemon at-spi2-core python3-pyatspi openbox mousepad galculator)")
        return True, "Xvfb desktop with openbox, mousepad and galculator; AT-SPI tree read by the system python"
