"""Planted faults: deliberate errors of one kind put into a copy of a real turn, each with the verifier that
must catch it (see :class:`awctl.domain.Fault`).

A fault is planted only where its verifier can judge the turn from the history (e.g. a view that
contradicts the replayed file needs a file whose text earlier turns fixed), so "caught / planted" measures
the verifier, not the coverage of the data. ``plant`` returns ``None`` where the kind does not apply.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from awctl.domain import Fault, TurnContext

from . import editor as ed
from .bashout import convention, parse_result
from .classic import ClassicCall, parse_search, parse_windows, split_state
from .codec import BashCall, EditorCall, render_bash
from .replay import classify, expected_outcome, file_key, outcome_problem, parse_action, replay
from .session import session_before
from .verifiers import exit_evidence, expected_cwd, expected_open_file

_NUMBERED = re.compile(r"^( *)(\d+)\t", re.M)


def _editor(ctx: TurnContext) -> EditorCall | None:
    action = parse_action(ctx.action)
    return action if isinstance(action, EditorCall) else None


def _replayed(ctx: TurnContext, commands: tuple[str, ...]) -> tuple[EditorCall, ed.EditOutcome] | None:
    """The editor call and its replayed outcome, when the history fixes it and the recorded turn agrees."""
    call = _editor(ctx)
    if call is None or call.command not in commands:
        return None
    expected = expected_outcome(call, replay(ctx.trajectory, ctx.index))
    if expected is None or outcome_problem(call, expected, ctx.observation) is not None:
        return None
    return call, expected


def _change_numbered_text(observation: str, rng: random.Random, only: Callable[[int], bool] = lambda n: True) -> str | None:
    """Change the text of one ``cat -n`` line (a number ``only`` accepts) so it no longer matches the file."""
    lines = observation.split("\n")
    candidates = [i for i, ln in enumerate(lines) if (m := re.match(r"^ *(\d+)\t", ln)) and only(int(m.group(1)))]
    if not candidates:
        return None
    i = rng.choice(candidates)
    head, _, text = lines[i].partition("\t")
    lines[i] = f"{head}\t{text}  # changed" if text.strip() else f"{head}\tchanged = True"
    return "\n".join(lines)


# ── str_replace_editor ───────────────────────────────────────────────────────────────────────────────

_REWORDINGS = (
    ("Here's the result of running `cat -n` on", "Here is the output of `cat -n` for"),
    ("Here's the files and directories up to 2 levels deep", "These are the files and folders two levels deep"),
    ("has been edited.", "was modified."),
    ("File created successfully at:", "Created the file"),
    ("did not appear verbatim in", "was not found in"),
    ("does not exist. Please provide a valid path.", "was not found."),
    ("Cannot overwrite files using command `create`.", "Refusing to overwrite it."),
    ("undone successfully.", "was reverted."),
    ("No edit history found for", "Nothing to undo for"),
)


def _reword(ctx: TurnContext, rng: random.Random) -> str | None:
    call = _editor(ctx)
    if call is None or classify(call, ctx.observation).kind is None:
        return None
    for old, new in _REWORDINGS:
        if old in ctx.observation:
            return ctx.observation.replace(old, new, 1)
    return None


def _numbering_skip(ctx: TurnContext, rng: random.Random) -> str | None:
    call = _editor(ctx)
    if call is None:
        return None
    got = classify(call, ctx.observation)
    if got.numbered is None or got.numbered.clipped or len(got.numbered.lines) < 3:
        return None
    lines = ctx.observation.split("\n")
    numbered = [i for i, ln in enumerate(lines) if _NUMBERED.match(ln)]
    cut = numbered[rng.randrange(1, len(numbered))]
    for i in numbered:
        if i >= cut:
            n = int(lines[i].split("\t", 1)[0])
            lines[i] = f"{n + 1:6}\t" + lines[i].split("\t", 1)[1]
    return "\n".join(lines)


def _view_contradiction(ctx: TurnContext, rng: random.Random) -> str | None:
    if _replayed(ctx, ("view",)) is None or classify(_editor(ctx), ctx.observation).kind != "view_file":  # type: ignore[arg-type]
        return None
    return _change_numbered_text(ctx.observation, rng)


def _edit_hides_new_text(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _replayed(ctx, ("str_replace",))
    if found is None or classify(found[0], ctx.observation).kind != "edited":
        return None
    call = found[0]
    new_lines = (call.new_str or "").expandtabs().split("\n")
    old_lines = (call.old_str or "").expandtabs().split("\n")
    body = ctx.observation
    for new, old in zip(new_lines, old_lines, strict=False):
        if new.strip() and new != old and f"\t{new}\n" in body:
            return body.replace(f"\t{new}\n", f"\t{old}\n", 1)  # the snippet shows the text before the edit
    return _change_numbered_text(body, rng)


def _insert_or_undo_wrong(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _replayed(ctx, ("insert", "undo_edit"))
    if found is None or classify(found[0], ctx.observation).numbered is None:
        return None
    return _change_numbered_text(ctx.observation, rng)


def _early_clip(ctx: TurnContext, rng: random.Random) -> str | None:
    call = _editor(ctx)
    if call is None:
        return None
    got = classify(call, ctx.observation)
    if got.kind != "view_file" or got.numbered is None or got.numbered.clipped or not got.numbered.lines:
        return None
    text = ctx.observation.rstrip("\n")
    body, state = split_state(text)
    if state is not None:
        return None
    return text + ed.TRUNCATED_MESSAGE


def _missing_known_file(ctx: TurnContext, rng: random.Random) -> str | None:
    call = _editor(ctx)
    if call is None or call.command == "create":
        return None
    know = replay(ctx.trajectory, ctx.index)
    key = file_key(call.path)
    if key not in know.exists and key not in know.files:
        return None
    if classify(call, ctx.observation).kind == "not_found":
        return None
    return ed.NOT_FOUND.format(path=call.path)


# ── bash ─────────────────────────────────────────────────────────────────────────────────────────────


def _bash(ctx: TurnContext) -> BashCall | None:
    action = parse_action(ctx.action)
    return action if isinstance(action, BashCall) else None


def _set_cwd(observation: str, style: str, cwd: str) -> str | None:
    patterns = {
        "awctl": (r"\[cwd: [^\]\n]*\]", f"[cwd: {cwd}]"),
        "openhands": (r"\[Current working directory: [^\n]*\]", f"[Current working directory: {cwd}]"),
        "state": (r"\(Current directory: [^\n]*\)", f"(Current directory: {cwd})"),
    }
    if style not in patterns:
        return None
    pattern, new = patterns[style]
    matches = list(re.finditer(pattern, observation))
    if not matches:
        return None
    m = matches[-1]
    return observation[: m.start()] + new + observation[m.end() :]


def _cwd_ignores_commands(ctx: TurnContext, rng: random.Random) -> str | None:
    if _bash(ctx) is None:
        return None
    result = parse_result(ctx.observation)
    want = expected_cwd(ctx, result)
    if want is None or result.cwd is None:
        return None
    wrong = rng.choice(["/tmp", "/", "/root", want.rstrip("/") + "/src"])
    wrong = wrong if wrong != want else "/var"
    return _set_cwd(ctx.observation, result.style, wrong)


def _wrong_exit_code(ctx: TurnContext, rng: random.Random) -> str | None:
    action = _bash(ctx)
    if action is None:
        return None
    result = parse_result(ctx.observation)
    if result.exit_code is None or exit_evidence(action.command, result.output) is None:
        return None
    wrong = 0 if result.exit_code != 0 else 1
    if result.style == "awctl":
        assert result.cwd is not None
        return render_bash(result.output, wrong, result.cwd, result.timed_out)
    text = re.sub(r"\[The command completed with exit code -?\d+\.\]", f"[The command completed with exit code {wrong}.]",
                  ctx.observation)
    return re.sub(r"\[Command finished with exit code -?\d+\]", f"[Command finished with exit code {wrong}]", text)


def _missing_footer(ctx: TurnContext, rng: random.Random) -> str | None:
    if _bash(ctx) is None or convention(ctx.trajectory, ctx.index) not in ("awctl", "openhands", "state"):
        return None
    result = parse_result(ctx.observation)
    if result.style == "raw":
        return None
    return result.output if result.output.strip() else "(no output)"


# ── SWE-agent's classic interface ────────────────────────────────────────────────────────────────────


def _wrong_open_file(ctx: TurnContext, rng: random.Random) -> str | None:
    body, state = split_state(ctx.observation)
    if state is None or expected_open_file(ctx) is None:
        return None
    m = list(re.finditer(r"\(Open file: [^\n]*\)", ctx.observation))[-1]
    wrong = rng.choice(["/tmp/notes.txt", "/etc/hosts", "n/a"])
    if wrong == "n/a" and state.open_file is None:
        wrong = "/tmp/notes.txt"
    return ctx.observation[: m.start()] + f"(Open file: {wrong})" + ctx.observation[m.end() :]


def _window_lines(ctx: TurnContext) -> tuple[list[str], list[int]] | None:
    action = parse_action(ctx.action)
    if not isinstance(action, ClassicCall):
        return None
    body, _ = split_state(ctx.observation)
    wins = parse_windows(body)
    if not wins:
        return None
    sep = "\r\n" if "\r\n" in ctx.observation else "\n"
    lines = ctx.observation.split(sep)
    numbered = [i for i, ln in enumerate(lines) if re.match(r"^\d+:", ln)]
    return lines, numbered


def _join(ctx: TurnContext, lines: list[str]) -> str:
    return ("\r\n" if "\r\n" in ctx.observation else "\n").join(lines)


def _window_skip(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _window_lines(ctx)
    if found is None or len(found[1]) < 3:
        return None
    lines, numbered = found
    cut = numbered[rng.randrange(1, len(numbered) - 1)]
    n, _, text = lines[cut].partition(":")
    lines[cut] = f"{int(n) + 1}:{text}"
    return _join(ctx, lines)


def _window_count(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _window_lines(ctx)
    if found is None:
        return None
    lines, _ = found
    for i, ln in enumerate(lines):
        m = re.match(r"^\((\d+) more lines (above|below)\)$", ln)
        if m:
            lines[i] = f"({int(m.group(1)) + rng.randint(1, 9)} more lines {m.group(2)})"
            return _join(ctx, lines)
    return None


def _window_contradiction(ctx: TurnContext, rng: random.Random) -> str | None:
    action = parse_action(ctx.action)
    if not isinstance(action, ClassicCall) or action.command not in ("open", "goto", "scroll_up", "scroll_down"):
        return None
    found = _window_lines(ctx)
    if found is None:
        return None
    session = session_before(ctx.trajectory, ctx.index)
    from .session import header_path

    body, _ = split_state(ctx.observation)
    win = parse_windows(body)[-1]
    facts = session.windows.get(header_path(win, session) or "")
    if facts is None:
        return None
    lines, numbered = found
    known = [i for i in numbered if int(lines[i].split(":", 1)[0]) in facts.lines]
    if not known:
        return None
    i = rng.choice(known)
    n, _, text = lines[i].partition(":")
    lines[i] = f"{n}:{text}  # changed" if text.strip() else f"{n}:changed = True"
    return _join(ctx, lines)


def _search_count(ctx: TurnContext, rng: random.Random) -> str | None:
    action = parse_action(ctx.action)
    if not isinstance(action, ClassicCall) or action.command not in ("find_file", "search_dir", "search_file"):
        return None
    body, _ = split_state(ctx.observation)
    result = parse_search(body)
    if result is None or not result.found:
        return None
    return re.sub(r"^Found (\d+) matches", lambda m: f"Found {int(m.group(1)) + rng.randint(1, 3)} matches",
                  ctx.observation, count=1)


FAULTS: tuple[Fault, ...] = (
    Fault("editor_message_reworded", "swe.editor_template",
          "an editor message reworded (not one the tool prints)", _reword),
    Fault("cat_n_numbers_skip", "swe.cat_n_lines", "a `cat -n` view whose line numbers skip one", _numbering_skip),
    Fault("view_contradicts_file", "swe.view_replay",
          "a file view whose text contradicts what earlier views and edits fixed", _view_contradiction),
    Fault("edit_hides_new_text", "swe.old_str_rule",
          "a str_replace result whose snippet does not show the new text", _edit_hides_new_text),
    Fault("insert_undo_wrong_text", "swe.edit_replay",
          "an insert or undo_edit result showing a line the replayed file does not have", _insert_or_undo_wrong),
    Fault("clipped_too_early", "swe.clipping", "a short view ending with the clipping marker", _early_clip),
    Fault("known_file_missing", "swe.existence",
          "the editor says a file does not exist although earlier turns showed it", _missing_known_file),
    Fault("cwd_ignores_cd", "swe.bash_format",
          "a bash footer whose working directory does not follow the commands", _cwd_ignores_commands),
    Fault("wrong_exit_code", "swe.bash_format",
          "a bash footer whose exit code contradicts the output (failing tests reported as 0...)", _wrong_exit_code),
    Fault("footer_missing", "swe.bash_format",
          "a bash result without the footer every earlier result in the trajectory has", _missing_footer),
    Fault("state_wrong_open_file", "swe.session_state",
          "SWE-agent's state line names a file that is not the open one", _wrong_open_file),
    Fault("window_numbers_skip", "swe.window_view", "a file window whose line numbers skip one", _window_skip),
    Fault("window_counts_off", "swe.window_view",
          "a file window whose '(N more lines above/below)' count is wrong", _window_count),
    Fault("window_contradicts_earlier", "swe.window_view",
          "a file window whose text contradicts an earlier window of the file", _window_contradiction),
    Fault("search_count_off", "swe.search_results",
          "a search output whose 'Found N matches' does not count what it lists", _search_count),
)
