"""Deterministic checks of SWE observations (editor messages, ``cat -n`` views, bash trailers).

Each verifier returns ``None`` where it does not apply, so it never judges what the history leaves open.
Text that is none of the outputs a command can print (no editor message, no window or search result and
none of SWE-agent's messages, no state line where every earlier observation had one) fails the verifiers
of that command instead: random text earns no verifier credit.
They share one replay of the history per turn (``ctx.state["swe.replay"]``); see :mod:`awctl_domains.swe.replay`.

Trajectories imported from logs whose bash observations have no exit-code trailer (SWE-agent's) carry
``metadata["bash_observation_format"] = "raw"``; the bash verifier skips them.
"""

from __future__ import annotations

import posixpath
import re

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier

from . import editor as ed
from .bashout import BashResult, convention, parse_result, state_line_established
from .classic import (
    EDIT_REJECTED,
    ClassicCall,
    Window,
    dir_row,
    file_row,
    is_interface_message,
    parse_search,
    parse_windows,
    split_state,
    window_problems,
)
from .codec import BashCall, EditorCall, bash_program, parse_bash
from .replay import (
    OH_RANGE_NOTE,
    Classified,
    FsKnowledge,
    classify,
    clean,
    expected_outcome,
    file_key,
    outcome_problem,
    parse_action,
    replay,
)
from .session import (
    CHANGES_DIR,
    FileWindowFacts,
    Session,
    cd_target,
    header_path,
    resolve,
    session_before,
    window_path,
)

# Which messages each editor command may print.
ALLOWED_KINDS: dict[str, frozenset[str]] = {
    "view": frozenset({"view_file", "view_filemap", "view_dir", "not_found", "dir_range", "range_shape",
                       "range_start", "range_end_big", "range_end_small", "io_error"}),
    "create": frozenset({"created", "exists", "no_parent", "io_error"}),
    "str_replace": frozenset({"edited", "no_match", "multiple", "same", "not_found", "is_dir", "io_error"}),
    "insert": frozenset({"inserted", "bad_insert", "not_found", "is_dir", "io_error"}),
    "undo_edit": frozenset({"undone", "no_history", "not_found", "is_dir", "io_error"}),
}


# Editor commands whose successful message shows a `cat -n` block (a view of a file, an edit's snippet).
_SHOWS_NUMBERED = frozenset({"view", "str_replace", "insert", "undo_edit"})


def _no_message(name: str, call: EditorCall, what: str) -> VerifyResult:
    """The failure for an observation that is none of the editor's messages for ``call``."""
    return VerifyResult(name, False, f"`{call.command}` on {call.path}: matches no str_replace_editor message, so "
                                     f"{what}")


def _replayable(found: tuple[EditorCall, Classified] | None, *commands: str) -> bool:
    """Whether a replay can judge this turn: one of ``commands``, and not an I/O failure (permissions and
    free space are not in the history, so a write error is never ruled out)."""
    return found is not None and found[0].command in commands and found[1].kind != "io_error"


def _editor(ctx: TurnContext) -> tuple[EditorCall, Classified] | None:
    key = "swe.classified"
    if key not in ctx.state:
        action = parse_action(ctx.action)
        ctx.state[key] = (action, classify(action, ctx.observation)) if isinstance(action, EditorCall) else None
    return ctx.state[key]


def _knowledge(ctx: TurnContext) -> FsKnowledge:
    if "swe.replay" not in ctx.state:
        ctx.state["swe.replay"] = replay(ctx.trajectory, ctx.index)
    return ctx.state["swe.replay"]


@verifier("swe.editor_template", "the observation is one of the editor's messages for that command, verbatim")
def editor_template(ctx: TurnContext) -> VerifyResult | None:
    found = _editor(ctx)
    if found is None:
        return None
    call, got = found
    if got.kind is None:
        return VerifyResult(
            "swe.editor_template", False, f"`{call.command}` on {call.path}: matches no str_replace_editor message"
        )
    if got.kind not in ALLOWED_KINDS[call.command]:
        return VerifyResult("swe.editor_template", False, f"`{call.command}` cannot print a {got.kind} message")
    return VerifyResult("swe.editor_template", True)


