"""Record real bash sessions for the terminal domain's foreign-data corpus — without ``awctl record``.

Every session is a real ``/bin/bash`` (Debian 12, bash 5.2) in a bubblewrap jail that looks like a small
Debian machine: the distribution's own ``/etc/bash.bashrc``, ``/etc/profile``, ``/etc/skel/.bashrc`` and
root's ``dot.bashrc``, users ``root`` and ``alice``, a hostname per session, no network. This script types
the keystrokes into a private tmux server and reads the terminal back, then writes each session in the
form a real tool would have written it:

* ``*.awb.jsonl`` — AgentWorldBench rows (``task``, ``id``, ``prompt``, ``response``, ``current_prompt``,
  ``system_str``, ``turn_idx``, ``total_turns``), observations as

  - full screens: ``tmux capture-pane -p`` of the visible pane (trailing blank rows dropped);
  - incremental output: the text the pane gained since the previous observation, cut from
    ``capture-pane -S - -E -`` at the cursor (echo, output, new prompt with its trailing space);
  - Terminus screens: Terminal-Bench's ``get_incremental_output`` rule (``New Terminal Output:`` + the
    buffer from the previous buffer's last line on, or ``Current Terminal Screen:`` + the visible pane);

* ``*.cast`` — asciicast v2 written by ``asciinema rec --stdin`` (asciinema 2.2, Debian) around the jail;
  ``*.v3.cast`` — such a recording rewritten in the asciicast v3 layout (``term`` header, intervals between
  events), since asciinema 3 is not packaged for Debian 12;
* ``*.typescript`` — written by util-linux ``script`` around the jail.

Run from the repository root (as root: ``su`` inside the jail needs real setuid/setgid)::

    .venv/bin/python tests/foreign/terminal/record.py            # everything (a few minutes)
    .venv/bin/python tests/foreign/terminal/record.py --only su  # sessions whose name contains "su"

Needs ``bwrap``, ``tmux``, ``asciinema``, ``script``, ``python3`` and ``sqlite3`` on PATH. CI does not run it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEY_NAME = re.compile(r"^(?:C-[a-z\\\]]|Enter|Escape|Tab|BSpace|Up|Down|Left|Right)$")


# ── the jail ─────────────────────────────────────────────────────────────────────────────────────────

FILES = {
    "notes.txt": "buy milk\ncall the plumber\nfix the build\n",
    "data.csv": "id,name,score\n1,ada,91\n2,brian,78\n3,chen,85\n4,dora,62\n",
    "names.txt": "zoe\nadam\nzoe\nmia\nadam\nzoe\n",
    "src/main.py": 'import sys\n\n\ndef main():\n    print("hello from main")\n    return 0\n\n\n'
                   'if __name__ == "__main__":\n    sys.exit(main())\n',
    "src/util.py": "def double(x):\n    return 2 * x\n",
    "logs/app.log": "2026-11-30 09:00:01 INFO start\n2026-11-30 09:00:02 error: disk slow\n"
                    "2026-11-30 09:00:03 INFO ready\n2026-11-30 09:05:44 error: timeout\n",
}


class Jail:
    """A folder tree that bwrap turns into a small Debian machine (read-only /usr and /etc)."""

    def __init__(self, root: Path, host: str) -> None:
        self.root, self.host = root, host
        etc = root / "etc"
        etc.mkdir(parents=True)
        for name in ("bash.bashrc", "profile", "login.defs", "nsswitch.conf", "ld.so.cache", "localtime",
                     "inputrc", "environment", "shells", "pam.conf"):
            src = Path("/etc", name)
            if src.exists():
                shutil.copy2(src, etc / name, follow_symlinks=True)
        for name in ("skel", "pam.d", "security", "alternatives", "terminfo", "default", "profile.d"):
            if Path("/etc", name).is_dir():
                shutil.copytree(Path("/etc", name), etc / name, symlinks=True)
        (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice,,,:/home/alice:"
                                    "/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        (etc / "group").write_text("root:x:0:\nalice:x:1000:\nnogroup:x:65534:\n")
        (etc / "shadow").write_text("root:*:19000:0:99999:7:::\nalice:*:19000:0:99999:7:::\n")
        os.chmod(etc / "shadow", 0o640)
        (etc / "hostname").write_text(host + "\n")
        (etc / "hosts").write_text(f"127.0.0.1 localhost {host}\n")
        home = root / "root"
        home.mkdir()
        shutil.copy2("/usr/share/base-files/dot.bashrc", home / ".bashrc")  # Debian's root .bashrc
        shutil.copy2("/usr/share/base-files/dot.profile", home / ".profile")
        alice = root / "home" / "alice"
        shutil.copytree("/etc/skel", alice)
        for base in (home / "work", alice / "work"):
            for rel, text in FILES.items():
                path = base / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        for path in [alice, *alice.rglob("*")]:
            os.chown(path, 1000, 1000)

    def argv(self, shell: list[str], cwd: str = "/root/work") -> list[str]:
        """bwrap around ``shell``: no network, private PID/IPC/UTS namespaces, only setuid/setgid and
        file-ownership capabilities (for ``su``), read-only system, writable /root, /home and /tmp."""
        argv = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--hostname", self.host, "--clearenv",
                "--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN",
                    "CAP_AUDIT_WRITE"):
            argv += ["--cap-add", cap]
        argv += ["--ro-bind", "/usr", "/usr"]
        for top in ("bin", "sbin", "lib", "lib64"):
            host = Path("/") / top
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), f"/{top}"]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), f"/{top}"]
        argv += ["--ro-bind", str(self.root / "etc"), "/etc", "--bind", str(self.root / "root"), "/root",
                 "--bind", str(self.root / "home"), "/home", "--proc", "/proc", "--dev", "/dev",
                 "--tmpfs", "/tmp"]
        env = {"HOME": "/root", "TERM": "tmux-256color", "LANG": "C.UTF-8", "USER": "root",
               "LOGNAME": "root", "SHELL": "/bin/bash",
               "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        for key, value in env.items():
            argv += ["--setenv", key, value]
        return [*argv, "--chdir", cwd, *shell]


# ── the terminal ─────────────────────────────────────────────────────────────────────────────────────


class Pane:
    """One tmux pane on a private server; keystrokes in, screens out."""

    def __init__(self, tmp: Path, cols: int, rows: int, argv: list[str], env: dict[str, str] | None = None):
        self.sock = tmp / "tmux.sock"
        conf = tmp / "tmux.conf"
        conf.write_text("set -g status off\nset -g escape-time 0\nset -g history-limit 50000\n")
        self.cols, self.rows = cols, rows
        self._last = ""
        full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color",
                    "HOME": str(tmp), **(env or {})}
        subprocess.run(["tmux", "-S", str(self.sock), "-f", str(conf), "new-session", "-d", "-s", "rec",
                        "-x", str(cols), "-y", str(rows), "--", *argv], check=True, env=full_env, timeout=10)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", str(self.sock), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout

    def send(self, keys: str) -> None:
        if KEY_NAME.match(keys):
            self.tmux("send-keys", "-t", "rec", keys)
        elif keys:
            self.tmux("send-keys", "-t", "rec", "-l", "--", keys)

    def visible(self) -> str:
        """``capture-pane -p`` exactly as tmux prints it (every row, newline-terminated)."""
        with contextlib.suppress(subprocess.CalledProcessError):  # the pane's program ended (exit)
            self._last = self.tmux("capture-pane", "-p", "-t", "rec")
        return self._last

    def everything(self) -> str:
        return self.tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "rec")

    def cursor(self) -> tuple[int, int]:
        """(absolute row counting history, column)."""
        x, y, hist = self.tmux("display", "-p", "-t", "rec", "#{cursor_x} #{cursor_y} #{history_size}").split()
        return int(hist) + int(y), int(x)

    def settle(self, at_least: float, at_most: float, quiet: float = 0.3) -> None:
        """Wait until the screen stopped changing for ``quiet`` seconds (between the two bounds)."""
        start = time.monotonic()
        last, changed = self.visible(), time.monotonic()
        while True:
            time.sleep(0.05)
            now = time.monotonic()
            screen = self.visible()
            if screen != last:
                last, changed = screen, now
            if now - start >= at_most or now - start >= at_least and now - changed >= quiet:
                return

    def alive(self) -> bool:
        try:
            return self.tmux("display", "-p", "-t", "rec", "#{pane_dead}").strip() == "0"
        except subprocess.CalledProcessError:
            return False

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.sock), "kill-server"], capture_output=True, check=False)


def strip_screen(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def cut_cells(text: str, start: int, end: int | None = None) -> str:
    """The characters of ``text`` between display cells ``start`` and ``end`` (padded with spaces)."""
    out, used = [], 0
    for ch in text:
        width = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if end is not None and used + width > end:
            break
        if used >= start:
            out.append(ch)
        used += width
    if end is not None and used < end:
        out.append(" " * (end - max(used, start)))
    return "".join(out)


def incremental(before: list[str], after: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """What the pane gained between cursor ``start`` and cursor ``end`` (rows of ``capture -S - -E -``)."""
    (r0, c0), (r1, c1) = start, end
    rows = after + [""] * (r1 + 1 - len(after))
    if r1 == r0:
        return cut_cells(rows[r0], c0, c1)
    parts = [cut_cells(rows[r0], c0).rstrip()] + [row.rstrip() for row in rows[r0 + 1: r1]]
    parts.append(cut_cells(rows[r1], 0, c1))
    return "\n".join(parts)


def terminus(previous: str | None, current: str, visible: str) -> str:
    """Terminal-Bench's Terminus observation for a buffer change (its ``get_incremental_output`` rule)."""
    if previous is None:
        return "Current Terminal Screen:\n" + visible
    old = previous.strip()
    if old in current:
        at = current.index(old)
        if "\n" in old:
            at = old.rfind("\n")
        new = current[at:]
        if new.strip():
            return "New Terminal Output:\n" + new
    return "Current Terminal Screen:\n" + visible


