"""The McpDomain plugin surface: cheap import, registration, prompts, perturbations, AgentWorldBench hooks."""

from __future__ import annotations

import re
import subprocess
import sys

from awctl_domains.mcp.codec import tools_from_trajectory
from awctl_domains.mcp.domain import McpDomain
from awctl_domains.mcp.env import McpEnv
from awctl_domains.mcp.prompts import MCP_ROLES

from awctl.domain import Perturbation
from awctl.plugins import get_registry

DOMAIN = McpDomain()


def test_plugin_import_and_describe_do_not_import_the_sdk() -> None:
    code = (
        "import sys, awctl_domains.mcp.domain as p; d = p.McpDomain(); d.describe(); d.tasks('all'); "
        "print(sorted(m for m in ('mcp', 'jsonschema', 'torch', 'anyio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_registered_through_the_public_hook() -> None:
    registry = get_registry()
    assert isinstance(registry.domain("mcp"), McpDomain)
    info = registry.domain("mcp").describe()
    assert info["suites"]["all"] >= 20 and len(info["verifiers"]) >= 6
    assert info["real_env"]["available"] is True


def test_ten_distinct_mcp_prompt_variants(recorded) -> None:
    assert len(MCP_ROLES) == 10 and DOMAIN.prompt_variants == 10
    traj = recorded["mcp/shop/multi-item-order"]
    prompts = [DOMAIN.system_prompt(traj.system, v) for v in range(10)]
    assert len(set(prompts)) == 10
    for prompt in prompts:
        assert "tools/call" in prompt and "```json mcp-tools" in prompt and '"sku": "MUG-1"' in prompt


def test_sections_for_carry_tools_and_seed_data(recorded) -> None:
    traj = recorded["mcp/calendar/force-all-hands"]
    tools = tools_from_trajectory(traj)
    assert tools is not None and "outputSchema" in tools["check_conflicts"]
    assert "Initial server data" in traj.system.initial_state
    assert traj.system.task_description.startswith("Book 'All hands'")
    assert "tools/call" in traj.system.action_space


def test_perturbations_cover_the_required_faults() -> None:
    names = {p.name for p in DOMAIN.perturbations()}
    assert {
        "rate_limit",
        "timeout",
        "empty_result",
        "malformed_output",
        "server_error",
        "permission_denied",
    } <= names
    for p in DOMAIN.perturbations():
        assert isinstance(p, Perturbation) and p.description
        assert not re.search(r"\{[a-z_]+\}", p.render()), f"{p.name} leaves a placeholder unfilled"
    rate = next(p for p in DOMAIN.perturbations() if p.name == "rate_limit")
    assert "Every 5th" in rate.render(every=5)


def test_agentworldbench_hooks_round_trip(recorded) -> None:
    turn = recorded["mcp/notes/fix-plan-day"].turns[0]
    body = DOMAIN.to_awb_action(turn.action)
    assert body == f"```json\n{turn.action}\n```"
    assert DOMAIN.from_awb_action(body) == turn.action
    # A source's own action form is kept as written (lossless), not rewritten into a JSON-RPC request.
    shorthand = '{"name": "read_note", "arguments": {"path": "work/plan.md"}}'
    assert DOMAIN.from_awb_action(f"```json\n{shorthand}\n```") == shorthand
    assert DOMAIN.action_codec.parse(shorthand) == DOMAIN.action_codec.parse(turn.action)
    assert DOMAIN.from_awb_action("not json") == "not json"
    assert DOMAIN.from_awb_observation(DOMAIN.to_awb_observation(turn.observation)) == turn.observation
    # A bare CallToolResult stays a bare CallToolResult (no envelope with an invented id).
    bare = '```json\n{"content": [], "isError": false}\n```'
    assert DOMAIN.from_awb_observation(bare) == bare
    assert DOMAIN.observation_codec.parse(bare).form == "result"


def test_real_env_factory_is_lazy() -> None:
    env = DOMAIN.real_env({"command": ["mcp-server-time"], "timeout_s": 5})
    assert isinstance(env, McpEnv) and env.command == ["mcp-server-time"] and env.timeout_s == 5
    env.close()  # never started: nothing to do, must not raise