@verifier("swe.cat_n_lines", "cat -n blocks number lines consecutively, 6 wide, from the right first line")
def cat_n_lines(ctx: TurnContext) -> VerifyResult | None:
    found = _editor(ctx)
    if found is None:
        return None
    call, got = found
    name = "swe.cat_n_lines"
    block = got.numbered
    if block is None:
        if got.kind is None and call.command in _SHOWS_NUMBERED:
            return _no_message(name, call, "it shows no `cat -n` block")
        return None
    if block.bad:
        return VerifyResult(name, False, f"not a `cat -n` line: {block.bad[0][:120]!r}")
    if not block.lines:
        return VerifyResult(name, False, "empty `cat -n` block")
    numbers = [n for n, _ in block.lines]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        gap = next(i for i in range(1, len(numbers)) if numbers[i] != numbers[i - 1] + 1)
        return VerifyResult(name, False, f"line numbers jump from {numbers[gap - 1]} to {numbers[gap]}")
    expected_start: int | None = None
    if got.kind in ("view_file", "undone"):
        expected_start = call.view_range[0] if (got.kind == "view_file" and call.view_range) else 1
    elif got.kind == "inserted" and call.insert_line is not None:
        expected_start = max(1, call.insert_line - ed.SNIPPET_LINES + 1)
    if expected_start is not None and numbers[0] != expected_start:
        return VerifyResult(name, False, f"numbering starts at {numbers[0]}, expected {expected_start}")
    if got.kind == "view_file" and call.view_range and call.view_range[1] != -1 and not block.clipped:
        shortened = OH_RANGE_NOTE.search(clean(ctx.observation))  # OpenHands shows up to the file's end
        last = min(call.view_range[1], int(shortened.group(1))) if shortened else call.view_range[1]
        want = last - call.view_range[0] + 1
        if len(numbers) != want:
            return VerifyResult(name, False, f"view_range {list(call.view_range)} shows {len(numbers)} lines, not {want}")
    if got.kind == "inserted" and call.insert_line is not None and call.new_str is not None and not block.clipped:
        before = min(call.insert_line, ed.SNIPPET_LINES)
        shown = [t for _, t in block.lines]
        new_lines = call.new_str.expandtabs().split("\n")
        # Line by line, trailing whitespace aside: a `\r` ending an inserted line is gone with the `\r\n` that
        # cleaning the observation folds, and an empty numbered line may end in the recorder's tab.
        if [t.rstrip() for t in shown[before : before + len(new_lines)]] != [t.rstrip() for t in new_lines]:
            return VerifyResult(name, False, f"the inserted text is not at lines {numbers[0] + before}..")
    return VerifyResult(name, True)


def _matches_replay(ctx: TurnContext, name: str, commands: tuple[str, ...], what: str | None) -> VerifyResult | None:
    """Compare the observation of an editor ``commands`` call with what replaying the history gives;
    the failure message starts with ``what`` (the editor command when None)."""
    found = _editor(ctx)
    if found is None or not _replayable(found, *commands):
        return None
    expected = expected_outcome(found[0], _knowledge(ctx))
    if expected is None:
        return None
    problem = outcome_problem(found[0], expected, ctx.observation)
    if problem is None:
        return VerifyResult(name, True)
    return VerifyResult(name, False, f"{what or found[0].command}: {problem}")


@verifier("swe.view_replay", "a view of a file whose text the history fixes shows exactly that text")
def view_replay(ctx: TurnContext) -> VerifyResult | None:
    return _matches_replay(ctx, "swe.view_replay", ("view",), "differs from the replayed file")


