import os
import shutil

import pytest
from awctl_domains.swe.codec import SweObservationCodec
from awctl_domains.swe.env import SweEnv, available_repos
from awctl_domains.swe.tasks import bash, editor, tasks

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
obs_codec = SweObservationCodec()


@pytest.fixture
def env():
    with SweEnv({"timeout_s": 10}) as e:
        yield e


def test_reset_builds_a_committed_git_repository(env):
    first = env.reset(tasks("ledger")[0])
    assert first.startswith("Here's the files and directories up to 2 levels deep in /testbed")
    assert "/testbed/ledger/money.py" in first and ".git" not in first
    out = obs_codec.parse(env.step(bash("git status --short && git log --oneline | wc -l")).observation)
    assert (out.text.strip(), out.exit_code, out.cwd) == ("1", 0, "/testbed")
    assert set(available_repos()) == {"inikit", "ledger", "daterange"}


def test_editor_changes_real_files_that_bash_sees(env):
    env.reset(tasks("daterange")[0])
    step = env.step(editor("str_replace", "/testbed/daterange/ranges.py", old_str="weekday() < 6", new_str="weekday() < 5"))
    assert step.info == {"tool": "str_replace_editor", "ok": True}
    out = obs_codec.parse(env.step(bash("grep -c 'weekday() < 5' daterange/ranges.py")).observation)
    assert out.text == "1" and out.exit_code == 0
    diff = env.step('{"tool": "submit"}')
    assert diff.done and "+        return sum(1 for day in self.each_day() if day.weekday() < 5)" in diff.observation


def test_bash_state_persists_and_failures_report_exit_codes(env):
    env.reset(tasks("inikit")[0])
    assert env.step(bash("cd inikit && export X=5")).observation == "[exit_code: 0] [cwd: /testbed/inikit]"
    assert env.step(bash("echo $X; ls missing")).observation.endswith("[exit_code: 2] [cwd: /testbed/inikit]")
    assert env.step(bash("curl -s http://example.org || python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)'")).info["exit_code"] != 0


def test_invalid_actions_get_an_error_observation(env):
    env.reset(tasks("inikit")[0])
    out = env.step('{"tool": "str_replace_editor", "command": "view", "path": "inikit/parser.py"}')
    assert out.observation.startswith("Invalid action: action.path: `path` must be absolute")
    assert out.info["error"] == "codec" and not out.done


def test_editor_cannot_escape_the_workspace_through_symlinks(env):
    env.reset(tasks("inikit")[0])
    env.step(bash("ln -s /etc/passwd /testbed/pw && ln -s /proc/self/environ /testbed/en"))
    for path in ("/testbed/pw", "/testbed/en"):
        assert env.step(editor("view", path)).observation == f"The path {path} does not exist. Please provide a valid path."
    assert os.path.exists("/etc/passwd")


def test_reset_starts_clean_and_close_removes_the_workspace():
    env = SweEnv()
    env.reset(tasks("inikit")[0])
    env.step(editor("create", "/testbed/new.py", file_text="x = 1\n"))
    env.reset(tasks("inikit")[0])
    assert "does not exist" in env.step(editor("view", "/testbed/new.py")).observation
    workspace = env.workspace
    env.close()
    env.close()
    assert workspace is not None and not workspace.exists()


def test_a_command_past_its_time_limit_reports_timed_out():
    with SweEnv({"timeout_s": 1}) as env:
        env.reset(tasks("inikit")[0])
        out = env.step(bash("echo start; sleep 20"))
        assert out.observation.startswith("start\n")
        assert out.observation.endswith("\n[exit_code: 124] [cwd: /testbed] [timed_out]")
        assert out.info["timed_out"] and out.info["duration_s"] < 10
        assert env.step(bash("echo alive")).observation == "alive\n[exit_code: 0] [cwd: /testbed]"


def test_simulator_initial_state_matches_the_real_reset():
    from awctl_domains.swe.domain import SweDomain

    domain = SweDomain()
    with SweEnv() as env:
        for task in (tasks("inikit")[0], tasks("ledger")[0], tasks("daterange")[0]):
            assert env.reset(task) == domain.sections_for(task).initial_state
