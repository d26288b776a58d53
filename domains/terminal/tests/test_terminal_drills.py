"""The generated ``drill`` suite: deterministic, varied, every family present (the sandbox run of every
reference solution is in test_terminal_tasks.py)."""

from __future__ import annotations

import json
import random

from awctl_domains.terminal.drills import FAMILIES, _Names, drill_tasks


def _commands(tasks) -> list[str]:
    return [k["keystrokes"] for t in tasks for a in t.solution for k in json.loads(a)]


def test_same_seed_same_tasks_other_seed_other_tasks():
    a, b, c = drill_tasks(40, seed=0), drill_tasks(40, seed=0), drill_tasks(40, seed=1)
    assert [(t.id, t.instruction, t.solution, t.setup) for t in a] == [
        (t.id, t.instruction, t.solution, t.setup) for t in b]
    assert [t.id for t in a] == [t.id for t in c]
    assert _commands(a) != _commands(c)


def test_every_family_is_used_and_commands_vary():
    tasks = drill_tasks()
    assert len(tasks) == 120 and len({t.id for t in tasks}) == 120
    assert {f for t in tasks for f in t.tags[1:]} == {fn.__name__[1:] for fn in FAMILIES}
    commands = [c for c in _commands(tasks) if c not in ("ls\n",)]
    # Names and words are drawn per task: almost every typed command is unique.
    assert len(set(commands)) > 0.9 * len(commands)
    assert max(len(t.solution) for t in tasks) > 4 and min(len(t.solution) for t in tasks) == 1


def test_steps_of_one_task_never_share_a_file_name():
    for seed in range(50):
        g = _Names(random.Random(seed))
        steps = [fn(g) for fn in FAMILIES]
        names = [n for s in steps for n in s.files]
        assert len(names) == len(set(names))


def test_readback_types_each_steps_check_so_turns_print_output():
    drills, readback = drill_tasks(), drill_tasks(seed=1, suite="readback", readback=True)
    assert readback[0].id == "terminal/readback/000" and readback[0].tags[0] == "readback"
    # Same generator and checkers; one more typed command per step.
    assert sum(len(t.solution) for t in readback) > 1.3 * sum(len(t.solution) for t in drills)
    looks = [c for c in _commands(readback) if c.startswith(("cat ", "stat ", "ls -1 ", "test "))]
    assert len(looks) > 0.4 * len(_commands(readback))
