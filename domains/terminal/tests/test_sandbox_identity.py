"""The sandboxed shell's identity: each prompt style shows its own prompt, and the user, host and home that
prompt names are real inside the sandbox; the exact-command protocol works under every style.

The sandbox tests run against bubblewrap and, where a private Docker engine can start, docker.
"""

from __future__ import annotations

import pytest

from awctl.envs.sandbox import PROMPT_RE, PROMPT_STYLES, SandboxedShell, ShellIdentity, make_shell
from awctl.envs.sandbox.identity import host_bash_version
from awctl.errors import AwctlError, ConfigError

# What each style's shell shows at its start, in the sandbox.
FIRST_PROMPT = {
    "awctl": "root@sandbox:/workspace#",
    "debian": "alice@devbox:~/work$",
    "fedora": "[alice@devbox work]$",
    "bare": f"bash-{host_bash_version()}$",
}


def test_every_style_has_a_first_prompt_here():
    assert set(FIRST_PROMPT) == set(PROMPT_STYLES)


def test_settings_choose_the_identity_and_bad_ones_are_named():
    assert ShellIdentity.from_settings({}) == ShellIdentity.awctl_default()
    deb = ShellIdentity.from_settings({"prompt": "debian"})
    assert (deb.user, deb.uid, deb.host, deb.home, deb.workdir) == ("alice", 1000, "devbox", "/home/alice",
                                                                     "/home/alice/work")
    root = ShellIdentity.from_settings({"prompt": "fedora", "user": "root", "hostname": "build-01", "workdir": "~"})
    assert (root.uid, root.home, root.workdir, root.sigil) == (0, "/root", "/root", "#")
    assert not root.home_is_separate and deb.home_is_separate
    elsewhere = ShellIdentity.from_settings({"prompt": "debian", "user": "bob", "workdir": "/srv/app/"})
    assert (elsewhere.home, elsewhere.workdir) == ("/home/bob", "/srv/app")
    with pytest.raises(ConfigError, match="unknown prompt style") as bad:
        ShellIdentity.from_settings({"prompt": "zsh"})
    assert "debian" in (bad.value.hint or "")
    with pytest.raises(ConfigError, match="always root@sandbox"):
        ShellIdentity.from_settings({"user": "bob"})
    with pytest.raises(ConfigError) as many:
        ShellIdentity.from_settings({"prompt": "debian", "user": "Bad User", "hostname": "-x", "workdir": "/etc/x"})
    assert len(many.value.problems) == 3
    with pytest.raises(ConfigError, match="may not lie inside"):
        ShellIdentity.from_settings({"prompt": "debian", "workdir": "/home"})


def test_prompts_render_as_bash_draws_them_and_the_patterns_read_them():
    deb = ShellIdentity.from_settings({"prompt": "debian"})
    fed = ShellIdentity.from_settings({"prompt": "fedora"})
    bare = ShellIdentity.from_settings({"prompt": "bare"})
    assert [deb.prompt(d) for d in ("/home/alice/work", "/home/alice", "/tmp", "/home/alicex")] == [
        "alice@devbox:~/work$ ", "alice@devbox:~$ ", "alice@devbox:/tmp$ ", "alice@devbox:/home/alicex$ "]
    assert [fed.prompt(d) for d in ("/home/alice/work", "/home/alice", "/", "/usr/share")] == [
        "[alice@devbox work]$ ", "[alice@devbox ~]$ ", "[alice@devbox /]$ ", "[alice@devbox share]$ "]
    assert bare.prompt("/tmp", bash_version="5.1") == "bash-5.1$ "
    assert ShellIdentity.awctl_default().prompt("/tmp") == "root@sandbox:/tmp# "
    m = deb.prompt_re.match("alice@devbox:~/work$ ls -l")
    assert m is not None and (m["path"], m["typed"]) == ("~/work", "ls -l")
    assert bare.prompt_re.match("bash-5.2$ ") and not bare.prompt_re.match("bash-5.2# ")
    assert fed.shows_prompt("[alice@devbox work]$") and not fed.shows_prompt("[alice@devbox tmp]$")
    assert not deb.shows_prompt("alice@devbox:~/work$ ls")
    # The default identity's pattern reads what PROMPT_RE reads.
    line = "root@sandbox:/workspace/a b# echo hi"
    assert ShellIdentity.awctl_default().prompt_re.match(line)["path"] == PROMPT_RE.match(line)["cwd"]


