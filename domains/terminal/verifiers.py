"""Deterministic checks of terminal observations, usable on recorded turns and on a simulator's predictions.

Every expectation comes from the trajectory (see :mod:`.session`): the geometry it states, the screen
form its turns use, the prompt its initial state and earlier turns show (any ``user@host:path$ `` family,
``~`` paths with the home directory learned from the session, ``bash-5.2# ``, bare ``$ ``, REPL prompts),
the working directory and the files earlier commands wrote. A verifier returns ``None`` (abstains) when
the trajectory does not establish enough to decide, so a real session recorded by any program never
fails one; a failure names the line and what was expected.

An observation that lacks the layout the trajectory established (:func:`.session.layout_problem`: the
Terminus header every earlier observation had, the echo of the typed text where the prompt was, the
previous screen's rows on top of a full screen) is no terminal output at all: every verifier that would
have judged it fails instead of abstaining, so text that is not a terminal's earns no verifier credit.
Observations stripped of leading whitespace (as the judge strips predictions) are read with the blank
rows and indentation their layout puts on top given back.

* ``screen_geometry`` — lines fit the stated width (and, for full screens, the stated height); no tabs or
  escape sequences; the layout the trajectory established is there.
* ``prompt_format`` — the new prompt keeps the shape of the session's prompt (family, user, host, sigil,
  ``~`` or absolute paths) unless the command may change it (``su``, ``ssh``, a REPL, ``PS1=``...).
* ``prompt_cwd`` — after a command, the prompt's directory follows ``cd`` (and stays put otherwise).
* ``command_echo`` — the typed keystrokes are echoed right after the previous prompt.
* ``typed_echo_only`` — keystrokes without Enter change nothing but the echo on the prompt line.
* ``exact_output`` — fully determined outputs match: ``echo`` of literals, ``pwd`` (once the session
  established the directory), ``cat`` of a file written earlier in the session by ``echo``/``printf``.
"""

from __future__ import annotations

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier

from .codec import display_width
from .prompt_shapes import Prompt, parse_prompt
from .session import (
    Facts,
    TurnView,
    cut_cells,
    expected_output,
    facts_before,
    line_number,
    logical_after,
    path_verdict,
    read_turn,
    screen_lines,
    split_observation,
    touches_dirs,
    wrap,
)

__all__ = ["VERIFIERS", "idle_prompt", "screen_lines"]


def idle_prompt(lines: list[str] | None) -> str | None:
    """The prompt's directory when a screen ends at an idle prompt of any shell family, else None
    (``""`` for a prompt that shows no directory)."""
    if not lines:
        return None
    prompt = parse_prompt(lines[-1])
    if prompt is None or prompt.is_repl:
        return None
    return prompt.path if prompt.path is not None else ""


def _context(ctx: TurnContext) -> tuple[Facts, TurnView]:
    """The facts before the turn and the turn read from the candidate observation (cached per turn)."""
    key = ("terminal.view", ctx.observation)
    cached = ctx.state.get(key)
    if cached is None:
        facts = facts_before(ctx)
        cached = (facts, read_turn(facts, ctx.action, ctx.observation))
        ctx.state[key] = cached
    return cached


_line_no = line_number


def _layout_failure(name: str, view: TurnView, what: str) -> VerifyResult | None:
    """A failure when the observation lacks the layout the trajectory established (``what`` says what
    this verifier could not find because of it), else ``None``."""
    if view.layout is None:
        return None
    return VerifyResult(name, False, f"{view.layout}; {what}")


# ── the verifiers ────────────────────────────────────────────────────────────────────────────────────


@verifier("screen_geometry", "The observation fits the terminal the trajectory states: at most cols cells "
          "per line (and rows lines for full screens), no tabs or escapes, laid out where the terminal puts "
          "it (header, echo, previous rows).")
