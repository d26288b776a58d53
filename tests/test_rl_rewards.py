"""RL rewards: strict tag extraction, weighted judge + verifier reward, one-turn expansion."""

from __future__ import annotations

import pytest

from awctl.plugins import get_registry
from awctl.rl.expand import expand
from awctl.rl.rewards import RewardModel, extract_strict
from awctl.trajectory import SystemPrompt, Trajectory, Turn

OBS1 = "root@sandbox:/workspace# echo 'hello world' > hello.txt\nroot@sandbox:/workspace#"
OBS2 = OBS1 + " cat hello.txt\nhello world\nroot@sandbox:/workspace#"


def _traj() -> Trajectory:
    return Trajectory(
        id="t1", domain="terminal", source="terminal:test",
        system=SystemPrompt(task_description="Create hello.txt", initial_state="root@sandbox:/workspace#"),
        turns=[Turn(action='[{"keystrokes": "echo \'hello world\' > hello.txt\\n", "duration": 1.0}]',
                    observation=OBS1),
               Turn(action='[{"keystrokes": "cat hello.txt\\n", "duration": 1.0}]', observation=OBS2)],
    )


def wrap(obs: str) -> str:
    return f"<predicted_observation>\n{obs}\n</predicted_observation>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (wrap("abc"), "abc"),
        ("<think>\nplan <predicted_observation>x</predicted_observation>\n</think>\n" + wrap("abc"), "abc"),
        ("abc", None),  # untagged
        ("<predicted_observation>\nabc", None),  # unclosed
        (wrap("a") + wrap("b"), None),  # two blocks
        ("</predicted_observation>abc<predicted_observation>", None),  # out of order
    ],
)
def test_strict_extraction_counts_exactly_one_closed_block(text: str, expected: str | None) -> None:
    assert extract_strict(text) == expected


def test_reward_is_weighted_judge_plus_verifier_and_outside_text_cannot_raise_it() -> None:
    domains = get_registry().domains
    prompts = expand([_traj()], domains, seed=0)
    assert [p.index for p in prompts] == [0, 1]
    p = prompts[1]
    # The history is shown the way the model writes observations: inside the tags.
    assert wrap(OBS1) in p.messages[2]["content"]
    rm = RewardModel(domains)
    perfect, wrong, untagged, padded = rm.score(
        [p] * 4,
        [wrap(OBS2), wrap(OBS1 + " cat hello.txt\ncat: hello.txt: No such file or directory\n"
                          "root@sandbox:/workspace#"),
         OBS2, wrap("garbage") + "\n" + OBS2],
    )
    assert perfect.tagged and perfect.exact and perfect.verifier == 1.0
    assert perfect.total == pytest.approx(0.9 * 1.0 + 0.1 * perfect.verifier)
    assert perfect.total > wrong.total > 0
    assert untagged.total == 0 and not untagged.tagged
    # The right answer written outside the tag does not help a wrong tagged answer.
    alone = rm.score([p], [wrap("garbage")])[0]
    assert padded.total == alone.total
    weighted = RewardModel(domains, judge_weight=0.5, verifier_weight=0.5).score([p], [wrap(OBS2)])[0]
    assert weighted.total == pytest.approx(0.5 * weighted.judge + 0.5 * weighted.verifier)
