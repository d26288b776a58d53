"""The ``terminal`` domain object: ties codecs, verifiers, prompts, importers, tasks and the env together."""

from __future__ import annotations

import contextlib
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
from .files import files_section
from .prompt_shapes import parse_prompt

if TYPE_CHECKING:
    from awctl.env import Environment
    from awctl.envs.sandbox.identity import ShellIdentity

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
        # The settings and shell identity of the last real env made: the recorder builds an episode's
        # system prompt right after its env, and the prompt must state that shell's user, home and directory.
        self._env_settings: dict[str, Any] | None = None
        self._env_identity: ShellIdentity | None = None

    def transforms(self) -> dict[str, Any]:
        from .forms import to_incremental

        return {"incremental": to_incremental}

    def history_observation(self, trajectory: Any, index: int, at: int) -> str | None:
        from .forms import superseded_screen

        return superseded_screen(trajectory, index, at)

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
        """Five sections; the initial state is the first screen (fenced), the working directory and the
        home, and the prompt the instructions name is the one that screen shows.

        The user, host, home and working directory are those of the shell behind the screen: the last
        real env this domain made (the recorder builds an episode's prompt right after its env), else
        the one ``awctl.toml [domains.terminal]`` chooses, else awctl's default — the first whose prompt
        the screen shows. A screen that none of them explains states no directories (nothing it cannot
        know)."""
        from awctl.envs.sandbox.identity import ShellIdentity

        settings = self._settings()
        rows, cols = int(settings.get("rows", DEFAULT_ROWS)), int(settings.get("cols", DEFAULT_COLS))
        screen = self.observation_codec.normalize(initial_state)
        who = self._identity_for(screen, settings)
        if not screen:
            screen = (who or ShellIdentity.awctl_default()).prompt().rstrip()
        prompt = parse_prompt(screen.split("\n")[-1])
        awctl_prompt = who is not None and who.style == "awctl"
        machine = "The machine has GNU coreutils, grep, sed, awk, tar, gzip and python3; no network."
        if who is None:
            state = [f"A bash shell in a {cols}x{rows} terminal. {machine}"]
        elif awctl_prompt:
            state = [f"A bash shell in a {cols}x{rows} terminal. Working directory: {who.workdir} "
                     f"(also $HOME). {machine}"]
        else:
            state = [f"A bash shell in a {cols}x{rows} terminal, logged in as {who.user} on the host {who.host}. "
                     f"Working directory: {who.workdir}; home directory: {who.home}. {machine}"]
        where = who.workdir if who is not None else "the working directory"
        if task is not None and task.setup.get("env"):
            state.append("Environment: " + ", ".join(f"{k}={v}" for k, v in sorted(task.setup["env"].items())))
        if task is not None and task.setup.get("files"):
            state.append(files_section(where, task.setup["files"]))
        state.append(f"The screen shows:\n```\n{screen}\n```")  # last: its fence runs to the text's end
        if prompt is None or prompt.is_repl or awctl_prompt:
            action_space = self.action_codec.schema(cols=cols, rows=rows)
            instruction = self.prompt_builder.simulation_instruction
        else:
            from .prompts import prompt_phrase, prompt_shape, simulation_instruction

            action_space = self.action_codec.schema(prompt_shape(prompt), cols, rows)
            instruction = simulation_instruction(prompt_phrase(prompt))
        return SystemPrompt(
            task_description=task.instruction if task else "",
            action_space=action_space,
            initial_state="\n".join(state),
            simulation_instruction=instruction,
        )

    def first_observation(self, sections: Any) -> str:
        """The screen :meth:`sections_for` fenced into the initial state (the reset screen), else the section."""
        from awctl.domain import fenced_block_after

        screen = fenced_block_after(sections.initial_state, "The screen shows:")
        return sections.initial_state if screen is None else screen

    def _settings(self) -> dict[str, Any]:
        """The settings of the last real env made, else ``awctl.toml [domains.terminal]`` (empty when the
        project configuration cannot be read)."""
        if self._env_settings is not None:
            return self._env_settings
        from awctl.config import load_project_config
        from awctl.errors import AwctlError

        try:
            return load_project_config().domain_settings("terminal")
        except AwctlError:
            return {}

    def _identity_for(self, screen: str, settings: dict[str, Any]) -> ShellIdentity | None:
        """The shell identity whose starting prompt ``screen`` ends at (see :meth:`sections_for`); with no
        screen, the first candidate."""
        from awctl.envs.sandbox.identity import ShellIdentity
        from awctl.errors import AwctlError

        candidates = [self._env_identity] if self._env_identity is not None else []
        with contextlib.suppress(AwctlError):  # a bad setting is reported where an env is made from it
            candidates.append(ShellIdentity.from_settings(settings))
        candidates.append(ShellIdentity.awctl_default())
        if not screen:
            return candidates[0]
        last = screen.split("\n")[-1]
        return next((who for who in candidates if who.shows_prompt(last)), None)

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
        """A :class:`~awctl_domains.terminal.env.TerminalEnv` with ``config`` as its settings (default:
        ``awctl.toml [domains.terminal]``; ``prompt``, ``user``, ``hostname`` and ``workdir`` choose the
        shell's prompt style and identity)."""
        from .env import TerminalEnv

        env = TerminalEnv(config)
        self._env_settings, self._env_identity = dict(env.settings), env.identity
        return env

    def real_env_status(self) -> tuple[bool, str]:
        missing = [p for p in ("bwrap", "tmux") if shutil.which(p) is None]
        if missing:
            return False, f"missing {', '.join(missing)} (apt-get install -y bubblewrap tmux)"
        return True, "bubblewrap sandbox with a tmux terminal"
