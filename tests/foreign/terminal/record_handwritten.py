"""Write ``handwritten.awb.jsonl``: terminal episodes typed by hand in the AgentWorldBench row layout.

These cover what the recorder cannot produce on this machine (no network, no MySQL server): an ``ssh``
hop to another host, a ``mysql>`` client, a Fedora-style ``[user@host dir]$`` prompt, a bare ``$``
prompt in incremental form, Terminus-1 actions with ``is_blocking``/``timeout_sec`` and Terminus
``New Terminal Output:`` observations. Every screen was written to be what the real programs print.

Run ``.venv/bin/python tests/foreign/terminal/record_handwritten.py`` after editing an episode.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
FENCE = "```"


def action(*items: tuple[str, float], terminus1: bool = False) -> str:
    if terminus1:
        body = [{"keystrokes": k, "is_blocking": k.endswith("\n"), "timeout_sec": d} for k, d in items]
    else:
        body = [{"keystrokes": k, "duration": d} for k, d in items]
    return f"{FENCE}json\n{json.dumps(body, indent=2, ensure_ascii=False)}\n{FENCE}"


def system(task: str, state: str, how: str) -> str:
    return ("You are the terminal an AI agent works in. Reply to each action with what the terminal shows.\n\n"
            f"## Task Description\n{task}\n\n## Action Space\nA JSON list of keystroke objects; \"\\n\" presses "
            "Enter, \"C-c\" interrupts.\n\n"
            f"## Initial State\n{state}\n\n## Simulation Instruction\n{how}")


class Terminal:
    """A hand-kept full screen: typed text is echoed after the last line, output appended, the visible
    screen is the last ``rows`` lines."""

    def __init__(self, first: str, rows: int) -> None:
        self.lines, self.rows = [first], rows

    def run(self, command: str, *output: str, echo: bool = True) -> tuple[str, str]:
        if echo:
            self.lines[-1] += command
        self.lines += output
        return command, "\n".join(line.rstrip() for line in self.lines[-self.rows:])


EPISODES = []

# 1. ssh to another host and a MySQL client there (full screens, 80x24: the screen scrolls).
_laptop, _src, _db = "dev@laptop:~/proj$ ", "dev@laptop:~/proj/src$ ", "dev@db01:~$ "
_t = Terminal(_laptop, 24)
_ssh = [
    _t.run("ls", "Makefile  README.md  src", _laptop),
    _t.run("cd src", _src),
    _t.run("pwd", "/home/dev/proj/src", _src),
    _t.run("ssh db01", "Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-105-generic x86_64)", "",
           "Last login: Mon Nov 30 09:12:44 2026 from 10.0.0.5", _db),
    _t.run("mysql -u app -p shop", "Enter password: "),
    _t.run("s3cret", "Welcome to the MySQL monitor.  Commands end with ; or \\g.", "Your MySQL connection id is 31",
           "Server version: 8.0.36-0ubuntu0.22.04.1 (Ubuntu)", "",
           "Type 'help;' or '\\h' for help. Type '\\c' to clear the current input statement.", "", "mysql> ",
           echo=False),
    _t.run("select count(*) from orders;", "+----------+", "| count(*) |", "+----------+", "|     1284 |",
           "+----------+", "1 row in set (0.01 sec)", "", "mysql> "),
    _t.run("exit", "Bye", _db),
    _t.run("exit", "logout", "Connection to db01 closed.", _src),
]
EPISODES.append({
    "id": "hand-ssh-mysql",
    "system": system("Count the orders in the shop database on db01.",
                     "Ubuntu 22.04, user `dev`, home directory /home/dev, an 80x24 terminal. The screen shows:\n"
                     f"{FENCE}\n{_laptop.rstrip()}\n{FENCE}",
                     "Show the whole visible screen after each action."),
    "task": "Count the orders in the shop database on db01.",
    "turns": [(action((c + "\n", 2.0 if c.startswith(("ssh", "mysql", "select")) else 0.5)), screen)
              for c, screen in _ssh],
})

# 2. A bare "$ " prompt, incremental output (only what the terminal added).
EPISODES.append({
    "id": "hand-bare-incremental",
    "system": system("Find the application logs.",
                     "A POSIX shell in a 100x30 terminal. The working directory is /srv/app. The screen shows:\n"
                     f"{FENCE}\n$\n{FENCE}",
                     "Answer with only the new output: the echo of the keys, what the command printed and the "
                     "new prompt."),
    "task": "Find the application logs.",
    "turns": [
        (action(("pwd\n", 0.3)), "pwd\n/srv/app\n$ "),
        (action(("echo \"build ok\"\n", 0.3)), "echo \"build ok\"\nbuild ok\n$ "),
        (action(("cd logs\n", 0.3)), "cd logs\n$ "),
        (action(("pwd\n", 0.3)), "pwd\n/srv/app/logs\n$ "),
        (action(("ls\n", 0.3)), "ls\napp.log  error.log\n$ "),
        (action(("tail -n 1 error.log\n", 0.3)), "tail -n 1 error.log\n2026-11-30T10:02:11Z ERROR upstream timed out\n$ "),
        (action(("cat missing\n", 0.3)), "cat missing\ncat: missing: No such file or directory\n$ "),
        (action(("echo -n done\n", 0.3)), "echo -n done\ndone$ "),
        (action(("grep -c ERROR error.log", 0.3)), "grep -c ERROR error.log"),
        (action(("\n", 0.5)), "\n7\n$ "),
    ],
})

# 3. Terminal-Bench Terminus: Terminus-1 actions, New Terminal Output / Current Terminal Screen (160x40).
_blank = "\n" * 36
EPISODES.append({
    "id": "hand-terminus",
    "system": system("Make the tests in /app pass.",
                     "A Docker container, a 160x40 tmux pane. The screen shows:\n"
                     f"{FENCE}\nCurrent Terminal Screen:\nroot@3f2a9c:/app#\n{FENCE}",
                     "Report the terminal as the Terminus harness does."),
    "task": "Make the tests in /app pass.",
    "turns": [
        (action(("ls\n", 1.0), terminus1=True),
         "New Terminal Output:\n\nroot@3f2a9c:/app# ls\nREADME.md  calc.py  test_calc.py\nroot@3f2a9c:/app#" + _blank),
        (action(("cd /tmp\n", 0.5), terminus1=True),
         "New Terminal Output:\n\nroot@3f2a9c:/app# cd /tmp\nroot@3f2a9c:/tmp#" + _blank[:-1]),
        (action(("pwd\n", 0.5), terminus1=True),
         "New Terminal Output:\n\nroot@3f2a9c:/tmp# pwd\n/tmp\nroot@3f2a9c:/tmp#" + _blank[:-2]),
        (action(("cd -\n", 0.5), terminus1=True),
         "New Terminal Output:\n\nroot@3f2a9c:/tmp# cd -\n/app\nroot@3f2a9c:/app#" + _blank[:-4]),
        (action(("echo fixed\n", 0.5), terminus1=True),
         "New Terminal Output:\n\nroot@3f2a9c:/app# echo fixed\nfixed\nroot@3f2a9c:/app#" + _blank[:-6]),
        (action(("", 1.0), terminus1=True),
         "Current Terminal Screen:\nroot@3f2a9c:/app# ls\nREADME.md  calc.py  test_calc.py\nroot@3f2a9c:/app# cd /tmp\n"
         "root@3f2a9c:/tmp# pwd\n/tmp\nroot@3f2a9c:/tmp# cd -\n/app\nroot@3f2a9c:/app# echo fixed\nfixed\n"
         "root@3f2a9c:/app#" + "\n" * 30),
    ],
})

# 4. A Fedora-style prompt, a Python REPL and su to another user (full screens, 100x30).
_kim, _docs, _ops = "[kim@fedora ~]$ ", "[kim@fedora Documents]$ ", "[ops@fedora ~]$ "
_t = Terminal(_kim, 30)
_fed = [
    _t.run("cd Documents", _docs),
    _t.run("pwd", "/home/kim/Documents", _docs),
    _t.run("cd ..", _kim),
    _t.run("python3", "Python 3.12.7 (main, Oct  1 2024, 00:00:00) [GCC 14.2.1 20240912 (Red Hat 14.2.1-3)] on linux",
           'Type "help", "copyright", "credits" or "license" for more information.', ">>> "),
    _t.run("sum(range(10))", "45", ">>> "),
    _t.run("exit()", _kim),
    _t.run("su - ops", "Password: "),
    _t.run("hunter2", _ops, echo=False),
    _t.run("whoami", "ops", _ops),
    _t.run("exit", "logout", _kim),
    _t.run("echo $HOME", "/home/kim", _kim),
]
EPISODES.append({
    "id": "hand-fedora-su-python",
    "system": system("Check the documents folder and the ops account.",
                     "Fedora 41, user kim (home /home/kim), a 100x30 terminal. The screen shows:\n"
                     f"{FENCE}\n[kim@fedora ~]$\n{FENCE}",
                     "Show the whole visible screen after each action."),
    "task": "Check the documents folder and the ops account.",
    "turns": [(action((c + "\n", 0.5)), screen) for c, screen in _fed],
})


def rows(episode: dict) -> list[dict]:
    prompts = []
    for i, (act, _) in enumerate(episode["turns"]):
        before = f"**Task Instruction:**\n{episode['task']}\n\n" if i == 0 else ""
        prompts.append(f"### Turn {i + 1}\n{before}**Action:**\n{act}")
    responses = [f"**Environment Observation:**\n{FENCE}\n{obs}\n{FENCE}" for _, obs in episode["turns"]]
    n_turns = len(prompts)
    return [{"task": "terminal", "id": f"{episode['id']}_turn{n}", "prompt": prompts[:n], "response": responses[:n],
             "current_prompt": prompts[n - 1], "system_str": episode["system"], "turn_idx": n,
             "total_turns": n_turns} for n in range(1, n_turns + 1)]


def main() -> None:
    path = HERE / "handwritten.awb.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for episode in EPISODES:
            for row in rows(episode):
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