# ── sessions ─────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Step:
    """One action: keystroke items ``(keys, duration)``."""

    items: list[tuple[str, float]]

    def action(self, style: str) -> str:
        if style == "terminus1":
            return json.dumps([{"keystrokes": k, "is_blocking": k.endswith("\n"), "timeout_sec": d}
                               for k, d in self.items], indent=2)
        return json.dumps([{"keystrokes": k, "duration": d} for k, d in self.items], indent=2)


def cmd(line: str, duration: float = 1.0) -> Step:
    return Step([(line + "\n", duration)])


def keys(*items: tuple[str, float]) -> Step:
    return Step(list(items))


@dataclass
class Session:
    name: str
    kind: str  # awb-screen | awb-incremental | awb-terminus | cast | typescript
    shell: list[str]
    steps: list[Step]
    task: str
    cols: int = 120
    rows: int = 30
    host: str = "devbox"
    cwd: str = "/root/work"
    states_home: str | None = None
    states_form: bool = True
    action_style: str = "terminus2"
    extra_state: str = ""
    setup: list[str] = field(default_factory=list)


def pool_steps(rng: random.Random, n: int) -> list[Step]:
    """``n`` everyday commands, alternating between looking at files and moving/writing/echoing (a command
    that fails where it runs, e.g. a file missing after a ``cd``, is real output too)."""
    looks = [cmd("ls"), cmd("ls -l src"), cmd("cat notes.txt"), cmd("head -n 3 data.csv"),
             cmd("tail -n 2 logs/app.log"), cmd("wc -l data.csv"), cmd("grep -n error logs/app.log"),
             cmd("sort names.txt | uniq -c"), cmd("cut -d, -f2 data.csv"),
             cmd("awk -F, 'NR>1 {s+=$3} END {print s}' data.csv"), cmd("sed -n 2p notes.txt"),
             cmd("tr a-z A-Z < notes.txt"), cmd("find . -name '*.py'"), cmd("python3 src/main.py"),
             cmd("python3 -c 'print(2**10)'"), cmd("stat -c %s notes.txt"), cmd("ls -a"),
             cmd("grep -c zoe names.txt"), cmd("nl src/util.py"), cmd("du -s logs | cut -f2"),
             cmd("echo $((6*7))"), cmd("seq 1 5"), cmd("printf '%s\\n' one two three"),
             cmd("basename /var/log/syslog.1"), cmd("date +%Y"), cmd("whoami"), cmd("uname -s"),
             cmd("cat missing.txt"), cmd("nosuchcommand"), cmd("false; echo $?"), cmd("test -d src && echo yes"),
             cmd("ls -d */"), cmd("md5sum notes.txt | cut -c1-8"), cmd("rev <<< stressed"), cmd("seq 1 40"),
             cmd("ls -la /usr/bin | head -n 30 | cut -c1-30"), cmd("echo héllo wörld 你好"),
             cmd("echo the quick brown fox jumps over the lazy dog and keeps running far past the edge of a "
                 "narrow terminal window")]
    moves = [cmd("pwd"), cmd("echo hello world"), cmd("echo 'two  spaces  kept'"), cmd("echo -n no-newline"),
             cmd("cd src"), cmd("cd .."), cmd("cd /tmp"), cmd("cd ~/work"), cmd("cd logs"), cmd("cd"),
             cmd("mkdir -p build/out && cd build"), cmd("cd /nonexistent"), cmd("echo 'x = 1' > conf.ini"),
             cmd("cat conf.ini"), cmd("printf 'a\\nb\\n' > ab.txt"), cmd("echo c >> ab.txt"), cmd("cat ab.txt"),
             cmd("touch a.txt b.txt && ls"), cmd("cp notes.txt copy.txt && wc -c copy.txt"), cmd("echo $HOME")]
    steps = [rng.choice(moves if i % 2 else looks) for i in range(n)]
    # Text typed without Enter, finished by the next action; and a pwd after the moves.
    at = rng.randrange(1, n)
    head, tail = rng.choice([("echo part", " two"), ("ls -", "1"), ("cat no", "tes.txt"), ("wc -l da", "ta.csv")])
    steps[at:at] = [keys((head, 0.3)), cmd(tail)]
    steps.insert(rng.randrange(at + 2, len(steps) + 1), cmd("pwd"))
    steps.insert(rng.randrange(1, len(steps) + 1), cmd("pwd"))
    return steps


