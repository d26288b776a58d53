"""AgentWorldBench rows ⇄ awctl trajectories: byte-identical round trips, grouping, turns, errors."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.domain import Domain
from awctl.errors import InputError
from awctl.formats import agentworldbench as awb
from awctl.trajectory import SystemPrompt, Trajectory, Turn, read_trajectories, write_trajectories

FIXTURES = Path(__file__).parent / "fixtures" / "awb"
FENCE = "```"


# ── test domains with real (non-identity) hooks ──────────────────────────────────────────────────────


class FenceDomain(Domain):
    """Actions/observations live in code fences in AWB text; awctl keeps the bare text."""

    name = "terminal"

    def from_awb_action(self, body: str) -> str:
        if body.startswith(f"{FENCE}json\n") and body.endswith(f"\n{FENCE}"):
            return body[len(FENCE) + 5 : -len(FENCE) - 1]
        return body

    def to_awb_action(self, action: str) -> str:
        return f"{FENCE}json\n{action}\n{FENCE}"

    def from_awb_observation(self, body: str) -> str:
        if body.startswith(f"{FENCE}\n") and body.endswith(f"\n{FENCE}"):
            return body[len(FENCE) + 1 : -len(FENCE) - 1]
        return body

    def to_awb_observation(self, observation: str) -> str:
        return f"{FENCE}\n{observation}\n{FENCE}"


class StripDomain(Domain):
    """A lossy hook: stripping whitespace cannot be undone, so originals must be kept verbatim."""

    name = "strip"

    def from_awb_action(self, body: str) -> str:
        return body.strip()

    def from_awb_observation(self, body: str) -> str:
        return body.strip()


class BrokenDomain(Domain):
    name = "broken"

    def from_awb_action(self, body: str) -> str:
        raise RuntimeError("bug")

    def to_awb_observation(self, observation: str) -> str:
        raise ValueError("bug")


DOMAIN_TABLES = {
    "identity": {},
    "fence": {d: FenceDomain() for d in awb.DOMAINS},
    "strip": {d: StripDomain() for d in awb.DOMAINS},
    "broken": {d: BrokenDomain() for d in awb.DOMAINS},
}


def _dump(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _round_trip_file(src: Path, tmp: Path, domains: Any) -> str:
    """AWB file → awctl JSONL file → AWB text, through real files both ways."""
    mid = tmp / "mid.jsonl"
    out = tmp / "out.jsonl"
    write_trajectories(mid, awb.read_rows(src, domains))
    awb.write_rows(out, read_trajectories(mid), domains)
    return out.read_text(encoding="utf-8")


# ── fixtures in the 7 domains' styles ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("table", ["identity", "fence", "strip", "broken", "registry"])
@pytest.mark.parametrize("domain", awb.DOMAINS)
def test_fixture_round_trip_is_byte_identical(tmp_path: Path, domain: str, table: str) -> None:
    src = FIXTURES / f"{domain}_test.jsonl"
    domains = None if table == "registry" else DOMAIN_TABLES[table]
    out = _round_trip_file(src, tmp_path, domains)
    original = src.read_text(encoding="utf-8")
    if domain == "web":
        # The web fixture interleaves two trajectories' rows; they come back grouped by trajectory,
        # every row byte-identical, and the stored source line restores the file order.
        assert sorted(out.splitlines()) == sorted(original.splitlines())
        lines = [rec["line"] for t in awb.read_rows(src, {}) for rec in t.metadata["agentworldbench"]["rows"]]
        restored = [line for _, line in sorted(zip(lines, out.splitlines(), strict=True))]
        assert "\n".join(restored) + "\n" == original
    else:
        assert out == original


@pytest.mark.parametrize("domain", awb.DOMAINS)
def test_fixture_trajectories_have_the_right_turns(domain: str) -> None:
    rows = [json.loads(line) for line in (FIXTURES / f"{domain}_test.jsonl").read_text().splitlines()]
    trajs = list(awb.read_rows(FIXTURES / f"{domain}_test.jsonl", {}))
    by_prefix: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_prefix.setdefault(row["id"].rsplit("_turn", 1)[0], []).append(row)
    assert [t.id for t in trajs] == list(by_prefix)
    for traj in trajs:
        group = by_prefix[traj.id]
        longest = max(
            (r["prompt"] if isinstance(r["prompt"], list) else [r["prompt"]] for r in group), key=len
        )
        assert traj.domain == domain
        assert traj.source == "agentworldbench"
        assert len(traj.turns) == group[0]["total_turns"] == len(longest)
        assert len(traj.metadata["agentworldbench"]["rows"]) == len(group)
        assert traj.system.raw == group[0]["system_str"]
        for i, turn in enumerate(traj.turns):
            # identity hooks: the action is the text under **Action:**, the observation follows the marker
            assert longest[i].endswith("**Action:**\n" + turn.action)
            assert not turn.action.startswith("### Turn")
            assert "**Environment Observation:**" not in turn.observation


def test_fixture_turn_texts_in_domain_styles() -> None:
    term = next(iter(awb.read_rows(FIXTURES / "terminal_test.jsonl", DOMAIN_TABLES["fence"])))
    assert json.loads(term.turns[0].action) == [{"keystrokes": "ls -la\n", "duration": 0.5}]
    assert term.turns[0].observation.startswith("total 8")
    assert term.turns[0].metadata["awb_before_action"].startswith("**Task Instruction:**")
    assert "awb_prompt" not in term.turns[0].metadata  # re-rendering reproduces it: nothing stored twice

    android = next(iter(awb.read_rows(FIXTURES / "android_test.jsonl", {})))
    assert json.loads(android.turns[1].action) == {"action_type": "click", "x": 540, "y": 812}
    assert android.turns[1].metadata["awb_before_action"].startswith("**Current Phone State:**")

    web = list(awb.read_rows(FIXTURES / "web_test.jsonl", {}))
    assert [t.turns[0].action for t in web] == ["click [42]", "goto [http://localhost:7770/search?q=tent]"]
    assert web[0].turns[0].observation.startswith("RootWebArea")

    mcp = next(iter(awb.read_rows(FIXTURES / "mcp_test.jsonl", {})))
    assert json.loads(mcp.turns[2].observation)["result"]["isError"] is True
    assert mcp.metadata["agentworldbench"]["rows"][0]["fields"]["server"]["name"] == "filesystem"

    swe = list(awb.read_rows(FIXTURES / "swe_test.jsonl", {}))
    assert swe[-1].id == "swe_str" and swe[-1].metadata["agentworldbench"]["rows"][0]["prompt_str"] is True
    assert json.loads(swe[0].turns[1].action)["arguments"]["command"] == "str_replace"


def test_system_sections_are_parsed_but_raw_wins() -> None:
    traj = next(iter(awb.read_rows(FIXTURES / "terminal_test.jsonl", {})))
    assert traj.system.task_description == "Simulate an Ubuntu 22.04 shell."
    assert traj.system.action_space.startswith("JSON list of")
    assert traj.system.extra.startswith("You are a Linux terminal")
    assert traj.system.render() == traj.system.raw


# ── hypothesis: arbitrary rows round-trip byte-identically ───────────────────────────────────────────

# Pieces rather than characters, so fences, markers and odd whitespace appear often.
_text = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6),
        st.sampled_from(
            ["\n", " ", "\t", "\r\n", FENCE, "**", "### Turn 1\n", "**Action:**\n", "\u200b", "💥"]
        ),
    ),
    max_size=8,
).map("".join)
_body = st.one_of(
    _text,
    _text.map(lambda s: f"{FENCE}json\n{s}\n{FENCE}"),
    _text.map(lambda s: f"{FENCE}\n{s}\n{FENCE}"),
)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_STANDARD = ("task", "id", "prompt", "response", "current_prompt", "system_str", "turn_idx", "total_turns")


@st.composite
def _prompt(draw: st.DrawFn, i: int) -> str:
    kind = draw(st.sampled_from(["standard", "sections", "wrong_number", "free"]))
    body = draw(_body)
    if kind == "standard":
        return f"### Turn {i + 1}\n**Action:**\n{body}"
    if kind == "sections":
        return f"### Turn {i + 1}\n**Current State:**\n{draw(_text)}\n\n**Action:**\n{body}"
    if kind == "wrong_number":
        return f"### Turn {i + 7}\n**Action:**\n{body}"
    return draw(_text)


@st.composite
def _response(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["standard", "no_newline", "free"]))
    body = draw(_body)
    if kind == "standard":
        return f"**Environment Observation:**\n{body}"
    if kind == "no_newline":
        return f"**Environment Observation:** {body}"
    return draw(_text)


@st.composite
def _episode_rows(draw: st.DrawFn, k: int) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 4))
    prompts = [draw(_prompt(i)) for i in range(n)]
    responses = [draw(_response()) for _ in range(n)]
    task = draw(st.sampled_from(awb.DOMAINS + ("bench/terminal", "x/y/os", "unknown-domain")))
    system = draw(_text) + f"#{k}"  # distinct per episode so episodes never merge by accident
    evaluated = draw(st.lists(st.integers(1, n), min_size=1, max_size=n, unique=True))
    rows = []
    for t in sorted(evaluated):
        p_len = draw(st.sampled_from([t, n, t - 1, 0]))
        r_len = draw(st.sampled_from([t, n, t - 1]))
        row_p: Any = prompts[:p_len]
        row_r: Any = responses[:r_len]
        if len(row_p) == 1 and draw(st.booleans()):
            row_p = row_p[0]
        if len(row_r) == 1 and draw(st.booleans()):
            row_r = row_r[0]
        default = prompts[t - 1] if t - 1 < p_len else ""
        current = draw(st.sampled_from(["absent", "default", "suffix", "empty", "free", "null"]))
        values: dict[str, Any] = {
            "task": task,
            "id": draw(st.one_of(st.just(f"ep{k}_turn{t}"), _text, st.integers())),
            "prompt": row_p,
            "response": row_r,
            "system_str": system,
            "turn_idx": draw(st.sampled_from([t, t, t, str(t)])),
            "total_turns": draw(st.sampled_from([n, None, "n"])),
        }
        if current != "absent":
            values["current_prompt"] = {
                "default": default,
                "suffix": default + draw(_text),
                "empty": "",
                "free": draw(_text),
                "null": None,
            }[current]
        for key, value in draw(
            st.dictionaries(_text.filter(lambda s: s not in _STANDARD), _json_value, max_size=3)
        ).items():
            values[key] = value
        order = draw(st.permutations(list(values)))
        if draw(st.booleans()):
            order = [k for k in order if k not in ("total_turns",)]
        rows.append({key: values[key] for key in order})
    return rows


@st.composite
def _files(draw: st.DrawFn) -> list[dict[str, Any]]:
    episodes = draw(st.integers(1, 3))
    return [row for k in range(episodes) for row in draw(_episode_rows(k))]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(rows=_files(), table=st.sampled_from(sorted(DOMAIN_TABLES)))
def test_generated_rows_round_trip_byte_identical(rows: list[dict[str, Any]], table: str) -> None:
    domains = DOMAIN_TABLES[table]
    trajs = [Trajectory.model_validate_json(t.to_json()) for t in awb.rows_to_trajectories(rows, domains)]
    back = [row for traj in trajs for row in awb.trajectory_to_rows(traj, domains)]
    assert _dump(back) == _dump(rows)


# ── grouping ─────────────────────────────────────────────────────────────────────────────────────────


def _row(
    traj: str, t: int, prompts: list[str], responses: list[str], system: str = "s", **extra: Any
) -> dict:
    return {
        "task": "terminal",
        "id": f"{traj}_turn{t}",
        "prompt": prompts,
        "response": responses,
        "current_prompt": "",
        "system_str": system,
        "turn_idx": t,
        "total_turns": len(prompts),
        **extra,
    }


P = [f"### Turn {i}\n**Action:**\necho {i}" for i in (1, 2, 3)]
R = [f"**Environment Observation:**\n{i}" for i in (1, 2, 3)]


def test_full_and_prefix_rows_of_one_trajectory_group_together() -> None:
    rows = [_row("a", 1, P[:1], R[:1]), _row("a", 2, P, R), _row("a", 3, P[:3], R[:3])]
    (traj,) = awb.rows_to_trajectories(rows, {})
    assert [t.action for t in traj.turns] == ["echo 1", "echo 2", "echo 3"]
    assert _dump(awb.trajectory_to_rows(traj, {})) == _dump(rows)


def test_same_first_turn_but_repeated_turn_idx_starts_a_new_trajectory() -> None:
    other = [P[0], "### Turn 2\n**Action:**\nrm x"]
    rows = [
        _row("a", 1, P[:1], R[:1]),
        _row("a", 2, P[:2], R[:2]),
        _row("b", 1, P[:1], R[:1]),
        _row("b", 2, other, R[:2]),
    ]
    trajs = list(awb.rows_to_trajectories(rows, {}))
    assert [t.id for t in trajs] == ["a", "b"]
    assert trajs[1].turns[1].action == "rm x"


def test_different_system_or_incompatible_lists_split_trajectories() -> None:
    rows = [
        _row("a", 1, P[:1], R[:1]),
        _row("b", 2, P[:2], R[:2], system="other"),
        _row("c", 2, ["### Turn 1\n**Action:**\nX", P[1]], R[:2]),
    ]
    assert [t.id for t in awb.rows_to_trajectories(rows, {})] == ["a", "b", "c"]


def test_interleaved_rows_group_within_the_window_and_split_beyond_it() -> None:
    q = [p.replace("echo", "printf") for p in P]
    rows = [
        _row("a", 1, P[:1], R[:1]),
        _row("b", 1, q[:1], R[:1]),
        _row("a", 2, P[:2], R[:2]),
        _row("b", 2, q[:2], R[:2]),
    ]
    assert [len(t.turns) for t in awb.rows_to_trajectories(rows, {}, max_open=2)] == [2, 2]
    # With a window of one, rows are assumed adjacent: a trajectory whose rows are split comes out twice.
    split = list(awb.rows_to_trajectories(rows, {}, max_open=1))
    assert [t.id for t in split] == ["a", "b", "a~2", "b~2"]
    assert [r for t in split for r in awb.trajectory_to_rows(t, {})] == [rows[0], rows[1], rows[2], rows[3]]


def test_reading_is_streaming_trajectories_come_out_before_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    q = [p.replace("echo", "printf") for p in P]
    path.write_text(_dump([_row("a", 1, P[:1], R[:1]), _row("b", 1, q[:1], R[:1])]) + "{broken\n")
    reader = awb.read_rows(path, {}, max_open=1)
    assert next(reader).id == "a"  # emitted as soon as b's first row arrived
    with pytest.raises(InputError, match=r"rows\.jsonl:3: invalid JSON"):
        next(reader)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"prompt": 5}, "'prompt'"),
        ({"response": ["ok", 3]}, "'response'"),
        ({"task": ""}, "'task'"),
        ({"system_str": ["x"]}, "'system_str'"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(_dump([_row("a", 1, P[:1], R[:1]), {**_row("a", 2, P[:2], R[:2]), **change}]))
    with pytest.raises(InputError) as info:
        list(awb.read_rows(path, {}))
    assert info.value.message.startswith(f"{path}:2: field {field}")


# ── edits and trajectories that never came from AWB ──────────────────────────────────────────────────


def test_edited_turns_are_rendered_not_masked_by_verbatim_copies() -> None:
    rows = [_row("a", 1, [P[0] + "  "], [R[0]]), _row("a", 2, [P[0] + "  ", P[1]], R[:2])]
    (traj,) = awb.rows_to_trajectories(rows, DOMAIN_TABLES["strip"])
    assert traj.turns[0].metadata["awb_prompt"] == P[0] + "  "
    traj.turns[0].action = "echo edited"
    out = awb.trajectory_to_rows(traj, DOMAIN_TABLES["strip"])
    assert out[1]["prompt"][0] == "### Turn 1\n**Action:**\necho edited"
    assert out[1]["prompt"][1] == P[1]


def test_new_trajectory_becomes_one_standard_row_per_turn() -> None:
    traj = Trajectory(
        id="ep1",
        domain="terminal",
        system=SystemPrompt(task_description="make notes", action_space="keys"),
        turns=[
            Turn(action='[{"keystrokes": "ls\\n"}]', observation="a b"),
            Turn(action="[]", observation=""),
        ],
    )
    domain = FenceDomain()
    rows = awb.trajectory_to_rows(traj, {"terminal": domain})
    assert [list(r) for r in rows] == [[*_STANDARD, "awctl"]] * 2  # awctl: what AWB rows cannot hold
    assert [r["id"] for r in rows] == ["ep1_turn1", "ep1_turn2"]
    assert rows[1]["prompt"] == [
        '### Turn 1\n**Action:**\n```json\n[{"keystrokes": "ls\\n"}]\n```',
        "### Turn 2\n**Action:**\n```json\n[]\n```",
    ]
    assert rows[0]["response"] == ["**Environment Observation:**\n```\na b\n```"]
    assert rows[1]["current_prompt"] == rows[1]["prompt"][1]
    assert rows[0]["system_str"] == domain.system_prompt(traj.system, variant=0)
    assert (rows[1]["turn_idx"], rows[1]["total_turns"]) == (2, 2)
    # and back: same turns
    (again,) = awb.rows_to_trajectories(rows, {"terminal": domain})
    assert [(t.action, t.observation) for t in again.turns] == [(t.action, t.observation) for t in traj.turns]


def test_new_trajectory_with_unknown_domain_uses_plain_sections() -> None:
    traj = Trajectory(
        id="x",
        domain="nowhere",
        system=SystemPrompt(task_description="do"),
        turns=[Turn(action="a", observation="o")],
    )
    (row,) = awb.trajectory_to_rows(traj, {})
    assert row["system_str"] == "## Task Description\ndo"
    assert row["task"] == "nowhere"


def test_subtask_follows_eval_py() -> None:
    assert awb.subtask("terminal") == "terminal"
    assert awb.subtask("agentworldbench/v1/os") == "os"
    assert set(string.ascii_lowercase) >= set("".join(awb.DOMAINS))
