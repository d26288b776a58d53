"""Trajectories awctl did not record: SWE-agent (classic interface, both .traj layouts), OpenHands, and
AgentWorldBench rows from ``tests/foreign/swe/`` read, verify with zero failures and catch planted faults."""

import json
import random
from pathlib import Path

import pytest
from awctl_domains.swe.bashout import convention, parse_result
from awctl_domains.swe.classic import ClassicCall, parse_command, parse_windows, window_problems
from awctl_domains.swe.codec import BashCall, EditorCall, SweActionCodec
from awctl_domains.swe.domain import SweDomain
from awctl_domains.swe.importers import load_sweagent_traj
from awctl_domains.swe.replay import classify

from awctl.conformance.faults import plant_faults
from awctl.domain import TurnContext, run_verifiers
from awctl.formats.agentworldbench import read_rows, rows_to_trajectories, write_rows
from awctl.formats.verify import verify_trajectories
from awctl.trajectory import SystemPrompt, Trajectory, Turn

CORPUS = Path(__file__).parents[3] / "tests" / "foreign" / "swe"
DOMAIN = SweDomain()
DOMAINS = {"swe": DOMAIN}
CLASSIC_VERIFIERS = {"swe.window_view", "swe.session_state", "swe.search_results"}
codec = SweActionCodec()


def corpus() -> list[Trajectory]:
    out: list[Trajectory] = []
    for path in sorted(CORPUS.glob("*.traj")):
        out += load_sweagent_traj(path)
    for path in sorted(CORPUS.glob("*.awb.jsonl")):
        out += rows_to_trajectories([json.loads(line) for line in path.read_text().splitlines()], DOMAINS)
    return out


@pytest.fixture(scope="module")
def trajectories() -> list[Trajectory]:
    return corpus()


def test_the_corpus_verifies_with_zero_failed_turns_and_every_verifier_checks_something(trajectories):
    assert len(trajectories) == 7
    report = verify_trajectories(trajectories, DOMAINS)
    assert report.turns > 80
    assert report.failed == 0, report.failures
    checked = {name for name, counts in report.summary.items() if counts["passed"]}
    assert {v.name for v in DOMAIN.verifiers()} <= checked


def test_agentworldbench_rows_round_trip_byte_for_byte(tmp_path):
    for path in sorted(CORPUS.glob("*.awb.jsonl")):
        out = tmp_path / path.name
        write_rows(out, read_rows(path, DOMAINS), DOMAINS)
        assert out.read_bytes() == path.read_bytes(), path


def test_prep_quarantines_no_foreign_session(tmp_path):
    from awctl.data.pipeline import PrepConfig, run_prep

    files = [str(p) for p in sorted(CORPUS.iterdir()) if p.name.endswith((".traj", ".awb.jsonl"))]
    manifest = run_prep(
        PrepConfig(inputs=files, out=str(tmp_path / "prep"), tokenizer="train:400", split="train=1", dedupe=False),
        DOMAINS,
    )
    assert manifest["counts"]["quarantined"] == 0 and manifest["counts"]["kept"] == 7


def test_every_planted_fault_kind_is_caught_by_its_verifier(trajectories):
    tallies = plant_faults(DOMAIN, trajectories)
    assert {t.verifier for t in tallies.values()} == {v.name for v in DOMAIN.verifiers()}
    for tally in tallies.values():
        assert tally.planted >= 4, tally.to_dict()
        assert tally.caught * 4 >= tally.planted * 3, tally.to_dict()


# ── the two .traj layouts ────────────────────────────────────────────────────────────────────────────


def test_history_only_traj_becomes_turns_with_state_lines():
    [traj] = load_sweagent_traj(CORPUS / "history_only__tempconv-3.traj")
    raw = json.loads((CORPUS / "history_only__tempconv-3.traj").read_text())
    assert "trajectory" not in raw and traj.metadata["traj_layout"] == "history"
    assert traj.metadata["bash_observation_format"] == "state"
    assert len(traj.turns) == sum(1 for m in raw["history"] if m["role"] == "assistant")
    assert traj.system.initial_state == "(Open file: n/a)\n(Current directory: /tempconv)\nbash-$"
    assert codec.parse(traj.turns[0].action) == ClassicCall("find_file", (("file_name", "test_convert.py"),))
    assert all(t.observation.endswith("bash-$") for t in traj.turns)