@verifier("swe.old_str_rule", "str_replace: 0 matches → not-verbatim error, >1 → multiple-occurrences lines, 1 → snippet")
def old_str_rule(ctx: TurnContext) -> VerifyResult | None:
    found = _editor(ctx)
    if found is None or not _replayable(found, "str_replace"):
        return None
    call, got = found
    name = "swe.old_str_rule"
    expected = expected_outcome(call, _knowledge(ctx))
    if expected is None:
        # Without the file text only the message's own consistency can be checked.
        if got.kind is None:
            return _no_message(name, call, "it reports neither no match, several matches nor the edit")
        if got.kind == "multiple":
            lines = [int(x) for x in re.findall(r"\d+", got.detail)]
            if lines != sorted(set(lines)) or 0 in lines:
                return VerifyResult(name, False, f"occurrence lines {got.detail} are not increasing line numbers")
            # Lines are those containing old_str whole, so only a multi-line old_str can list none.
            if not lines and "\n" not in (call.old_str or "").expandtabs():
                return VerifyResult(name, False, "a one-line old_str occurring twice must list its lines")
            return VerifyResult(name, True)
        return None
    problem = outcome_problem(call, expected, ctx.observation)
    if problem is None:
        return VerifyResult(name, True)
    expected_kind = classify(call, expected.observation).kind
    if expected_kind != got.kind:
        return VerifyResult(name, False, f"the replayed file gives a {expected_kind} message, not {got.kind}")
    return VerifyResult(name, False, f"{expected_kind} message differs: {problem}")


@verifier("swe.edit_replay", "insert and undo_edit results equal what the replayed file and undo history give")
def edit_replay(ctx: TurnContext) -> VerifyResult | None:
    return _matches_replay(ctx, "swe.edit_replay", ("insert", "undo_edit"), None)


@verifier("swe.clipping", "views longer than 16000 characters are clipped exactly there with the marker")
def clipping(ctx: TurnContext) -> VerifyResult | None:
    found = _editor(ctx)
    name = "swe.clipping"
    if found is None:
        return None
    call, got = found
    count = ctx.observation.count(ed.TRUNCATED_MESSAGE)
    if got.numbered is None:
        if count:
            return VerifyResult(name, False, "clipping marker in a message without a view")
        if got.kind is None and call.command in _SHOWS_NUMBERED:
            return _no_message(name, call, "it shows no view whose clipping could be checked")
        return None
    block = got.numbered
    if count > 1 or (count == 1 and not block.clipped):
        return VerifyResult(name, False, "the clipping marker must appear once, at the end of the view")
    know = _knowledge(ctx)
    content = know.files.get(file_key(call.path)) if got.kind == "view_file" else None
    if content is not None:
        if call.view_range is not None:
            lines = content.split("\n")
            start, end = call.view_range
            if not (1 <= start <= len(lines) and (end == -1 or start <= end <= len(lines))):
                return None
            content = "\n".join(lines[start - 1 : (len(lines) if end == -1 else end)])
        should = len(content) > ed.MAX_RESPONSE_LEN
        if should != block.clipped:
            state = "clipped" if block.clipped else "not clipped"
            return VerifyResult(name, False, f"{len(content)}-character text {state}; limit {ed.MAX_RESPONSE_LEN}")
        if should and block.text() != content[: ed.MAX_RESPONSE_LEN].expandtabs():
            return VerifyResult(name, False, f"not cut at exactly {ed.MAX_RESPONSE_LEN} characters")
        return VerifyResult(name, True)
    if block.clipped and len(block.text()) < ed.MAX_RESPONSE_LEN:
        # Tabs only grow when expanded, so a clipped view shows at least the limit's worth of text.
        return VerifyResult(name, False, f"clipped after {len(block.text())} characters, before the limit")
    return VerifyResult(name, True) if block.clipped else None


@verifier("swe.existence", "create on an existing path fails; other commands agree with known existence")
def existence(ctx: TurnContext) -> VerifyResult | None:
    found = _editor(ctx)
    if found is None:
        return None
    call, got = found
    know = _knowledge(ctx)
    key = file_key(call.path)
    known_exists = key in know.exists or key in know.files
    name = "swe.existence"
    if call.command == "create" and known_exists:
        ok = got.kind == "exists"
        return VerifyResult(name, ok, "" if ok else f"{call.path} exists, so create must fail with the exists error")
    if call.command != "create" and known_exists and got.kind == "not_found":
        return VerifyResult(name, False, f"{call.path} exists (seen earlier) but the observation says it does not")
    if call.command != "create" and key in know.absent:
        ok = got.kind == "not_found"
        return VerifyResult(name, ok, "" if ok else f"{call.path} was reported missing and nothing created it")
    return None