def sessions(seed: int = 20261201) -> list[Session]:
    rng = random.Random(seed)
    out: list[Session] = []
    hosts = ["devbox", "web01", "build-7", "lab", "ci-runner", "db2", "node3", "gateway"]
    geometries = [(160, 40), (120, 30), (100, 30), (80, 24)]

    # (a) Debian's default prompt, root in ~/work: full screens.
    for i in range(12):
        cols, rows = geometries[i % 4]
        out.append(Session(f"debian-root-{i:02d}", "awb-screen", ["/bin/bash"], pool_steps(rng, 9),
                           "Look around the project in ~/work and report what the data files contain.",
                           cols, rows, hosts[i % len(hosts)], states_home="/root" if i % 3 == 0 else None,
                           states_form=i % 2 == 0,
                           extra_state="The working directory is /root/work." if i % 3 != 2 else ""))
    # Debian's skel prompt as an unprivileged user (alice@host:~/work$).
    for i in range(3):
        cols, rows = geometries[(i + 1) % 4]
        out.append(Session(f"debian-alice-{i:02d}", "awb-screen", ["/bin/su", "-", "alice"],
                           [cmd("cd work")] + pool_steps(rng, 8), "Summarise the files in your work folder.",
                           cols, rows, hosts[(i + 3) % len(hosts)], cwd="/root",
                           states_home="/home/alice" if i == 0 else None))
    # (b) bash --norc: bash-5.2# and no directory in the prompt.
    for i in range(8):
        cols, rows = geometries[(i + 2) % 4]
        out.append(Session(f"norc-{i:02d}", "awb-screen", ["/bin/bash", "--norc"], pool_steps(rng, 9),
                           "Check the files of the project and their sizes.", cols, rows, hosts[(i + 1) % len(hosts)],
                           extra_state="The working directory is /root/work." if i % 4 != 3 else "",
                           states_form=i % 3 != 0))
    # dash as /bin/sh: a bare "# " prompt.
    for i in range(2):
        out.append(Session(f"dash-{i:02d}", "awb-screen", ["/bin/sh"], pool_steps(rng, 7)[:7],
                           "Inspect the project with a plain POSIX shell.", 100, 30, hosts[i + 4],
                           extra_state="The working directory is /root/work."))
    # (c) su to another user and back, cd around, Python and sqlite REPLs.
    su_scripts = [
        [cmd("whoami"), cmd("su alice"), cmd("whoami"), cmd("cd ~"), cmd("pwd"), cmd("ls work"), cmd("exit"),
         cmd("pwd"), cmd("cd /tmp"), cmd("pwd"), cmd("cd -"), cmd("ls")],
        [cmd("su - alice"), cmd("pwd"), cmd("cd work/src"), cmd("ls"), cmd("cd ../logs"), cmd("pwd"),
         cmd("grep error app.log"), cmd("exit"), cmd("cd src && ls"), cmd("cd .."), cmd("pwd")],
        [cmd("python3"), cmd("1 + 2"), cmd("import os"), cmd("os.getcwd()"), cmd("print('hi ' * 3)"),
         cmd("for i in range(3):"), cmd("    print(i)"), cmd(""), cmd("exit()"), cmd("pwd"), cmd("echo back")],
        [cmd("cd src"), cmd("python3 -q"), cmd("from util import double"), cmd("double(21)"),
         cmd("undefined_name"), keys(("C-d", 0.5)), cmd("cd ../logs"), cmd("wc -l app.log"), cmd("cd ~"), cmd("pwd")],
        [cmd("sqlite3 /tmp/shop.db"), cmd("create table t(id integer, name text);"),
         cmd("insert into t values (1, 'pen'), (2, 'ink');"), cmd("select * from t;"),
         cmd("select count(*) from t;"), cmd(".quit"), cmd("ls -l /tmp/shop.db | cut -c1-10"), cmd("echo done")],
        [cmd("su alice -c whoami"), cmd("cd /"), cmd("ls -d home"), cmd("cd home/alice"), cmd("pwd"),
         cmd("cd work"), cmd("ls"), cmd("cd ~/work/src"), cmd("pwd"), cmd("cd"), cmd("pwd")],
        [cmd("python3"), cmd("x = [3, 1, 2]"), cmd("sorted(x)"), cmd("len(x)"), cmd("1/0"), cmd("quit()"),
         cmd("echo $?"), cmd("su alice"), cmd("python3 -c 'import getpass; print(getpass.getuser())'"), cmd("exit"),
         cmd("whoami")],
        [cmd("cd logs"), cmd("sleep 5", 0.6), keys(("C-c", 0.5)), cmd("ls"), keys(("echo partial", 0.3)),
         cmd(" and the rest"), cmd("cd ../src"), cmd("python3 main.py"), cmd("cd /usr/share"), cmd("cd ~/work")],
    ]
    for i, steps in enumerate(su_scripts):
        cols, rows = geometries[i % 4]
        out.append(Session(f"su-repl-{i:02d}", "awb-screen", ["/bin/bash"], steps,
                           "Work as root and as alice, and use the interpreters.", cols, rows, hosts[i % len(hosts)],
                           states_home="/root" if i % 2 else None,
                           extra_state="The working directory is /root/work." if i % 3 == 0 else ""))
    # (d) incremental output (echo, output, new prompt), Debian prompt and bash --norc.
    for i in range(8):
        cols, rows = geometries[(i + 1) % 4]
        norc = i % 3 == 2
        steps = pool_steps(rng, 10)
        if i == 1:
            steps = su_scripts[0][:7] + steps[:4]
        if i == 4:
            steps = su_scripts[2]
        out.append(Session(f"incremental-{i:02d}", "awb-incremental", ["/bin/bash", "--norc"] if norc else ["/bin/bash"],
                           steps, "Explore the project; each observation is only the new output.", cols, rows,
                           hosts[(i + 2) % len(hosts)], states_home="/root" if i % 2 == 0 else None,
                           states_form=i % 2 == 1,
                           extra_state="The working directory is /root/work." if norc or i % 2 else ""))
    # Terminal-Bench Terminus screens (160x40, as Terminal-Bench runs tmux).
    for i in range(4):
        out.append(Session(f"terminus-{i:02d}", "awb-terminus", ["/bin/bash"], pool_steps(rng, 8),
                           "Solve the task in the terminal.", 160, 40, hosts[(i + 5) % len(hosts)],
                           action_style="terminus1" if i % 2 else "terminus2",
                           extra_state="The working directory is /root/work." if i % 2 else ""))
    # asciinema casts (screen form once imported) and script typescripts (incremental once imported).
    for i in range(4):
        cols, rows = geometries[(i + 3) % 4]
        out.append(Session(f"asciinema-{i:02d}", "cast", ["/bin/bash"] if i != 2 else ["/bin/bash", "--norc"],
                           pool_steps(rng, 8) + [cmd("exit")], "", cols, rows, hosts[i]))
    for i in range(4):
        cols, rows = geometries[i % 4]
        out.append(Session(f"script-{i:02d}", "typescript", ["/bin/bash"] if i != 1 else ["/bin/bash", "--norc"],
                           pool_steps(rng, 8) + [cmd("exit")], "", cols, rows, hosts[i + 2]))
    return out


