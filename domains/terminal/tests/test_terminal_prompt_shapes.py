"""Reading prompts of any shell family off screen lines (fast, no sandbox)."""

from __future__ import annotations

import pytest
from awctl_domains.terminal.prompt_shapes import parse_prompt, parse_shell_prompt, repl_started_by


@pytest.mark.parametrize(
    ("line", "family", "user", "host", "path", "sigil"),
    [
        ("root@sandbox:~/work# ", "userhost", "root", "sandbox", "~/work", "#"),
        ("root@sandbox:/workspace#", "userhost", "root", "sandbox", "/workspace", "#"),
        ("alice@web-01:~$", "userhost", "alice", "web-01", "~", "$"),
        ("(venv) dev@laptop:~/proj/src$ ", "userhost", "dev", "laptop", "~/proj/src", "$"),
        ("[kim@fedora Documents]$ ", "bracket", "kim", "fedora", "Documents", "$"),
        ("bash-5.2# ", "shellver", "bash", "5.2", None, "#"),
        ("sh-5.1$", "shellver", "sh", "5.1", None, "$"),
        ("$ ", "bare", "", "", None, "$"),
        ("#", "bare", "", "", None, "#"),
    ],
)
def test_shell_prompts_of_every_family_are_read(line, family, user, host, path, sigil):
    prompt = parse_prompt(line)
    assert prompt is not None and prompt.family == family
    assert (prompt.user, prompt.host, prompt.path, prompt.sigil) == (user, host, path, sigil)
    assert prompt.text.endswith(" ") and prompt.text.rstrip() == line.rstrip()


@pytest.mark.parametrize("line", ["root@sandbox:~# ls $", "hello world", "total 8", "root@h:~# echo # x", ""])
def test_lines_with_typed_text_or_output_are_not_idle_prompts(line):
    assert parse_shell_prompt(line) is None


def test_output_without_a_final_newline_is_read_before_the_known_prompt():
    known = parse_prompt("root@web01:~/work# ")
    glued = parse_prompt("no-newlineroot@web01:~/work#", known)
    assert glued is not None and glued.offset == len("no-newline") and glued.shape == known.shape
    bare = parse_prompt("done$", parse_prompt("$ "))
    assert bare is not None and bare.offset == 4
    # A whole prompt of another family is a prompt of its own, not output glued to the known one.
    other = parse_prompt("bash-5.1$", parse_prompt("$ "))
    assert other is not None and other.family == "shellver"


def test_repl_prompts_are_read_only_where_a_repl_may_run():
    shell = parse_prompt("root@h:~# ")
    assert parse_prompt(">>>", shell) is None  # a shell's output line that merely looks like one
    python = parse_prompt(">>>", shell, allow_repl=True)
    assert python is not None and python.family == "repl:python"
    assert parse_prompt("...", python).family == "repl:python"
    assert parse_prompt("mysql>", None).family == "repl:mysql"
    assert parse_prompt("    ->", parse_prompt("mysql>")).family == "repl:mysql"
    assert parse_prompt("sqlite>", shell, allow_repl=True).family == "repl:sqlite"
    assert repl_started_by("/usr/bin/python3.11") == "python" and repl_started_by("ls") is None


def test_shape_ignores_the_path_and_with_path_renders_the_same_family():
    a, b = parse_prompt("root@h:~/a# "), parse_prompt("root@h:/tmp# ")
    assert a.shape == b.shape and a.shape != parse_prompt("root@h:~$ ").shape
    assert a.with_path("/srv").text == "root@h:/srv# "
    assert parse_prompt("[u@h x]$ ").with_path("y").text == "[u@h y]$ "
    assert parse_prompt("bash-5.2# ").with_path("/x").text == "bash-5.2# "
