"""The ``android`` domain object: ties codecs, verifiers, prompts, importers, tasks and the ADB env together."""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.errors import CodecError
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import AndroidActionCodec, AndroidObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment

_FENCED = re.compile(r"^\s*```[a-z]*\n(.*?)\n?```\s*$", re.S)


def _settings() -> dict[str, Any]:
    try:
        from awctl.config import load_project_config

        return load_project_config().domain_settings("android")
    except Exception:  # a broken awctl.toml is reported by the commands that read it, not by a status line
        return {}


class AndroidDomain(Domain):
    """An Android phone driven by AndroidWorld JSON actions; screens are UI element lists or uiautomator dumps."""

    name = "android"
    modality = "gui"
    description = ("Android phone over ADB; actions are AndroidWorld JSON, observations UI element lists or "
                   "uiautomator dumps with the foreground activity")

    def __init__(self) -> None:
        self.action_codec = AndroidActionCodec()
        self.observation_codec = AndroidObservationCodec()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        from .prompts import android_prompt_builder

        return android_prompt_builder()

    def first_observation(self, sections: SystemPrompt) -> str:
        """The first screen :meth:`sections_for` fenced into the initial state."""
        from awctl.domain import fenced_block_after

        screen = fenced_block_after(sections.initial_state, "The screen shows:")
        return sections.initial_state if screen is None else screen

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        """Five sections; the initial state states the screen size and holds the first screen (fenced)."""
        from .prompts import initial_state_text
        from .screens import SCREEN_SIZE

        size, representation = None, "elements"
        try:
            screen = self.observation_codec.parse(initial_state)
            size = screen.header_value(SCREEN_SIZE)
            representation = screen.kind
        except CodecError:
            pass
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=self.action_codec.schema(),
            initial_state=initial_state_text(initial_state, size if size != "unknown" else None, representation),
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
        from .tasks import tasks_for

        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        from .perturbations import PERTURBATIONS

        return list(PERTURBATIONS)

    # ── AgentWorldBench: the action is a JSON object (bare, fenced, or after "Action:"); screens as they are ──
    def from_awb_action(self, body: str) -> str:
        """The action text of an AWB ``**Action:**`` body; a body that holds no valid action passes through
        unchanged so the verifiers, not the converter, report it."""
        from .actions import extract_action_json, parse_action, render_action

        try:
            return render_action(parse_action(extract_action_json(body)))
        except CodecError:
            return body

    def to_awb_action(self, action: str) -> str:
        return action

    def from_awb_observation(self, body: str) -> str:
        """The screen inside a fenced body when the fence holds a structured screen, else the body."""
        m = _FENCED.match(body)
        if m:
            try:
                if self.observation_codec.parse(m.group(1)).structured:
                    return m.group(1)
            except CodecError:
                pass
        return body

    def to_awb_observation(self, observation: str) -> str:
        return observation

    # ── real environment ──
    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        """An :class:`~awctl_domains.android.env.AdbEnv` (``config`` overrides ``[domains.android]``)."""
        from .env import AdbEnv

        return AdbEnv({**_settings(), **(config or {})})

    def real_env_status(self) -> tuple[bool, str]:
        from .adb import AdbError, find_adb, list_devices

        settings = _settings()
        adb = str(settings.get("adb", "adb"))
        exe = find_adb(adb)
        if exe is None:
            return False, ("no adb on PATH (apt-get install -y adb) and no device or emulator attached; the ADB "
                           "adapter is tested against a transcript stand-in")
        try:
            devices = list_devices(adb, timeout_s=5.0)
        except AdbError as exc:
            return False, exc.message
        ready = [serial for serial, state in devices if state == "device"]
        listed = ", ".join(f"{s} ({st})" for s, st in devices) or "none"
        serial = settings.get("serial")
        if serial:
            if serial in ready:
                return True, f"adb device {serial} ({exe})"
            return False, f"device {serial} is not ready; `adb devices` lists: {listed}"
        if len(ready) == 1:
            return True, f"adb device {ready[0]} ({exe})"
        if not ready:
            return False, f"{exe} lists no ready device or emulator (adb devices: {listed})"
        return False, f"{len(ready)} devices attached ({listed}); set [domains.android] serial"