def _session(ctx: TurnContext) -> Session:
    if "swe.session" not in ctx.state:
        ctx.state["swe.session"] = session_before(ctx.trajectory, ctx.index)
    return ctx.state["swe.session"]


def expected_cwd(ctx: TurnContext, result: BashResult) -> str | None:
    """The directory a bash footer must show after this command, when the history fixes it."""
    action = parse_action(ctx.action)
    if not isinstance(action, BashCall):
        return None
    previous = _session(ctx).cwd
    command = action.command.strip()
    if not CHANGES_DIR.search(command):
        return previous
    target = cd_target(command, previous)
    succeeded = result.exit_code == 0 if result.exit_code is not None else not result.output.strip()
    return target if target is not None and succeeded and result.style != "raw" else None


_UNITTEST_FAILED = re.compile(r"^FAILED \((?:failures|errors)=\d+")
_UNITTEST_OK = re.compile(r"^OK(?: \(.*\))?$")
_PYTEST_FAILED = re.compile(r"^=+ .*\b\d+ (?:failed|errors?)\b.* =+$")
_PYTEST_PASSED = re.compile(r"^=+ \d+ passed(?: in [\d.]+s| , .*)? =+$|^=+ \d+ passed in [\d.]+s")
_FILE_UTILITIES = frozenset({"ls", "cat", "head", "tail", "wc", "stat", "cp", "mv", "rm", "rmdir", "mkdir", "touch"})
_OPERAND_ERRORS = "No such file or directory|Permission denied|Not a directory|Is a directory|File exists"


def exit_evidence(command: str, output: str) -> tuple[str, str] | None:
    """What the output proves about the exit code: ``("nonzero" | "zero" | "127", why)`` or None.

    Only commands whose status is the last program's (no pipe, ``;``, ``||`` or background ``&``) and
    only unmistakable outputs count: a shell's "command not found", unittest's and pytest's summaries, a
    file utility's "No such file or directory".
    """
    if re.search(r"\|\||[|;]|&(?!&)|\bset\b|\btrap\b", command.replace("&&", "")):
        return None
    last_segment = command.split("&&")[-1].strip()
    lines = [ln.rstrip() for ln in output.replace("\r\n", "\n").split("\n") if ln.strip()]
    if not lines:
        return None
    program = bash_program(last_segment)
    if re.fullmatch(rf"(?:bash: )?(?:line \d+: )?{re.escape(program)}: command not found", lines[-1]):
        return "127", f"`{program}: command not found`"
    runs_tests = re.search(r"\b(unittest|pytest|py\.test)\b", last_segment) is not None
    if runs_tests and _UNITTEST_FAILED.match(lines[-1]):
        return "nonzero", f"the test run ends with {lines[-1]!r}"
    if runs_tests and _UNITTEST_OK.match(lines[-1]) and any(ln.startswith("Ran ") for ln in lines):
        return "zero", f"the test run ends with {lines[-1]!r}"
    if runs_tests and "pytest" in last_segment and _PYTEST_FAILED.match(lines[-1]):
        return "nonzero", f"pytest reports {lines[-1]!r}"
    if runs_tests and "pytest" in last_segment and _PYTEST_PASSED.match(lines[-1]) and "failed" not in lines[-1]:
        return "zero", f"pytest reports {lines[-1]!r}"
    # A file utility that reports a missing or unreadable operand exits non-zero whatever else it printed.
    # (A Python traceback is no evidence: scripts print caught exceptions and exit 0.)
    if program in _FILE_UTILITIES:
        failed = re.compile(rf"^{re.escape(program)}: .*(?:{_OPERAND_ERRORS})$")
        line = next((ln for ln in lines if failed.match(ln)), None)
        if line is not None:
            return "nonzero", f"{line[:80]!r}"
    return None


_FOOTER_NAMES = {
    "awctl": "the line `[exit_code: N] [cwd: DIR]`",
    "openhands": "OpenHands' `[Command finished with exit code N]` lines",
    "state": "SWE-agent's `(Open file: ...)` / `(Current directory: ...)` state line",
}