def test_passwd_holds_the_user_with_its_home():
    deb = ShellIdentity.from_settings({"prompt": "debian", "user": "bob"})
    assert "bob:x:1000:1000:bob:/home/bob:/bin/bash" in deb.passwd().splitlines()
    assert "bob:x:1000:" in deb.group().splitlines()
    # The default identity's passwd is the one the sandbox has always generated.
    assert ShellIdentity.awctl_default().passwd() == (
        "root:x:0:0:root:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")


def test_the_default_shell_is_unchanged(tmp_path):
    sh = SandboxedShell(tmp_path, terminal=True)
    try:
        sh._write_rc()
        rc = (sh.control.run / "rc").read_text()
        assert f"PS1='\\[\\e]777;{sh.control.nonce};done;${{__awctl_rc:-0}};$PWD\\a\\]root@sandbox:$PWD# '" in rc
        sh.jail.check_available()
        sh._prepare()
        argv = sh._shell_argv(True)
        at = argv.index("bwrap")
        assert argv[at + 1: at + 10] == ["--unshare-all", "--die-with-parent", "--uid", "0", "--gid", "0",
                                         "--hostname", "sandbox", "--clearenv"]
        assert argv[argv.index("--chdir") + 1] == "/workspace" and argv.count("--tmpfs") == 1
    finally:
        sh.close()


def test_make_shell_reads_the_identity_settings(tmp_path):
    sh = make_shell({"prompt": "fedora", "user": "bob", "hostname": "ci"}, workspace=tmp_path, terminal=False)
    assert (sh.identity.style, sh.identity.user, sh.mount_point) == ("fedora", "bob", "/home/bob/work")
    assert make_shell({}, workspace=tmp_path, terminal=False).identity == ShellIdentity.awctl_default()
    # A caller that names its own mount point (the SWE env) keeps the default identity there.
    assert make_shell({}, workspace=tmp_path, mount_point="/testbed", terminal=False).identity.home == "/testbed"
    with pytest.raises(AwctlError, match="differs from the identity's workdir"):
        SandboxedShell(tmp_path, mount_point="/x", identity=ShellIdentity.from_settings({"prompt": "bare"}))


@pytest.mark.parametrize("style", ["debian", "fedora", "bare", "awctl"])
def test_each_style_shows_its_prompt_and_its_identity_is_real(shell_options, style, tmp_path):
    who = ShellIdentity.from_settings({"prompt": style})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    owner = (workspace.stat().st_uid, workspace.stat().st_gid)
    with SandboxedShell(workspace, identity=who, rows=20, cols=100, **shell_options) as sh:
        first = FIRST_PROMPT[style]
        if shell_options["backend"] == "docker" and style == "bare":
            first = sh.screen()  # the image's static bash may be another version than the host's
            assert who.prompt_re.match(first + " ")
        assert sh.screen() == first and who.shows_prompt(first)
        res = sh.run('whoami; hostname; echo "$HOME"; pwd; id -u')
        assert res.output.split("\n") == [who.user, who.host, who.home, who.workdir, str(who.uid), ""]
        assert (res.exit_code, res.cwd) == (0, who.workdir)
        # The home is writable and ~ is it; the workspace files belong to the user.
        assert sh.run("echo kept > ~/note && cat ~/note").output == "kept\n"
        sh.run("touch mine")
        assert sh.run("ls -l mine").output.split()[2] == who.user
        assert (sh.workspace / "mine").exists()
        # The prompt follows the directory the way the style shows it, and the markers still cut output.
        for cwd in ("/tmp", who.home):
            assert sh.run(f"cd {cwd}").cwd == cwd
            last = sh.screen().split("\n")[-1]
            assert who.shows_prompt(last, cwd), (cwd, last)
            assert sh.prompt_re.match(last + " ")
        res = sh.run("printf 'a\\nb'; false")
        assert (res.output, res.exit_code) == ("a\nb", 1)
    # The workspace is the caller's again once the sandbox is gone (docker hands it to the user meanwhile).
    assert (workspace.stat().st_uid, workspace.stat().st_gid) == owner
    assert ((workspace / "mine").stat().st_uid, (workspace / "mine").stat().st_gid) == owner


def test_a_shell_without_a_terminal_has_the_same_identity(shell_options):
    who = ShellIdentity.from_settings({"prompt": "fedora", "user": "bob"})
    with SandboxedShell(identity=who, terminal=False, **shell_options) as sh:
        res = sh.run("whoami; pwd; cd ~ && echo hi > f && cat f")
        assert (res.output, res.exit_code, res.cwd) == ("bob\n/home/bob/work\nhi\n", 0, "/home/bob")
