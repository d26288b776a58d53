"""The ``drill`` suite: procedurally generated everyday shell tasks with varied names and contents.

The ``basic`` suite has one hand-written instance per skill, so a small world model trained on it can
memorise each command instead of learning to read the one it is given. A drill chains one to five steps
of common operations (write, append, copy, move, delete, folders, permissions, head/tail/sort/grep, sed,
environment variables, printf, look-then-act) whose file names, words and numbers come from a seeded
generator, so the screen echoes a different command every time and later screens carry the history of
earlier ones. Some steps look before they act (``ls`` or ``cat`` first), so recordings also hold command
output. Generation is deterministic: the same ``count``, ``seed`` and ``max_steps`` always give the same
tasks, ids and checkers; every step is checked afterwards through ``env.step`` like the basic suite.

The ``readback`` suite is the same generator (another seed) with each step's check typed as the step's
last command (``cat`` the file written, ``stat`` the mode...), as a user does who looks at what they just
did: about half of its turns print output, most of it derivable from earlier turns (retrieval and
transformation, what a world model has to learn beyond echoing the command).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import CheckResult, Task
from awctl.env import Environment

from .tasks import keys, output_is, task_setup

_WORDS = (
    "amber", "apple", "arrow", "atlas", "bacon", "badge", "basil", "beach", "berry", "bison", "blaze", "bloom",
    "brick", "cabin", "cable", "camel", "candle", "canoe", "cargo", "cedar", "chalk", "charm", "cider",
    "cloud", "clover", "cobalt", "comet", "coral", "cotton", "crane", "crown", "daisy", "delta", "denim",
    "dune", "eagle", "ember", "fable", "falcon", "fern", "fiber", "flint", "forest", "fossil", "frost",
    "garnet", "ginger", "glacier", "grape", "gravel", "harbor", "hazel", "heron", "honey", "indigo", "iris",
    "island", "ivory", "jade", "jasmine", "jelly", "juniper", "kayak", "kettle", "kiwi", "lagoon", "lemon",
    "lilac", "linen", "lotus", "maple", "marble", "meadow", "melon", "mint", "mocha", "nectar", "nickel",
    "north", "nutmeg", "oasis", "olive", "onyx", "orbit", "otter", "oyster", "panda", "pepper", "pebble",
    "pine", "plum", "polar", "poppy", "quartz", "quill", "raven", "reef", "river", "robin", "saffron",
    "salmon", "sand", "scarlet", "silver", "slate", "spruce", "storm", "sugar", "summit", "tango", "thistle",
    "tiger", "topaz", "tulip", "tundra", "umber", "velvet", "violet", "walnut", "willow", "winter", "yarrow",
    "zebra", "zinc",
)
_EXTS = ("txt", "md", "csv", "log", "cfg", "dat")
_MODES = ("600", "640", "644", "700", "750", "755", "444", "400")


class _Names:
    """Draws words and names for one task; file and folder names are never reused within the task."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set[str]()

    def word(self) -> str:
        return self.rng.choice(_WORDS)

    def _fresh(self, make: Callable[[], str]) -> str:
        while (name := make()) in self.used:
            pass
        self.used.add(name)
        return name

    def file(self, ext: str | None = None) -> str:
        def make() -> str:
            stem = self.word() if self.rng.random() < 0.6 else f"{self.word()}_{self.word()}"
            return f"{stem}.{ext or self.rng.choice(_EXTS)}"

        return self._fresh(make)

    def folder(self) -> str:
        return self._fresh(self.word)

    def lines(self, n: int) -> list[str]:
        return [" ".join(self.word() for _ in range(self.rng.randint(1, 3))) for _ in range(n)]


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _joined(lines: list[str]) -> str:
    return "\n".join(lines)


