"""Verifiers on recorded and imported trajectories: no false positives, every planted fault caught, and
failures that name the element and what was expected."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from awctl_domains.android.domain import AndroidDomain
from awctl_domains.android.importers import load_agentworldbench, load_androidworld

from awctl.domain import TurnContext, run_verifiers
from awctl.trajectory import SystemPrompt, Trajectory, Turn

FIXTURES = Path(__file__).parent / "fixtures"
DOMAIN = AndroidDomain()
VERIFIERS = {v.name: v for v in DOMAIN.verifiers()}


@pytest.fixture(scope="module")
def corpus(recorded) -> list[Trajectory]:
    """Everything real-format we have: stand-in recordings (both representations), AndroidWorld episode
    logs and AgentWorldBench rows."""
    trajectories = [e.trajectory for e in recorded.values()]
    trajectories += list(load_androidworld(FIXTURES / "episodes.androidworld.json"))
    trajectories += list(load_agentworldbench(FIXTURES / "dark_theme.android-awb.jsonl"))
    return trajectories


def test_no_verifier_fails_on_real_format_trajectories(corpus) -> None:
    applied: Counter[str] = Counter()
    for trajectory in corpus:
        for i in range(len(trajectory.turns)):
            for result in run_verifiers(DOMAIN, trajectory, i):
                assert result.ok, f"{trajectory.id} turn {i} {trajectory.turns[i].action}: {result.check}: {result.message}"
                applied[result.check] += 1
    # Every verifier decided on several turns, so the absence of failures means something.
    assert set(applied) == set(VERIFIERS) and min(applied.values()) >= 3, applied


def test_every_planted_fault_is_caught_by_its_verifier(corpus) -> None:
    rng = random.Random(7)
    planted: Counter[str] = Counter()
    faults = DOMAIN.faults()
    assert {f.verifier for f in faults} == set(VERIFIERS)
    for trajectory in corpus:
        for i in range(len(trajectory.turns)):
            for fault in faults:
                bad = fault.plant(TurnContext.at(trajectory, i), rng)
                if bad is None:
                    continue
                assert bad != trajectory.turns[i].observation, fault.name
                result = VERIFIERS[fault.verifier](TurnContext.at(trajectory, i, bad))
                assert result is not None and not result.ok, f"{fault.name} not caught in {trajectory.id} turn {i}"
                planted[fault.name] += 1
    assert set(planted) == {f.name for f in faults} and min(planted.values()) >= 2, planted


def _ctx(initial: str, action: str, observation: str, size: str = "1080x2400", later: list[Turn] | None = None
         ) -> TurnContext:
    system = SystemPrompt(initial_state=f"Screen size: {size}\nThe screen shows:\n```\n{initial}\n```")
    turns = [Turn(action=action, observation=observation), *(later or [])]
    return TurnContext.at(Trajectory(id="t", domain="android", system=system, turns=turns), 0)


def _line(i: int, text: str, box: tuple[int, int, int, int] | None = None, **flags: object) -> str:
    box = box or (0, 1080, 300 + 100 * i, 390 + 100 * i)
    values = {"is_enabled": True, "is_editable": False, "is_focused": False, "is_clickable": True, **flags}
    rest = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return (f"UI element {i}: UIElement(text={text!r}, class_name='android.widget.EditText', "
            f"bbox_pixels=BoundingBox(x_min={box[0]}, x_max={box[1]}, y_min={box[2]}, y_max={box[3]}), {rest}, "
            f"package_name='com.example.notes', resource_name='com.example.notes:id/f{i}')")


def test_failures_name_the_element_and_what_was_expected() -> None:
    screen = "\n".join([_line(0, "Title", is_editable=True, is_focused=True), _line(1, "Save", is_enabled=False)])
    typed = _ctx(screen, '{"action_type": "input_text", "text": "Buy milk", "index": 0}',
                 screen.replace("'Title'", "'Buy mil'"))
    result = VERIFIERS["typed_text_lands"](typed)
    assert not result.ok and result.message.startswith("line 1 (UI element 0, text='Buy mil')")
    assert "'Buy milk'" in result.message
    tap = _ctx(screen, '{"action_type": "click", "index": 1}', screen.replace("'Save'", "'Saved'"))
    result = VERIFIERS["disabled_tap_noop"](tap)
    assert not result.ok and "UI element 1" in result.message and "is disabled" in result.message
    outside = _ctx(screen, '{"action_type": "wait"}', screen.replace("x_min=0, x_max=1080, y_min=300",
                                                                      "x_min=1200, x_max=1300, y_min=300"))
    result = VERIFIERS["bounds_in_screen"](outside)
    assert not result.ok and "line 1" in result.message and "outside the 1080x2400 screen" in result.message


def test_verifiers_abstain_without_what_they_need() -> None:
    screen = _line(0, "Title", is_editable=True, is_focused=True)
    no_state = TurnContext.at(Trajectory(id="t", domain="android", turns=[
        Turn(action='{"action_type": "input_text", "text": "x", "index": 0}', observation=screen)]), 0)
    assert all(VERIFIERS[n](no_state) is None for n in ("schema_stable", "bounds_in_screen", "typed_text_lands",
                                                         "disabled_tap_noop", "target_index_exists"))
    # A prose answer to a structured screen lacks the structure the trajectory established: every check of
    # the screen fails, naming the form it expected.
    prose = _ctx(screen, '{"action_type": "click", "index": 0}', "The note editor opened.")
    assert VERIFIERS["schema_stable"](prose).ok is False
    for name in ("bounds_in_screen", "flags_boolean", "target_index_exists"):
        result = VERIFIERS[name](prose)
        assert result is not None and not result.ok and "expected a UI element list" in result.message, name
    # Prose throughout (nothing structured before): nothing to expect.
    all_prose = TurnContext.at(Trajectory(id="p", domain="android", turns=[
        Turn(action='{"action_type": "click", "index": 0}', observation="The note editor opened.")]), 0)
    assert all(v(all_prose) is None for v in VERIFIERS.values())
    gone = _ctx(screen, '{"action_type": "input_text", "text": "x", "index": 0}', _line(0, "Other").replace("f0", "g0"))
    assert VERIFIERS["typed_text_lands"](gone) is None  # the field is not on the new screen


def test_a_missing_index_may_do_nothing_but_not_change_the_screen() -> None:
    screen = _line(0, "Title")
    assert VERIFIERS["target_index_exists"](_ctx(screen, '{"action_type": "click", "index": 4}', screen)).ok
    moved = _ctx(screen, '{"action_type": "click", "index": 4}', _line(0, "Other"))
    result = VERIFIERS["target_index_exists"](moved)
    assert not result.ok and "element 4 was not on the previous screen (indices 0-0)" in result.message


def test_the_screen_size_follows_a_rotation_in_the_dump() -> None:
    portrait = ('<hierarchy rotation="0"><node index="0" bounds="[0,0][1080,2400]" /></hierarchy>')
    landscape = ('<hierarchy rotation="1"><node index="0" bounds="[0,0][2400,1080]" /></hierarchy>')
    ctx = _ctx(portrait, '{"action_type": "wait"}', landscape, size="1080x2400")
    assert VERIFIERS["bounds_in_screen"](ctx).ok
    assert not VERIFIERS["bounds_in_screen"](_ctx(portrait, '{"action_type": "wait"}',
                                                  landscape.replace('rotation="1"', 'rotation="0"'))).ok


def test_random_text_fails_every_verifier_that_passed_the_turn(corpus) -> None:
    from awctl.conformance.kit import rule_fails_garbage

    outcome = rule_fails_garbage(DOMAIN, corpus, seed=11)
    assert outcome.status == "ok" and outcome.checked > 200, outcome.message


def test_the_standin_fixture_gives_the_typing_checks_turns() -> None:
    from awctl.trajectory import read_trajectories

    trajectories = list(read_trajectories(FIXTURES / "adb_standin.jsonl"))
    typed = [(t, i) for t in trajectories for i, turn in enumerate(t.turns) if "input_text" in turn.action]
    assert len(typed) >= 4
    for t, i in typed:
        result = VERIFIERS["typed_text_lands"](TurnContext.at(t, i))
        assert result is not None and result.ok, (t.id, i)
