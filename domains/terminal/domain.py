"""The ``terminal`` domain object: ties codecs, verifiers, prompts, importers, tasks and the env together."""

from __future__ import annotations

import re
import shutil
from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import (
    DEFAULT_COLS,
    DEFAULT_ROWS,
    TerminalActionCodec,
    TerminalObservationCodec,
)

if TYPE_CHECKING:
    from awctl.env import Environment

_FENCED = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.S)
_SCREEN_FENCED = re.compile(r"^\s*```[a-z]*\n(.*?)\n?```\s*$", re.S)


class TerminalDomain(Domain):
    """A bash shell in a 160x40 terminal driven by Terminus-style keystrokes."""

    name = "terminal"
    modality = "text"
    description = "bash in a sandboxed terminal; actions are Terminus keystroke lists, observations are screens"

    def __init__(self) -> None:
        self.action_codec = TerminalActionCodec()
        # No fixed geometry: each trajectory states its own terminal size (checked by screen_geometry).
        self.observation_codec = TerminalObservationCodec(None, None)

    def transforms(self) -> dict[str, Any]:
        from .forms import to_incremental

        return {"incremental": to_incremental}

    def copy_baseline(self, trajectory: Any, index: int) -> str | None:
        from .baseline import copy_baseline

        return copy_baseline(trajectory, index)

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import terminal_prompt_builder

        return terminal_prompt_builder()

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """Five sections; the initial state is the first screen (fenced) and the working directory."""
        screen = self.observation_codec.normalize(initial_state) or "root@sandbox:/workspace#"
        state = [
            f"A bash shell in a {DEFAULT_COLS}x{DEFAULT_ROWS} terminal. Working directory: /workspace "
            "(also $HOME). The machine has GNU coreutils, grep, sed, awk, tar, gzip and python3; no network.",
        ]
        if task is not None and task.setup.get("files"):
            state.append("Files in /workspace: " + ", ".join(sorted(task.setup["files"])))
        if task is not None and task.setup.get("env"):
            state.append("Environment: " + ", ".join(f"{k}={v}" for k, v in sorted(task.setup["env"].items())))
        state.append(f"The screen shows:\n```\n{screen}\n```")
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state="\n".join(state),
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
        return ["basic", "drill", "readback"]

    def tasks(self, suite: str) -> list[Task]:
        if suite in ("drill", "readback"):
            from .drills import DRILL, READBACK

            return list(DRILL if suite == "drill" else READBACK)
        from .tasks import BASIC

        return list(BASIC) if suite == "basic" else []

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    # AgentWorldBench bodies: the action as a ```json fence (or a bare list), the screen in a ``` fence.
    def from_awb_action(self, body: str) -> str:
        m = _FENCED.match(body)
        text = m.group(1) if m else body.strip()
        return self.action_codec.canonical(text)

    def to_awb_action(self, action: str) -> str:
        return f"```json\n{action}\n```"

    def from_awb_observation(self, body: str) -> str:
        # Exactly the fenced text: trailing spaces (an incremental prompt's "$ ") and blank rows stay.
        m = _SCREEN_FENCED.match(body)
        return m.group(1) if m else body

    def to_awb_observation(self, observation: str) -> str:
        return f"```\n{observation}\n```"

    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        from .env import TerminalEnv

        return TerminalEnv(config)

    def real_env_status(self) -> tuple[bool, str]:
        missing = [p for p in ("bwrap", "tmux") if shutil.which(p) is None]
        if missing:
            return False, f"missing {', '.join(missing)} (apt-get install -y bubblewrap tmux)"
        return True, "bubblewrap sandbox with a tmux terminal"
