"""Prep, SFT/RL expansion, simulation, evaluation and the audit see identical messages for the same turn.

Each consumer is driven through its own code path (the prep encoder with a tokenizer that records what it
is asked to render, ``expand``, a ``SimEnv`` replaying the recorded observations, AgentWorldBench rows
through the official inference layout, the audit with a recording backend) and compared with
:mod:`awctl.formats.view`, in both chat styles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from awctl.backend import ChatRequest, Completion
from awctl.data.chat_tokens import ChatEncoder
from awctl.data.pipeline import PrepConfig, PrepRun
from awctl.eval.audit import run_audit
from awctl.eval.extract import inference_messages
from awctl.formats.agentworldbench import trajectory_to_rows
from awctl.formats.view import STYLES, View, prompt_variant
from awctl.plugins import get_registry
from awctl.rl.expand import expand
from awctl.rl.rejection import _example
from awctl.sim.env import SimEnv
from awctl.trajectory import Trajectory, Turn, read_trajectories

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
SEED = 3


def _trajectories() -> list[Trajectory]:
    out = []
    for name in ("search_recorded.jsonl", "swe_recorded.jsonl"):
        out += [t for t in read_trajectories(FIXTURES / name) if len(t.turns) >= 3][:2]
    return out


def _screens() -> Trajectory:
    """A full-screen terminal session: its history stands in for screens the latest one still shows."""
    import json

    p = "alice@devbox:~/work$"
    commands = ["ls", "cat a.txt", "pwd", "echo done"]
    outputs = ["a.txt", "hi", "/home/alice/work", "done"]
    lines, turns = [f"{p} "], []
    for command, output in zip(commands, outputs, strict=True):
        lines[-1] += command
        lines += [output, f"{p} "]
        turns.append(Turn(action=json.dumps([{"keystrokes": command + "\n", "duration": 1.0}]),
                          observation="\n".join(line.rstrip() for line in lines)))
    system = DOMAINS["terminal"].sections_for(None, p)
    return Trajectory(id="screens", domain="terminal", system=system, turns=turns)


DOMAINS = get_registry().domains
TRAJS = _trajectories()
SCREENS = _screens()


class _RecordingTokenizer:
    """Stands in for a tokenizer where prep renders a conversation: records the messages, renders them
    as plain text so prep's offset bookkeeping still runs."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, str]]] = []

    def apply_chat_template(self, messages: list[dict[str, str]], tokenize: bool = False) -> str:
        self.seen.append(messages)
        return "".join(f"<{m['role']}>{m['content']}</>" for m in messages)


class _ReplayBackend:
    """Answers each request with the recorded observation of the turn it asks about, in the style's
    target form, and remembers every request."""

    name = "replay"

    def __init__(self, traj: Trajectory, view: View) -> None:
        self.requests: list[ChatRequest] = []
        self.answers = [view.target_assistant(t.model_copy(update={"reasoning": None})).body for t in traj.turns]

    def generate(self, requests: list[ChatRequest]) -> list[list[Completion]]:
        out = []
        for r in requests:
            self.requests.append(r)
            turn = sum(1 for m in r.messages if m["role"] == "user") - 1
            out.append([Completion(text=self.answers[turn])])
        return out

    def close(self) -> None:
        pass


def _variant(traj: Trajectory) -> int:
    return prompt_variant(SEED, traj.id, DOMAINS[traj.domain].prompt_variants)


def test_the_fixtures_cover_two_domains_with_history() -> None:
    assert {t.domain for t in TRAJS} == {"search", "swe"} and all(len(t.turns) >= 3 for t in TRAJS)
    view = View(DOMAINS["terminal"], "awctl")
    history = [m["content"] for m in view.messages_at(SCREENS, 3) if m["role"] == "assistant"]
    assert SCREENS.turns[0].observation not in history[0] and SCREENS.turns[2].observation in history[2]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("traj", [*TRAJS, SCREENS], ids=lambda t: t.id)
def test_sft_documents_hold_the_view_of_their_last_turn(traj: Trajectory, style: str) -> None:
    run = PrepRun(PrepConfig(inputs=[], out="unused", seed=SEED, style=style), domains=DOMAINS)
    view = View(DOMAINS[traj.domain], style)
    for t in range(len(traj.turns)):
        prefix = traj.model_copy(update={"turns": traj.turns[: t + 1]})
        tok = _RecordingTokenizer()
        encoder = ChatEncoder(tok, "sft", sft_target="last", style=style, domains=DOMAINS)
        encoder.render(prefix, run._system_text(prefix, DOMAINS[traj.domain]), [[] for _ in prefix.turns])
        (conversation,) = tok.seen
        assert conversation[:-1] == view.messages_at(traj, t, _variant(traj))
        assert conversation[-1]["content"] == view.target_at(traj, t)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("traj", TRAJS, ids=lambda t: t.id)
