"""Verifiers accept real recorded observations and flag each kind of corruption they target."""

import shutil
from pathlib import Path

import pytest
from awctl_domains.swe import editor as ed
from awctl_domains.swe.domain import SweDomain
from awctl_domains.swe.importers import load_sweagent_traj
from awctl_domains.swe.tasks import bash, editor

from awctl.domain import run_verifiers
from awctl.trajectory import Trajectory, Turn

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sweagent" / "inikit__inikit-1.traj"
DOMAIN = SweDomain()
P = "/testbed/inikit/parser.py"
BIG = "\n".join(f"{i:05d} " + "z" * 93 for i in range(200))  # 19999 characters, clipped on view

EPISODE = [
    editor("view", "/testbed"),
    editor("view", P),
    editor("str_replace", P, old_str='f"line {index}', new_str='f"line {lineno}'),
    editor("str_replace", P, old_str="    # The last element is the empty string after the final newline.\n", new_str=""),
    editor("view", P),
    editor("insert", P, insert_line=2, new_str="EXTRA = 1"),
    editor("view", P, view_range=[1, 6]),
    editor("undo_edit", P),
    editor("create", "/testbed/big.txt", file_text=BIG),
    editor("view", "/testbed/big.txt"),
    editor("create", "/testbed/big.txt", file_text="again"),
    bash("cd /testbed/inikit"),
    bash("ls"),
    bash("cat parser.py | head -n 3"),
    editor("view", P, view_range=[3, 5]),
    bash("false"),
    editor("view", "/testbed/nope.py"),
    editor("str_replace", "/testbed/nope.py", old_str="a", new_str="b"),
]


@pytest.fixture(scope="module")
def live() -> Trajectory:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    from awctl_domains.swe.env import SweEnv
    from awctl_domains.swe.tasks import tasks

    task = tasks("inikit")[0]
    with SweEnv() as env:
        env.reset(task)
        turns = [Turn(action=a, observation=env.step(a).observation) for a in EPISODE]
    return Trajectory(id="live", domain="swe", turns=turns)


@pytest.fixture(scope="module")
def imported() -> Trajectory:
    return next(load_sweagent_traj(FIXTURE))


def failures(traj: Trajectory, index: int, observation: str | None = None) -> dict[str, str]:
    return {r.check: r.message for r in run_verifiers(DOMAIN, traj, index, observation) if not r.ok}


def checks_run(traj: Trajectory) -> set[str]:
    return {r.check for i in range(len(traj.turns)) for r in run_verifiers(DOMAIN, traj, i)}


def test_there_are_at_least_six_verifiers():
    assert len(DOMAIN.verifiers()) >= 6


def test_no_false_positives_on_real_recordings(live, imported):
    for traj in (live, imported):
        for i in range(len(traj.turns)):
            assert failures(traj, i) == {}, (traj.id, i, traj.turns[i].action)
    # The recordings exercise every verifier of awctl's tools (so "no failures" means something); the
    # SWE-agent interface's verifiers are exercised by the foreign corpus (test_swe_foreign.py).
    classic = {"swe.window_view", "swe.session_state", "swe.search_results"}
    assert checks_run(live) == {v.name for v in DOMAIN.verifiers()} - classic
    assert {"swe.view_replay", "swe.old_str_rule", "swe.edit_replay", "swe.existence"} <= checks_run(imported)


def test_the_live_recording_is_what_the_episode_implies(live):
    obs = [t.observation for t in live.turns]
    assert "in lines [21, 26]" in obs[2]
    assert obs[9].endswith(ed.TRUNCATED_MESSAGE)
    assert obs[10].startswith("File already exists at: /testbed/big.txt")
    assert obs[11] == "[exit_code: 0] [cwd: /testbed/inikit]"
    assert obs[15] == "[exit_code: 1] [cwd: /testbed/inikit]"


def _replace(traj: Trajectory, index: int, old: str, new: str) -> str:
    text = traj.turns[index].observation
    assert old in text, (index, old)
    return text.replace(old, new, 1)


def test_template_verifier_flags_reworded_messages(live):
    bad = _replace(live, 3, "has been edited.", "was edited.")
    assert "swe.editor_template" in failures(live, 3, bad)
    bad = _replace(live, 10, "Cannot overwrite files", "Refusing to overwrite files")
    assert "swe.editor_template" in failures(live, 10, bad)


def test_cat_n_verifier_flags_broken_numbering(live):
    assert "swe.cat_n_lines" in failures(live, 1, _replace(live, 1, "     7\t", "     8\t"))
    assert "swe.cat_n_lines" in failures(live, 1, _replace(live, 1, "     7\t", "   7\t"))
    ranged = live.turns[14].observation.replace("     3\t", "     1\t").replace("     4\t", "     2\t").replace(
        "     5\t", "     3\t")
    assert "numbering starts at 1, expected 3" in failures(live, 14, ranged)["swe.cat_n_lines"]


