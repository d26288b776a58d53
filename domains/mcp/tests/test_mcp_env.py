"""McpEnv against real stdio servers: the demo notes server and the third-party mcp-server-time."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from awctl_domains.mcp.codec import McpObservationCodec, tools_from_text
from awctl_domains.mcp.env import McpEnv
from awctl_domains.mcp.tasks import call, tasks_for

from awctl.errors import EnvironmentUnavailable

codec = McpObservationCodec()


def _children_pids() -> list[tuple[str, str]]:
    """``(pid, command line)`` of this process's direct children (Linux /proc)."""
    me, out = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == me:
                out.append(
                    (stat.parent.name, (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
                )
        except (OSError, IndexError, ValueError):
            continue
    return out


def _children_cmdlines() -> list[str]:
    return [c for _, c in _children_pids()]


@pytest.fixture(scope="module")
def notes_env():
    task = next(t for t in tasks_for("notes") if t.id.endswith("append-todo"))
    env = McpEnv()
    initial = env.reset(task)
    yield env, initial
    env.close()


def test_reset_lists_tools_in_initial_state(notes_env) -> None:
    env, initial = notes_env
    assert initial.startswith("Connected to MCP server awctl-notes")
    names = {t["name"] for t in env.raw_tools}
    assert {"read_note", "write_note", "list_notes", "search_notes"} <= names
    assert tools_from_text(initial) == env.raw_tools
    assert all("inputSchema" in t for t in env.raw_tools)


def test_step_returns_the_servers_response_with_the_agents_id(notes_env) -> None:
    env, _ = notes_env
    obs = codec.parse(env.step(call("read_note", {"path": "todo.md"}, 42)).observation)
    assert obs["id"] == 42
    assert obs["result"]["content"] == [{"type": "text", "text": "- buy milk\n- call bob\n"}]
    assert obs["result"]["isError"] is False


def test_invalid_arguments_and_unknown_tools_come_back_as_error_results(notes_env) -> None:
    env, _ = notes_env
    for action in (call("read_note", {"path": 7}, 1), call("read_note", {}, 2), call("no_such_tool", {}, 3)):
        step = env.step(action)
        obs = codec.parse(step.observation)
        assert obs["result"]["isError"] is True, action
        assert "synthetic" not in step.info and "schema_violation_accepted" not in step.info


def test_malformed_action_gets_a_synthetic_invalid_request(notes_env) -> None:
    env, _ = notes_env
    step = env.step("cat todo.md")
    obs = codec.parse(step.observation)
    assert obs["error"]["code"] == -32600 and step.info["synthetic"] is True


def test_state_persists_within_an_episode_and_resets_between(notes_env) -> None:
    env, _ = notes_env
    task = next(t for t in tasks_for("notes") if t.id.endswith("append-todo"))
    env.step(call("write_note", {"path": "new.md", "content": "x"}, 5))
    assert (
        codec.parse(env.step(call("read_note", {"path": "new.md"}, 6)).observation)["result"]["content"][0][
            "text"
        ]
        == "x"
    )
    env.reset(task)
    assert (
        codec.parse(env.step(call("read_note", {"path": "new.md"}, 7)).observation)["result"]["isError"]
        is True
    )


def test_close_ends_the_server_process() -> None:
    task = tasks_for("shop")[0]
    env = McpEnv()
    env.reset(task)
    data_dir = str(env.data_dir)
    assert any("awctl_domains.mcp.servers.shop" in c for c in _children_cmdlines())
    env.close()
    env.close()  # safe twice
    assert not any("awctl_domains.mcp.servers.shop" in c for c in _children_cmdlines())
    assert not Path(data_dir).exists()


def test_missing_program_and_dead_server_are_reported() -> None:
    with pytest.raises(EnvironmentUnavailable, match="not found"):
        McpEnv(["awctl-no-such-mcp-server"]).reset()
    with pytest.raises(EnvironmentUnavailable, match="did not start"):
        McpEnv(["python", "-c", "import sys; sys.stderr.write('boom')"], timeout_s=5).reset()


def test_third_party_mcp_server_time() -> None:
    with McpEnv(["mcp-server-time", "--local-timezone", "UTC"]) as env:
        initial = env.reset()
        tools = {t["name"]: t for t in env.raw_tools}
        assert {"get_current_time", "convert_time"} <= set(tools)
        assert "outputSchema" in tools["convert_time"]
        assert tools_from_text(initial) == env.raw_tools
        args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        obs = codec.parse(env.step(call("convert_time", args, 3)).observation)
        assert obs["id"] == 3 and obs["result"]["isError"] is False
        assert obs["result"]["structuredContent"]["target"]["datetime"].endswith("T21:00:00+09:00")
        # mcp-server-time answers an unknown tool with a JSON-RPC error, which the env records verbatim
        err = codec.parse(env.step(call("nope", {}, 4)).observation)
        assert err["id"] == 4 and err["error"]["code"] == -32602


def test_server_crash_becomes_a_jsonrpc_error_observation() -> None:
    task = tasks_for("calendar")[0]
    with McpEnv(timeout_s=10) as env:
        env.reset(task)
        (pid,) = [int(p) for p, c in _children_pids() if "calendar_server" in c]
        os.kill(pid, signal.SIGKILL)  # only the server this test started
        step = env.step(call("list_events", {"date": "2026-03-02"}, 8))
        obs = codec.parse(step.observation)
        assert obs["id"] == 8 and obs["error"]["code"] in (-32000, -32001)
        assert step.info["synthetic"] is True


def test_records_what_a_nonconforming_server_sent_and_verifiers_catch_it() -> None:
    from awctl_domains.mcp.domain import McpDomain
    from awctl_domains.mcp.env import record_episode

    from awctl.domain import Task, run_verifiers

    task = Task(
        id="liar", domain="mcp", suite="test", instruction="count", check=lambda env: None,
        solution=[call("count", {"k": "not an int"}, 1)],
        setup={"server": ["python", "-m", "awctl_domains.mcp.tests.fixtures.schema_liar_server"]},
    )  # fmt: skip
    with McpEnv(timeout_s=10) as env:
        traj = record_episode(env, task)
    obs = codec.parse(traj.turns[0].observation)
    # the SDK client rejected the result, but the observation is the server's actual answer
    assert obs["result"]["structuredContent"] == {"n": "many"}
    info = traj.turns[0].metadata["info"]
    assert "Invalid structured content" in info["client_error"] and info["schema_violation_accepted"] is True
    verdicts = {r.check: r.ok for r in run_verifiers(McpDomain(), traj, 0)}
    assert verdicts["mcp.output_schema"] is False and verdicts["mcp.arguments_schema"] is False
    assert verdicts["mcp.envelope"] is True
