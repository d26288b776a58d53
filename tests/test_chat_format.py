"""The chat view equals what AgentWorldBench's official inference builds, and trains on the right target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awctl.domain import Domain
from awctl.formats import agentworldbench as awb
from awctl.formats.view import View, chat_records, messages_at, target_at
from awctl.plugins import get_registry
from awctl.prompts import OBSERVATION_TAG
from awctl.trajectory import SystemPrompt, Trajectory, Turn

FIXTURES = Path(__file__).parent / "fixtures" / "awb"


def official_messages(job: dict[str, Any]) -> list[dict[str, str]]:
    """The message list of QwenLM/Qwen-AgentWorld eval/eval.py ``run_inference``, re-implemented from its
    documented behaviour: optional system, history pairs bounded by the row's own lists, then the
    current prompt (falling back to ``prompt[turn_idx-1]`` when empty)."""
    system = job.get("system_str", "")
    prompts = job.get("prompt", [])
    responses = job.get("response", [])
    prompts = [prompts] if isinstance(prompts, str) else prompts
    responses = [responses] if isinstance(responses, str) else responses
    t = max(job.get("turn_idx", 1) - 1, 0)
    out = [{"role": "system", "content": system}] if system else []
    for j in range(min(t, len(prompts), len(responses))):
        out += [{"role": "user", "content": prompts[j]}, {"role": "assistant", "content": responses[j]}]
    current = job.get("current_prompt", "")
    if not current and t < len(prompts):
        current = prompts[t]
    out.append({"role": "user", "content": current})
    return out


class FenceObservations(Domain):
    name = "terminal"

    def from_awb_observation(self, body: str) -> str:
        return body.removeprefix("```\n").removesuffix("\n```")

    def to_awb_observation(self, observation: str) -> str:
        return f"```\n{observation}\n```"


TABLES: dict[str, Any] = {
    "identity": {},
    "fence": {d: FenceObservations() for d in awb.DOMAINS},
    "registry": get_registry().domains,
}


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("domain", awb.DOMAINS)
def test_chat_view_equals_official_inference_messages_for_every_row(domain: str, table: str) -> None:
    path = FIXTURES / f"{domain}_test.jsonl"
    jobs = {json.dumps(json.loads(line)["id"]): json.loads(line) for line in path.read_text().splitlines()}
    checked = 0
    for traj in awb.read_rows(path, TABLES[table]):
        traj = Trajectory.model_validate_json(traj.to_json())
        for rec in traj.metadata["agentworldbench"]["rows"]:
            job = jobs[json.dumps(rec["fields"]["id"])]
            assert messages_at(traj, job["turn_idx"] - 1, TABLES[table]) == official_messages(job)
            checked += 1
    assert checked == len(jobs)


@pytest.mark.parametrize(
    "row",
    [
        # plain-string prompt/response, no system prompt, no current_prompt key
        {
            "task": "os",
            "id": "s",
            "prompt": "### Turn 1\n**Action:**\nWAIT",
            "response": "**Environment Observation:**\nx",
            "system_str": "",
            "turn_idx": 1,
        },
        # lists shorter than the turn: history is bounded by the row's own lists
        {
            "task": "web",
            "id": "short_turn3",
            "prompt": [f"### Turn {i}\n**Action:**\nclick [{i}]" for i in (1, 2, 3)],
            "response": ["**Environment Observation:**\nA"],
            "current_prompt": "### Turn 3\n**Action:**\nstop",
            "system_str": "sys",
            "turn_idx": 3,
            "total_turns": 3,
        },
        # responses one shorter than prompts, empty current_prompt
        {
            "task": "mcp",
            "id": "m_turn2",
            "prompt": ["### Turn 1\n**Action:**\na", "### Turn 2\n**Action:**\nb"],
            "response": ["**Environment Observation:**\n1"],
            "current_prompt": "",
            "system_str": "S",
            "turn_idx": 2,
            "total_turns": 2,
        },
    ],
)
def test_chat_view_matches_official_inference_on_edge_rows(row: dict[str, Any]) -> None:
    (traj,) = awb.rows_to_trajectories([row], {})
    assert messages_at(traj, row["turn_idx"] - 1, {}) == official_messages(row)


def test_chat_view_of_a_new_trajectory() -> None:
    traj = Trajectory(
        id="ep",
        domain="terminal",
        system=SystemPrompt(task_description="make notes"),
        turns=[
            Turn(action="ls", observation="a b"),
            Turn(action="cat a", observation="hi", reasoning="a holds hi"),
            Turn(action="rm a", observation=""),
        ],
    )
    domain = FenceObservations()
    msgs = messages_at(traj, 2, {"terminal": domain})
    assert msgs[0] == {"role": "system", "content": domain.system_prompt(traj.system, 0)}
    assert View(domain).system(traj) == msgs[0]["content"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"] == "### Turn 1\n**Action:**\nls"
    assert msgs[2]["content"] == "**Environment Observation:**\n```\na b\n```"
    assert msgs[-1]["content"] == "### Turn 3\n**Action:**\nrm a"
    assert messages_at(traj, 0, {})[1:] == [{"role": "user", "content": "### Turn 1\n**Action:**\nls"}]

    assert View(None).history_assistant(traj.turns[0]).body == "**Environment Observation:**\na b"
    assert (
        target_at(traj, 0, {})
        == f"<{OBSERVATION_TAG}>\n**Environment Observation:**\na b\n</{OBSERVATION_TAG}>"
    )
    assert target_at(traj, 1, {}).startswith("<think>\na holds hi\n</think>\n<predicted_observation>")
    with pytest.raises(IndexError):
        messages_at(traj, 3, {})
    with pytest.raises(IndexError):
        target_at(traj, -1, {})


def test_training_target_of_an_awb_turn_is_its_ground_truth_response() -> None:
    path = FIXTURES / "terminal_test.jsonl"
    job = json.loads(path.read_text().splitlines()[1])
    traj = next(iter(awb.read_rows(path, {"terminal": FenceObservations()})))
    t = job["turn_idx"] - 1
    assert View(FenceObservations()).history_assistant(traj.turns[t]).body == job["response"][t]


def test_chat_records_cover_evaluated_rows_or_every_turn() -> None:
    trajs = list(awb.read_rows(FIXTURES / "swe_test.jsonl", {}))
    records = [r for t in trajs for r in chat_records(t, {})]
    assert len(records) == len((FIXTURES / "swe_test.jsonl").read_text().splitlines())
    assert records[0]["messages"][-1]["role"] == "user"
    new = Trajectory(id="n", domain="x", turns=[Turn(action="a", observation="b")] * 3)
    assert [r["turn"] for r in chat_records(new, {})] == [0, 1, 2]


_piece = st.sampled_from(
    ["a", " ", "\n", "```", "**Environment Observation:**\n", "### Turn 1\n**Action:**\n", "é"]
)
_text = st.lists(_piece, max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 4),
    data=st.data(),
)
def test_chat_view_matches_official_inference_on_generated_rows(n: int, data: st.DataObject) -> None:
    prompts = [f"### Turn {i + 1}\n**Action:**\n" + data.draw(_text) for i in range(n)]
    responses = ["**Environment Observation:**\n" + data.draw(_text) for _ in range(n)]
    turns = data.draw(st.lists(st.integers(1, n), min_size=1, max_size=n, unique=True))
    rows = []
    for t in sorted(turns):
        row = {
            "task": data.draw(st.sampled_from(awb.DOMAINS)) if not rows else rows[0]["task"],
            "id": f"g_turn{t}",
            "prompt": prompts[: data.draw(st.sampled_from([t, n, t - 1]))],
            "response": responses[: data.draw(st.sampled_from([t, n, t - 1, 0]))],
            "system_str": "S" if not rows else rows[0]["system_str"],
            "turn_idx": t,
        }
        choice = data.draw(st.sampled_from(["absent", "empty", "suffix", "free"]))
        if choice != "absent":
            base = prompts[t - 1] if t - 1 < len(row["prompt"]) else ""
            row["current_prompt"] = {"empty": "", "suffix": base + "\nPredict.", "free": data.draw(_text)}[
                choice
            ]
        rows.append(row)
    table = TABLES[data.draw(st.sampled_from(["identity", "fence"]))]
    for traj in awb.rows_to_trajectories(rows, table):
        for rec in traj.metadata["agentworldbench"]["rows"]:
            row = next(r for r in rows if r["id"] == rec["fields"]["id"])
            if row["turn_idx"] - 1 < len(traj.turns):
                assert messages_at(traj, row["turn_idx"] - 1, table) == official_messages(row)
