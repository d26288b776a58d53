"""The asciinema importer on a real recorded sandbox session (``fixtures/session.cast``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.terminal.codec import TerminalActionCodec
from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.importers import _keystrokes, load_cast

from awctl.errors import InputError
from awctl.trajectory import Trajectory

CAST = Path(__file__).parent / "fixtures" / "session.cast"
codec = TerminalActionCodec()

COMMANDS = [
    "echo hello from the sandbox", "pwd", "mkdir -p notes && cd notes", "echo 'first line' > todo.txt",
    "cat todo.txt", "ls -l | wc -l", "sleep 5",
]


def test_cast_with_input_events_splits_turns_at_enter_and_control_keys():
    traj = next(load_cast(CAST))
    Trajectory.model_validate(traj.model_dump())  # a valid trajectory
    assert (traj.metadata["rows"], traj.metadata["cols"]) == (24, 100)
    assert traj.metadata["initial_screen"] == "root@sandbox:/workspace#"
    actions = [codec.parse(t.action) for t in traj.turns]
    assert [a[0].keystrokes for a in actions] == [c + "\n" for c in COMMANDS] + ["C-c", "cd ..\n", "exit\n"]
    assert all(a[-1].duration > 0.3 for a in actions[:-1])  # the time until the next keystroke
    cat = traj.turns[4].observation.split("\n")
    assert cat[-3:] == ["root@sandbox:/workspace/notes# cat todo.txt", "first line", "root@sandbox:/workspace/notes#"]
    assert traj.turns[7].observation.split("\n")[-2:] == ["^C", "root@sandbox:/workspace/notes#"]
    assert traj.turns[-1].observation.endswith("root@sandbox:/workspace# exit\nexit")


def test_cast_without_input_events_splits_turns_at_prompts(tmp_path):
    lines = CAST.read_text().splitlines()
    kept = [lines[0]] + [line for line in lines[1:] if json.loads(line)[1] != "i"]
    out = tmp_path / "output-only.cast"
    out.write_text("\n".join(kept) + "\n")
    with_input = next(load_cast(CAST))
    traj = next(load_cast(out))
    actions = [codec.parse(t.action)[0].keystrokes for t in traj.turns]
    # `sleep 5` is interrupted by C-c: its prompt comes back only after ^C, so it is one turn here.
    assert actions == [c + "\n" for c in COMMANDS] + ["cd ..\n"]
    assert [t.observation for t in traj.turns[:6]] == [t.observation for t in with_input.turns[:6]]


def test_input_bytes_become_terminus_keystrokes():
    assert _keystrokes("ab\x1b[Ac\x03") == ["ab", "Up", "c", "C-c"]
    assert _keystrokes("ls\r") == ["ls\n"]
    assert _keystrokes("\x7f\x04\x1b") == ["BSpace", "C-d", "Escape"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"version": 1, "width": 80, "height": 24}\n', "not an asciicast v2 or v3 header"),
        ('{"version": 2, "width": 0, "height": 24}\n', "'width' must be a positive integer"),
        ('{"version": 2, "width": 80, "height": 24}\n[0.1, "o"]\n', ":2: an event must be"),
        ('{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "x"]\n{bad\n', ":3: invalid JSON"),
        ("", "empty file"),
    ],
)
def test_malformed_casts_name_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.cast"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        list(load_cast(path))
    assert str(path) in info.value.message


def test_importers_are_registered_for_casts_and_typescripts():
    importers = {i.name: i for i in TerminalDomain().importers()}
    assert importers["asciinema"].matches(Path("x/rec.cast")) and importers["asciinema"].matches(Path("a.v3.cast"))
    assert importers["script"].matches(Path("x/session.typescript"))
    assert not any(i.matches(Path("x/rec.jsonl")) for i in importers.values())