def test_0x_traj_keeps_state_before_each_action_and_reads_classic_commands():
    [traj] = load_sweagent_traj(CORPUS / "classic_0x__tempconv-1.traj")
    assert traj.metadata["traj_layout"] == "trajectory" and traj.metadata["bash_observation_format"] == "raw"
    assert traj.turns[0].metadata["state_when"] == "before"
    families = [codec.family(t.action) for t in traj.turns]
    assert families[:7] == ["find_file", "open", "scroll_down", "scroll_up", "search_file", "goto", "search_dir"]
    edit = codec.parse(traj.turns[8].action)
    assert isinstance(edit, ClassicCall) and edit.get("start_line") == edit.get("end_line")
    assert edit.get("replacement_text").startswith("    return round(")


def test_tool_calls_give_exact_arguments_of_classic_and_editor_commands():
    [fc] = load_sweagent_traj(CORPUS / "function_calling__tempconv-2.traj")
    edit = next(codec.parse(t.action) for t in fc.turns if codec.family(t.action) == "edit")
    assert edit.get("replace-all") is False and edit.get("search").startswith("    return int(")
    [ed] = load_sweagent_traj(CORPUS / "str_replace_editor__tempconv-4.traj")
    views = [codec.parse(t.action) for t in ed.turns if codec.family(t.action) == "view"]
    assert isinstance(views[2], EditorCall) and views[2].view_range is not None


# ── codec ────────────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('open "src/a b.py" 40', ClassicCall("open", (("path", "src/a b.py"), ("line_number", 40)))),
        ("goto 583", ClassicCall("goto", (("line_number", 583),))),
        ("scroll_down", ClassicCall("scroll_down")),
        ("create reproduce.py", ClassicCall("create", (("filename", "reproduce.py"),))),
        ("edit 4:5\n    x = 1\n    y = 2\nend_of_edit\n",
         ClassicCall("edit", (("start_line", 4), ("end_line", 5), ("replacement_text", "    x = 1\n    y = 2")))),
        ("edit 'a = 1' 'a = 2' True", ClassicCall("edit", (("search", "a = 1"), ("replace", "a = 2"), ("replace-all", True)))),
        ("insert 'x = 1\ny = 2' --line 3", ClassicCall("insert", (("line", 3), ("text", "x = 1\ny = 2")))),
        ("append\nz = 3\nend_of_append", ClassicCall("append", (("text", "z = 3"),))),
        ('find_file "f.py" src', ClassicCall("find_file", (("file_name", "f.py"), ("dir", "src")))),
        ("search_dir TimeDelta", ClassicCall("search_dir", (("search_term", "TimeDelta"),))),
        ("search_file 'def f' a.py", ClassicCall("search_file", (("search_term", "def f"), ("file", "a.py")))),
    ],
)
def test_classic_commands_parse_from_command_lines_and_round_trip(text, want):
    assert parse_command(text) == want
    assert codec.parse(text) == want
    assert codec.parse(codec.render(want)) == want
    call = {"name": want.command, "arguments": dict(want.args)}
    assert codec.parse(json.dumps(call)) == want


def test_classic_command_errors_name_the_argument():
    from awctl.errors import CodecError

    with pytest.raises(CodecError, match="line_number"):
        codec.parse('{"name": "goto", "arguments": {"line_number": "x"}}')
    with pytest.raises(CodecError, match="does not take"):
        codec.parse('{"name": "open", "arguments": {"path": "a.py", "mode": "r"}}')


def test_a_plain_command_line_in_agentworldbench_rows_is_bash():
    assert codec.parse(DOMAIN.from_awb_action("cd tests && ls")) == BashCall("cd tests && ls")


# ── conventions learnt from the trajectory ───────────────────────────────────────────────────────────


def _traj(turns, system=SystemPrompt(), **metadata) -> Trajectory:
    return Trajectory(id="t", domain="swe", system=system, metadata=metadata,
                      turns=[Turn(action=codec.render(a), observation=o) for a, o in turns])


