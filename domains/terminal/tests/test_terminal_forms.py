"""Both screen forms and the recording formats are read and written back byte for byte (fast).

The samples are written here by hand in each form: a tmux ``capture-pane`` screen (trailing blank rows),
incremental output (the prompt's trailing space kept), Terminal-Bench's Terminus screens, asciicast v2
and v3, and a util-linux ``script`` typescript.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from awctl_domains.terminal.codec import TerminalObservationCodec, wrap_line
from awctl_domains.terminal.domain import TerminalDomain
from awctl_domains.terminal.importers import load_cast, load_typescript
from awctl_domains.terminal.recordings import parse_cast, parse_typescript, render_cast, render_typescript
from awctl_domains.terminal.session import stated_form
from hypothesis import given
from hypothesis import strategies as st

from awctl.errors import CodecError, InputError

CODEC = TerminalDomain().observation_codec

SCREEN = "root@web01:~/work# ls\ndata.csv  notes.txt\nroot@web01:~/work#\n\n\n\n"
INCREMENTAL = "cat notes.txt\nbuy milk  \ncall the plumber\nroot@web01:~/work# "
TERMINUS_NEW = "New Terminal Output:\n\nroot@3f2a:/app# ls\ncalc.py\nroot@3f2a:/app#\n\n\n"
TERMINUS_SCREEN = "Current Terminal Screen:\nroot@3f2a:/app#\n\n"
CRLF_WIDE = "echo 你好\r\n你好\r\n$ "


@pytest.mark.parametrize("text", [SCREEN, INCREMENTAL, TERMINUS_NEW, TERMINUS_SCREEN, CRLF_WIDE, "",
                                  "New Terminal Output:", "\n\n", "$ "])
def test_every_form_round_trips_byte_for_byte(text):
    parsed = CODEC.parse(text)
    assert CODEC.render(parsed) == text


def test_parsed_lines_are_what_checks_read_and_the_header_names_the_form():
    screen = CODEC.parse(SCREEN)
    assert screen.lines == ("root@web01:~/work# ls", "data.csv  notes.txt", "root@web01:~/work#")
    assert screen.form is None and CODEC.parse(INCREMENTAL).raw[-1] == "root@web01:~/work# "
    new, full = CODEC.parse(TERMINUS_NEW), CODEC.parse(TERMINUS_SCREEN)
    assert (new.header, new.form, full.form) == ("New Terminal Output:", "incremental", "screen")
    assert new.lines[0] == "" and new.lines[-1] == "root@3f2a:/app#"


@given(st.text(alphabet=st.characters(blacklist_characters="\t\x1b", blacklist_categories=("Cs",)), max_size=200))
def test_any_text_a_terminal_can_show_round_trips(text):
    assert CODEC.render(CODEC.parse(text)) == text


def test_geometry_applies_to_full_screens_only():
    small = TerminalObservationCodec(rows=3, cols=10)
    long_output = "\n".join(str(i) for i in range(10))
    with pytest.raises(CodecError, match="rows"):
        small.parse(long_output)
    small.parse("New Terminal Output:\n" + long_output)  # incremental output has no row limit
    with pytest.raises(CodecError, match="line 3: 11 columns"):
        small.parse("Current Terminal Screen:\nok\n" + "x" * 11)
    with pytest.raises(CodecError, match="tab or escape"):
        CODEC.parse("a\x1b[0mb")
    assert CODEC.parse("\n".join(["row"] * 500)).lines  # the domain's codec: each trajectory states its size


def test_wide_characters_wrap_by_cells():
    assert wrap_line("ab你好", 4) == ["ab你", "好"]
    assert wrap_line("x" * 10, 4) == ["xxxx", "xxxx", "xx"]


def test_agentworldbench_observation_bodies_keep_every_byte():
    domain = TerminalDomain()
    for text in (INCREMENTAL, TERMINUS_NEW, SCREEN.rstrip("\n")):
        assert domain.from_awb_observation(domain.to_awb_observation(text)) == text


CAST_V2 = "\n".join([
    '{"version": 2, "width": 80, "height": 24, "timestamp": 1796000000, "env": {"SHELL": "/bin/bash"}}',
    '[0.011, "o", "\\u001b[?2004hroot@web01:~/work# "]',
    '[0.52, "i", "ls\\r"]',
    '[0.521, "o", "ls\\r\\n\\u001b[?2004l\\r"]',
    '[0.53, "o", "data.csv  notes.txt\\r\\n\\u001b[?2004hroot@web01:~/work# "]',
    '[1.1, "m", "checkpoint"]',
    '[1.75,"i","pwd\\r"]',
    '[1.751, "o", "pwd\\r\\n\\u001b[?2004l\\r/root/work\\r\\n\\u001b[?2004hroot@web01:~/work# "]',
]) + "\n"
CAST_V3 = "\n".join([
    '{"version": 3, "term": {"cols": 100, "rows": 30, "type": "xterm-256color"}, "timestamp": 1796000000}',
    "# recorded with asciinema 3",
    '[0.011, "o", "bash-5.2# "]',
    '[0.5, "i", "echo hi\\r"]',
    '[0.001, "o", "echo hi\\r\\nhi\\r\\nbash-5.2# "]',
    '[0.8, "i", "pwd\\r"]',
    '[0.002, "o", "pwd\\r\\n/srv\\r\\nbash-5.2# "]',
    '[1.2, "x", "0"]',
])  # no final newline
TYPESCRIPT = (
    'Script started on 2026-12-01 10:00:00+00:00 [COMMAND="/bin/bash" TERM="xterm-256color" TTY="/dev/pts/1" '
    'COLUMNS="40" LINES="10"]\n'
    "\x1b[?2004h$ ls\r\n\x1b[?2004l\ra.txt  b.txt\r\n\x1b[?2004h$ echo a long line that wraps past forty columns\r\n"
    "\x1b[?2004l\ra long line that wraps past forty columns\r\n\x1b[?2004h$ cd /tmp\r\n\x1b[?2004l\r"
    "\x1b[?2004h$ exit\r\n\x1b[?2004l\rexit\r\n"
    '\nScript done on 2026-12-01 10:00:09+00:00 [COMMAND_EXIT_CODE="0"]\n'
)


@pytest.mark.parametrize("text", [CAST_V2, CAST_V3])
def test_casts_round_trip_and_edits_render_in_asciinema_layout(text):
    cast = parse_cast(text)
    assert render_cast(cast) == text
    t, code, _ = cast.events[-1]
    cast.events[-1] = (t, code, "edited")
    out = render_cast(cast).splitlines()
    assert json.loads(out[-1])[2] == "edited" and out[:-1] == text.splitlines()[:-1]


def test_v3_intervals_become_times():
    cast = parse_cast(CAST_V3)
    assert (cast.cols, cast.rows) == (100, 30)
    assert [round(t, 3) for t, _, _ in cast.events] == [0.011, 0.511, 0.512, 1.312, 1.314, 2.514]


@pytest.mark.parametrize(
    ("text", "message"),
    [('{"version": 3, "term": {"cols": 0, "rows": 24}}\n', "'term.cols' must be a positive integer"),
     ('{"version": 3}\n', "needs a 'term' object"),
     ('{"version": 2, "width": 80, "height": 24}\n[1, "o"]\n', ":2: an event must be")],
)
def test_bad_casts_name_the_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_cast(text, "x.cast")


def test_typescript_round_trips_and_reads_its_geometry():
    ts = parse_typescript(TYPESCRIPT)
    assert render_typescript(ts) == TYPESCRIPT
    assert (ts.cols, ts.rows, ts.fields["TERM"]) == (40, 10, "xterm-256color")
    assert ts.output.startswith("\x1b[?2004h$ ls") and ts.footer.startswith("\nScript done")
    bare = "no header here\r\n"
    assert render_typescript(parse_typescript(bare)) == bare


def test_typescript_imports_as_incremental_output(tmp_path: Path):
    path = tmp_path / "s.typescript"
    path.write_text(TYPESCRIPT)
    (traj,) = load_typescript(path)
    assert traj.metadata["screen_form"] == "incremental" and traj.metadata["initial_screen"] == "$"
    assert [json.loads(t.action)[0]["keystrokes"] for t in traj.turns] == [
        "ls\n", "echo a long line that wraps past forty columns\n", "cd /tmp\n", "exit\n"]
    assert traj.turns[0].observation == "ls\na.txt  b.txt\n$ "
    # The echo and the output wrap at COLUMNS=40, as the terminal showed them.
    assert traj.turns[1].observation.split("\n") == [
        "echo a long line that wraps past forty", " columns", "a long line that wraps past forty column", "s", "$ "]
    assert traj.turns[-1].observation == "exit\nexit"
    domain = TerminalDomain()
    from awctl.domain import run_verifiers

    results = [r for i in range(len(traj.turns)) for r in run_verifiers(domain, traj, i)]
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]


def test_v3_cast_imports_like_v2(tmp_path: Path):
    path = tmp_path / "r.v3.cast"
    path.write_text(CAST_V3)
    (traj,) = load_cast(path)
    assert (traj.metadata["rows"], traj.metadata["cols"]) == (30, 100)
    assert [json.loads(t.action)[0]["keystrokes"] for t in traj.turns] == ["echo hi\n", "pwd\n"]
    assert traj.turns[-1].observation == "bash-5.2# echo hi\nhi\nbash-5.2# pwd\n/srv\nbash-5.2#"


def test_unreadable_recordings_name_the_file_and_the_byte(tmp_path: Path):
    path = tmp_path / "bad.typescript"
    path.write_bytes(b"Script started on x\n\xff\xfe")
    with pytest.raises(InputError, match=r"bad.typescript: not UTF-8 at byte 20"):
        list(load_typescript(path))
    path = tmp_path / "nosize.typescript"
    path.write_text("$ ls\r\n")
    with pytest.raises(InputError, match="does not say the terminal's size"):
        list(load_typescript(path))


def test_full_screens_convert_to_incremental_output_that_verifies():
    from awctl_domains.terminal.forms import to_incremental
    from awctl_domains.terminal.prompts import INCREMENTAL_SIMULATION_INSTRUCTION

    from awctl.domain import run_verifiers
    from awctl.trajectory import Trajectory, Turn

    domain = TerminalDomain()
    screens = ["root@sandbox:/workspace# ls\na.txt\nroot@sandbox:/workspace#",
               "root@sandbox:/workspace# ls\na.txt\nroot@sandbox:/workspace# cd /tmp\nroot@sandbox:/tmp#",
               "root@sandbox:/workspace# ls\na.txt\nroot@sandbox:/workspace# cd /tmp\nroot@sandbox:/tmp# echo -n x\n"
               "xroot@sandbox:/tmp#"]
    actions = ["ls", "cd /tmp", "echo -n x"]
    traj = Trajectory(id="own", domain="terminal", system=domain.sections_for(None, "root@sandbox:/workspace#"),
                      turns=[Turn(action=json.dumps([{"keystrokes": a + "\n", "duration": 1.0}]), observation=s)
                             for a, s in zip(actions, screens, strict=True)])
    inc = to_incremental(traj)
    assert inc is not None and inc.metadata["screen_form"] == "incremental"
    assert [t.observation for t in inc.turns] == ["ls\na.txt\nroot@sandbox:/workspace# ", "cd /tmp\nroot@sandbox:/tmp# ",
                                                  "echo -n x\nxroot@sandbox:/tmp# "]
    assert inc.system.simulation_instruction == INCREMENTAL_SIMULATION_INSTRUCTION
    # Every part of the system prompt now states the incremental form, so it is known without the metadata.
    assert "visible screen" not in inc.system.action_space
    assert stated_form(inc.model_copy(update={"metadata": {}})) == "incremental"
    results = [r for i in range(3) for r in run_verifiers(domain, inc, i)]
    assert all(r.ok for r in results) and {r.check for r in results} >= {"command_echo", "prompt_cwd", "exact_output"}
    # A turn whose start scrolled off the screen cannot be cut: no guess.
    rows = "\n".join(str(i) for i in range(50)) + "\nroot@sandbox:/workspace#"
    lost = traj.model_copy(update={"turns": [Turn(action=traj.turns[0].action, observation=rows)]})
    assert to_incremental(lost) is None


def test_recorded_casts_convert_to_incremental_without_failures():
    from awctl_domains.terminal.forms import to_incremental

    from awctl.formats.verify import verify_trajectories
    from awctl.plugins import get_registry

    corpus = Path(__file__).resolve().parents[3] / "tests" / "foreign" / "terminal"
    converted = [to_incremental(t) for p in sorted(corpus.glob("*.cast")) for t in load_cast(p)]
    assert converted and all(c is not None for c in converted)
    report = verify_trajectories(converted, get_registry().domains)
    assert report.turns >= 40 and report.failed == 0, report.failures


def _screens_trajectory(screens: list[str], actions: list[str]):
    from awctl.trajectory import Trajectory, Turn

    return Trajectory(id="screens", domain="terminal",
                      system=TerminalDomain().sections_for(None, "root@sandbox:/workspace#"),
                      turns=[Turn(action=json.dumps([{"keystrokes": a + "\n", "duration": 1.0}]), observation=s)
                             for a, s in zip(actions, screens, strict=True)])


def test_the_history_stands_in_for_screens_the_latest_screen_still_shows():
    from awctl_domains.terminal.forms import SUPERSEDED_SCREEN, to_incremental

    from awctl.formats.view import View

    p = "root@sandbox:/workspace#"
    screens = [f"{p} ls\na.txt\n{p}\n\n", f"{p} ls\na.txt\n{p} cat a.txt\nhi\n{p}\n\n",
               f"{p} ls\na.txt\n{p} cat a.txt\nhi\n{p} pwd\n/workspace\n{p}", f"{p} date\nnow\n{p}", f"{p} true\n{p}"]
    traj = _screens_trajectory(screens, ["ls", "cat a.txt", "pwd", "clear; date", "true"])
    domain = TerminalDomain()
    stand_in = [[domain.history_observation(traj, j, t) is not None for j in range(t)] for t in range(5)]
    # Turn 2's screen still starts with screens 0 and 1; after `clear` nothing earlier is shown, so the
    # screens before it stay as recorded; the latest screen is always shown.
    assert stand_in == [[], [False], [True, False], [True, True, False], [False, False, False, False]]
    view = View(domain, "agentworldbench")
    bodies = [m["content"] for m in view.messages_at(traj, 3) if m["role"] == "assistant"]
    assert bodies[:2] == [f"**Environment Observation:**\n```\n{SUPERSEDED_SCREEN}\n```"] * 2
    assert screens[2] in bodies[2]
    # Incremental observations never repeat each other: all shown.
    inc = to_incremental(traj.model_copy(update={"turns": traj.turns[:3]}))
    assert inc is not None and all(domain.history_observation(inc, j, 2) is None for j in range(2))
    # Every training answer is the recorded screen; CPT documents (every observation trained) keep all.
    assert view.target_at(traj, 3).count("a.txt") == 0 and screens[3] in view.target_at(traj, 3)
    messages, _ = view.conversation(traj, "s", "all")
    assert all(s in "".join(m["content"] for m in messages) for s in screens)
