"""Deterministic checks of SWE observations (editor messages, ``cat -n`` views, bash trailers).

Each verifier returns ``None`` where it does not apply, so it never judges what the history leaves open.
They share one replay of the history per turn (``ctx.state["swe.replay"]``); see :mod:`awctl_domains.swe.replay`.

Trajectories imported from logs whose bash observations have no exit-code trailer (SWE-agent's) carry
``metadata["bash_observation_format"] = "raw"``; the bash verifier skips them.
"""

from __future__ import annotations

import os
import re
import shlex

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier

from . import editor as ed
from .codec import BashCall, EditorCall, parse_bash
from .replay import (
    Classified,
    FsKnowledge,
    classify,
    clean,
    expected_outcome,
    file_key,
    normalize,
    parse_action,
    replay,
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


def _first_difference(expected: str, got: str) -> str:
    exp_lines, got_lines = expected.split("\n"), got.split("\n")
    for i, (a, b) in enumerate(zip(exp_lines, got_lines, strict=False)):
        if a != b:
            return f"line {i + 1}: expected {a[:120]!r}, got {b[:120]!r}"
    return f"expected {len(exp_lines)} lines, got {len(got_lines)}"


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
    if found is None or found[1].numbered is None:
        return None
    call, got = found
    block = got.numbered
    assert block is not None
    name = "swe.cat_n_lines"
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
        want = call.view_range[1] - call.view_range[0] + 1
        if len(numbers) != want:
            return VerifyResult(name, False, f"view_range {list(call.view_range)} shows {len(numbers)} lines, not {want}")
    if got.kind == "inserted" and call.insert_line is not None and call.new_str is not None and not block.clipped:
        before = min(call.insert_line, ed.SNIPPET_LINES)
        shown = [t for _, t in block.lines]
        new_lines = call.new_str.expandtabs().split("\n")
        if normalize("\n".join(shown[before : before + len(new_lines)])) != normalize("\n".join(new_lines)):
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
    want, got = normalize(clean(expected.observation)), normalize(clean(ctx.observation))
    if want == got:
        return VerifyResult(name, True)
    return VerifyResult(name, False, f"{what or found[0].command}: {_first_difference(want, got)}")


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
        if got.kind == "multiple":
            lines = [int(x) for x in re.findall(r"\d+", got.detail)]
            if lines != sorted(set(lines)) or 0 in lines:
                return VerifyResult(name, False, f"occurrence lines {got.detail} are not increasing line numbers")
            # Lines are those containing old_str whole, so only a multi-line old_str can list none.
            if not lines and "\n" not in (call.old_str or "").expandtabs():
                return VerifyResult(name, False, "a one-line old_str occurring twice must list its lines")
            return VerifyResult(name, True)
        return None
    want, have = normalize(clean(expected.observation)), normalize(clean(ctx.observation))
    if want == have:
        return VerifyResult(name, True)
    expected_kind = classify(call, expected.observation).kind
    if expected_kind != got.kind:
        return VerifyResult(name, False, f"the replayed file gives a {expected_kind} message, not {got.kind}")
    return VerifyResult(name, False, f"{expected_kind} message differs: {_first_difference(want, have)}")


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
        return VerifyResult(name, False, "clipping marker in a message without a view") if count else None
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


def _previous_cwd(ctx: TurnContext) -> str | None:
    for turn in reversed(ctx.history):
        action = parse_action(turn.action)
        if isinstance(action, BashCall):
            parsed = parse_bash(turn.observation)
            return parsed.cwd if parsed else None
    return None


_CHANGES_DIR = re.compile(r"(^|[;&|(\s])(cd|pushd|popd|source|\.)(\s|$)|\bexec\b")


@verifier("swe.bash_format", "bash observations end with [exit_code: N] [cwd: DIR] and the cwd follows the commands")
def bash_format(ctx: TurnContext) -> VerifyResult | None:
    action = parse_action(ctx.action)
    if not isinstance(action, BashCall) or ctx.trajectory.metadata.get("bash_observation_format") == "raw":
        return None
    name = "swe.bash_format"
    parsed = parse_bash(ctx.observation)
    if parsed is None:
        return VerifyResult(name, False, "missing the final line `[exit_code: N] [cwd: DIR]`")
    assert parsed.exit_code is not None and parsed.cwd is not None
    if not 0 <= parsed.exit_code <= 255:
        return VerifyResult(name, False, f"exit code {parsed.exit_code} is outside 0..255")
    if parsed.timed_out and parsed.exit_code != 124:
        return VerifyResult(name, False, "a timed-out command reports exit code 124")
    # A doubled trailer (a simulator repeating itself); output lines elsewhere may legitimately look alike.
    if parse_bash(parsed.text) is not None:
        return VerifyResult(name, False, "two exit-code trailers at the end")
    command = action.command.strip()
    if command in ("true", ":") and parsed.exit_code != 0:
        return VerifyResult(name, False, f"`{command}` exits 0")
    if command == "false" and parsed.exit_code != 1:
        return VerifyResult(name, False, "`false` exits 1")
    previous = _previous_cwd(ctx)
    if previous is not None and not _CHANGES_DIR.search(command) and parsed.cwd != previous:
        return VerifyResult(name, False, f"cwd changed from {previous} to {parsed.cwd} without a cd")
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    if len(words) == 2 and words[0] == "cd" and words[1].startswith("/") and parsed.exit_code == 0:
        target = os.path.normpath(words[1])
        if parsed.cwd != target:
            return VerifyResult(name, False, f"`cd {words[1]}` succeeded but cwd is {parsed.cwd}")
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
)
