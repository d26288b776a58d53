import os

import pytest
from awctl_domains.swe import editor as ed
from awctl_domains.swe.editor import Editor


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("a = 1\nb = 2\na = 1\nc = 3\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "secret").write_text("s")
    (tmp_path / "pkg" / "deep").mkdir()
    (tmp_path / "pkg" / "deep" / "far.txt").write_text("far")
    return Editor(tmp_path, "/testbed")


def test_view_uses_cat_n_format_with_six_wide_numbers_and_a_tab(ws):
    out = ws.run("view", "/testbed/pkg/mod.py")
    assert out.ok
    assert out.observation == (
        "Here's the result of running `cat -n` on /testbed/pkg/mod.py:\n"
        "     1\ta = 1\n     2\tb = 2\n     3\ta = 1\n     4\tc = 3\n     5\t"
    )
    ranged = ws.run("view", "/testbed/pkg/mod.py", view_range=[2, 3]).observation
    assert ranged.endswith("     2\tb = 2\n     3\ta = 1")
    assert ws.run("view", "/testbed/pkg/mod.py", view_range=[4, -1]).observation.endswith("     4\tc = 3\n     5\t")


def test_view_range_errors_use_the_tool_wording(ws):
    p = "/testbed/pkg/mod.py"
    assert ws.run("view", p, view_range=[0, 2]).observation == (
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 5]")
    assert ws.run("view", p, view_range=[1, 9]).observation == (
        "Invalid `view_range`: [1, 9]. Its second element `9` should be smaller than the number of lines in the file: `5`")
    assert ws.run("view", p, view_range=[3, 2]).observation == (
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`")
    assert ws.run("view", "/testbed/pkg", view_range=[1, 2]).observation == ed.DIR_RANGE


def test_directory_view_lists_two_levels_without_hidden_entries(ws):
    out = ws.run("view", "/testbed").observation
    assert out == (
        "Here's the files and directories up to 2 levels deep in /testbed, excluding hidden items:\n"
        "/testbed\n/testbed/pkg\n/testbed/pkg/deep\n/testbed/pkg/mod.py"
    )


def test_str_replace_uniqueness_rule(ws):
    p = "/testbed/pkg/mod.py"
    assert ws.run("str_replace", p, old_str="zzz", new_str="y").observation == (
        "No replacement was performed, old_str `zzz` did not appear verbatim in /testbed/pkg/mod.py.")
    assert ws.run("str_replace", p, old_str="a = 1", new_str="y").observation == (
        "No replacement was performed. Multiple occurrences of old_str `a = 1` in lines [1, 3]. Please ensure it is unique")
    assert ws.run("str_replace", p, old_str="b = 2", new_str="b = 2").observation.startswith(
        "No replacement was performed, old_str `b = 2` is the same as new_str `b = 2`.")
    out = ws.run("str_replace", p, old_str="b = 2", new_str="b = 20\nb2 = 4")
    assert out.ok
    assert out.observation == (
        "The file /testbed/pkg/mod.py has been edited. Here's the result of running `cat -n` on a snippet of "
        "/testbed/pkg/mod.py:\n     1\ta = 1\n     2\tb = 20\n     3\tb2 = 4\n     4\ta = 1\n     5\tc = 3\n     6\t\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary."
    )
    assert (ws.workspace / "pkg" / "mod.py").read_text() == "a = 1\nb = 20\nb2 = 4\na = 1\nc = 3\n"


def test_insert_and_undo_restore_the_previous_text(ws):
    p = "/testbed/pkg/mod.py"
    out = ws.run("insert", p, insert_line=2, new_str="x = 9")
    assert out.observation.startswith(
        "The file /testbed/pkg/mod.py has been edited. Here's the result of running `cat -n` on a snippet of the "
        "edited file:\n     1\ta = 1\n     2\tb = 2\n     3\tx = 9\n")
    assert out.observation.endswith("(correct indentation, no duplicate lines, etc). Edit the file again if necessary.")
    assert ws.run("insert", p, insert_line=99, new_str="x").observation == (
        "Invalid `insert_line` parameter: 99. It should be within the range of lines of the file: [0, 6]")
    undo = ws.run("undo_edit", p)
    assert undo.observation.startswith("Last edit to /testbed/pkg/mod.py undone successfully. Here's the result of "
                                       "running `cat -n` on /testbed/pkg/mod.py:\n     1\ta = 1\n")
    assert (ws.workspace / "pkg" / "mod.py").read_text() == "a = 1\nb = 2\na = 1\nc = 3\n"
    assert ws.run("undo_edit", p).observation == "No edit history found for /testbed/pkg/mod.py."


def test_create_rules(ws):
    assert ws.run("create", "/testbed/new.py", file_text="x\n").observation == "File created successfully at: /testbed/new.py"
    assert ws.run("create", "/testbed/new.py", file_text="y\n").observation == (
        "File already exists at: /testbed/new.py. Cannot overwrite files using command `create`.")
    assert ws.run("create", "/testbed/no/such/x.py", file_text="").observation == (
        "The parent directory /testbed/no/such does not exist. Please create it first.")
    assert ws.run("str_replace", "/testbed/pkg", old_str="a", new_str="b").observation == (
        "The path /testbed/pkg is a directory and only the `view` command can be used on directories")
    assert ws.run("view", "/testbed/missing.py").observation == (
        "The path /testbed/missing.py does not exist. Please provide a valid path.")
    assert ws.run("view", "relative.py").observation == (
        "The path relative.py is not an absolute path, it should start with `/`. Maybe you meant /testbed/relative.py?")


def test_clipping_happens_exactly_at_the_limit(ws):
    line = "x" * 99
    text = "\n".join([line] * 200)  # 19999 characters
    (ws.workspace / "big.txt").write_text(text)
    out = ws.run("view", "/testbed/big.txt").observation
    assert out.count(ed.TRUNCATED_MESSAGE) == 1 and out.endswith(ed.TRUNCATED_MESSAGE)
    shown = "\n".join(row.split("\t", 1)[1] for row in out.split("\n")[1:])
    assert shown[: -len(ed.TRUNCATED_MESSAGE)] == text[: ed.MAX_RESPONSE_LEN]
    (ws.workspace / "fits.txt").write_text("y" * ed.MAX_RESPONSE_LEN)
    assert ed.TRUNCATED_MESSAGE not in ws.run("view", "/testbed/fits.txt").observation


def test_paths_outside_the_workspace_do_not_exist_for_the_editor(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("host secret")
    os.symlink(outside, ws.workspace / "link.txt")
    assert ws.run("view", "/testbed/link.txt").observation.startswith("The path /testbed/link.txt does not exist")
    assert ws.run("view", "/etc/passwd").observation.startswith("The path /etc/passwd does not exist")
    assert ws.run("view", "/testbed/../etc/passwd").observation.startswith("The path /testbed/../etc/passwd does not")


@pytest.mark.not_a_component("root ignores file permissions")
@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_write_errors_use_the_tool_message_with_the_agent_path(ws):
    target = ws.workspace / "pkg" / "mod.py"
    target.chmod(0o444)
    out = ws.run("str_replace", "/testbed/pkg/mod.py", old_str="b = 2", new_str="b = 3")
    assert out.observation == (
        "Ran into [Errno 13] Permission denied: '/testbed/pkg/mod.py' while trying to write to /testbed/pkg/mod.py")
    assert str(ws.workspace) not in out.observation and target.read_text().count("b = 2") == 1
