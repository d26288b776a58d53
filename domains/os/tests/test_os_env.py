"""The real desktop session: isolation, cleanup, actions, observations."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from awctl_domains.os.a11y import TABLE_HEADER, parse_observation
from awctl_domains.os.desktop import DesktopSession
from awctl_domains.os.env import OsDesktopEnv

from awctl.domain import Task
from awctl.errors import CodecError

from .conftest import require_desktop


@pytest.fixture(scope="module")
def session():  # type: ignore[no-untyped-def]
    require_desktop()
    with DesktopSession(exec_timeout_s=2.0) as s:
        yield s


def test_close_ends_every_process_and_removes_the_session(tmp_path: Path) -> None:
    require_desktop()
    s = DesktopSession().start()
    s.launch("mousepad")
    s.wait_for_window("mousepad")
    pids, root = s.pids(), Path(s.root)
    assert len(pids) >= 6 and root.is_dir()  # Xvfb, D-Bus, openbox, AT-SPI bus and registry, the app, helpers
    s.close()
    s.close()  # safe twice
    assert s.pids() == [] and not root.exists()
    alive = [p for p in pids if Path(f"/proc/{p}").exists()
             and Path(f"/proc/{p}/stat").read_text().split(") ", 1)[1][0] != "Z"]
    assert alive == []
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(root) not in ps  # no helper, bus or sandboxed program of the session is left


def test_each_session_has_its_own_display_home_and_bus(session: DesktopSession) -> None:
    with DesktopSession() as other:
        assert other.display != session.display and other.root != session.root
        assert other.env["DBUS_SESSION_BUS_ADDRESS"] != session.env["DBUS_SESSION_BUS_ADDRESS"]


def test_agent_code_runs_as_the_desktop_user_in_a_sandbox(session: DesktopSession) -> None:
    result = session.run_code("import os\nprint(os.environ['HOME'], os.getcwd())\nprint(pyautogui.size())")
    assert result.ok and "Size(width=1920, height=1080)" in result.output
    if session.user_home == "/home/user":  # bubblewrap present: the host is read-only
        assert result.output.split()[:2] == ["/home/user", "/home/user"]
        denied = session.run_code("open('/etc/awctl-os-probe', 'w')")
        assert not denied.ok and "Read-only file system" in (denied.error or "")


def test_a_hung_action_is_stopped_and_the_next_one_runs(session: DesktopSession) -> None:
    def runners() -> set[int]:
        return {p for p in session.pids() if "executor.py" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")}

    before = runners()
    hung = session.run_code("time.sleep(60)")
    assert not hung.ok and "did not finish within 2 s" in (hung.error or "")
    assert before and not before & runners()  # the stuck runner (and its sandbox) ended
    after = session.run_code("print('alive')")
    assert after.ok and after.output == "alive\n"
    raised = session.run_code("x = 1\nraise ValueError('boom')")
    assert not raised.ok and raised.error == "ValueError: boom (line 2)"


def test_env_returns_xml_or_table_and_refuses_bad_actions() -> None:
    require_desktop()
    task = Task(id="t", domain="os", suite="x", instruction="", solution=[], check=lambda env: None,  # type: ignore[arg-type,return-value]
                setup={"apps": ["galculator"]})
    with OsDesktopEnv({"observation": "table"}) as env:
        first = env.reset(task)
        obs = parse_observation(first)
        assert obs.kind == "table" and first.startswith(TABLE_HEADER)
        assert any(r.tag == "text" and r.value == "0" for r in obs.rows)
        with pytest.raises(CodecError, match="outside the 1920x1080 screen"):
            env.step("pyautogui.click(1920, 5)")
        with pytest.raises(CodecError, match="unknown key"):
            env.step('{"action_type": "PRESS", "parameters": {"key": "hyper"}}')
        typed = env.step('{"action_type": "TYPING", "parameters": {"text": "12+30="}}')
        assert any(r.tag == "text" and r.value == "42" for r in parse_observation(typed.observation).rows)
        assert typed.info["exec_ok"] is True and not typed.done
        done = env.step("DONE")
        assert done.done and done.observation == typed.observation
        failing = env.step("```python\nundefined_name\n```")
        assert failing.info["exec_ok"] is False and "NameError" in failing.info["exec_error"]