def screen_geometry(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    header, lines = split_observation(ctx.observation)
    first = 2 if header else 1
    for i, line in enumerate(lines):
        if "\t" in line or "\x1b" in line:
            return VerifyResult("screen_geometry", False,
                                f"line {i + first}: contains a tab or escape character, which a "
                                "terminal does not show")
    if facts.cols is None:
        return _layout_failure("screen_geometry", view, "this is not the terminal's screen")
    for i, line in enumerate(lines):
        if display_width(line) > facts.cols:
            return VerifyResult("screen_geometry", False,
                                f"line {i + first}: {display_width(line)} cells wide, the terminal "
                                f"has {facts.cols} columns (long lines wrap)")
    full_screen = header == "Current Terminal Screen:" or header is None and facts.form == "screen"
    if facts.rows is not None and full_screen and len(lines) > facts.rows:
        return VerifyResult("screen_geometry", False,
                            f"line {facts.rows + 1 + (1 if header else 0)}: the screen has {len(lines)} lines "
                            f"but the terminal has {facts.rows} rows")
    layout = _layout_failure("screen_geometry", view, "this is not the terminal's screen")
    return layout or VerifyResult("screen_geometry", True)


@verifier("prompt_format", "The new prompt keeps the shape of the session's prompt (family, user, host, "
          "sigil, ~ or absolute paths) unless the command may change it.")
def prompt_format(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    known = facts.prompt if facts.prompt is not None else facts.shell
    final = view.final
    if known is None or view.changes_prompt or not view.lines:
        return None
    if final is None:  # a command may still run; but not in an observation without the terminal's layout
        return _layout_failure("prompt_format", view, f"no prompt of the session's shape ({known.describe()}) "
                               "on the last line either")
    line = _line_no(view, len(view.lines) - 1)
    if final.shape != known.shape:
        return VerifyResult("prompt_format", False,
                            f"line {line}: {final.describe()} has another shape than the session's "
                            f"{known.describe()} (nothing in `{(view.command or ctx.action)[:40]}` changes it)")
    if final.family == "userhost" and final.path is not None:
        home = facts.home
        if facts.tilde is True and home is not None and final.path.startswith("/") and home != "/" and (
                final.path == home or final.path.startswith(home + "/")):
            want = "~" + final.path[len(home):]
            return VerifyResult("prompt_format", False,
                                f"line {line}: the prompt shows {final.path!r}, but this shell abbreviates "
                                f"the home directory {home} as ~ ({want!r})")
        if facts.tilde is False and final.path.startswith("~"):
            return VerifyResult("prompt_format", False,
                                f"line {line}: the prompt shows {final.path!r}, but this shell shows "
                                "absolute paths, never ~")
    return VerifyResult("prompt_format", True)


@verifier("prompt_cwd", "After a command, the prompt's directory follows `cd` (and stays put otherwise).")
def prompt_cwd(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    known, final, command = facts.prompt, view.final, view.command
    if command is None or known is None or known.is_repl or view.changes_prompt or known.path is None:
        return None
    if final is None:
        return _layout_failure("prompt_cwd", view, "no prompt showing the working directory on the last line "
                               "either")
    if final.shape != known.shape or final.path is None:
        return None
    line = _line_no(view, len(view.lines) - 1)
    if not touches_dirs(command, facts):
        if final.path != known.path:
            return VerifyResult("prompt_cwd", False,
                                f"line {line}: the prompt shows {final.path!r}, but `{command[:40]}` does not "
                                f"change directory (it was {known.path!r})")
        return VerifyResult("prompt_cwd", True)
    target = logical_after(facts, command, view)
    if target is None:
        return None
    ok, want = path_verdict(target, final.path, facts, final.family)
    if ok is None:
        return None
    if not ok:
        return VerifyResult("prompt_cwd", False,
                            f"line {line}: the prompt shows {final.path!r}, but after `{command[:50]}` the "
                            f"working directory is {want!r}")
    return VerifyResult("prompt_cwd", True)


def _echo_expectations(facts: Facts, view: TurnView) -> list[tuple[str, int, list[str]]]:
    """``(form, line index, expected lines)`` where each candidate form puts the echo."""
    out = []
    for form in view.forms:
        if form == "screen":
            if facts.before:
                out.append((form, len(facts.before) - 1, view.echo))
        elif form == "line":
            start = next((i for i, line in enumerate(view.lines) if line), 0)
            out.append((form, start, view.echo))
        else:
            first = cut_cells(view.echo[0], display_width(facts.prompt_line))
            out.append((form, 0, [first, *view.echo[1:]]))
    return out


@verifier("command_echo", "The typed keystrokes appear right after the previous prompt.")
def command_echo(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    if view.typed is None or facts.prompt is None or not view.echo:
        return None
    if view.echo_at is not None:
        return VerifyResult("command_echo", True)
    if any(status != "missing" for status in view.status.values()):
        return None  # the screen scrolled: the echo may have left it
    expectations = _echo_expectations(facts, view)
    if not expectations:
        return None
    _, at, want = expectations[0]
    got = view.lines[at] if at < len(view.lines) else "<missing>"
    return VerifyResult("command_echo", False,
                        f"line {_line_no(view, at)}: expected the echo {want[0][:70]!r}, got {got[:70]!r}")


@verifier("typed_echo_only", "Keystrokes without Enter only extend the prompt line with the echo.")
def typed_echo_only(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    if view.typed is None or view.enter or facts.prompt is None or not view.echo:
        return None
    lines = view.lines
    first_failure: tuple[int, str, str] | None = None
    for form, at, want in _echo_expectations(facts, view):
        if form == "screen":
            assert facts.before is not None
            expected = facts.before[:-1] + want
            if facts.rows is None or len(expected) > facts.rows:
                if lines == expected:
                    return VerifyResult("typed_echo_only", True)
                return None  # it may have scrolled
        else:
            expected = [""] * at + want
        if lines == expected:
            return VerifyResult("typed_echo_only", True)
        if first_failure is None:
            diff = next((i for i, (a, b) in enumerate(zip(lines, expected, strict=False)) if a != b),
                        min(len(lines), len(expected)))
            got = lines[diff] if diff < len(lines) else "<missing>"
            wanted = expected[diff] if diff < len(expected) else "<nothing>"
            first_failure = (diff, wanted, got)
    if first_failure is None:
        return None
    diff, wanted, got = first_failure
    return VerifyResult("typed_echo_only", False,
                        f"line {_line_no(view, diff)}: expected {wanted[:70]!r}, got {got[:70]!r} "
                        "(no Enter was pressed)")


@verifier("exact_output", "Fully determined outputs (echo literal, pwd, cat of a file written earlier) match.")
def exact_output(ctx: TurnContext) -> VerifyResult | None:
    facts, view = _context(ctx)
    command, known = view.command, facts.prompt
    if command is None or known is None or known.is_repl or facts.pending:
        return None
    expected = expected_output(facts, command)
    if expected is None:
        return None
    tail = [chunk for logical in (expected + known.text).split("\n") for chunk in wrap(logical, facts.cols)]
    if view.echo_at is None:
        layout = _layout_failure("exact_output", view, f"`{command[:50]}` must print {expected[:80]!r}")
        if layout is not None or view.final is None or not view.lines:
            return layout
        # The echo scrolled out of sight: the output and the prompt still end the screen.
        got = view.lines[-len(tail):]
        if got == tail or expected.endswith("\n") and got[:-1] == tail[:-1]:
            return VerifyResult("exact_output", True)
        return VerifyResult("exact_output", False,
                            f"line {_line_no(view, max(0, len(view.lines) - len(tail)))}: `{command[:50]}` must "
                            f"print {expected[:80]!r} before the prompt ending the screen")
    start = view.echo_at + len(view.echo)
    got = view.lines[start:]
    if got == tail:
        return VerifyResult("exact_output", True)
    if expected.endswith("\n") and view.final is not None and got[:-1] == tail[:-1]:
        return VerifyResult("exact_output", True)  # only the prompt differs: prompt_* verifiers judge it
    diff = next((i for i, (a, b) in enumerate(zip(got, tail, strict=False)) if a != b), min(len(got), len(tail)))
    shown = got[diff] if diff < len(got) else "<nothing>"
    return VerifyResult("exact_output", False,
                        f"line {_line_no(view, start + diff)}: `{command[:50]}` must print {expected[:80]!r}; "
                        f"the screen shows {shown[:80]!r}")


def echo_position(ctx: TurnContext) -> int | None:
    """Index of the echo's first line in the turn's observation (None when not located)."""
    return _context(ctx)[1].echo_at


def final_prompt(ctx: TurnContext) -> Prompt | None:
    """The idle prompt the turn's observation ends at, read with the session's knowledge."""
    return _context(ctx)[1].final


VERIFIERS: tuple[Verifier, ...] = (
    screen_geometry, prompt_format, prompt_cwd, command_echo, typed_echo_only, exact_output,
)
