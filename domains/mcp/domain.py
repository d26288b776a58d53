"""The MCP domain: :class:`McpDomain` (registered by ``plugin.py`` through the public hook).

Nothing here imports the ``mcp`` SDK; the real environment and the servers import it when used.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Fault, Importer, Perturbation, Task, Verifier
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import McpActionCodec, McpObservationCodec
from .importers import OPENAI_CHAT
from .perturbations import PERTURBATIONS
from .prompts import mcp_prompt_builder, mcp_sections
from .tasks import SUITES, tasks_for
from .verifiers import VERIFIERS

if TYPE_CHECKING:
    from awctl.env import Environment

_AWB_FENCE = re.compile(r"\A```json\n(.*)\n```\Z", re.S)


class McpDomain(Domain):
    """Agents calling tools on Model Context Protocol servers (real stdio servers or simulated)."""

    name = "mcp"
    modality = "text"
    description = "JSON-RPC tools/call actions against MCP servers; observations are CallToolResult responses"

    def __init__(self) -> None:
        self.action_codec = McpActionCodec()
        self.observation_codec = McpObservationCodec()

    @property
    def judge_guidance(self) -> str:
        from .prompts import JUDGE_GUIDANCE

        return JUDGE_GUIDANCE

    @cached_property
    def prompt_builder(self) -> PromptBuilder:
        return mcp_prompt_builder()

    def sections_for(self, task: Task | None = None, initial_state: str = "") -> SystemPrompt:
        return mcp_sections(task, initial_state, self.prompt_builder)

    def first_observation(self, sections: SystemPrompt) -> str:
        """The reset text without the seed data the simulator is told about (the real agent never sees it)."""
        from .prompts import first_observation

        return first_observation(sections.initial_state)

    def verifiers(self) -> list[Verifier]:
        return list(VERIFIERS)

    def importers(self) -> list[Importer]:
        return [OPENAI_CHAT]

    def suites(self) -> list[str]:
        return [*SUITES, "all"]

    def tasks(self, suite: str) -> list[Task]:
        return tasks_for(suite)

    def perturbations(self) -> list[Perturbation]:
        return list(PERTURBATIONS)

    def faults(self) -> list[Fault]:
        from .faults import FAULTS

        return list(FAULTS)

    # ── AgentWorldBench: the action is a fenced JSON tool call, the observation the result as written ──
    def from_awb_action(self, body: str) -> str:
        """The JSON inside the body's ```json fence, kept as written (``{"name", "arguments"}`` or a
        ``tools/call`` request); a body that is not exactly one fence passes through unchanged (the codec
        reads fences too, and the verifiers, not the converter, report what does not parse)."""
        match = _AWB_FENCE.match(body)
        if match and self.to_awb_action(match.group(1)) == body:
            return match.group(1)
        return body

    def to_awb_action(self, action: str) -> str:
        if action.lstrip().startswith("```"):
            return action
        return f"```json\n{action}\n```"

    def from_awb_observation(self, body: str) -> str:
        """Unchanged: every form a source writes (JSON-RPC response, CallToolResult, content blocks, plain
        text, fenced or not) is an observation the codec reads as it is."""
        return body

    def to_awb_observation(self, observation: str) -> str:
        return observation

    # ── real environment ──
    def real_env(self, config: dict[str, Any] | None = None) -> Environment | None:
        """An :class:`McpEnv`; ``config`` may give ``command`` (list), ``env`` (dict) and ``timeout_s``."""
        from .env import McpEnv

        config = config or {}
        return McpEnv(
            command=config.get("command"), env=config.get("env"), timeout_s=float(config.get("timeout_s", 30))
        )

    def real_env_status(self) -> tuple[bool, str]:
        if importlib.util.find_spec("mcp") is None:
            return False, "the mcp SDK is not installed (pip install 'awctl[mcp]')"
        return True, "stdio MCP servers via the mcp SDK (demo servers: notes, shop, calendar)"