@verifier(
    "swe.bash_format",
    "bash results end with the footer the trajectory uses (awctl, OpenHands, SWE-agent state line, or none); "
    "its exit code agrees with the output and its cwd follows the commands",
)
def bash_format(ctx: TurnContext) -> VerifyResult | None:
    action = parse_action(ctx.action)
    if not isinstance(action, BashCall):
        return None
    name = "swe.bash_format"
    style = convention(ctx.trajectory, ctx.index)
    result = parse_result(ctx.observation)
    if style in _FOOTER_NAMES and result.style != style:
        return VerifyResult(name, False, f"last line: expected {_FOOTER_NAMES[style]} (as every earlier bash result)")
    if result.style == "raw":
        return None  # nothing in the result to check against the history
    if result.style == "awctl" and parse_bash(result.output) is not None:
        return VerifyResult(name, False, "two exit-code trailers at the end")
    if result.style == "openhands" and None not in (result.completed_code, result.exit_code) and (
        result.completed_code != result.exit_code
    ):
        return VerifyResult(
            name, False,
            f"`[The command completed with exit code {result.completed_code}.]` but "
            f"`[Command finished with exit code {result.exit_code}]`",
        )
    code = result.exit_code
    if code is not None:
        if not 0 <= code <= 255:
            return VerifyResult(name, False, f"exit code {code} is outside 0..255")
        if result.style == "awctl" and result.timed_out and code != 124:
            return VerifyResult(name, False, "a timed-out command reports exit code 124")
        command = action.command.strip()
        if command in ("true", ":") and code != 0:
            return VerifyResult(name, False, f"footer: `{command}` exits 0, got {code}")
        if command == "false" and code != 1:
            return VerifyResult(name, False, f"footer: `false` exits 1, got {code}")
        evidence = exit_evidence(command, result.output)
        if evidence is not None:
            kind, why = evidence
            wrong = (kind == "zero" and code != 0) or (kind == "nonzero" and code == 0) or (kind == "127" and code != 127)
            if wrong:
                want = {"zero": "0", "nonzero": "a non-zero code", "127": "127"}[kind]
                return VerifyResult(name, False, f"footer: exit code {code}, but {why} means {want}")
    want_cwd = expected_cwd(ctx, result)
    shown_cwd = result.cwd or want_cwd
    if action.command.strip() == "pwd" and shown_cwd is not None and result.output.strip() not in ("", shown_cwd):
        return VerifyResult(name, False, f"`pwd` printed {result.output.strip()[:120]!r}, but the cwd is {shown_cwd}")
    if want_cwd is not None and result.cwd is not None and posixpath.normpath(result.cwd) != want_cwd:
        command = action.command.strip()
        if CHANGES_DIR.search(command):
            return VerifyResult(name, False, f"footer: `{command}` succeeded, so cwd is {want_cwd}, got {result.cwd}")
        return VerifyResult(name, False, f"footer: cwd changed from {want_cwd} to {result.cwd} without a cd")
    return VerifyResult(name, True)


# ── SWE-agent's classic interface ────────────────────────────────────────────────────────────────────


def _classic(ctx: TurnContext) -> ClassicCall | None:
    action = parse_action(ctx.action)
    return action if isinstance(action, ClassicCall) else None


def expected_open_file(ctx: TurnContext) -> str | None:
    """The open file the state line must show after this turn, when the history fixes it."""
    session = _session(ctx)
    action = parse_action(ctx.action)
    body, _ = split_state(ctx.observation)
    if isinstance(action, ClassicCall) and action.command in ("open", "create"):
        if not parse_windows(body):
            return None  # a failed open leaves the old file open; whether it failed is in the text
        return window_path(action, session)
    return session.open_file


