"""The OSWorld desktop-server adapter against the local stand-in server (a real desktop behind HTTP)."""

from __future__ import annotations

import io

import pytest
from awctl_domains.os.a11y import parse_observation
from awctl_domains.os.domain import OsDomain
from awctl_domains.os.osworld_http import OsWorldHttpEnv
from awctl_domains.os.standin_server import StandInServer
from awctl_domains.os.tasks import TASKS_BY_ID

from .conftest import require_desktop


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    require_desktop()
    with StandInServer() as srv:
        yield srv
    assert srv.session is None


def test_the_server_listens_on_localhost_only(server: StandInServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")


def test_endpoints_answer_like_osworlds_server(server: StandInServer) -> None:
    from PIL import Image

    env = OsWorldHttpEnv(server.url)
    client = env.client
    assert client.platform() == "Linux" and client.screen_size() == (1920, 1080)
    assert Image.open(io.BytesIO(client.screenshot())).size == (1920, 1080)
    assert parse_observation(client.accessibility()).tree.tag == "desktop-frame"  # type: ignore[union-attr]
    client.upload("~/hello.txt", b"hi there\n")
    assert client.get_file("~/hello.txt") == b"hi there\n"
    assert client.get_file("/etc/passwd") is None  # outside the home: refused
    out = client.execute_python("print(pyautogui.size())")
    assert out["status"] == "success" and out["returncode"] == 0 and "1920" in out["output"]
    shell = client.execute("echo $HOME", shell=True)
    assert shell["output"].strip() == server.session.user_home  # type: ignore[union-attr]


@pytest.mark.parametrize("task_id", ["os/basic/append_line", "os/basic/divide_with_mouse"])
def test_tasks_run_and_are_checked_through_the_adapter(server: StandInServer, task_id: str) -> None:
    task = TASKS_BY_ID[task_id]
    env = OsWorldHttpEnv(server.url, reset_hook=server.reset)
    first = env.reset(task)
    assert parse_observation(first).kind == "xml"
    for action in task.solution:
        result = env.step(action)
        assert result.info.get("exec_ok", True), result.info
    assert task.check(env).ok
    env.reset(task)
    assert not task.check(env).ok


def test_the_adapter_records_trajectories_the_verifiers_accept(server: StandInServer) -> None:
    from awctl.domain import run_verifiers
    from awctl.record import record_episode, scripted_policy

    domain = OsDomain()
    env = OsWorldHttpEnv(server.url, reset_hook=server.reset, observation="table")
    traj = record_episode(domain, env, TASKS_BY_ID["os/basic/add_numbers"], scripted_policy)
    assert traj.turns and traj.turns[0].observation.startswith("tag\tname\ttext")
    results = [r for i in range(len(traj.turns)) for r in run_verifiers(domain, traj, i)]
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
