"""The ``basic``, ``drill`` and ``readback`` suites in the real sandbox: every reference solution passes; doing nothing fails."""

from __future__ import annotations

import shutil

import pytest
from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.env import TerminalEnv
from awctl_domains.terminal.tasks import keys

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("tmux") is None,
                                reason="needs bubblewrap and tmux")

TASKS = TerminalDomain().tasks("basic")
DRILLS = TerminalDomain().tasks("drill") + TerminalDomain().tasks("readback")


@pytest.fixture(scope="module")
def env():
    with TerminalEnv({"sandbox": "bubblewrap"}) as e:
        yield e


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS + DRILLS, ids=[t.id.split("/", 1)[-1] for t in TASKS + DRILLS])
def test_reference_solution_passes_and_doing_nothing_fails(env, task):
    first = env.reset(task)
    assert first == "root@sandbox:/workspace#"
    for action in task.solution:
        env.step(action)
    result = task.check(env)
    assert result.ok and result.score == 1.0, result.message
    env.reset(task)
    idle = task.check(env)
    assert not idle.ok and idle.score == 0.0, "the checker passed although the agent did nothing"


def test_reset_applies_setup_and_step_reports_timings(env):
    task = next(t for t in TASKS if t.id.endswith("/env_var"))
    env.reset(task)
    res = env.step(keys("echo $GREETING; ls -a"))
    assert "hi from the task" in res.observation and not res.done
    assert res.info["waited_s"][0] < 1.0 and res.info["elapsed_s"] >= res.info["waited_s"][0]
    ended = env.step('[{"keystrokes": "exit\\n", "duration": 0.5}]')
    assert ended.done and ended.info["shell_exited"]


def test_step_returns_early_for_fast_commands_and_waits_for_slow_ones(env):
    env.reset()
    fast = env.step(keys("true", duration=5.0))
    assert fast.info["waited_s"][0] < 2.0
    slow = env.step(keys("sleep 3", duration=0.4))
    assert 0.35 <= slow.info["waited_s"][0] < 2.0
    assert slow.observation.endswith("# sleep 3")  # still running: no new prompt yet
    interrupted = env.step('[{"keystrokes": "C-c", "duration": 2}]')
    assert interrupted.observation.split("\n")[-2:] == ["^C", "root@sandbox:/workspace#"]
