"""Each sandbox caps its own process count: a fork bomb in one episode fills its sandbox and nothing else.

Real fork bombs, in real sandboxes, next to a second sandbox that keeps working. Before any bomb is set
off, the test checks that the cap is in force (a bomb without one would take the shared machine down).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from awctl.envs.sandbox import SandboxedShell, make_shell
from awctl.envs.sandbox.limits import cgroup_unavailable_reason, userns_unavailable_reason
from awctl.envs.sandbox.processes import descendants
from awctl.errors import AwctlError

BOMB = ":(){ :|:& };:"
LIMIT = 48


def _uid_of(pid: int) -> int | None:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return None


def _live(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                alive.append(pid)
    return alive


def sandbox_pids(sh: SandboxedShell) -> list[int]:
    """The host pids of every process in ``sh``'s sandbox (the shell and all it started)."""
    if sh.backend == "docker":
        container = sh.jail._container
        if container is None:
            return []
        try:
            top = container.top(ps_args="-eo pid")
        except Exception:
            return []
        return [int(row[0]) for row in top.get("Processes") or []]
    return [pid for pgid in sh._pgids for pid in [pgid, *descendants(pgid)]]


def _pids_cgroup_of(pid: int) -> Path | None:
    """The pids cgroup folder of host process ``pid`` (cgroup v1 pids hierarchy, or v2)."""
    from awctl.envs.sandbox.limits import pids_hierarchy

    found = pids_hierarchy()
    if found is None:
        return None
    parent, version = found
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cgroup") as fh:
        for line in fh:
            num, controllers, path = line.rstrip("\n").split(":", 2)
            if (version == 2 and num == "0") or (version == 1 and "pids" in controllers.split(",")):
                root = parent if version == 2 else Path(str(parent)[: len(str(parent)) - len(_own(version))])
                return root / path.lstrip("/")
    return None


def _own(version: int) -> str:
    from awctl.envs.sandbox.limits import _own_cgroup

    own = _own_cgroup(version == 2).strip("/")
    return "/" + own if own else ""


def sandbox_tasks(sh: SandboxedShell) -> int:
    """How many processes the sandbox holds now, counted the way its cap counts them."""
    if sh.backend == "docker":
        sh.jail._container.reload()
        folder = _pids_cgroup_of(sh.jail._container.attrs["State"]["Pid"])
        return int((folder / "pids.current").read_text()) if folder else len(sandbox_pids(sh))
    if sh.jail.cgroup is not None:
        return sh.jail.cgroup.current() or 0
    # RLIMIT_NPROC counts the sandbox user namespace's processes: not bwrap's outer process on the host.
    uid, outer = sh.jail.sandbox_uid, set(sh._pgids)
    return sum(1 for d in os.listdir("/proc")
               if d.isdigit() and int(d) not in outer and _uid_of(int(d)) == uid and _live([int(d)]))


def assert_capped(sh: SandboxedShell, limit: int) -> None:
    """Refuse to go on unless the sandbox really has its cap."""
    if sh.backend == "docker":
        sh.jail._container.reload()
        assert sh.jail._container.attrs["HostConfig"]["PidsLimit"] == limit
        return
    method = sh.jail.pids_method_used
    assert method in ("cgroup", "userns") and sh.jail.pids_limit == limit
    if method == "cgroup":
        assert sh.jail.cgroup is not None
        assert (sh.jail.cgroup.path / "pids.max").read_text().strip() == str(limit)
        assert set(_live(sandbox_pids(sh))) <= set(sh.jail.cgroup.pids()) | set(sh._pgids)
    else:
        assert sh.run("ulimit -u").output.strip() == str(limit)
        assert {_uid_of(p) for p in _live(sandbox_pids(sh))[1:]} == {sh.jail.sandbox_uid}


def host_can_fork(n: int = 20) -> bool:
    out = subprocess.run(["/bin/sh", "-c", f"for i in $(seq {n}); do sleep 0.05 & done; wait; echo ok"],
                         capture_output=True, text=True, timeout=30)
    return out.returncode == 0 and out.stdout.strip() == "ok"


@pytest.fixture(params=["cgroup", "userns", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])])
def capped(request: pytest.FixtureRequest) -> dict[str, Any]:
    """SandboxedShell options for each way of capping a sandbox's processes, at ``LIMIT``."""
    if request.param == "docker":
        engine = request.getfixturevalue("docker_engine")
        return {"backend": "docker", "docker_host": engine.host, "pids_limit": LIMIT}
    missing = [p for p in ("bwrap", "tmux") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"bubblewrap sandbox needs {', '.join(missing)}")
    reason = cgroup_unavailable_reason() if request.param == "cgroup" else userns_unavailable_reason()
    if reason:
        pytest.skip(f"the {request.param} process cap cannot work here: {reason}")
    return {"backend": "bubblewrap", "pids_method": request.param, "pids_limit": LIMIT}


