"""The ``basic`` task suite: everyday shell work (files, text processing, variables, scripts, archives,
permissions, grep/sed/awk).

Every task has a setup (files in ``/workspace``, environment variables, commands), a scripted reference
solution (action texts) and a checker that only talks through ``env.step`` — it types a read-only
command such as ``cat result.txt`` and compares the output on the screen — so the same checker judges
a real sandbox or a simulator.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from awctl.domain import CheckResult, Task
from awctl.env import Environment

from .prompt_shapes import parse_prompt
from .session import screen_lines


def keys(command: str, duration: float = 1.0) -> str:
    """The action text that types ``command`` and presses Enter."""
    return json.dumps([{"keystrokes": command + "\n", "duration": duration}])


def shell_output(env: Environment, command: str, duration: float = 2.0) -> str | None:
    """Run ``command`` through ``env.step`` and read its output off the screen (None if not visible).

    The output is the lines between the command's echo (after a prompt of any shell family) and the next
    prompt, right-stripped.
    """
    lines = screen_lines(env.step(keys(command, duration)).observation)
    end = len(lines) - 1 if lines and parse_prompt(lines[-1]) is not None else len(lines)
    for i in range(end - 1, -1, -1):
        line = lines[i]
        if line.endswith(" " + command) and parse_prompt(line[: len(line) - len(command)]) is not None:
            return "\n".join(lines[i + 1: end])
    return None


def output_is(command: str, expected: str) -> Callable[[Environment], CheckResult]:
    """A checker: ``command`` must print exactly ``expected`` (trailing spaces and newline ignored)."""
    want = "\n".join(line.rstrip() for line in expected.rstrip("\n").split("\n"))

    def check(env: Environment) -> CheckResult:
        got = shell_output(env, command)
        if got is None:
            return CheckResult(False, f"could not read the output of `{command}` on the screen", 0.0)
        if got != want:
            return CheckResult(False, f"`{command}` printed {got[:200]!r}, expected {want[:200]!r}", 0.0)
        return CheckResult(True, f"`{command}` printed the expected output", 1.0)

    return check


def task_setup(
    files: dict[str, Any] | None = None, env: dict[str, str] | None = None, commands: list[str] | None = None
) -> dict[str, Any]:
    """A task's ``setup`` for :class:`~awctl_domains.terminal.env.TerminalEnv`: only the parts given."""
    parts = {"files": files, "env": env, "commands": commands}
    return {key: value for key, value in parts.items() if value}


def _task(
    task_id: str,
    instruction: str,
    solution: list[str],
    check_cmd: str,
    expected: str,
    *,
    files: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    commands: list[str] | None = None,
    tags: tuple[str, ...] = (),
) -> Task:
    return Task(
        id=f"terminal/basic/{task_id}",
        domain="terminal",
        suite="basic",
        instruction=instruction,
        solution=[keys(c) for c in solution],
        check=output_is(check_cmd, expected),
        setup=task_setup(files, env, commands),
        max_turns=15,
        tags=tags,
    )


_LOG = "\n".join([
    "2026-01-01 INFO start", "2026-01-01 ERROR disk failure", "2026-01-02 INFO retry",
    "2026-01-02 ERROR network down", "2026-01-03 WARN slow", "2026-01-03 ERROR disk failure",
]) + "\n"
_NAMES = "carol\nalice\nbob\nalice\ncarol\ndave\n"
_CSV = "name,score\nann,12\nben,30\ncid,8\n"
_POEM = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"