# ── running a session ────────────────────────────────────────────────────────────────────────────────


@dataclass
class Recorded:
    initial: dict[str, str]
    turns: list[tuple[Step, dict[str, str]]]


def drive(pane: Pane, steps: list[Step]) -> Recorded:
    """Type every step; after each, read the screen in all three observation forms."""
    pane.settle(0.8, 5.0)
    visible = pane.visible()
    everything = pane.everything()
    cursor = pane.cursor()
    previous_buffer = everything
    initial = {"screen": strip_screen(visible), "incremental": incremental([], everything.split("\n"), (0, 0), cursor),
               "terminus": terminus(None, everything, visible)}
    turns = []
    for step in steps:
        for keys_, duration in step.items:
            pane.send(keys_)
            if keys_.endswith("\n") or keys_ in ("C-c", "C-d", "Enter"):
                pane.settle(0.15, max(duration, 0.3))
            else:
                pane.settle(0.1, max(duration, 0.2), quiet=0.15)
        if not pane.alive():
            visible_now, everything_now, now = visible, everything, cursor
        else:
            visible_now, everything_now, now = pane.visible(), pane.everything(), pane.cursor()
        rows = everything_now.split("\n")
        obs = {"screen": strip_screen(visible_now), "incremental": incremental([], rows, cursor, now),
               "terminus": terminus(previous_buffer, everything_now, visible_now)}
        turns.append((step, obs))
        visible, everything, cursor, previous_buffer = visible_now, everything_now, now, everything_now
    return Recorded(initial, turns)


