"""Verifiers take every expectation from the trajectory: prompt, home, cwd, geometry and screen form.

Small sessions written by hand in the forms other programs produce (Debian's ``~`` prompt, ``bash
--norc``, incremental output, Terminus screens, REPLs, ``su``); each check shows what the trajectory
establishes, that the verifier abstains where it establishes too little, and that a failure names the
line and what was expected. (The recorded corpus in ``tests/foreign/terminal`` is checked in
``test_terminal_foreign.py``.)
"""

from __future__ import annotations

import json

from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.session import facts_before, stated_form

from awctl.domain import TurnContext, VerifyResult
from awctl.trajectory import SystemPrompt, Trajectory, Turn

VERIFIERS = {v.name: v for v in TerminalDomain().verifiers()}


def keys(text: str, enter: bool = True) -> str:
    return json.dumps([{"keystrokes": text + ("\n" if enter else ""), "duration": 0.5}])


def session(first: str, turns: list[tuple[str, str]], state: str = "A bash shell in a 80x24 terminal.",
            **meta: object) -> Trajectory:
    system = SystemPrompt(initial_state=f"{state} The screen shows:\n```\n{first}\n```")
    return Trajectory(id="t", domain="terminal", system=system,
                      turns=[Turn(action=a if a.startswith("[") else keys(a), observation=o) for a, o in turns],
                      metadata=dict(meta))


def run(name: str, traj: Trajectory, index: int, observation: str | None = None) -> VerifyResult | None:
    return VERIFIERS[name](TurnContext.at(traj, index, observation))


def passes(name: str, traj: Trajectory, index: int) -> None:
    res = run(name, traj, index)
    assert res is not None and res.ok, res


def fails(name: str, traj: Trajectory, index: int, observation: str, *words: str) -> str:
    res = run(name, traj, index, observation)
    assert res is not None and not res.ok, f"{name} did not flag:\n{observation}"
    assert all(w in res.message for w in words), res.message
    return res.message


DEBIAN = session("root@web01:~/work#", [
    ("pwd", "root@web01:~/work# pwd\n/root/work\nroot@web01:~/work#"),
    ("cd /tmp", "root@web01:~/work# pwd\n/root/work\nroot@web01:~/work# cd /tmp\nroot@web01:/tmp#"),
    ("cd", "root@web01:~/work# pwd\n/root/work\nroot@web01:~/work# cd /tmp\nroot@web01:/tmp# cd\nroot@web01:~#"),
    ("pwd", "root@web01:~/work# pwd\n/root/work\nroot@web01:~/work# cd /tmp\nroot@web01:/tmp# cd\nroot@web01:~# pwd\n"
            "/root\nroot@web01:~#"),
])


def test_debian_prompt_with_tilde_learns_the_home_directory_from_pwd():
    assert facts_before(TurnContext.at(DEBIAN, 0)).home is None
    assert run("exact_output", DEBIAN, 0) is None  # ~/work: the home directory is not established yet
    assert facts_before(TurnContext.at(DEBIAN, 1)).home == "/root"
    for name in ("prompt_format", "prompt_cwd", "command_echo"):
        for i in range(4):
            passes(name, DEBIAN, i)
    passes("exact_output", DEBIAN, 3)
    screen = DEBIAN.turns[3].observation
    fails("exact_output", DEBIAN, 3, screen.replace("\n/root\n", "\n/tmp\n"), "line 6", "/root")
    # The home directory is shown as ~ by this shell: an absolute path there changes the prompt's shape.
    fails("prompt_format", DEBIAN, 2, DEBIAN.turns[2].observation[:-len("root@web01:~#")] + "root@web01:/root#",
          "line 5", "~")
    fails("prompt_cwd", DEBIAN, 2, DEBIAN.turns[2].observation[:-len("root@web01:~#")] + "root@web01:/tmp#",
          "line 5", "'~'")