@dataclass
class Step:
    """One step of a drill: what to ask, the commands that do it, and the check run afterwards."""

    family: str
    instruction: str
    commands: list[str]
    check_cmd: str
    expected: str
    files: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def _write_line(g: _Names) -> Step:
    f, line = g.file("txt"), " ".join(g.word() for _ in range(g.rng.randint(1, 4)))
    q = "'" if g.rng.random() < 0.6 else '"'
    return Step("write_line", f"create {f} containing the single line `{line}`", [f"echo {q}{line}{q} > {f}"],
                f"cat {f}", line)


def _append_line(g: _Names) -> Step:
    f, old, new = g.file(), g.lines(g.rng.randint(1, 3)), f"{g.word()} {g.word()}"
    return Step("append_line", f"add the line `{new}` at the end of {f}", [f"echo '{new}' >> {f}"], f"cat {f}",
                _joined([*old, new]), {f: _text(old)})


def _copy(g: _Names) -> Step:
    src, dst, body = g.file(), g.file(), g.lines(g.rng.randint(1, 3))
    return Step("copy", f"make a copy of {src} named {dst}", [f"cp {src} {dst}"], f"cat {dst}", _joined(body),
                {src: _text(body)})


def _move(g: _Names) -> Step:
    src, dst, word = g.file(), g.file(), g.word()
    return Step("move", f"rename {src} to {dst}", [f"mv {src} {dst}"], f"test ! -e {src} && cat {dst}", word,
                {src: word + "\n"})


def _mkdir(g: _Names) -> Step:
    a, b, f, word = g.folder(), g.folder(), g.file("txt"), g.word()
    return Step("mkdir", f"create the folder {a}/{b} and in it a file {f} containing `{word}`",
                [f"mkdir -p {a}/{b}", f"echo {word} > {a}/{b}/{f}"], f"cat {a}/{b}/{f}", word)


def _delete(g: _Names) -> Step:
    gone, keep = g.file(), g.file()
    return Step("delete", f"delete {gone} but keep {keep}", ["ls", f"rm {gone}"],
                f"test ! -e {gone} && test -e {keep} && echo kept", "kept",
                {gone: g.word() + "\n", keep: g.word() + "\n"})


def _touch(g: _Names) -> Step:
    a, b = g.file(), g.file()
    return Step("touch", f"create two empty files, {a} and {b}", [f"touch {a} {b}"], f"ls -1 {a} {b}",
                _joined(sorted((a, b))))


def _chmod(g: _Names) -> Step:
    f, mode = g.file(), g.rng.choice(_MODES)
    start = "664" if mode == "644" else "644"
    return Step("chmod", f"set the permissions of {f} to mode {mode}", [f"chmod {mode} {f}"], f"stat -c %a {f}",
                mode, {f: {"content": g.word() + "\n", "mode": int(start, 8)}})


def _head_tail(g: _Names) -> Step:
    src, dst = g.file(), g.file()
    body, k = g.lines(g.rng.randint(4, 7)), g.rng.randint(1, 3)
    which = g.rng.choice(("head", "tail"))
    part, side = (body[:k], "first") if which == "head" else (body[-k:], "last")
    return Step("head_tail", f"write the {side} {k} lines of {src} into {dst}", [f"{which} -n {k} {src} > {dst}"],
                f"cat {dst}", _joined(part), {src: _text(body)})


def _sort(g: _Names) -> Step:
    src, dst = g.file(), g.file()
    body, reverse = [g.word() for _ in range(g.rng.randint(3, 6))], g.rng.random() < 0.5
    return Step("sort", f"write the lines of {src} sorted{' in reverse order' if reverse else ''} into {dst}",
                [f"cat {src}", f"sort{' -r' if reverse else ''} {src} > {dst}"], f"cat {dst}",
                _joined(sorted(body, reverse=reverse)), {src: _text(body)})


def _count(g: _Names) -> Step:
    src, dst, body = g.file(), g.file(), g.lines(g.rng.randint(2, 9))
    return Step("count", f"write the number of lines of {src} (just the number) into {dst}",
                [f"wc -l < {src} > {dst}"], f"cat {dst}", str(len(body)), {src: _text(body)})


