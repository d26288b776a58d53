"""The sandboxed shell, for real: semantics of run/send_keys/screen and escape attempts that must fail.

Each test runs against bubblewrap and, where a private Docker engine can start, docker.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest

from awctl.envs.sandbox import PROMPT_RE, SandboxedShell, is_key_name, make_shell
from awctl.errors import AwctlError


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_run_keeps_cwd_variables_and_files_across_calls(shell_options, terminal):
    with SandboxedShell(terminal=terminal, **shell_options) as sh:
        assert sh.run("mkdir -p a/b && cd a/b && X=42").cwd == "/workspace/a/b"
        res = sh.run('echo "$X" > val.txt; pwd')
        assert (res.output, res.exit_code, res.cwd) == ("/workspace/a/b\n", 0, "/workspace/a/b")
        assert (sh.workspace / "a" / "b" / "val.txt").read_text() == "42\n"


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_run_returns_exact_output_and_exit_code(shell_options, terminal):
    with SandboxedShell(terminal=terminal, **shell_options) as sh:
        res = sh.run("echo out; echo err >&2; printf 'tail'; exit_code() { return 3; }; exit_code")
        assert res.output == "out\nerr\ntail"
        assert res.exit_code == 3 and not res.timed_out
        multi = sh.run("for i in 1 2; do\n  echo line $i\ndone")
        assert multi.output == "line 1\nline 2\n" and multi.exit_code == 0


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_timeout_interrupts_the_command_and_the_shell_survives(shell_options, terminal):
    with SandboxedShell(terminal=terminal, **shell_options) as sh:
        sh.run("Y=kept")
        t0 = time.monotonic()
        res = sh.run("sleep 30", timeout_s=1.0)
        assert res.timed_out and res.exit_code == 124
        assert time.monotonic() - t0 < 10
        assert sh.run("echo $Y").output == "kept\n"


def test_send_keys_screen_geometry_and_control_keys(shell_options):
    with SandboxedShell(rows=10, cols=40, **shell_options) as sh:
        assert sh.screen() == "root@sandbox:/workspace#"
        mark = sh.output_mark()
        sh.send_keys("seq 1 30\n")
        assert sh.wait_prompt(mark, 10)
        lines = sh.settle().split("\n")
        assert len(lines) == 10 and lines[-2] == "30" and PROMPT_RE.match(lines[-1] + " ")
        sh.send_keys("printf '%060d\\n' 7\n")
        sh.run("true")
        assert any(len(line) == 40 for line in sh.screen().split("\n"))  # 60 zeros wrap at 40 columns
        mark = sh.output_mark()
        sh.send_keys("sleep 100\n", 0.2)
        assert not sh.wait_prompt(mark, 0.3)
        sh.send_keys("C-c")
        assert sh.wait_prompt(mark, 5)
        assert sh.settle().split("\n")[-2:] == ["^C", "root@sandbox:/workspace#"]


def test_key_names_follow_terminus():
    assert all(is_key_name(k) for k in ("C-c", "C-d", "Enter", "Escape", "M-x", "Up", "F5", "C-Space"))
    assert not any(is_key_name(k) for k in ("ls\n", "C-", "S-expression", "enter", "Cc", ""))


def test_make_shell_reads_domain_settings(tmp_path):
    sh = make_shell({"sandbox": "bubblewrap", "rows": 12, "cols": 50}, workspace=tmp_path, terminal=False)
    assert (sh.backend, sh.rows, sh.cols, sh.workspace) == ("bubblewrap", 12, 50, tmp_path.resolve())
    with pytest.raises(AwctlError, match="unknown sandbox backend"):
        make_shell({"sandbox": "chroot"})


# ── escape attempts: every one must fail ─────────────────────────────────────────────────────────────


def test_cannot_write_outside_the_workspace(shell_options, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    with SandboxedShell(terminal=False, **shell_options) as sh:
        for target in ("/usr/evil", "/etc/evil", "/evil", "/bin/evil", f"{outside}/evil"):
            assert sh.run(f"echo x > {target}").exit_code != 0, target
        assert sh.run("echo x > /tmp/private").exit_code == 0  # a private tmpfs, not the host's /tmp
        assert sh.run(f"ls {outside}").exit_code != 0  # host folders outside the workspace are absent
    assert not Path("/tmp/private").exists() and not Path("/evil").exists()
    assert list(outside.iterdir()) == []


def test_network_is_unreachable(shell_options):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    connections = []

    def accept():
        with contextlib.suppress(OSError):  # nobody connecting within the timeout is the goal
            connections.append(server.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        with SandboxedShell(terminal=False, **shell_options) as sh:
            local = sh.run(f"echo hi > /dev/tcp/127.0.0.1/{port}", timeout_s=5)
            public = sh.run("echo hi > /dev/tcp/1.1.1.1/53", timeout_s=5)
            dns = sh.run("echo hi > /dev/tcp/example.com/80", timeout_s=5)
            links = sh.run("cat /proc/net/dev")
    finally:
        thread.join()
        server.close()
    assert local.exit_code != 0 and not connections, "the host's loopback server was reachable"
    assert public.exit_code != 0 and ("unreachable" in public.output or "refused" in public.output)
    assert dns.exit_code != 0
    assert [line.split(":")[0].strip() for line in links.output.splitlines()[2:]] == ["lo"]


def test_host_home_and_secrets_are_not_readable(shell_options, tmp_path):
    token = uuid.uuid4().hex
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    (home / ".secret").write_text(token)
    with SandboxedShell(terminal=False, env={"PROBE": "1"}, **shell_options) as sh:
        assert sh.run(f"cat {home}/.secret").exit_code != 0
        # The token is assembled inside the shell so the command text itself never contains it.
        search = f"a={token[:16]}; b={token[16:]}; grep -rs \"$a$b\" /workspace /tmp /etc /run /root /home"
        found = sh.run(search + "; cat /proc/self/environ; echo end")
        assert token not in found.output
        assert sh.run("echo $HOME").output == "/workspace\n"
        root_listing = sh.run("ls -A /root 2>/dev/null").output
        assert set(root_listing.split()) <= set()  # /root is absent or empty, never the host's
        real_home = os.path.expanduser("~")
        assert sh.run(f"ls -A {real_home}/.bashrc {real_home}/.ssh").exit_code != 0


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_no_process_survives_close(shell_options, terminal):
    marker = str(900000 + uuid.uuid4().int % 99999)
    sh = SandboxedShell(terminal=terminal, **shell_options)
    sh.start()
    sh.run(f"sleep {marker} & nohup sleep {marker}1 >/dev/null 2>&1 & (setsid sleep {marker}2 &) ; true")
    assert _processes_with(marker), "the marker processes should be running before close"
    sh.close()
    sh.close()  # safe twice
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []


def test_memory_limit_applies():
    with SandboxedShell(terminal=False, memory_mb=200) as sh:
        res = sh.run("python3 -c 'x = bytearray(400 * 1024 * 1024); print(len(x))'")
        assert res.exit_code != 0 and "MemoryError" in res.output
        assert sh.run("ulimit -v unlimited").exit_code != 0  # the limit cannot be raised from inside


def test_workspace_is_removed_on_close_only_when_owned(tmp_path):
    with SandboxedShell(terminal=False) as owned:
        temp = owned.workspace
    assert not temp.exists()
    with SandboxedShell(tmp_path, terminal=False) as given:
        given.run("echo keep > k.txt")
    assert (tmp_path / "k.txt").read_text() == "keep\n"


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"sleep {marker}" in cmdline:
            found.append(int(pid))
    return found
