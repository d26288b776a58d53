"""The information-theoretic masking policy: each category's rule, deterministic seeded keep decisions,
and kept shares that follow the configured probabilities."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from awctl.data import masking
from awctl.data.masking import CATEGORIES, InfoMaskPolicy, MaskConfig, split_lines
from awctl.trajectory import SystemPrompt, Trajectory, Turn


def _traj(turns: list[tuple[str, str]], tid: str = "t", initial: str = "") -> Trajectory:
    return Trajectory(
        id=tid,
        domain="toy",
        system=SystemPrompt(task_description="Tidy the repo.", initial_state=initial),
        turns=[Turn(action=a, observation=o) for a, o in turns],
    )


def _cats(traj: Trajectory, **cfg) -> list[list[tuple[str, str]]]:
    labels = InfoMaskPolicy(MaskConfig(**cfg)).label(traj)
    return [
        [(t.observation[lab.start : lab.end].strip(), lab.category) for lab in turn_labels]
        for t, turn_labels in zip(traj.turns, labels, strict=True)
    ]


def test_each_category_has_a_rule_that_fires() -> None:
    traj = _traj(
        [
            ("write todo.txt buy milk and eggs", "Wrote 1 line to todo.txt"),
            (
                "cat todo.txt",
                "$ cat todo.txt\nbuy milk and eggs\n-----\ncat: notes.txt: No such file or directory",
            ),
            ("ls", "-----\nREADME.md  setup.py  todo.txt\nsrc tests docs"),
            ("sort todo.txt", "and buy eggs milk"),
        ]
    )
    got = _cats(traj)
    assert got[0] == [("Wrote 1 line to todo.txt", "action")]
    assert got[1] == [
        ("$ cat todo.txt", "echo"),
        ("buy milk and eggs", "retrieval"),
        ("-----", "boilerplate"),
        ("cat: notes.txt: No such file or directory", "error"),
    ]
    assert got[2][0] == ("-----", "boilerplate")
    assert got[2][2] == ("src tests docs", "expansion")
    # Words all known, order new: recombined content.
    assert got[3] == [("and buy eggs milk", "transform")]
    assert {c for turn in got for _, c in turn} == set(CATEGORIES) - set()  # all seven occur


def test_repeated_short_line_from_an_earlier_observation_is_boilerplate() -> None:
    traj = _traj(
        [("status", "Service ready on port 80\nuptime 3 days"), ("status", "Service ready on port 80")]
    )
    assert _cats(traj)[1] == [("Service ready on port 80", "boilerplate")]


def test_spans_cover_the_observation_exactly() -> None:
    text = "a\n\nbc\r\nlast"
    spans = split_lines(text)
    assert "".join(text[s:e] for s, e in spans) == text
    traj = _traj([("x", text)])
    labels = InfoMaskPolicy().label(traj)[0]
    assert [(lab.start, lab.end) for lab in labels] == spans


def test_keep_decisions_are_seeded_and_independent_of_order() -> None:
    trajs = [_traj([(f"echo w{i}", f"w{i}\n---\nline {i} text")] * 3, tid=f"t{i}") for i in range(20)]
    policy = InfoMaskPolicy(seed=7)
    forward = {t.id: policy.label(t) for t in trajs}
    backward = {t.id: InfoMaskPolicy(seed=7).label(t) for t in reversed(trajs)}
    assert forward == backward
    other = {t.id: InfoMaskPolicy(seed=8).label(t) for t in trajs}
    kept = lambda labels: [lab.kept for ls in labels.values() for turn in ls for lab in turn]  # noqa: E731
    assert kept(forward) != kept(other)


@pytest.mark.parametrize("p", [0.05, 0.1, 0.5])
def test_kept_share_follows_the_configured_probability(p: float) -> None:
    # 4000 boilerplate spans: separator lines.
    traj = _traj([("ls", "\n".join("-" * (3 + i % 5) for i in range(400)))] * 10)
    labels = InfoMaskPolicy(MaskConfig(keep={"boilerplate": p}), seed=1).label(traj)
    flat = [lab for turn in labels for lab in turn]
    assert {lab.category for lab in flat} == {"boilerplate"}
    share = sum(lab.kept for lab in flat) / len(flat)
    assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / len(flat))


def test_config_rejects_unknown_categories_and_bad_probabilities() -> None:
    with pytest.raises(ValidationError, match="unknown masking categories"):
        MaskConfig(keep={"noise": 0.5})
    with pytest.raises(ValidationError, match="within"):
        MaskConfig(keep={"echo": 1.5})
    assert MaskConfig(keep={"echo": 0.2}).keep["transform"] == 0.5  # the rest keep their defaults


def test_features_are_reported_when_asked() -> None:
    traj = _traj([("cat a.txt", "hello world")], initial="a.txt contains: hello world")
    lab = InfoMaskPolicy().label(traj, with_features=True)[0][0]
    assert lab.category == "retrieval"
    assert lab.features["overlap"] == 1.0 and lab.features["novelty"] == 0.0
    assert set(lab.features) >= {"overlap", "novelty", "jaccard", "length_ratio"}


_PIECES = ["error", "Exception", "ERROR", "_", "x", "\u00e9", "\u0130", "1", " ", ":", "-", "\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join))
def test_error_prefilter_never_skips_a_line_the_error_rule_matches(line: str) -> None:
    """The pre-filter (a trigger word, or a word ending in error/exception) lets through every line the
    ``_ERROR`` regex matches, so the fast path never changes a line's category."""
    words = masking._WORD.findall(line.lower())
    passes = not masking._ERROR_TRIGGERS.isdisjoint(words) or any(map(masking._ENDS_LIKE_ERROR, words))
    assert passes or masking._ERROR.search(line) is None


def test_certain_categories_are_kept_or_dropped_without_a_draw() -> None:
    """keep=1 keeps every span and keep=0 drops every span of that category."""
    traj = _traj([(f"write f{i}.txt", f"alpha beta gamma {i}\nrun {i}\n---") for i in range(30)])
    keep = {c: 1.0 for c in CATEGORIES} | {"boilerplate": 0.0}
    labels = [lab for turn in InfoMaskPolicy(MaskConfig(keep=keep)).label(traj) for lab in turn]
    assert {lab.category for lab in labels} >= {"boilerplate", "expansion"}
    assert all(lab.kept == (lab.category != "boilerplate") for lab in labels)