def test_bash_results_with_and_without_a_footer_follow_the_trajectory():
    ls = BashCall("ls")
    raw = _traj([(ls, "a.py"), (ls, "a.py\nb.py"), (ls, "a.py")])
    assert convention(raw, 2) == "raw" and not [r for r in run_verifiers(DOMAIN, raw, 2) if not r.ok]
    footed = _traj([(ls, "a.py\n[exit_code: 0] [cwd: /repo]"), (ls, "a.py")])
    [failure] = [r for r in run_verifiers(DOMAIN, footed, 1) if not r.ok]
    assert failure.check == "swe.bash_format" and "[exit_code: N] [cwd: DIR]" in failure.message
    unknown = _traj([(ls, "a.py")])
    assert convention(unknown, 0) is None
    assert all(r.check != "swe.bash_format" for r in run_verifiers(DOMAIN, unknown, 0))


def test_openhands_footers_agree_on_the_exit_code_and_follow_cd():
    ok = ("x\n[The command completed with exit code 0.]\n[Current working directory: /w/sub]\n"
          "[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]")
    assert parse_result(ok).cwd == "/w/sub" and parse_result(ok).exit_code == 0
    traj = _traj([(BashCall("pwd"), "/w\n" + ok.split("\n", 1)[1].replace("/w/sub", "/w")), (BashCall("cd sub && ls"), ok)])
    assert not [r for r in run_verifiers(DOMAIN, traj, 1) if not r.ok]
    wrong = ok.replace("/w/sub", "/w/other")
    [failure] = [r for r in run_verifiers(DOMAIN, traj, 1, wrong) if not r.ok]
    assert failure.check == "swe.bash_format" and "/w/sub" in failure.message
    mismatch = ok.replace("completed with exit code 0", "completed with exit code 1")
    assert any(not r.ok for r in run_verifiers(DOMAIN, traj, 1, mismatch))


def test_failing_tests_reported_with_exit_code_zero_are_flagged():
    out = "F\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nFAILED (failures=1)"
    run = BashCall("cd /repo && python -m unittest")
    traj = _traj([(run, out + "\n[exit_code: 1] [cwd: /repo]")])
    assert not [r for r in run_verifiers(DOMAIN, traj, 0) if not r.ok]
    [failure] = [r for r in run_verifiers(DOMAIN, traj, 0, out + "\n[exit_code: 0] [cwd: /repo]") if not r.ok]
    assert "FAILED (failures=1)" in failure.message


def test_openhands_editor_messages_are_read_as_their_swe_agent_counterparts():
    view = EditorCall("view", "/w/a.py")
    assert classify(view, "ERROR:\nInvalid `path` parameter: /w/a.py. The path /w/a.py does not exist. Please "
                          "provide a valid path.").kind == "not_found"
    listing = ("Here's the files and directories up to 2 levels deep in /w, excluding hidden items:\n/w/\n/w/a.py\n"
               "/w/pkg/\n\n1 hidden files/directories in this directory are excluded. You can use 'ls -la /w' to see them.")
    got = classify(EditorCall("view", "/w"), listing)
    assert got.kind == "view_dir" and got.detail.split("\n") == ["/w", "/w/a.py", "/w/pkg"]
    ranged = EditorCall("view", "/w/a.py", view_range=(1, 9))
    note = ("Here's the result of running `cat -n` on /w/a.py:\n     1\tx = 1\n\n"
            "NOTE: We only show up to 1 since there's only 1 lines in this file\n")
    assert classify(ranged, note).kind == "view_file"


# ── windows ──────────────────────────────────────────────────────────────────────────────────────────


def test_window_problems_name_the_wrong_count():
    text = "[File: /r/a.py (150 lines total)]\n(10 more lines above)\n12:x\n13:y\n(137 more lines below)"
    [win] = parse_windows(text)
    assert window_problems(win) == ["(10 more lines above) but the window starts at line 12"]


def test_window_verifier_flags_a_goto_that_misses_its_line_and_text_that_contradicts_an_earlier_window():
    [traj] = load_sweagent_traj(CORPUS / "classic_0x__tempconv-1.traj")
    goto = next(i for i, t in enumerate(traj.turns) if codec.family(t.action) == "goto")
    obs = traj.turns[goto].observation
    fails = {r.check: r.message for r in run_verifiers(DOMAIN, traj, goto, obs) if not r.ok}
    assert fails == {}
    changed = obs.replace("return int(celsius * 9 / 5 + 32)", "return celsius")
    message = {r.check: r.message for r in run_verifiers(DOMAIN, traj, goto, changed) if not r.ok}["swe.window_view"]
    assert message.startswith("line 138: expected") and "shown earlier" in message