def test_a_stated_working_directory_makes_pwd_checkable_under_bash_norc():
    norc = session("bash-5.2#", [("pwd", "bash-5.2# pwd\n/srv/app\nbash-5.2#"),
                                 ("cd logs", "bash-5.2# pwd\n/srv/app\nbash-5.2# cd logs\nbash-5.2#"),
                                 ("pwd", "bash-5.2# pwd\n/srv/app\nbash-5.2# cd logs\nbash-5.2# pwd\n/srv/app/logs\n"
                                         "bash-5.2#")],
                   state="A bash shell in a 100x30 terminal. The working directory is /srv/app.")
    passes("exact_output", norc, 0)
    passes("exact_output", norc, 2)
    assert run("prompt_cwd", norc, 1) is None  # the prompt shows no directory
    fails("exact_output", norc, 2, norc.turns[2].observation.replace("/srv/app/logs", "/srv/app"), "line 5")
    fails("prompt_format", norc, 1, norc.turns[1].observation[:-1] + "$", "bash-5.2$")
    unstated = session("bash-5.2#", [(t.action, t.observation) for t in norc.turns])
    assert run("exact_output", unstated, 0) is None  # nothing says where the shell is
    passes("exact_output", unstated, 2)  # ...until the first pwd and a cd said it


def test_su_and_exit_change_the_prompt_and_verifiers_abstain_on_them():
    traj = session("root@box:~#", [
        ("su - maria", "root@box:~# su - maria\nmaria@box:~$"),
        ("whoami", "root@box:~# su - maria\nmaria@box:~$ whoami\nmaria\nmaria@box:~$"),
        ("exit", "root@box:~# su - maria\nmaria@box:~$ whoami\nmaria\nmaria@box:~$ exit\nlogout\nroot@box:~#"),
    ])
    assert run("prompt_format", traj, 0) is None and run("prompt_format", traj, 2) is None
    passes("prompt_format", traj, 1)  # maria's prompt is now the session's prompt
    fails("prompt_format", traj, 1, traj.turns[1].observation[:-len("maria@box:~$")] + "root@box:~#",
          "line 4", "another shape")


def test_python_repl_keeps_its_prompt_until_exit():
    traj = session("dev@lab:~$", [
        ("python3", "dev@lab:~$ python3\nPython 3.11.2\n>>>"),
        ("2 + 2", "dev@lab:~$ python3\nPython 3.11.2\n>>> 2 + 2\n4\n>>>"),
        ("exit()", "dev@lab:~$ python3\nPython 3.11.2\n>>> 2 + 2\n4\n>>> exit()\ndev@lab:~$"),
    ])
    passes("prompt_format", traj, 1)
    passes("command_echo", traj, 1)
    assert run("exact_output", traj, 1) is None  # python code is not a shell command
    fails("prompt_format", traj, 1, traj.turns[1].observation[:-3] + "dev@lab:~$", "line 5", "python")
    assert run("prompt_format", traj, 2) is None


def test_incremental_output_echo_is_the_first_line():
    traj = session("dev@box:/srv$", [
        ("ls", "ls\nnotes.txt\ndev@box:/srv$ "),
        ("cd /etc", "cd /etc\ndev@box:/etc$ "),
        ("echo  two   words", "echo  two   words\ntwo words\ndev@box:/etc$ "),
    ], screen_form="incremental", cols=80)
    for i in range(3):
        passes("command_echo", traj, i)
    passes("prompt_cwd", traj, 1)
    passes("exact_output", traj, 2)
    fails("command_echo", traj, 0, "pwd\nnotes.txt\ndev@box:/srv$ ", "line 1", "'ls'")
    fails("prompt_cwd", traj, 1, "cd /etc\ndev@box:/srv$ ", "line 2", "/etc")
    fails("exact_output", traj, 2, "echo  two   words\ntwo   words\ndev@box:/etc$ ", "line 2")
    assert stated_form(traj) == "incremental"


def test_form_is_inferred_when_the_trajectory_does_not_state_it():
    incremental = session("$", [("ls", "ls\na\n$ "), ("ls", "ls\na\n$ "), ("pwd", "pwd\n/x\n$ ")])
    assert facts_before(TurnContext.at(incremental, 2)).form == "incremental"
    screen = session("$", [("ls", "$ ls\na\n$"), ("pwd", "$ ls\na\n$ pwd\n/x\n$")])
    assert facts_before(TurnContext.at(screen, 1), 2).form == "screen"