def test_view_replay_flags_a_view_that_ignores_an_edit(live):
    # Turn 4 views the file after the comment line was removed; show the line as it was before.
    bad = _replace(live, 4, "    for index", "    # The last element is the empty string after the final newline.")
    assert "swe.view_replay" in failures(live, 4, bad)
    assert "swe.cat_n_lines" not in failures(live, 4, bad)
    bad_range = _replace(live, 6, "EXTRA = 1", "EXTRA = 2")
    assert "swe.view_replay" in failures(live, 6, bad_range)


def test_old_str_rule_flags_wrong_outcomes(live, imported):
    bad_lines = _replace(live, 2, "[21, 26]", "[21, 27]")
    assert "swe.old_str_rule" in failures(live, 2, bad_lines)
    pretend_success = ed.str_replace_text(P, "x\n", "x", "y").observation
    assert "swe.old_str_rule" in failures(live, 2, pretend_success)
    no_match = ed.NO_MATCH.format(old="    # The last element is the empty string after the final newline.\n", path=P)
    assert "swe.old_str_rule" in failures(live, 3, no_match)
    # Imported SWE-agent steps: the unique replacement at step 5 must not turn into a "not found".
    idx = next(i for i, t in enumerate(imported.turns) if "unterminated" in t.action)
    claimed = ed.NO_MATCH.format(old='f"line {index}: unterminated', path=P)
    assert "swe.old_str_rule" in failures(imported, idx, claimed)


def test_edit_replay_flags_wrong_insert_and_undo(live):
    assert "swe.edit_replay" in failures(live, 5, _replace(live, 5, "     3\tEXTRA = 1", "     3\tEXTRA = 1\n     4\tEXTRA = 1"))
    assert "swe.edit_replay" in failures(live, 7, _replace(live, 7, "     3\tFALSE", "     3\tEXTRA = 1\n     4\tFALSE"))


def test_clipping_verifier_flags_early_or_missing_clips(live):
    obs = live.turns[9].observation
    unclipped = obs[: -len(ed.TRUNCATED_MESSAGE)]
    assert "swe.clipping" in failures(live, 9, unclipped)
    early = obs.split("\n")
    early = "\n".join(early[:120]) + ed.TRUNCATED_MESSAGE
    assert "swe.clipping" in failures(live, 9, early)
    # Without replayed text (a trajectory that starts at the view) an early clip is still caught.
    alone = Trajectory(id="alone", domain="swe", turns=[live.turns[9]])
    assert failures(alone, 0) == {}
    assert "swe.clipping" in failures(alone, 0, early)
    assert "swe.clipping" in failures(live, 10, live.turns[10].observation + ed.TRUNCATED_MESSAGE)


def test_existence_verifier_flags_create_over_an_existing_file(live):
    created = ed.CREATED.format(path="/testbed/big.txt")
    assert "swe.existence" in failures(live, 10, created)
    missing = ed.NOT_FOUND.format(path=P)
    assert "swe.existence" in failures(live, 14, missing)
    assert "swe.existence" in failures(live, 17, ed.NO_MATCH.format(old="a", path="/testbed/nope.py"))


def test_bash_verifier_flags_missing_trailer_and_impossible_cwd(live):
    assert "swe.bash_format" in failures(live, 12, live.turns[12].observation.rsplit("\n", 1)[0])
    assert "swe.bash_format" in failures(live, 12, _replace(live, 12, "[cwd: /testbed/inikit]", "[cwd: /testbed]"))
    assert "swe.bash_format" in failures(live, 11, "[exit_code: 0] [cwd: /testbed]")
    assert "swe.bash_format" in failures(live, 15, "[exit_code: 0] [cwd: /testbed/inikit]")
    assert "swe.bash_format" in failures(live, 13, live.turns[13].observation + "\n[exit_code: 0] [cwd: /testbed/inikit]")


def test_bash_commands_that_may_write_reset_the_replayed_files(live):
    # After `sed -i` nothing about parser.py is known, so a changed view is not judged by replay.
    turns = [*live.turns[:5], Turn(action=bash("sed -i 's/a/b/' /testbed/inikit/parser.py"),
                                   observation="[exit_code: 0] [cwd: /testbed]"), live.turns[4]]
    traj = Trajectory(id="sed", domain="swe", turns=turns)
    changed = live.turns[4].observation.replace("DEFAULT_SECTION = ", "DEFbULT_SECTION = ")
    assert "swe.view_replay" not in failures(traj, 6, changed)
    assert "swe.view_replay" in failures(live, 4, changed)


def test_perturbation_and_filemap_messages_fit_the_templates(live):
    denied = DOMAIN.perturbations()[0].render(path=P)
    message = denied[denied.index("Ran into"): denied.rindex(P) + len(P)]
    assert failures(live, 3, message) == {}
    filemap = ("<NOTE>This file is too large to display entirely. Showing abbreviated version. Please use "
               "`str_replace_editor view` with the `view_range` parameter to show selected lines next.</NOTE>\n"
               "     1 import os\n... eliding lines 2-40 ...")
    assert "swe.editor_template" not in failures(live, 1, filemap)