@verifier("swe.session_state", "SWE-agent's state line names the file left open and a cwd that follows the commands")
def session_state(ctx: TurnContext) -> VerifyResult | None:
    _, state = split_state(ctx.observation)
    name = "swe.session_state"
    if state is None:
        if state_line_established(ctx.trajectory, ctx.index):
            return VerifyResult(name, False, "last lines: expected SWE-agent's state line `(Open file: ...)` / "
                                "`(Current directory: ...)` / `bash-$`, as the session shows after every command")
        return None
    session = _session(ctx)
    want_file = expected_open_file(ctx)
    got_file = resolve(state.open_file, session.cwd) if state.open_file else None
    if want_file is not None and got_file != want_file:
        return VerifyResult(name, False, f"(Open file: {state.open_file}): expected {want_file}")
    if isinstance(parse_action(ctx.action), BashCall):
        want_cwd = expected_cwd(ctx, parse_result(ctx.observation))
    else:
        want_cwd = session.cwd  # editor and interface commands never change the shell's directory
    if want_cwd is not None and posixpath.normpath(state.cwd) != want_cwd:
        return VerifyResult(name, False, f"(Current directory: {state.cwd}): expected {want_cwd}")
    return VerifyResult(name, True)


@verifier(
    "swe.window_view",
    "windows of SWE-agent's file viewer number their lines consecutively, count the lines above/below right, "
    "show the requested line and agree with earlier windows and edits of the file",
)
def window_view(ctx: TurnContext) -> VerifyResult | None:
    call = _classic(ctx)
    if call is None or call.command not in ("open", "goto", "scroll_up", "scroll_down", "create", "edit",
                                            "insert", "append"):
        return None
    body, _ = split_state(ctx.observation)
    windows = parse_windows(body)
    name = "swe.window_view"
    if not windows:
        if not body.strip() or is_interface_message(body):
            return None  # a usage, error or warning message: no window to check
        return VerifyResult(name, False, f"line 1: `{call.command}` prints a window `[File: PATH (N lines total)]` "
                                         f"or one of SWE-agent's messages, got {body.strip()[:80]!r}")
    for win in windows:
        problems = window_problems(win)
        if problems:
            return VerifyResult(name, False, f"[File: {win.path}]: {problems[0]}")
    session = _session(ctx)
    target = window_path(call, session)
    rejected = call.command == "edit" and EDIT_REJECTED in body
    shown = windows[-1]
    shown_path = header_path(shown, session)
    # SWE-agent shows a symlinked path resolved, so only another file name is a finding.
    if target and shown_path and posixpath.basename(shown_path) != posixpath.basename(target):
        return VerifyResult(name, False, f"[File: {shown.path}]: expected a window of {target}")
    path = target or shown_path
    facts = session.windows.get(path) if path else None
    unchanged = call.command in ("open", "goto", "scroll_up", "scroll_down") or rejected
    if facts is not None and facts.total is not None and unchanged and shown.total != facts.total:
        return VerifyResult(name, False, f"[File: {shown.path}]: {shown.total} lines total, earlier {facts.total}")
    if facts is not None and unchanged:
        for number, text in shown.lines:
            known = facts.lines.get(number)
            if known is not None and text.rstrip() != known:
                return VerifyResult(
                    name, False, f"line {number}: expected {known[:120]!r} (shown earlier), got {text.rstrip()[:120]!r}"
                )
    problem = _command_problem(call, shown, session, facts, rejected)
    if problem:
        return VerifyResult(name, False, problem)
    return VerifyResult(name, True)


def _command_problem(
    call: ClassicCall, shown: Window, session: Session, facts: FileWindowFacts | None, rejected: bool
) -> str | None:
    first, last = shown.first, shown.last
    if first is None or last is None:
        return None  # an empty file's window
    line = call.get("line_number")
    in_file = isinstance(line, int) and 1 <= line <= shown.total
    if call.command in ("open", "goto") and in_file and not first <= line <= last:
        return f"`{call.command} ... {line}` shows lines {first}-{last}, which do not include line {line}"
    if call.command == "create" and not (shown.total == 1 and shown.lines == [(1, "")]):
        return f"a new file shows one empty line, got {shown.total} lines"
    previous = session.last_window
    if call.command == "scroll_down" and previous is not None and first < previous[0]:
        return f"scroll_down moved the window up, from line {previous[0]} to {first}"
    if call.command == "scroll_up" and previous is not None and first > previous[0]:
        return f"scroll_up moved the window down, from line {previous[0]} to {first}"
    if call.command == "edit" and not rejected:
        start, end = call.get("start_line"), call.get("end_line")
        if start is not None and end is not None:
            new = str(call.get("replacement_text"))
            new_lines = new.split("\n") if new else []
            if facts is not None and facts.total is not None:
                want = facts.total - (end - start + 1) + len(new_lines)
                if shown.total != want:
                    return f"edit {start}:{end} of a {facts.total}-line file leaves {want} lines, not {shown.total}"
            for i, text in enumerate(new_lines):
                got = dict(shown.lines).get(start + i)
                if got is not None and got.rstrip() != text.rstrip():
                    return f"line {start + i}: expected the edit's text {text[:120]!r}, got {got[:120]!r}"
        elif call.get("replace") is not None:
            replace = str(call.get("replace")).split("\n")[0].strip()
            if replace and not any(replace in text for _, text in shown.lines):
                return f"the window does not show the replacement {replace[:120]!r}"
    return None


