"""Verifiers on sessions recorded from the real sandbox: no false positives, and each flags its fault.

The recordings are made once per module by driving :class:`TerminalEnv` (bubblewrap) through a
scripted session and through task reference solutions; the shipped asciinema fixture (a real recorded
sandbox session) is checked as well.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.env import TerminalEnv
from awctl_domains.terminal.importers import load_cast
from awctl_domains.terminal.tasks import keys

from awctl.domain import TurnContext, run_verifiers
from awctl.trajectory import Trajectory, Turn

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("tmux") is None,
                                reason="needs bubblewrap and tmux")

DOMAIN = TerminalDomain()
VERIFIERS = {v.name: v for v in DOMAIN.verifiers()}
CAST = Path(__file__).parent / "fixtures" / "session.cast"


def _typed(text: str, duration: float = 0.2) -> str:
    return json.dumps([{"keystrokes": text, "duration": duration}])


SESSION = [
    keys("echo hello   world"),
    keys("pwd"),
    keys("mkdir -p sub/deeper && cd sub"),
    keys("pwd"),
    keys("echo 'two  spaces' > a.txt"),
    keys("printf 'x\\ny\\n' > b.txt"),
    keys("echo more >> b.txt"),
    keys("cat a.txt"),
    keys("cat b.txt"),
    keys("cd deeper"),
    keys("cd ../.."),
    keys("cd /nonexistent"),
    keys("cd"),
    _typed("ls -l"),
    _typed("C-c"),
    _typed("echo partial"),
    keys(" and more"),
    keys("echo -n no-newline"),
    keys("ls sub"),
    _typed("cat b"),
    _typed("C-c"),
    keys("echo " + "w" * 200),
    keys("sleep 5", 0.3),
    _typed("C-c"),
    keys("cd sub && cat a.txt"),
    keys("seq 1 50"),
    keys("echo after-scroll"),
    keys("pwd"),
    keys("cd ~/sub"),
]


@pytest.fixture(scope="module")
def recorded() -> list[Trajectory]:
    """Trajectories recorded from the real sandbox (a scripted session and five tasks' solutions)."""
    out = []
    with TerminalEnv({"sandbox": "bubblewrap"}) as env:
        episodes = [("session", None, SESSION)]
        episodes += [(t.id, t, t.solution + [keys(c) for c in ("ls", "cat *.txt")])
                     for t in DOMAIN.tasks("basic")[:5]]
        shown = next(t for t in DOMAIN.tasks("basic") if t.id.endswith("/count_lines"))  # data.txt's text shown
        episodes.append(("shown_files", shown, [keys(c) for c in ("cat data.txt", "chmod 600 data.txt",
                                                                  "cat data.txt")]))
        for name, task, actions in episodes:
            first = env.reset(task)
            turns = [Turn(action=a, observation=env.step(a).observation) for a in actions]
            out.append(Trajectory(id=name, domain="terminal", system=DOMAIN.sections_for(task, first),
                                  turns=turns, metadata={"rows": 40, "cols": 160}))
    out.append(next(load_cast(CAST)))
    return out


def test_no_verifier_fails_on_real_recordings(recorded):
    applied: dict[str, int] = {}
    for traj in recorded:
        for i in range(len(traj.turns)):
            for res in run_verifiers(DOMAIN, traj, i):
                assert res.ok, f"{traj.id} turn {i} {traj.turns[i].action}: {res.check}: {res.message}"
                applied[res.check] = applied.get(res.check, 0) + 1
    # Every verifier decided on several real turns, so the absence of failures means something.
    assert set(applied) == set(VERIFIERS) and min(applied.values()) >= 3, applied


def _turn(recorded: list[Trajectory], action: str) -> tuple[Trajectory, int]:
    traj = recorded[0]
    return traj, next(i for i, t in enumerate(traj.turns) if t.action == action)


def _flags(name: str, traj: Trajectory, index: int, corrupt: Callable[[str], str]) -> None:
    observation = traj.turns[index].observation
    bad = corrupt(observation)
    assert bad != observation, "the corruption must change the screen"
    good = VERIFIERS[name](TurnContext.at(traj, index))
    assert good is not None and good.ok, f"{name} should accept the real screen"
    res = VERIFIERS[name](TurnContext.at(traj, index, bad))
    assert res is not None and not res.ok, f"{name} did not flag:\n{bad}"
    assert res.message


def test_screen_geometry_flags_too_wide_and_too_tall_screens(recorded):
    traj, i = _turn(recorded, keys("pwd"))
    _flags("screen_geometry", traj, i, lambda s: s + "\n" + "x" * 161)
    _flags("screen_geometry", traj, i, lambda s: s + "\n" * 2 + "\n".join(["line"] * 40))


def test_prompt_format_flags_a_foreign_prompt(recorded):
    traj, i = _turn(recorded, keys("pwd"))
    _flags("prompt_format", traj, i, lambda s: s.replace("root@sandbox:/workspace#", "user@host:~$"))
    _flags("prompt_format", traj, i, lambda s: s.replace("root@sandbox:/workspace#", "root@sandbox:~#"))


def test_prompt_cwd_flags_a_prompt_that_ignores_cd(recorded):
    traj, i = _turn(recorded, keys("cd deeper"))
    _flags("prompt_cwd", traj, i, lambda s: s[: s.rindex("/deeper#")] + "#")
    traj, i = _turn(recorded, keys("cd /nonexistent"))  # a failed cd must stay put
    _flags("prompt_cwd", traj, i, lambda s: s[: s.rindex("root@sandbox:")] + "root@sandbox:/nonexistent#")
    traj, i = _turn(recorded, keys("echo hello   world"))  # a non-cd command must not move
    _flags("prompt_cwd", traj, i, lambda s: s[: s.rindex("root@sandbox:")] + "root@sandbox:/tmp#")


def test_command_echo_flags_a_wrong_echo(recorded):
    traj, i = _turn(recorded, keys("cat a.txt"))
    _flags("command_echo", traj, i, lambda s: s.replace("# cat a.txt", "# cat b.txt"))
    traj, i = _turn(recorded, keys("echo " + "w" * 200))  # the wrapped echo of a long line
    _flags("command_echo", traj, i, lambda s: s.replace("w" * 30 + "\n", "w" * 29 + "\n", 1))


def test_typed_echo_only_flags_output_without_enter(recorded):
    traj, i = _turn(recorded, _typed("echo partial"))
    _flags("typed_echo_only", traj, i, lambda s: s + "\npartial\nroot@sandbox:/workspace#")
    _flags("typed_echo_only", traj, i, lambda s: s.replace("echo partial", "echo partia"))


def test_exact_output_flags_wrong_determined_outputs(recorded):
    traj, i = _turn(recorded, keys("echo hello   world"))
    _flags("exact_output", traj, i, lambda s: s.replace("\nhello world\n", "\nhello   world\n"))
    traj, i = _turn(recorded, keys("pwd"))
    _flags("exact_output", traj, i, lambda s: s.replace("\n/workspace\n", "\n/root\n"))
    traj, i = _turn(recorded, keys("cat a.txt"))
    _flags("exact_output", traj, i, lambda s: s.replace("two  spaces", "two spaces"))
    traj, i = _turn(recorded, keys("cat b.txt"))  # printf then >> append, across turns
    _flags("exact_output", traj, i, lambda s: s.replace("\nmore\n", "\n"))
    traj, i = _turn(recorded, keys("echo -n no-newline"))
    _flags("exact_output", traj, i, lambda s: s.replace("no-newlineroot@", "no-newline\nroot@"))


def test_exact_output_knows_the_files_the_initial_state_shows_until_a_command_may_change_them(recorded):
    traj = next(t for t in recorded if t.id == "shown_files")
    assert "data.txt:\n```\na\nb" in traj.system.initial_state
    _flags("exact_output", traj, 0, lambda s: s.replace("\nc\nd\n", "\nd\nc\n"))
    assert VERIFIERS["exact_output"](TurnContext.at(traj, 2)) is None  # after chmod: undecided


def test_exact_output_forgets_files_after_unknown_commands(recorded):
    traj, i = _turn(recorded, keys("cd sub && cat a.txt"))
    assert VERIFIERS["exact_output"](TurnContext.at(traj, i)) is None  # not a lone cat: undecided
    # After `ls -l`/C-c etc. (non-command actions) the session's file knowledge is dropped, never stale.
    synthetic = traj.model_copy(deep=True)
    synthetic.turns.append(Turn(action=keys("cat a.txt"), observation="anything"))
    assert VERIFIERS["exact_output"](TurnContext.at(synthetic, len(synthetic.turns) - 1)) is None
