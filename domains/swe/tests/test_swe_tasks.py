import shutil

import pytest
from awctl_domains.swe.codec import SweActionCodec
from awctl_domains.swe.env import SweEnv
from awctl_domains.swe.tasks import SUITES, editor, tasks

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
codec = SweActionCodec()


def by_id(task_id):
    return next(t for t in tasks("all") if t.id == task_id)


def test_suite_has_twenty_tasks_with_parseable_solutions():
    all_tasks = tasks("all")
    assert len(all_tasks) >= 20
    assert len({t.id for t in all_tasks}) == len(all_tasks)
    assert {t.suite for t in all_tasks} == set(SUITES) - {"all"}
    kinds = {tag for t in all_tasks for tag in t.tags}
    assert {"bugfix", "feature", "refactor", "docs"} <= kinds
    for task in all_tasks:
        assert task.solution and task.instruction and task.setup["repo"] == task.suite
        for action in task.solution:
            codec.parse(action)
    assert tasks("nope") == []


def run(env, task, actions):
    env.reset(task)
    for action in actions:
        env.step(action)
    return task.check(env)


@needs_bwrap
def test_reference_solution_passes_and_wrong_fixes_fail():
    task = by_id("swe/dr-fix-overlap")
    path = "/testbed/daterange/ranges.py"
    half_fix = editor("str_replace", path, old_str="self.start < other.end", new_str="self.start <= other.end")
    breaks_other = editor("str_replace", path, old_str="self.start < other.end and other.start < self.end",
                          new_str="True")
    with SweEnv() as env:
        assert run(env, task, task.solution).ok
        assert not run(env, task, []).ok
        assert not run(env, task, [half_fix]).ok
        assert not run(env, task, [breaks_other]).ok
        rename = by_id("swe/ini-rename-get-int")
        # Renaming the function but not its callers leaves the old tests broken.
        partial = rename.solution[1:2]
        assert not run(env, rename, partial).ok


@needs_bwrap
@pytest.mark.slow
def test_every_reference_solution_passes_and_the_untouched_repo_fails():
    with SweEnv() as env:
        for task in tasks("all"):
            assert not run(env, task, []).ok, task.id
            result = run(env, task, task.solution)
            assert result.ok, (task.id, result.message)
