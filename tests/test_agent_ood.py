"""An environment awctl cannot run, described to the simulator only by its tool list and a few example
observations (``section_overrides``, recipes/ood-sim-agent.toml): the description replaces those sections of
every episode's system prompt while each task keeps its own description, the agent's first observation is the
described initial state, the world model is asked with it, and a section that does not exist is refused."""

from __future__ import annotations

import pytest

from awctl.errors import AwctlError

TOOLS = ('Connected to MCP server acme-tickets 0.3.\n```json mcp-tools\n{"tools": [{"name": "open_ticket", '
         '"description": "Open a ticket; returns its id.", "inputSchema": {"type": "object", "properties": '
         '{"title": {"type": "string"}}, "required": ["title"]}}]}\n```')
EXAMPLES = ('Action: {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "open_ticket", '
            '"arguments": {"title": "printer jam"}}}\nObservation: {"jsonrpc": "2.0", "id": 1, "result": '
            '{"content": [{"type": "text", "text": "ticket 17 opened"}], "isError": false}}')


@pytest.fixture(scope="module")
def tiny_backend():
    pytest.importorskip("torch")
    from awctl.models.backends.transformers_backend import TransformersBackend
    from awctl.models.tiny import default_tiny_model

    backend = TransformersBackend(model=str(default_tiny_model()))
    yield backend
    backend.close()


def test_a_described_environment_replaces_those_sections_for_every_task(tiny_backend) -> None:
    from awctl.agent.envs import sim_envs
    from awctl.plugins import get_registry

    domain = get_registry().domain("mcp")
    tasks = domain.tasks("shop")[:2]
    factory = sim_envs(domain, tiny_backend, sim_options={
        "max_tokens": 4, "section_overrides": {"initial_state": TOOLS, "demonstrations": EXAMPLES}})
    try:
        for task in tasks:
            env = factory.make(task, 0)
            assert env.reset(task, seed=0) == TOOLS  # what the agent sees first is the description
            system = env.messages('{"name": "open_ticket", "arguments": {"title": "x"}}')[0]["content"]
            assert TOOLS in system and EXAMPLES in system
            assert task.instruction in system  # the task's own description stays
            assert "seed.json" not in system  # nothing of the real server's state leaks in
            result = env.step('{"name": "open_ticket", "arguments": {"title": "x"}}')  # the world model answers
            assert result.info["turn"] == 0
            env.close()
        assert factory.stats()["backend"]["requests"] == len(tasks)
    finally:
        factory.close()


def test_an_unknown_section_is_refused_naming_the_sections(tiny_backend) -> None:
    from awctl.plugins import get_registry
    from awctl.sim.env import SimEnv

    domain = get_registry().domain("mcp")
    with pytest.raises(AwctlError, match="tool_list: not a system-prompt section") as err:
        SimEnv(domain, tiny_backend, section_overrides={"tool_list": TOOLS})
    assert "initial_state" in (err.value.hint or "")
    with pytest.raises(AwctlError, match="demonstrations: not a system-prompt section given as text"):
        SimEnv(domain, tiny_backend, section_overrides={"demonstrations": ["a", "b"]})