def system_prompt(s: Session, first_screen: str, form: str) -> str:
    state = [f"A bash shell in a {s.cols}x{s.rows} terminal on the Debian 12 host `{s.host}` (no network)."]
    if s.states_home:
        state.append(f"The user's home directory is {s.states_home}.")
    if s.extra_state:
        state.append(s.extra_state)
    state.append(f"The screen shows:\n```\n{first_screen}\n```")
    how = {"screen": "Answer with the whole visible screen after the keystrokes: history above, the echoed "
                     "keys, the output and the new prompt; when output scrolls, show the last rows.",
           "incremental": "Answer with only the new output since the previous observation: the echo of the "
                          "typed keys, what the commands printed, and the new prompt.",
           "terminus": "Answer as Terminal-Bench's harness reports the terminal: `New Terminal Output:` and "
                       "the buffer from the last prompt line on, or `Current Terminal Screen:` and the pane."}
    sim = ("Predict what the terminal shows after the agent's keystrokes. Typed text is echoed after the prompt; "
           "Enter runs the command. Keep files, users, variables and directories consistent with the history. ")
    if s.states_form:
        sim += how[form]
    return (f"You are a world model of a Linux terminal used by an AI agent.\n\n## Task Description\n{s.task}\n\n"
            "## Action Space\nEach action is a JSON list of keystroke items {\"keystrokes\": text, \"duration\": "
            "seconds}; a trailing \\n presses Enter, and a value such as \"C-c\" presses that key.\n\n"
            f"## Initial State\n{chr(10).join(state)}\n\n## Simulation Instruction\n{sim}")


