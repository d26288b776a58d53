"""Codecs: round trips on real recordings and on generated text, clear errors on bad text."""

from __future__ import annotations

import pytest
from awctl_example_domain.codec import CalcActionCodec, CalcObservationCodec, Output, Statement
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError

ACTIONS, OBSERVATIONS = CalcActionCodec(), CalcObservationCodec()


def test_every_recorded_action_and_observation_round_trips(recordings) -> None:
    turns = [t for traj in recordings for t in traj.turns]
    assert len(turns) >= 20
    for turn in turns:
        assert ACTIONS.render(ACTIONS.parse(turn.action)) == turn.action
        assert OBSERVATIONS.render(OBSERVATIONS.parse(turn.observation)) == turn.observation


def test_parse_splits_assignments_from_expressions() -> None:
    assert ACTIONS.parse("area = w * h") == Statement("area = w * h", "area", "w * h")
    assert ACTIONS.parse("x == 1") == Statement("x == 1", None, "x == 1")
    assert OBSERVATIONS.parse("area = 13.5") == Output("assignment", "13.5", "area")
    assert OBSERVATIONS.parse("Error: division by zero") == Output("error", "division by zero")
    assert ACTIONS.family("n = n + 1") == "assignment" and ACTIONS.family("n + 1") == "expression"


@given(st.text(max_size=40))
def test_any_text_either_round_trips_or_raises_codec_error(text: str) -> None:
    for codec in (ACTIONS, OBSERVATIONS):
        try:
            parsed = codec.parse(text)
        except CodecError:
            continue
        assert codec.render(parsed) == text


_numbers = st.one_of(st.integers(-10**20, 10**20).map(str), st.floats(allow_nan=False, allow_infinity=False)
                     .filter(lambda f: not f.is_integer()).map(lambda f: f"{f:.12g}"))


@given(st.one_of(
    st.builds(Output, st.just("value"), _numbers),
    st.builds(Output, st.just("assignment"), _numbers, st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)),
    st.builds(Output, st.just("error"), st.from_regex(r"[a-z][a-z ']{0,20}[a-z]", fullmatch=True)),
))
def test_generated_outputs_render_and_parse_back(out: Output) -> None:
    assert OBSERVATIONS.parse(OBSERVATIONS.render(out)) == out


@pytest.mark.parametrize(("text", "where"), [
    ("42\n43", "observation line 2"), (" 42", "observation line 1"), ("The result is 42.", "observation line 1"),
])
def test_bad_observation_names_the_line_and_the_fix(text: str, where: str) -> None:
    with pytest.raises(CodecError) as err:
        OBSERVATIONS.parse(text)
    assert err.value.where == where and err.value.hint


def test_bad_action_raises_codec_error() -> None:
    for text in ("", "   ", "x = 1\ny = 2"):
        with pytest.raises(CodecError):
            ACTIONS.parse(text)