def _grep(g: _Names) -> Step:
    src, dst, needle = g.file(), g.file(), g.word()
    body = g.lines(g.rng.randint(3, 6))
    body.insert(g.rng.randint(0, len(body)), f"{g.word()} {needle}")
    return Step("grep", f"write every line of {src} that contains `{needle}` into {dst}",
                [f"grep {needle} {src} > {dst}"], f"cat {dst}", _joined([x for x in body if needle in x]),
                {src: _text(body)})


def _sed(g: _Names) -> Step:
    f, old, new = g.file(), g.word(), g.word()
    while new == old:
        new = g.word()
    body = [f"{old} {g.word()}", f"{g.word()} {old}"]
    return Step("sed", f"in {f} replace every `{old}` with `{new}`, editing the file in place",
                [f"sed -i 's/{old}/{new}/g' {f}"], f"cat {f}", _joined([x.replace(old, new) for x in body]),
                {f: _text(body)})


def _env_var(g: _Names) -> Step:
    name, value, f = g.word().upper(), f"{g.word()} {g.word()}", g.file("txt")
    return Step("env_var", f"write the value of the environment variable {name} into {f}",
                [f'echo "${name}" > {f}'], f"cat {f}", value, env={name: value})


def _printf(g: _Names) -> Step:
    f, body = g.file(), [g.word() for _ in range(g.rng.randint(2, 4))]
    return Step("printf", f"create {f} with the lines {', '.join(body)} (one per line)",
                ["printf '" + "\\n".join(body) + "\\n' > " + f], f"cat {f}", _joined(body))


def _show_then_copy(g: _Names) -> Step:
    src, dst, body = g.file(), g.file(), g.lines(g.rng.randint(1, 4))
    return Step("show_then_copy", f"look at {src}, then append its contents to {dst}",
                [f"cat {src}", f"cat {src} >> {dst}"], f"cat {dst}", _joined(body), {src: _text(body)})


FAMILIES: tuple[Callable[[_Names], Step], ...] = (
    _write_line, _append_line, _copy, _move, _mkdir, _delete, _touch, _chmod, _head_tail, _sort, _count,
    _grep, _sed, _env_var, _printf, _show_then_copy,
)


def _all_of(checks: list[Callable[[Environment], CheckResult]]) -> Callable[[Environment], CheckResult]:
    """A checker that runs every step's check; the score is the share that pass."""

    def check(env: Environment) -> CheckResult:
        failed = [r.message for r in (c(env) for c in checks) if not r.ok]
        score = (len(checks) - len(failed)) / len(checks)
        return CheckResult(not failed, "; ".join(failed) or f"all {len(checks)} checks passed", score)

    return check


def drill_tasks(count: int = 120, seed: int = 0, max_steps: int = 5, suite: str = "drill",
                readback: bool = False) -> tuple[Task, ...]:
    """``count`` drills of 1..``max_steps`` steps each; ids are ``terminal/<suite>/NNN`` and the tags name
    the step families. ``readback``: each step ends by typing its own check command."""
    rng = random.Random(seed)
    tasks = []
    for i in range(count):
        g = _Names(rng)
        steps = [rng.choice(FAMILIES)(g) for _ in range(rng.randint(1, max_steps))]
        files = {k: v for s in steps for k, v in s.files.items()}
        env = {k: v for s in steps for k, v in s.env.items()}
        instruction = "; then ".join(s.instruction for s in steps)
        tasks.append(Task(
            id=f"terminal/{suite}/{i:03d}",
            domain="terminal",
            suite=suite,
            instruction=instruction[0].upper() + instruction[1:] + ".",
            solution=[keys(c) for s in steps for c in (*s.commands, *([s.check_cmd] if readback else []))],
            check=_all_of([output_is(s.check_cmd, s.expected) for s in steps]),
            setup=task_setup(files, env),
            max_turns=40,
            tags=(suite, *dict.fromkeys(s.family for s in steps)),
        ))
    return tuple(tasks)


DRILL: tuple[Task, ...] = drill_tasks()
READBACK: tuple[Task, ...] = drill_tasks(seed=1, suite="readback", readback=True)