def test_prep_documents_hold_the_view_of_every_turn(traj: Trajectory, style: str) -> None:
    run = PrepRun(PrepConfig(inputs=[], out="unused", seed=SEED, style=style), domains=DOMAINS)
    system = run._system_text(traj, DOMAINS[traj.domain])
    tok = _RecordingTokenizer()
    ChatEncoder(tok, "cpt", style=style, domains=DOMAINS).render(traj, system, [[] for _ in traj.turns])
    (conversation,) = tok.seen
    view = View(DOMAINS[traj.domain], style)
    for t in range(len(traj.turns)):
        assert conversation[: 2 + 2 * t] == view.messages_at(traj, t, _variant(traj))


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("traj", [*TRAJS, SCREENS], ids=lambda t: t.id)
def test_sft_and_rl_prompts_are_the_view_and_their_targets_answer_the_last_action(
    traj: Trajectory, style: str
) -> None:
    view = View(DOMAINS[traj.domain], style)
    prompts = expand([traj], DOMAINS, seed=SEED, style=style)
    assert [p.index for p in prompts] == list(range(len(traj.turns)))
    for p in prompts:
        assert p.messages == view.messages_at(traj, p.index, _variant(traj))
        # The target is the observation of the action the prompt ends with, not an earlier one.
        assert p.reference == traj.turns[p.index].observation
        assert p.messages[-1]["content"] == view.user(traj.turns[p.index], p.index)
        example = _example(p, p.reference, None, "ref")
        assert example.turns[-1].action == traj.turns[p.index].action
        assert example.turns[-1].observation == traj.turns[p.index].observation
        assert example.turns[:-1] == traj.turns[: p.index]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("traj", [*TRAJS, SCREENS], ids=lambda t: t.id)
def test_simulation_sees_the_view_of_the_episode_so_far(traj: Trajectory, style: str) -> None:
    domain = DOMAINS[traj.domain]
    view = View(domain, style)
    backend = _ReplayBackend(traj, view)
    variant = _variant(traj)
    env = SimEnv(domain, backend, variant=variant, style=style)
    env.reset()
    for t, turn in enumerate(traj.turns):
        so_far = Trajectory(id="e", domain=traj.domain, system=env.sections,
                            turns=[*env.history, turn.model_copy(update={"observation": ""})])
        result = env.step(turn.action)
        # The simulator's answer is the recorded observation (as the parser trims a block's end).
        assert result.observation.rstrip() == turn.observation.rstrip()
        assert backend.requests[-1].messages == view.messages_at(so_far, t, variant)


@pytest.mark.parametrize("traj", TRAJS, ids=lambda t: t.id)
def test_exported_rows_see_the_view(traj: Trajectory) -> None:
    view = View(DOMAINS[traj.domain], "agentworldbench")
    rows = trajectory_to_rows(traj, DOMAINS)
    for t, row in enumerate(rows):
        assert inference_messages(row) == view.messages_at(traj, t, 0)


def test_exported_rows_keep_every_screen_the_view_stands_in_for() -> None:
    # Rows are a lossless record in the official layout; the stand-ins are awctl's view, not the data.
    rows = trajectory_to_rows(SCREENS, DOMAINS)
    texts = ["".join(m["content"] for m in inference_messages(row)) for row in rows[1:]]
    assert all(SCREENS.turns[0].observation in text for text in texts)


def test_eval_asks_the_view_and_judges_every_screen(tmp_path: Path) -> None:
    from awctl.eval.deterministic import DeterministicJudge
    from awctl.eval.judging import judge_rows
    from awctl.eval.rows import iter_input_rows
    from awctl.formats.agentworldbench import rows_to_trajectories
    from awctl.prompts import OBSERVATION_TAG
    from awctl.trajectory import write_trajectories

    trajs = [*TRAJS, SCREENS]
    path = tmp_path / "trajectories.jsonl"
    write_trajectories(path, trajs)
    rows = list(iter_input_rows([path], DOMAINS))
    asked = [inference_messages(row) for row in rows]
    expected = [View(DOMAINS[t.domain], "agentworldbench").messages_at(t, i, 0) for t in trajs
                for i in range(len(t.turns))]
    assert asked == expected
    stood_in = [row for row in rows if "history" in row["awctl"]]
    assert {row["awctl"]["id"] for row in stood_in} == {"screens"}
    # The rows keep every screen: the judges and the copy baseline read the recorded history.
    assert next(rows_to_trajectories(stood_in[-1:], DOMAINS)).turns == SCREENS.turns
    assert all(SCREENS.turns[0].observation in "".join(row["response"]) for row in stood_in)
    tagged = "<{0}>\n{1}\n</{0}>".format
    preds = [{**row, "gen": tagged(OBSERVATION_TAG, SCREENS.turns[row["turn_idx"] - 1].observation)} for row in stood_in]
    judged = judge_rows(preds, DeterministicJudge(DOMAINS))
    assert [j["total_score"] for j in judged] == [5.0] * len(stood_in)


@pytest.mark.parametrize("traj", [*TRAJS, SCREENS], ids=lambda t: t.id)
def test_chat_records_and_the_audit_see_the_view(traj: Trajectory) -> None:
    from awctl.formats.view import chat_records

    view = View(DOMAINS[traj.domain], "agentworldbench")
    assert [r["messages"] for r in chat_records(traj, DOMAINS)] == [
        view.messages_at(traj, t, 0) for t in range(len(traj.turns))]
    for style in STYLES:
        backend = _ReplayBackend(traj, View(DOMAINS[traj.domain], style))
        result = run_audit(DOMAINS[traj.domain], [traj], backend, domains=DOMAINS, style=style)
        expected = [View(DOMAINS[traj.domain], style).messages_at(traj, t, 0) for t in range(len(traj.turns))]
        assert [r.messages for r in backend.requests] == expected
        assert all(r.exact for r in result.turns)


def test_one_variant_per_trajectory_for_every_consumer() -> None:
    traj = TRAJS[0]
    systems: set[Any] = {p.system for p in expand([traj], DOMAINS, seed=SEED)}
    assert len(systems) == 1
    assert systems == {View(DOMAINS[traj.domain], "awctl").system(traj, _variant(traj))}