def awb_rows(traj_id: str, system: str, task: str, turns: list[tuple[str, str]]) -> Iterator[dict[str, object]]:
    prompts = []
    for i, (action, _) in enumerate(turns):
        before = f"**Task Instruction:**\n{task}\n\n" if i == 0 else ""
        prompts.append(f"### Turn {i + 1}\n{before}**Action:**\n```json\n{action}\n```")
    responses = [f"**Environment Observation:**\n```\n{obs}\n```" for _, obs in turns]
    for n in range(1, len(turns) + 1):
        yield {"task": "terminal", "id": f"{traj_id}_turn{n}", "prompt": prompts[:n], "response": responses[:n],
               "current_prompt": prompts[n - 1], "system_str": system, "turn_idx": n, "total_turns": len(turns)}


def record_awb(s: Session, tmp: Path) -> list[dict[str, object]]:
    jail = Jail(tmp / "jail", s.host)
    pane = Pane(tmp, s.cols, s.rows, jail.argv(s.shell, s.cwd))
    try:
        rec = drive(pane, s.steps)
    finally:
        pane.close()
    form = {"awb-screen": "screen", "awb-incremental": "incremental", "awb-terminus": "terminus"}[s.kind]
    first = rec.initial["screen"] if form != "terminus" else strip_screen(rec.initial["terminus"])
    system = system_prompt(s, first, form)
    turns = [(step.action(s.action_style), obs[form]) for step, obs in rec.turns]
    return list(awb_rows(s.name, system, s.task, turns))