def test_terminus_screens_carry_their_form_in_the_header():
    blank = "\n" * 30
    traj = session("Current Terminal Screen:\nroot@c0ffee:/app#", [
        ('[{"keystrokes": "cd /tmp\\n", "is_blocking": true, "timeout_sec": 5}]',
         "New Terminal Output:\n\nroot@c0ffee:/app# cd /tmp\nroot@c0ffee:/tmp#" + blank),
        ('[{"keystrokes": "pwd\\n", "is_blocking": true, "timeout_sec": 5}]',
         "New Terminal Output:\n\nroot@c0ffee:/tmp# pwd\n/tmp\nroot@c0ffee:/tmp#" + blank),
    ], state="A Docker container in a 160x40 tmux pane.")
    for name in ("command_echo", "prompt_cwd", "prompt_format", "screen_geometry"):
        passes(name, traj, 0)
    passes("exact_output", traj, 1)
    fails("prompt_cwd", traj, 0, traj.turns[0].observation.replace("c0ffee:/tmp#", "c0ffee:/app#"), "line 4")
    fails("exact_output", traj, 1, traj.turns[1].observation.replace("\n/tmp\n", "\n/app\n"), "line 4")


def test_echo_scrolled_off_a_full_screen_is_not_a_failure():
    rows = ["root@h:~# seq 1 40"] + [str(i) for i in range(1, 41)] + ["root@h:~#"]
    traj = session("root@h:~#", [("seq 1 40", "\n".join(rows[-24:]))], rows=24, cols=80)
    assert run("command_echo", traj, 0) is None
    passes("prompt_format", traj, 0)


def test_output_glued_to_the_prompt_is_read_as_output():
    traj = session("$", [("echo -n done", "$ echo -n done\ndone$"), ("ls", "$ echo -n done\ndone$ ls\na\n$")])
    passes("exact_output", traj, 0)
    passes("command_echo", traj, 1)
    passes("prompt_format", traj, 0)
    fails("prompt_format", traj, 0, "$ echo -n done\ndonebash-5.2$", "line 2")


def test_geometry_comes_from_the_trajectory_or_the_check_abstains():
    wide = "x" * 100
    stated = session("$", [("echo hi", "$ echo hi\nhi\n$")], state="A shell in a 80x24 terminal.")
    fails("screen_geometry", stated, 0, f"$ echo hi\n{wide}\n$", "line 2", "80 columns")
    unstated = session("$", [("echo hi", "$ echo hi\nhi\n$")], state="A shell.")
    assert run("screen_geometry", unstated, 0, f"$ echo hi\n{wide}\n$") is None
    fails("screen_geometry", unstated, 0, "$ echo hi\nhi\tthere\n$", "line 2", "tab")


def test_cd_chains_and_failed_cd_are_followed():
    traj = session("u@h:/srv$", [
        ("mkdir -p a/b && cd a/b", "u@h:/srv$ mkdir -p a/b && cd a/b\nu@h:/srv/a/b$"),
        ("cd /nope", "u@h:/srv$ mkdir -p a/b && cd a/b\nu@h:/srv/a/b$ cd /nope\n"
                     "bash: cd: /nope: No such file or directory\nu@h:/srv/a/b$"),
        ("ls x && cd ..", "u@h:/srv$ mkdir -p a/b && cd a/b\nu@h:/srv/a/b$ cd /nope\n"
                          "bash: cd: /nope: No such file or directory\nu@h:/srv/a/b$ ls x && cd ..\n"
                          "ls: cannot access 'x': No such file or directory\nu@h:/srv/a/b$"),
    ])
    passes("prompt_cwd", traj, 0)
    passes("prompt_cwd", traj, 1)
    assert run("prompt_cwd", traj, 2) is None  # ls failed, so the cd after && never ran: not decidable here
    fails("prompt_cwd", traj, 1, traj.turns[1].observation[:-len("u@h:/srv/a/b$")] + "u@h:/nope$", "'/srv/a/b'")