def test_faults_return_none_where_they_do_not_apply():
    traj = _traj([(BashCall("ls"), "a.py")])
    rng = random.Random(0)
    assert all(f.plant(TurnContext.at(traj, 0), rng) is None for f in DOMAIN.faults())


# ── no credit for random text; a stripped reference is perfect ─────────────────────────────────────


def test_random_text_earns_no_verifier_credit_on_any_recorded_turn(trajectories):
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_/"
    credited, checked = [], 0
    for traj in trajectories:
        for i, turn in enumerate(traj.turns):
            for size in (80, max(8, len(turn.observation))):
                garbage = "".join(rng.choice(alphabet) for _ in range(size))
                for v in DOMAIN.verifiers():
                    ref = v(TurnContext.at(traj, i))
                    if ref is None or not ref.ok:
                        continue
                    checked += 1
                    got = v(TurnContext.at(traj, i, garbage))
                    if got is None or got.ok:
                        credited.append(f"{v.name} {'abstains' if got is None else 'passes'} on {traj.id} turn {i}")
    assert checked >= 150 and not credited, credited[:10]


def test_a_recorded_turn_stripped_as_the_judge_strips_it_keeps_every_verdict_and_compares_equal(trajectories):
    normalize = DOMAIN.observation_codec.normalize
    lost = []
    for traj in trajectories:
        for i, turn in enumerate(traj.turns):
            stripped = turn.observation.strip()
            assert normalize(stripped) == normalize(turn.observation)
            for v in DOMAIN.verifiers():
                ref, got = v(TurnContext.at(traj, i)), v(TurnContext.at(traj, i, stripped))
                if ref is not None and ref.ok and (got is None or not got.ok):
                    lost.append(f"{v.name} on {traj.id} turn {i}: {got}")
    assert not lost, lost[:10]


def test_classic_commands_fail_text_that_is_neither_their_output_nor_one_of_their_messages():
    state = "\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$"
    window = "[File: /r/a.py (2 lines total)]\n1:x = 1\n2:y = 2" + state
    found = 'Found 1 matches for "a.py" in /r:\n/r/a.py' + state
    traj = _traj([(ClassicCall("open", (("path", "/r/a.py"),)), window),
                  (ClassicCall("find_file", (("file_name", "a.py"),)), found)])
    window_view, search, session_state = (next(v for v in DOMAIN.verifiers() if v.name == n)
                                          for n in ("swe.window_view", "swe.search_results", "swe.session_state"))
    assert window_view(TurnContext.at(traj, 0)).ok and search(TurnContext.at(traj, 1)).ok
    assert session_state(TurnContext.at(traj, 1)).ok
    # SWE-agent's own messages are no output to check; anything else is not what the command prints.
    assert window_view(TurnContext.at(traj, 0, "No file open. Use the open command first." + state)) is None
    assert search(TurnContext.at(traj, 1, "Directory /nope not found" + state)) is None
    bad = window_view(TurnContext.at(traj, 0, "lorem ipsum" + state))
    assert not bad.ok and "prints a window" in bad.message
    bad = search(TurnContext.at(traj, 1, "lorem ipsum" + state))
    assert not bad.ok and "Found N matches" in bad.message
    # Every earlier observation ended with the state line: one without it is a failure, not a pass.
    bad = session_state(TurnContext.at(traj, 1, found[: -len(state)]))
    assert not bad.ok and "state line" in bad.message


def test_editor_checks_fail_text_that_is_no_editor_message():
    view = EditorCall("view", "/r/a.py")
    shown = "Here's the result of running `cat -n` on /r/a.py:\n     1\tx = 1\n"
    traj = _traj([(view, shown)])
    for name in ("swe.cat_n_lines", "swe.clipping"):
        verifier = next(v for v in DOMAIN.verifiers() if v.name == name)
        bad = verifier(TurnContext.at(traj, 0, "lorem ipsum dolor"))
        assert bad is not None and not bad.ok and "matches no str_replace_editor message" in bad.message
        assert verifier(TurnContext.at(traj, 0, "The path /r/a.py does not exist. Please provide a valid path.")) is None