def record_wrapped(s: Session, tmp: Path, out: Path) -> None:
    """Run the jail under asciinema or script inside the pane; the tool writes ``out``."""
    jail = Jail(tmp / "jail", s.host)
    inner = shlex.join(jail.argv(s.shell, s.cwd))
    if s.kind == "cast":
        argv = ["asciinema", "rec", "--stdin", "--quiet", "--overwrite", "-c", inner, str(out)]
    else:
        argv = ["script", "--quiet", "--flush", "--command", inner, str(out)]
    env = {"ASCIINEMA_CONFIG_HOME": str(tmp / "asciinema"), "SHELL": "/bin/bash", "TERM": "tmux-256color"}
    pane = Pane(tmp, s.cols, s.rows, argv, env)
    try:
        drive(pane, s.steps)
        deadline = time.monotonic() + 5
        while pane.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        pane.close()


def to_v3(cast_v2: Path, out: Path) -> None:
    """The same recording in the asciicast v3 layout: ``term`` header, intervals between events."""
    lines = cast_v2.read_text().splitlines()
    header = json.loads(lines[0])
    v3 = {"version": 3, "term": {"cols": header["width"], "rows": header["height"],
                                 "type": header.get("env", {}).get("TERM", "xterm-256color")},
          "timestamp": header.get("timestamp"), "env": {"SHELL": header.get("env", {}).get("SHELL", "/bin/bash")}}
    body, last = [json.dumps(v3)], 0.0
    for line in lines[1:]:
        t, code, data = json.loads(line)
        body.append(json.dumps([round(t - last, 6), code, data]))
        last = t
    out.write_text("\n".join(body) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="record only sessions whose name contains this")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--seed", type=int, default=20261201, help="draws the everyday commands of each session")
    args = parser.parse_args()
    missing = [p for p in ("bwrap", "tmux", "asciinema", "script", "sqlite3") if shutil.which(p) is None]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: apt-get install -y bubblewrap tmux asciinema sqlite3")
    groups: dict[str, list[dict[str, object]]] = {}
    for s in sessions(args.seed):
        if args.only not in s.name:
            continue
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="rec-") as tmp:
            if s.kind.startswith("awb"):
                group = s.name.rsplit("-", 1)[0]
                groups.setdefault(group, []).extend(record_awb(s, Path(tmp)))
            else:
                suffix = ".cast" if s.kind == "cast" else ".typescript"
                path = args.out / f"{s.name}{suffix}"
                record_wrapped(s, Path(tmp), path)
                if s.kind == "cast" and s.name.endswith(("02", "03")):
                    # Two of the recordings are kept in the asciicast v3 layout only.
                    to_v3(path, args.out / f"{s.name}.v3.cast")
                    path.unlink()
        print(f"{s.name}: {len(s.steps)} steps in {time.monotonic() - t0:.1f}s", flush=True)
    for group, rows in groups.items():
        path = args.out / f"{group}.awb.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path} "
              f"({len(rows)} rows)")


if __name__ == "__main__":
    main()