def test_a_fork_bomb_fills_only_its_own_sandbox(capped):
    bombed = SandboxedShell(terminal=True, **capped)
    other = SandboxedShell(terminal=False, **capped)
    try:
        bombed.start()
        other.start()
        assert_capped(bombed, LIMIT)
        assert_capped(other, LIMIT)
        uid = getattr(bombed.jail, "sandbox_uid", None)
        cgroup = getattr(bombed.jail, "cgroup", None)
        container = bombed.jail._container.id if capped["backend"] == "docker" else None

        bombed.send_keys(BOMB + "\n")
        deadline = time.monotonic() + 20
        peak = 0
        while time.monotonic() < deadline and peak < LIMIT - 8:
            peak = max(peak, sandbox_tasks(bombed))
            time.sleep(0.1)
        assert peak >= LIMIT - 8, f"the bomb should fill its sandbox up to the cap (peak {peak})"
        if cgroup is not None:
            assert cgroup.refused() > 0 and cgroup.current() <= LIMIT

        # While the bomb runs: the host forks, and the other sandbox runs commands and starts processes.
        assert host_can_fork()
        res = other.run("for i in $(seq 12); do sleep 60 & done; sleep 0.2; jobs -r | wc -l; ls / | grep -x bin",
                        timeout_s=20)
        assert (res.exit_code, res.output.split()) == (0, ["12", "bin"]), res.output
        for _ in range(5):
            time.sleep(0.2)
            assert sandbox_tasks(bombed) <= LIMIT

        pids = sandbox_pids(bombed)
        bombed.close()
        deadline = time.monotonic() + 15
        while _live(pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _live(pids) == [], "every process of the bombed sandbox ends with it"
        if cgroup is not None:
            assert not cgroup.path.exists()
        if uid is not None:
            assert [p for p in _live([int(d) for d in os.listdir("/proc") if d.isdigit()])
                    if _uid_of(p) == uid] == []
        if container is not None:
            import docker

            client = docker.DockerClient(base_url=capped["docker_host"])
            try:
                assert client.containers.list(all=True, filters={"id": container}) == []
            finally:
                client.close()
        assert other.run("echo still here").output == "still here\n"
        assert host_can_fork()
    finally:
        bombed.close()
        other.close()


def test_a_fork_bomb_episode_leaves_the_other_episodes_working():
    """At the level of the terminal domain's real environment: two episodes at once, one of which types a
    fork bomb; the other solves its task and its checker passes; the bombed one is cleaned up."""
    pytest.importorskip("awctl_domains.terminal.env")
    if shutil.which("bwrap") is None or shutil.which("tmux") is None:
        pytest.skip("the terminal environment needs bwrap and tmux")
    from awctl.plugins import get_registry

    domain = get_registry().domains["terminal"]
    task = domain.tasks("basic")[0]
    settings = {"pids_limit": LIMIT}
    bombed, working = domain.real_env(settings), domain.real_env(settings)
    try:
        bombed.reset(task)
        working.reset(task)
        assert bombed.shell.jail.pids_limit == LIMIT and bombed.shell.jail.pids_method_used is not None
        assert_capped(bombed.shell, LIMIT)
        bombed.step(json.dumps([{"keystrokes": BOMB + "\n", "duration": 2.0}]))
        for action in task.solution:
            working.step(action)
        verdict = task.check(working)
        assert verdict.ok, verdict.message
        assert host_can_fork()
        pids = sandbox_pids(bombed.shell)
        assert len(_live(pids)) >= 8
    finally:
        bombed.close()
        working.close()
    deadline = time.monotonic() + 15
    while _live(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _live(pids) == []


def test_the_cap_comes_from_the_domain_settings():
    shell = make_shell({"pids_limit": 32, "pids_method": "cgroup"}, terminal=False)
    try:
        assert (shell.jail.pids_limit, shell.jail.pids_method) == (32, "cgroup")
    finally:
        shell.close()
    shell = make_shell({"pids_limit": 0}, terminal=False)
    try:
        assert shell.jail.pids_limit == 0
        if shutil.which("bwrap"):
            shell.start()
            assert shell.jail.pids_method_used is None and shell.jail.cgroup is None  # no cap asked for
    finally:
        shell.close()
    default = make_shell({}, terminal=False)
    try:
        assert default.jail.pids_limit == 256
    finally:
        default.close()


@pytest.mark.not_a_component("bad settings are refused before anything starts")
def test_bad_cap_settings_are_refused_naming_the_fix():
    with pytest.raises(AwctlError, match="pids_limit must be >= 0"):
        SandboxedShell(terminal=False, pids_limit=-1)
    shell = SandboxedShell(terminal=False, pids_method="seccomp")
    try:
        with pytest.raises(AwctlError, match="unknown pids_method 'seccomp'") as info:
            shell.start()
        assert "auto, cgroup, userns" in (info.value.hint or "")
    finally:
        shell.close()


def test_userns_cap_lends_the_workspace_and_hands_it_back():
    reason = userns_unavailable_reason()
    if reason or os.geteuid() != 0:
        pytest.skip(f"the userns cap as root cannot run here: {reason or 'not root'}")
    workspace = Path(tempfile.mkdtemp(prefix="awctl-test-ws-"))  # under /tmp: searchable by the sandbox uid
    try:
        (workspace / "given.txt").write_text("x\n")
        with SandboxedShell(workspace, terminal=False, pids_method="userns", pids_limit=LIMIT) as sh:
            uid = sh.jail.sandbox_uid
            assert uid and (workspace / "given.txt").stat().st_uid == uid
            assert sh.run("echo more >> given.txt && echo new > made.txt").exit_code == 0
        assert {p.stat().st_uid for p in [workspace, *workspace.iterdir()]} == {0}
        assert (workspace / "given.txt").read_text() == "x\nmore\n"
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def test_userns_cap_refuses_a_workspace_its_uid_cannot_reach(tmp_path):
    reason = userns_unavailable_reason()
    if reason or os.geteuid() != 0:
        pytest.skip(f"the userns cap as root cannot run here: {reason or 'not root'}")
    private = tmp_path / "private"
    (private / "ws").mkdir(parents=True)
    private.chmod(0o700)
    shell = SandboxedShell(private / "ws", terminal=False, pids_method="userns")
    try:
        with pytest.raises(AwctlError, match="not searchable by others") as info:
            shell.start()
        assert "chmod o+x" in (info.value.hint or "")
    finally:
        shell.close()
