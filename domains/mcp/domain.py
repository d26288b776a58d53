"""The MCP domain: :class:`McpDomain` (registered by ``plugin.py`` through the public hook).

Nothing here imports the ``mcp`` SDK; the real environment and the servers import it when used.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

from awctl.domain import Domain, Importer, Perturbation, Task, Verifier
from awctl.errors import CodecError
from awctl.prompts import PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import McpActionCodec, McpObservationCodec, _strip_fence
from .importers import OPENAI_CHAT
from .perturbations import PERTURBATIONS
from .prompts import mcp_prompt_builder, mcp_sections
from .tasks import SUITES, tasks_for
from .verifiers import VERIFIERS

if TYPE_CHECKING:
    from awctl.env import Environment


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

    # ── AgentWorldBench: the action is a fenced JSON tool call, the observation the JSON response ──
    def from_awb_action(self, body: str) -> str:
        """Canonical request text for a (possibly fenced, possibly shorthand) tool call; unparseable bodies
        pass through unchanged so the verifiers, not the converter, report them."""
        try:
            return self.action_codec.render(self.action_codec.parse(body))
        except CodecError:
            return body

    def to_awb_action(self, action: str) -> str:
        return f"```json\n{action.strip()}\n```"

    def from_awb_observation(self, body: str) -> str:
        """The JSON-RPC response text. A bare CallToolResult (no envelope) is wrapped with ``id: null``,
        because the body alone does not say which request it answers."""
        text = _strip_fence(body.strip()).strip()
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return body
        if isinstance(obj, dict) and "jsonrpc" not in obj and "content" in obj:
            obj = {"jsonrpc": "2.0", "id": None, "result": obj}
        return json.dumps(obj, ensure_ascii=False)

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
