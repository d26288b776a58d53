"""Recording the terminal with other prompts than awctl's own (settings ``prompt``, ``user``, ``hostname``,
``workdir``): the system prompt states the shell behind the screens, the task checkers pass under every
style, the recordings verify, convert to incremental output and keep the copy baseline working, and the
default style records exactly what awctl recorded before styles existed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from awctl_domains.terminal.baseline import copy_baseline
from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.files import SHOWN_FILE_LINES, files_section, stated_files
from awctl_domains.terminal.forms import to_incremental
from awctl_domains.terminal.prompt_shapes import parse_prompt
from awctl_domains.terminal.prompts import (
    INCREMENTAL_SIMULATION_INSTRUCTION,
    SIMULATION_INSTRUCTION,
    incremental_for,
    incremental_simulation_instruction,
    prompt_phrase,
    simulation_instruction,
)
from awctl_domains.terminal.session import initial_facts, initial_screen
from awctl_domains.terminal.tasks import keys

from awctl.envs.sandbox.identity import host_bash_version
from awctl.formats.verify import verify_trajectories
from awctl.plugins import get_registry
from awctl.record import record
from awctl.trajectory import Trajectory, Turn, read_trajectories

ROOT = Path(__file__).resolve().parents[3]
HAS_SANDBOX = shutil.which("bwrap") is not None and shutil.which("tmux") is not None
needs_sandbox = pytest.mark.skipif(not HAS_SANDBOX, reason="needs bubblewrap and tmux")

STYLES = ("debian", "fedora", "bare")
# What the first screen shows under each style (default user alice on devbox, starting in ~/work).
FIRST_SCREEN = {
    "awctl": "root@sandbox:/workspace#",
    "debian": "alice@devbox:~/work$",
    "fedora": "[alice@devbox work]$",
    "bare": f"bash-{host_bash_version()}$",
}
# A sample of every suite (setup files, modes, environment variables, setup commands, several steps).
SAMPLE = ("terminal/basic/make_script", "terminal/basic/chmod_private", "terminal/basic/tar_extract",
          "terminal/basic/env_var", "terminal/drill/000", "terminal/drill/001", "terminal/readback/000",
          "terminal/readback/001")


def _domain(settings: dict | None = None) -> TerminalDomain:
    domain = TerminalDomain()
    domain.real_env(settings or {})  # makes no sandbox: the env starts one on reset
    return domain


def _screen(text: str) -> str:
    return re.search(r"The screen shows:\n```\n(.*?)\n```", text, re.S).group(1)


# ── the system prompt ────────────────────────────────────────────────────────────────────────────────


def test_recordings_made_before_styles_existed_get_the_same_system_prompt():
    domain = _domain()
    tasks = {t.id: t for s in domain.suites() for t in domain.tasks(s)}
    recorded = list(read_trajectories(ROOT / "tests" / "fixtures" / "eval" / "terminal_recorded.jsonl"))
    assert recorded
    for traj in recorded:
        task = tasks[traj.metadata["task"]]
        again = domain.sections_for(task, _screen(traj.system.initial_state))
        want = traj.system.sections()
        # Since then the line of the files' names shows their texts.
        names = re.search(r"Files in (\S+): [^\n]*", want["initial_state"])
        if names:
            want["initial_state"] = want["initial_state"].replace(
                names.group(0), files_section(names.group(1), task.setup["files"]))
        assert again.sections() == want, traj.id
    assert simulation_instruction() == SIMULATION_INSTRUCTION
    assert incremental_for(SIMULATION_INSTRUCTION) == INCREMENTAL_SIMULATION_INSTRUCTION


def test_the_initial_state_shows_small_files_as_cat_prints_them_and_only_names_large_ones():
    big = "".join(f"row {i}\n" for i in range(SHOWN_FILE_LINES + 1))
    files = {"notes.txt": "one\ntwo\n", "empty.log": "", "bare.txt": "no end", "big.csv": big,
             "run.sh": {"content": "echo hi\n", "mode": 0o755}, "fence.md": "```\nx\n```\n"}
    section = files_section("/w", files)
    assert section == ("Files in /w:\nbare.txt (no newline at the end):\n```\nno end\n```\n"
                       f"big.csv: {SHOWN_FILE_LINES + 1} lines, not shown\nempty.log: empty\n"
                       "fence.md: 3 lines, not shown\n"
                       "notes.txt:\n```\none\ntwo\n```\nrun.sh (mode 755):\n```\necho hi\n```")
    assert stated_files(section) == {"/w/bare.txt": "no end", "/w/empty.log": "", "/w/notes.txt": "one\ntwo\n",
                                     "/w/run.sh": "echo hi\n"}
    # In an episode's prompt the files come before the screen, which verifiers and the simulator still find.
    domain = _domain({"prompt": "debian"})
    task = next(t for t in domain.tasks("readback") if len(t.setup.get("files", {})) > 1)
    system = domain.sections_for(task)
    assert files_section("/home/alice/work", task.setup["files"]) + "\nThe screen shows:" in system.initial_state
    traj = Trajectory(id="t", domain="terminal", system=system, turns=[])
    assert domain.first_observation(system) == initial_screen(traj) == "alice@devbox:~/work$"


def test_a_styled_system_prompt_states_the_shell_and_verifiers_learn_its_home_and_directory():
    domain = _domain({"prompt": "debian", "user": "bob", "hostname": "ci-7"})
    task = next(t for t in domain.tasks("basic") if t.id.endswith("/count_lines"))
    system = domain.sections_for(task, "bob@ci-7:~/work$")
    assert "logged in as bob on the host ci-7. Working directory: /home/bob/work; home directory: /home/bob." \
        in system.initial_state
    assert "Files in /home/bob/work:\ndata.txt:\n```\na\nb\nc\nd\ne\n```" in system.initial_state
    assert "/workspace" not in system.render()
    assert "root@sandbox" not in system.render()
    assert "a new prompt `bob@ci-7:<dir>$ ` (`<dir>` the working directory, `~` for the home directory)" \
        in system.simulation_instruction
    assert system.action_space.endswith("including the prompt `bob@ci-7:<dir>$ `.")
    facts = initial_facts(Trajectory(id="t", domain="terminal", system=system, turns=[]))
    assert (facts.home, facts.cwd, facts.abs_cwd) == ("/home/bob", "~/work", "/home/bob/work")
    # An empty initial state stands for the shell's first screen.
    assert _screen(domain.sections_for(task).initial_state) == "bob@ci-7:~/work$"


def test_a_screen_the_last_env_does_not_explain_states_nothing_it_cannot_know():
    domain = _domain({"prompt": "fedora"})
    # awctl's own screen still gets awctl's own statement...
    assert "Working directory: /workspace (also $HOME)" in domain.sections_for(None, FIRST_SCREEN["awctl"]).initial_state
    # ...and a prompt no known shell shows gets no directories, with instructions naming that prompt.
    other = domain.sections_for(None, "carol@lab:~/src$")
    assert "directory" not in other.initial_state.split("\n")[0]
    assert "`carol@lab:<dir>$ `" in other.simulation_instruction


@pytest.mark.parametrize("line, phrase", [
    ("root@sandbox:/tmp#", "`root@sandbox:<cwd># ` with the absolute working directory"),
    ("alice@devbox:~/work$", "`alice@devbox:<dir>$ ` (`<dir>` the working directory, `~` for the home directory)"),
    ("[alice@devbox work]$", "`[alice@devbox <dir>]$ ` (`<dir>` the last part of the working directory, `~` at the "
                             "home directory)"),
    ("bash-5.2$", "`bash-5.2$ ` (the same in every directory)"),
])
def test_instructions_name_the_prompt_and_keep_it_in_incremental_form(line, phrase):
    prompt = parse_prompt(line)
    assert prompt is not None and prompt_phrase(prompt) == phrase
    assert incremental_for(simulation_instruction(phrase)) == incremental_simulation_instruction(phrase)
    assert incremental_for("Predict the screen.") is None


# ── the real sandbox ─────────────────────────────────────────────────────────────────────────────────


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_reference_solutions_pass_and_recordings_verify_under_each_style(style, tmp_path):
    registry = get_registry()
    domain = TerminalDomain()
    tasks = [t for t in (t for s in domain.suites() for t in domain.tasks(s)) if t.id in SAMPLE]
    assert len(tasks) == len(SAMPLE)
    out = tmp_path / f"{style}.jsonl"
    summary = record(domain, tasks, out, env_settings={"prompt": style})
    assert (summary.trajectories, summary.passed, summary.errors) == (len(SAMPLE), len(SAMPLE), [])
    trajs = list(read_trajectories(out))
    shape = parse_prompt(FIRST_SCREEN[style]).shape
    for traj in trajs:
        assert _screen(traj.system.initial_state) == FIRST_SCREEN[style]
        for turn in traj.turns:
            last = turn.observation.split("\n")[-1]
            # Every turn ends at the style's prompt (a slow command may still be running).
            assert parse_prompt(last) is None or parse_prompt(last).shape == shape, (traj.id, last)
    report = verify_trajectories(trajs, registry.domains)
    assert report.failed == 0, report.failures
    converted = [to_incremental(t) for t in trajs]
    assert all(c is not None for c in converted)
    assert all(c.system.simulation_instruction.startswith("Predict what the terminal adds") for c in converted)
    inc = verify_trajectories(converted, registry.domains)
    assert inc.failed == 0 and inc.turns == report.turns, inc.failures
    # Doing nothing still fails every checker under this prompt.
    with domain.real_env({"prompt": style}) as env:
        for task in tasks:
            env.reset(task)
            assert not task.check(env).ok, task.id


@needs_sandbox
@pytest.mark.parametrize("style", [*STYLES, "awctl"])
def test_the_copy_baseline_echoes_and_repeats_the_prompt_of_each_style(style):
    domain = TerminalDomain()
    with domain.real_env({"prompt": style}) as env:
        first = env.reset()
        actions = [keys(c) for c in ("mkdir sub", "cd sub", "touch x")]
        turns = [Turn(action=a, observation=env.step(a).observation) for a in actions]
    traj = Trajectory(id="t", domain="terminal", system=domain.sections_for(None, first), turns=turns)
    norm = domain.observation_codec.normalize
    guesses = [copy_baseline(traj, i) for i in range(3)]
    assert all(g is not None for g in guesses)
    # Right for commands that print nothing and keep the prompt; after `cd` only a prompt that shows no
    # directory stays the same.
    assert norm(guesses[0]) == turns[0].observation and norm(guesses[2]) == turns[2].observation
    assert (norm(guesses[1]) == turns[1].observation) == (style == "bare")


@needs_sandbox
def test_the_record_command_and_stage_take_the_prompt_style(tmp_path, monkeypatch):
    (tmp_path / "awctl.toml").write_text('output_root = "runs"\n[plugins]\ndirs = []\n')
    monkeypatch.setenv("AWCTL_CONFIG", str(tmp_path / "awctl.toml"))
    monkeypatch.chdir(tmp_path)

    def awctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "awctl.cli.main", *args], capture_output=True, text=True,
                              timeout=120)

    out = tmp_path / "x.jsonl"
    res = awctl("record", "-d", "terminal", "--suite", "readback", "--task-id", "terminal/readback/000",
                "--env-opt", "prompt=fedora", "--env-opt", "user=bob", "-o", str(out))
    assert res.returncode == 0, res.stderr
    traj = next(iter(read_trajectories(out)))
    assert _screen(traj.system.initial_state) == "[bob@devbox work]$" and traj.metadata["check"]["ok"]
    bad = awctl("record", "-d", "terminal", "--suite", "readback", "--task-id", "terminal/readback/000",
                "--env-opt", "prompt=zsh", "-o", str(tmp_path / "bad.jsonl"))
    assert bad.returncode != 0 and "unknown prompt style" in bad.stderr

    from awctl.recipe import load_recipe
    from awctl.runner import run_recipe

    recipe = tmp_path / "rec.toml"
    recipe.write_text('[recipe]\nname = "rec"\n\n[[stages]]\nkind = "record"\nname = "rec"\n'
                      'domains = ["terminal"]\nsuite = "readback"\ntasks = ["terminal/readback/001"]\n'
                      'env_options = { prompt = "bare" }\n')
    outcome = run_recipe(load_recipe(str(recipe)), console=None)
    assert outcome.status == "done", outcome.error
    staged = next(iter(read_trajectories(outcome.run_dir / "stages" / "rec" / "trajectories.jsonl")))
    assert _screen(staged.system.initial_state) == FIRST_SCREEN["bare"]
    assert json.loads(staged.turns[0].action)[0]["keystrokes"]
