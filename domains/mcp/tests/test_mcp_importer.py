"""OpenAI chat-log importer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.mcp.codec import McpActionCodec, McpObservationCodec, tools_from_trajectory
from awctl_domains.mcp.importers import OPENAI_CHAT, load_openai_chat

from awctl.errors import InputError

FIXTURE = Path(__file__).parent / "fixtures" / "chat_logs.openai.jsonl"


def test_fixture_becomes_one_trajectory_per_conversation() -> None:
    assert OPENAI_CHAT.matches(FIXTURE)
    trajs = list(load_openai_chat(FIXTURE))
    assert [t.id for t in trajs] == ["openai-fix-plan-day", "openai-cancel-all-ana", "openai-book-interview"]
    shop = trajs[1]
    assert shop.domain == "mcp" and shop.source == "openai-chat"
    assert shop.system.task_description.startswith("Cancel every order")
    assert shop.metadata["agent_system_prompt"] == "You operate the shop back office."
    assert shop.metadata["final_answer"].startswith("Cancelled orders")
    # parallel tool calls become consecutive turns with ids in call order
    calls = [McpActionCodec().parse(t.action) for t in shop.turns]
    assert [c.id for c in calls] == [1, 2, 3, 4, 5]
    assert [(c.name, c.arguments.get("order_id")) for c in calls[1:3]] == [
        ("cancel_order", 1001),
        ("cancel_order", 1003),
    ]
    assert shop.turns[1].metadata["tool_call_id"] == "call_1_1"
    # the non-standard is_error flag is kept
    obs = McpObservationCodec().parse(shop.turns[3].observation)
    assert obs["result"]["isError"] is True and "shipped" in obs["result"]["content"][0]["text"]
    tools = tools_from_trajectory(shop)
    assert tools is not None and "inputSchema" in tools["create_order"]


def test_json_array_and_list_content_parts(tmp_path: Path) -> None:
    conv = {
        "messages": [
            {"role": "user", "content": "show me"},
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "snap", "arguments": ""}}
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [
                    {"type": "text", "text": "here"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c2", "type": "function", "function": {"name": "snap", "arguments": "{}"}}
                ],
            },
        ]
    }
    path = tmp_path / "log.openai.json"
    path.write_text(json.dumps([conv]))
    (traj,) = load_openai_chat(path)
    assert traj.id == "log-0"
    # no tool message flags errors: the observation is the content blocks alone, no invented isError
    obs = json.loads(traj.turns[0].observation)
    assert obs[1] == {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    assert traj.turns[0].metadata["assistant_text"] == "Looking."
    assert traj.metadata["unanswered_calls"] == 1
    assert tools_from_trajectory(traj) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"messages": [{"role": "tool", "tool_call_id": "zz", "content": "x"}]},
            r"messages\[0\]: tool_call_id 'zz'",
        ),
        ({"messages": "nope"}, "needs a 'messages' list"),
        ({"messages": [{"role": "robot"}]}, r"messages\[0\]: unknown role"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "a", "function": {"name": "x", "arguments": "{bad"}}],
                    }
                ]
            },
            r"tool_calls\[0\]",
        ),
        ({"messages": [], "tools": [{"type": "function"}]}, r"tools\[0\]"),
    ],
)
def test_bad_logs_name_file_line_and_field(tmp_path: Path, line: dict, message: str) -> None:
    path = tmp_path / "bad.openai.jsonl"
    path.write_text(json.dumps({"messages": []}) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(InputError, match=rf"bad.openai.jsonl:2: .*{message}"):
        list(load_openai_chat(path))