BASIC: tuple[Task, ...] = (
    _task("create_file", "Create hello.txt containing the single line `hello world`.",
          ["echo 'hello world' > hello.txt"], "cat hello.txt", "hello world", tags=("files",)),
    _task("count_lines", "Write the number of lines of data.txt (just the number) into count.txt.",
          ["wc -l < data.txt > count.txt"], "cat count.txt", "5",
          files={"data.txt": "a\nb\nc\nd\ne\n"}, tags=("text",)),
    _task("grep_errors", "Write every line of app.log that contains ERROR into errors.txt, in order.",
          ["grep ERROR app.log > errors.txt"], "cat errors.txt",
          "".join(line + "\n" for line in _LOG.splitlines() if "ERROR" in line),
          files={"app.log": _LOG}, tags=("grep",)),
    _task("sed_replace", "In config.ini replace every `foo` with `bar`, editing the file in place.",
          ["sed -i 's/foo/bar/g' config.ini"], "cat config.ini", "name=bar\npath=/bar/bar2",
          files={"config.ini": "name=foo\npath=/foo/foo2\n"}, tags=("sed",)),
    _task("awk_sum", "Write the sum of the score column of scores.csv (skip the header) into total.txt.",
          ["awk -F, 'NR>1 {s+=$2} END {print s}' scores.csv > total.txt"], "cat total.txt", "50",
          files={"scores.csv": _CSV}, tags=("awk",)),
    _task("sort_unique", "Write the distinct names of names.txt, sorted, one per line, into unique.txt.",
          ["sort -u names.txt > unique.txt"], "cat unique.txt", "alice\nbob\ncarol\ndave",
          files={"names.txt": _NAMES}, tags=("text",)),
    _task("env_var", "Write the value of the environment variable GREETING into greeting.txt.",
          ['echo "$GREETING" > greeting.txt'], "cat greeting.txt", "hi from the task",
          env={"GREETING": "hi from the task"}, tags=("env",)),
    _task("export_var", "Create env.sh that exports COLOR=teal, so `. ./env.sh; echo $COLOR` prints teal.",
          ["echo 'export COLOR=teal' > env.sh"], "bash -c '. ./env.sh; echo $COLOR'", "teal", tags=("env",)),
    _task("make_script", "Create an executable script run.sh that prints `ok` when run as ./run.sh.",
          ["printf '#!/bin/sh\\necho ok\\n' > run.sh", "chmod +x run.sh"], "./run.sh", "ok", tags=("scripts",)),
    _task("chmod_private", "Make secret.txt readable and writable by its owner only (mode 600).",
          ["chmod 600 secret.txt"], "stat -c %a secret.txt", "600",
          files={"secret.txt": {"content": "token\n", "mode": 0o644}}, tags=("permissions",)),
    _task("tar_create", "Create a gzip-compressed tar archive docs.tar.gz holding the folder docs/.",
          ["tar czf docs.tar.gz docs"], "tar tzf docs.tar.gz | sort", "docs/\ndocs/a.md\ndocs/b.md",
          files={"docs/a.md": "# A\n", "docs/b.md": "# B\n"}, tags=("archives",)),
    _task("tar_extract", "Extract bundle.tar into the folder out/ (create it).",
          ["mkdir -p out", "tar xf bundle.tar -C out"], "cat out/pkg/VERSION", "1.4.2",
          files={"src/pkg/VERSION": "1.4.2\n"},
          commands=["tar cf bundle.tar -C src pkg && rm -r src"], tags=("archives",)),
    _task("mkdir_tree", "Create the folders a/b/c and inside them a file leaf.txt containing `leaf`.",
          ["mkdir -p a/b/c", "echo leaf > a/b/c/leaf.txt"], "cat a/b/c/leaf.txt", "leaf", tags=("files",)),
    _task("rename", "Rename old.txt to new.txt.",
          ["mv old.txt new.txt"], "ls", "new.txt", files={"old.txt": "x\n"}, tags=("files",)),
    _task("find_python", "List the paths of all .py files under src/ (sorted, as find prints them) in py.txt.",
          ["find src -name '*.py' | sort > py.txt"], "cat py.txt", "src/a.py\nsrc/lib/b.py\nsrc/lib/deep/c.py",
          files={"src/a.py": "", "src/lib/b.py": "", "src/lib/deep/c.py": "", "src/readme.md": ""},
          tags=("find",)),
    _task("middle_lines", "Write lines 3 to 5 of poem.txt into middle.txt.",
          ["sed -n '3,5p' poem.txt > middle.txt"], "cat middle.txt", "three\nfour\nfive",
          files={"poem.txt": _POEM}, tags=("sed",)),
    _task("word_count", "Write the number of words in essay.txt (just the number) into words.txt.",
          ["wc -w < essay.txt > words.txt"], "cat words.txt", "9",
          files={"essay.txt": "the quick brown fox\njumps over\nthe lazy dog\n"}, tags=("text",)),
    _task("first_column", "Write the first column of users.csv (without the header) into names.txt.",
          ["tail -n +2 users.csv | cut -d, -f1 > names.txt"], "cat names.txt", "ann\nben\ncid",
          files={"users.csv": _CSV}, tags=("text",)),
    _task("symlink", "Create a symbolic link named current pointing to releases/v2.",
          ["ln -s releases/v2 current"], "readlink current", "releases/v2",
          files={"releases/v1/app": "1\n", "releases/v2/app": "2\n"}, tags=("files",)),
    _task("uppercase", "Write the contents of shout.txt converted to upper case into loud.txt.",
          ["tr a-z A-Z < shout.txt > loud.txt"], "cat loud.txt", "HELLO THERE\nGENERAL",
          files={"shout.txt": "hello there\ngeneral\n"}, tags=("text",)),
    _task("extract_version", 'Write the value of "version" in package.json (without quotes) into version.txt.',
          ["""grep '"version"' package.json | cut -d'"' -f4 > version.txt"""], "cat version.txt", "3.1.0",
          files={"package.json": '{\n  "name": "demo",\n  "version": "3.1.0"\n}\n'}, tags=("grep",)),
    _task("delete_tmp", "Delete every *.tmp file in the workspace and keep everything else.",
          ["rm -f *.tmp"], "ls", "keep.txt",
          files={"a.tmp": "", "b.tmp": "", "keep.txt": "k\n"}, tags=("files",)),
    _task("append_line", "Append the line `buy milk` to todo.txt.",
          ["echo 'buy milk' >> todo.txt"], "cat todo.txt", "wash car\nbuy milk",
          files={"todo.txt": "wash car\n"}, tags=("files",)),
    _task("count_errors", "Write how many distinct ERROR messages app.log has (just the number) into n.txt.",
          ["grep ERROR app.log | cut -d' ' -f3- | sort -u | wc -l > n.txt"], "cat n.txt", "2",
          files={"app.log": _LOG}, tags=("grep", "text")),
)