@verifier(
    "swe.search_results",
    "find_file / search_dir / search_file outputs repeat the term and place searched, and count what they list",
)
def search_results(ctx: TurnContext) -> VerifyResult | None:
    call = _classic(ctx)
    if call is None or call.command not in ("find_file", "search_dir", "search_file"):
        return None
    body, _ = split_state(ctx.observation)
    result = parse_search(body)
    name = "swe.search_results"
    if result is None:
        if not body.strip() or is_interface_message(body):
            return None  # a usage or error message (a missing directory, too many matches...)
        return VerifyResult(name, False, f"line 1: `{call.command}` prints `Found N matches for ...`, `No matches "
                                         f"found for ...` or one of SWE-agent's messages, got {body.strip()[:80]!r}")
    session = _session(ctx)
    term = str(call.get("file_name") if call.command == "find_file" else call.get("search_term"))
    if result.term != term:
        return VerifyResult(name, False, f"first line: searched for {term!r}, the output says {result.term!r}")
    if call.command == "search_file":
        place = resolve(str(call.get("file")), session.cwd) if call.get("file") else session.open_file
    else:
        place = resolve(str(call.get("dir") or "."), session.cwd)
    got_place = resolve(result.where, session.cwd)
    if place is not None and got_place is not None and got_place != place:
        return VerifyResult(name, False, f"first line: searched in {place}, the output says {result.where}")
    if result.end is not None and result.end[0] != result.term:
        return VerifyResult(name, False, f"last line: ends the matches for {result.end[0]!r}, not {result.term!r}")
    if not result.found:
        return VerifyResult(name, True)
    if call.command == "find_file":
        rows = [r for r in result.rows if r.strip()]
        if len(rows) != result.count:
            return VerifyResult(name, False, f"Found {result.count} matches but {len(rows)} paths are listed")
        if not any(c in term for c in "*?["):
            for row in rows:
                if posixpath.basename(row.strip()) != term:
                    return VerifyResult(name, False, f"{row.strip()!r} is not named {term!r}")
    elif call.command == "search_dir":
        counts = [dir_row(r) for r in result.rows if r.strip()]
        if any(c is None for c in counts):
            return None  # a layout this check does not know
        total = sum(k for _, k in counts if k is not None)  # type: ignore[misc]
        if total != result.count:
            return VerifyResult(name, False, f"Found {result.count} matches but the files list {total}")
    else:
        rows = [file_row(r) for r in result.rows if r.strip()]
        if any(r is None for r in rows):
            return None
        if len(rows) != result.count:
            return VerifyResult(name, False, f"Found {result.count} matches but {len(rows)} lines are listed")
        facts = session.windows.get(place) if place else None
        plain = not any(c in term for c in "\\.[]*^$")
        for number, text in rows:  # type: ignore[misc]
            if plain and term not in text:
                return VerifyResult(name, False, f"Line {number}: does not contain {term!r}")
            known = facts.lines.get(number) if facts else None
            if known is not None and text.rstrip() != known:
                return VerifyResult(name, False, f"Line {number}: expected {known[:120]!r} (shown earlier)")
    return VerifyResult(name, True)


ALL_VERIFIERS: tuple[Verifier, ...] = (
    editor_template,
    cat_n_lines,
    view_replay,
    old_str_rule,
    edit_replay,
    clipping,
    existence,
    bash_format,
    session_state,
    window_view,
    search_results,
)