def test_a_turn_edited_after_a_check_is_replayed_again():
    traj = DEBIAN.model_copy(deep=True)
    passes("exact_output", traj, 3)  # home /root learned from turn 0's pwd
    traj.turns[0].observation = traj.turns[0].observation.replace("/root/work", "/srv/work")
    fails("exact_output", traj, 3, traj.turns[3].observation, "/srv")  # now the session says home is /srv


def test_random_text_fails_where_the_terminal_layout_was_established():
    screen = session("u@h:~$", [("ls", "u@h:~$ ls\na.txt\nu@h:~$"), ("pwd", "u@h:~$ ls\na.txt\nu@h:~$ pwd\n/home/u\nu@h:~$")],
                     home="/home/u")
    garbage = "qX3 ,.;:-_/ lorem ipsum 42 zzz"
    for name in ("screen_geometry", "prompt_format", "prompt_cwd", "command_echo", "exact_output"):
        passes(name, screen, 1)
        fails(name, screen, 1, garbage, "line 3", "echo 'u@h:~$ pwd'")
    incremental = session("$", [("ls", "ls\na\n$ "), ("ls", "ls\na\n$ ")], screen_form="incremental")
    for name in ("screen_geometry", "prompt_format", "command_echo"):
        fails(name, incremental, 1, garbage, "line 1", "echo 'ls'")


def test_a_short_screen_not_at_a_prompt_keeps_the_echo_in_sight():
    traj = session("u@h:~$", [("sleep 9", "u@h:~$ sleep 9")], rows=24, cols=80)
    passes("command_echo", traj, 0)
    # Too short to have scrolled: the echo cannot have left it (a full, still running screen may have).
    fails("command_echo", traj, 0, "some output", "line 1", "'u@h:~$ sleep 9'")
    full = "\n".join(str(i) for i in range(24))
    assert run("command_echo", traj, 0, full) is None


def test_keystrokes_without_an_echo_leave_the_previous_rows_on_top():
    c_c = '[{"keystrokes": "C-c", "duration": 0.5}]'
    traj = session("u@h:~$", [("sleep 9", "u@h:~$ sleep 9"), (c_c, "u@h:~$ sleep 9\n^C\nu@h:~$")],
                   rows=24, cols=80, screen_form="screen")
    for name in ("screen_geometry", "prompt_format"):
        passes(name, traj, 1)
        fails(name, traj, 1, "^C\nu@h:~$" if name == "screen_geometry" else "Traceback\nKeyboardInterrupt",
              "line 1", "previous screen's rows")


def test_a_stripped_observation_reads_as_the_recorded_one():
    incremental = session("$", [("echo hi", "echo hi\nhi\n$ "), ('[{"keystrokes": "\\n", "duration": 0.5}]',
                                                             "\n$ ")], screen_form="incremental")
    passes("command_echo", incremental, 1)
    stripped = run("command_echo", incremental, 1, "$")  # the judge strips the blank echo line
    assert stripped is not None and stripped.ok
    # With nothing visible in the echo, only an observation that ends at a prompt reads as stripped.
    fails("command_echo", incremental, 1, "random words", "line 1")
    screen = session("\n\n   banner\nu@h:~$", [("pwd", "\n\n   banner\nu@h:~$ pwd\n/home/u\nu@h:~$")],
                     rows=24, cols=80, home="/home/u")
    for name in ("command_echo", "exact_output", "prompt_format", "screen_geometry"):
        passes(name, screen, 0)
        res = run(name, screen, 0, screen.turns[0].observation.strip())
        assert res is not None and res.ok, res


def test_a_stripped_screen_after_keystrokes_still_continues_the_previous_one():
    c_c = '[{"keystrokes": "C-c", "duration": 0.5}]'
    traj = session("\n  motd\nu@h:~$", [("sleep 9", "\n  motd\nu@h:~$ sleep 9"), (c_c, "\n  motd\nu@h:~$ sleep 9\n^C\nu@h:~$")],
                   rows=24, cols=80, screen_form="screen")
    for name in ("screen_geometry", "prompt_format"):
        passes(name, traj, 1)
        res = run(name, traj, 1, traj.turns[1].observation.strip())
        assert res is not None and res.ok, res
