"""MCP wording for simulator system prompts, and the sections of an MCP episode."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder
from awctl.trajectory import SystemPrompt

from .codec import ACTION_SCHEMA

if TYPE_CHECKING:
    from awctl.domain import Task

MCP_ROLES: tuple[str, ...] = (
    "You are a world model that simulates a Model Context Protocol (MCP) server answering an agent's tool calls.",
    "Act as an MCP server reached over stdio: for each JSON-RPC tools/call request, return the server's response.",
    "You simulate the {title}: every action is a tools/call request and you reply with its JSON-RPC result.",
    "Play the part of an MCP tool server whose state changes only through the tools it declares.",
    "You are the {title}. Execute each tool call against the server's state and report the CallToolResult.",
    "Simulate an MCP server faithfully, including error results for bad arguments and unknown tools.",
    "You are a JSON-RPC 2.0 endpoint implementing MCP tools; answer each request exactly as the real server would.",
    "Pretend to be a real MCP server: keep its data consistent across calls and echo each request id.",
    "You model an MCP server's tools/call responses, content blocks and structuredContent included.",
    "As an MCP server emulator, predict the exact JSON-RPC response to the agent's latest tool call.",
)

MCP_SIMULATION_INSTRUCTION = (
    "Predict the MCP server's JSON-RPC response to the agent's latest tools/call request, given the declared "
    "tools, the initial server data and every earlier response. Echo the request id. A successful call returns "
    '{"jsonrpc": "2.0", "id": ..., "result": {"content": [...], "isError": false}} with structuredContent '
    "conforming to the tool's outputSchema when it has one; arguments that violate the inputSchema, failing "
    "operations and undeclared tools return isError true with a text block saying why. Keep every tool's "
    "output format identical across calls. " + DEFAULT_OUTPUT_RULES
)


def mcp_prompt_builder() -> PromptBuilder:
    return PromptBuilder(
        domain_title="MCP tool server", roles=MCP_ROLES, simulation_instruction=MCP_SIMULATION_INSTRUCTION
    )


SEED_DATA_HEADING = "\n\nInitial server data (seed.json):"


def first_observation(initial_state: str) -> str:
    """What ``McpEnv.reset`` showed, from an initial-state section: the section without the seed data that
    :func:`mcp_sections` appended for the simulator."""
    return initial_state.split(SEED_DATA_HEADING, 1)[0]


def mcp_sections(task: Task | None, initial_state: str, builder: PromptBuilder) -> SystemPrompt:
    """The five sections for an MCP episode.

    ``initial_state`` is what ``McpEnv.reset`` returned (server name and the ``json mcp-tools`` block);
    the task's seed data, when it has any, is appended so a simulator knows the server's starting state.
    """
    state = initial_state.strip()
    data = (task.setup.get("data") if task else None) or None
    if data is not None:
        seed = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        state += f"{SEED_DATA_HEADING}\n```json\n{seed}\n```"
    return SystemPrompt(
        task_description=task.instruction if task else "",
        action_space=ACTION_SCHEMA,
        initial_state=state.strip(),
        simulation_instruction=builder.simulation_instruction,
    )

#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a set of Model Context Protocol (MCP) servers. Each action calls one tool with JSON
arguments; the answer is the tool result: content blocks, structured content and the error flag. Check
that the tool exists and that arguments were validated the way the server would, that results agree
with the state earlier calls created (records, ids, notes, orders), and that error results use the
server's envelope and wording.
"""
