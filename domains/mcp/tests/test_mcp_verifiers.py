"""The MCP verifiers pass real recordings and flag each kind of corruption they target."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from awctl_domains.mcp.codec import McpActionCodec
from awctl_domains.mcp.domain import McpDomain
from awctl_domains.mcp.importers import load_openai_chat

from awctl.domain import run_verifiers
from awctl.trajectory import Trajectory

DOMAIN = McpDomain()
FIXTURE = Path(__file__).parent / "fixtures" / "chat_logs.openai.jsonl"
NOTES, SHOP, CAL = "mcp/notes/fix-plan-day", "mcp/shop/multi-item-order", "mcp/calendar/force-all-hands"


def _turn(traj: Trajectory, request_id: int) -> int:
    codec = McpActionCodec()
    return next(i for i, t in enumerate(traj.turns) if codec.parse(t.action).id == request_id)


def _verdict(traj: Trajectory, index: int, check: str, mutate: Callable[[dict[str, Any]], Any]) -> Any:
    obs = copy.deepcopy(json.loads(traj.turns[index].observation))
    mutate(obs)
    results = {r.check: r for r in run_verifiers(DOMAIN, traj, index, json.dumps(obs))}
    return results.get(check)


def test_at_least_six_verifiers() -> None:
    assert len(DOMAIN.verifiers()) >= 6


def test_real_recordings_pass_every_verifier(recorded: dict[str, Trajectory]) -> None:
    applied = set()
    for traj in recorded.values():
        for i in range(len(traj.turns)):
            for res in run_verifiers(DOMAIN, traj, i):
                assert res.ok, f"{traj.id} turn {i}: {res.check}: {res.message}"
                applied.add(res.check)
    # the recordings exercise every verifier at least once, so "passes" is not "skipped"
    assert applied == {v.name for v in DOMAIN.verifiers()}


def test_imported_fixture_passes_every_verifier() -> None:
    trajs = list(load_openai_chat(FIXTURE))
    assert len(trajs) == 3
    for traj in trajs:
        for i in range(len(traj.turns)):
            assert all(r.ok for r in run_verifiers(DOMAIN, traj, i)), traj.id


@pytest.mark.parametrize(
    ("task", "request_id", "check", "mutate"),
    [
        (NOTES, 1, "mcp.envelope", lambda o: o.update(id=999)),
        (
            NOTES,
            1,
            "mcp.envelope",
            lambda o: o.update(error={"code": "bad", "message": "x"}) or o.pop("result"),
        ),
        (NOTES, 1, "mcp.envelope", lambda o: o.update(result=["not", "an", "object"])),
        (NOTES, 1, "mcp.content_blocks", lambda o: o["result"]["content"][0].update(type="txt")),
        (NOTES, 1, "mcp.content_blocks", lambda o: o["result"]["content"][0].pop("text")),
        (
            NOTES,
            1,
            "mcp.content_blocks",
            lambda o: o["result"]["content"].append(
                {"type": "image", "data": "***not base64***", "mimeType": "image/png"}
            ),
        ),
        (
            NOTES,
            1,
            "mcp.content_blocks",
            lambda o: o["result"]["content"].append({"type": "resource", "resource": {}}),
        ),
        (NOTES, 1, "mcp.content_blocks", lambda o: o["result"].update(isError="no")),
        (NOTES, 13, "mcp.unknown_tool", lambda o: o["result"].update(isError=False)),
        (NOTES, 10, "mcp.arguments_schema", lambda o: o["result"].update(isError=False)),
        (NOTES, 11, "mcp.arguments_schema", lambda o: o["result"].update(isError=False)),
        (SHOP, 12, "mcp.arguments_schema", lambda o: o["result"].update(isError=False)),
        (CAL, 12, "mcp.arguments_schema", lambda o: o["result"].update(isError=False)),
        (SHOP, 10, "mcp.output_schema", lambda o: o["result"].pop("structuredContent")),
        (
            SHOP,
            10,
            "mcp.output_schema",
            lambda o: o["result"]["structuredContent"].update(total_cents="2899"),
        ),
        (CAL, 10, "mcp.output_schema", lambda o: o["result"]["structuredContent"].pop("conflicts")),
        (
            SHOP,
            11,
            "mcp.consistent_shape",
            lambda o: o["result"]["structuredContent"].update(note="extra key"),
        ),
        (
            NOTES,
            15,
            "mcp.consistent_shape",
            lambda o: o["result"].update(
                content=[{"type": "image", "data": "aGk=", "mimeType": "image/png"}]
            ),
        ),
        (
            SHOP,
            10,
            "mcp.structured_text_agrees",
            lambda o: o["result"]["structuredContent"].update(total_cents=1),
        ),
        (SHOP, 14, "mcp.error_explained", lambda o: o["result"].update(content=[])),
        (SHOP, 16, "mcp.error_explained", lambda o: o["result"]["content"][0].update(text="  ")),
    ],
)
def test_corruption_is_flagged(
    recorded: dict[str, Trajectory], task: str, request_id: int, check: str, mutate
) -> None:
    traj = recorded[task]
    index = _turn(traj, request_id)
    before = {r.check: r for r in run_verifiers(DOMAIN, traj, index)}
    assert before[check].ok, "the untouched real observation must pass"
    after = _verdict(traj, index, check, mutate)
    assert after is not None and not after.ok, f"{check} did not flag the corruption"
    assert after.message


def test_unparseable_observation_fails_envelope(recorded: dict[str, Trajectory]) -> None:
    traj = recorded[NOTES]
    results = {r.check: r for r in run_verifiers(DOMAIN, traj, 0, "Error: file not found")}
    assert not results["mcp.envelope"].ok
    # a trajectory of JSON-RPC responses: plain text lacks the structure every other check reads
    assert not results["mcp.content_blocks"].ok
    assert "expected a JSON-RPC response" in results["mcp.content_blocks"].message


def test_schema_checks_skip_without_a_tool_list(recorded: dict[str, Trajectory]) -> None:
    bare = recorded[NOTES].model_copy(deep=True)
    bare.system.initial_state = ""
    names = {r.check for i in range(len(bare.turns)) for r in run_verifiers(DOMAIN, bare, i)}
    assert "mcp.arguments_schema" not in names and "mcp.unknown_tool" not in names
    assert "mcp.envelope" in names
