"""Planted faults: deliberate errors of one kind written into a copy of a real terminal observation.

Each :class:`awctl.domain.Fault` edits the recorded observation the way a bad simulator would and names
the verifier that must catch it. A fault returns ``None`` where it cannot apply (no ``cd`` in the turn,
no prompt on the last line...). The edits keep the observation's form: a Terminus header, a prompt's
trailing space and the other lines stay as they were.

* ``echo_other_command`` — the echo shows another command than the one typed (``command_echo``);
* ``cwd_ignores_cd`` — the new prompt stays in the old directory after a ``cd`` (or moves after a ``cd``
  that failed) (``prompt_cwd``);
* ``wrong_pwd_output`` — ``pwd`` prints another directory (``exact_output``);
* ``wrong_echo_output`` — ``echo`` prints other text than its arguments (``exact_output``);
* ``prompt_changes_shape`` — the new prompt has another sigil, user, host or layout (``prompt_format``);
* ``unwrapped_line`` — a line wider than the terminal (``screen_geometry``);
* ``typed_text_runs`` — keystrokes without Enter run as a command (``typed_echo_only``).
"""

from __future__ import annotations

import posixpath
import random
import re

from awctl.domain import Fault, TurnContext

from .prompt_shapes import Prompt, parse_prompt, render_prompt
from .session import action_text, facts_before, geometry, literal_words

_CD = re.compile(r"(^|[;&|]\s*)cd(\s|$)")


def _split(text: str) -> tuple[str, list[str]]:
    """``(header line with its newline or "", raw lines of the body)``."""
    for header in ("New Terminal Output:\n", "Current Terminal Screen:\n"):
        if text.startswith(header):
            return header, text[len(header):].split("\n")
    return "", text.split("\n")


def _last_index(lines: list[str]) -> int | None:
    i = len(lines) - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    return i if i >= 0 else None


def _join(header: str, lines: list[str]) -> str:
    return header + "\n".join(lines)


def _echo_index(lines: list[str], typed: str, below: int) -> int | None:
    """The line (above ``below``) that shows ``typed`` right after a prompt, searched from the bottom;
    or, in incremental form, the first line when it is ``typed`` alone."""
    text = typed.rstrip()
    if not text:
        return None
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    for i in range(below - 1, -1, -1):
        line = lines[i].rstrip()
        if not line.endswith(text):
            continue
        prefix = line[: len(line) - len(text)]
        if parse_prompt(prefix) is not None or not prefix.strip() and i == first:
            return i
    return None


def _final_prompt(ctx: TurnContext) -> tuple[str, list[str], int, Prompt] | None:
    header, lines = _split(ctx.observation)
    last = _last_index(lines)
    if last is None:
        return None
    known = facts_before(ctx).prompt
    prompt = parse_prompt(lines[last], known)
    if prompt is None:
        return None
    return header, lines, last, prompt


def _replace_prompt(line: str, prompt: Prompt, new_text: str) -> str:
    """``line`` with its prompt (from ``prompt.offset``) replaced, keeping a trailing space if it had one."""
    glue = line[: prompt.offset]
    trailing = line.endswith(" ")
    return glue + (new_text if trailing else new_text.rstrip())


# ── the plants ───────────────────────────────────────────────────────────────────────────────────────


def echo_other_command(ctx: TurnContext, rng: random.Random) -> str | None:
    typed, enter = action_text(ctx.action)
    if typed is None or not typed.strip():
        return None
    header, lines = _split(ctx.observation)
    last = _last_index(lines)
    if last is None:
        return None
    at = _echo_index(lines, typed, last if enter else last + 1)
    if at is None:
        return None
    others = sorted({t for t in (action_text(turn.action)[0] for turn in ctx.trajectory.turns)
                     if t and t.strip() and t.strip() != typed.strip() and len(t) <= len(typed) + 20})
    other = rng.choice(others) if others else typed.rstrip() + " -v"
    line = lines[at].rstrip()
    lines[at] = line[: len(line) - len(typed.rstrip())] + other.rstrip()
    return _join(header, lines)


def cwd_ignores_cd(ctx: TurnContext, rng: random.Random) -> str | None:
    typed, enter = action_text(ctx.action)
    if typed is None or not enter or not _CD.search(typed):
        return None
    found = _final_prompt(ctx)
    before = facts_before(ctx).prompt
    if found is None or before is None or before.path is None:
        return None
    header, lines, last, final = found
    if final.path is None or final.shape != before.shape:
        return None
    if final.path != before.path:
        new_path = before.path  # the prompt did not follow the cd
    else:
        words = literal_words(typed)
        if not words or len(words) != 2 or words[0] != "cd" or words[1] in (".", "-"):
            return None
        new_path = posixpath.join(before.path, words[1]) if not words[1].startswith(("/", "~")) else words[1]
        new_path = posixpath.normpath(new_path)
        if new_path == before.path:
            return None
    new = render_prompt(final.family, final.prefix, final.user, final.host, new_path, final.sigil)
    lines[last] = _replace_prompt(lines[last], final, new)
    return _join(header, lines)


def wrong_pwd_output(ctx: TurnContext, rng: random.Random) -> str | None:
    typed, enter = action_text(ctx.action)
    if typed is None or not enter or typed.strip() != "pwd":
        return None
    found = _final_prompt(ctx)
    if found is None:
        return None
    header, lines, last, _ = found
    if last == 0 or not lines[last - 1].startswith("/"):
        return None
    path = lines[last - 1].rstrip()
    choices = [posixpath.dirname(path), path.rstrip("/") + "/src", "/home" + path, "/tmp"]
    choices = [c for c in choices if c and c != path]
    lines[last - 1] = rng.choice(choices)
    return _join(header, lines)


def wrong_echo_output(ctx: TurnContext, rng: random.Random) -> str | None:
    typed, enter = action_text(ctx.action)
    if typed is None or not enter:
        return None
    words = literal_words(typed)
    if not words or words[0] != "echo" or len(words) < 2:
        return None
    found = _final_prompt(ctx)
    if found is None:
        return None
    header, lines, last, final = found
    at = _echo_index(lines, typed, last)
    if at is None:
        return None
    if at + 1 < last:  # the output lines sit between the echo and the prompt
        target = last - 1
        text = lines[target].rstrip()
        variants = [text + "!", text[:-1] if len(text) > 1 else text + "x", text.upper(), " ".join(text.split()),
                    text + " " + text.split()[-1] if text.split() else "x"]
        variants = [v for v in variants if v != text]
        lines[target] = rng.choice(variants)
    elif final.offset > 0:  # echo -n: the output is glued before the prompt
        glue = lines[last][: final.offset]
        lines[last] = glue + glue[-1:] + lines[last][final.offset:]
    else:
        return None
    return _join(header, lines)


def prompt_changes_shape(ctx: TurnContext, rng: random.Random) -> str | None:
    found = _final_prompt(ctx)
    if found is None:
        return None
    header, lines, last, final = found
    flip = {"#": "$", "$": "#", "%": "$"}
    if final.is_repl:
        shell = facts_before(ctx).shell
        if shell is None:
            return None
        variants = [shell.text]
    elif final.family == "userhost":
        other_user = "admin" if final.user != "admin" else "root"
        base = posixpath.basename(final.path or "") or "/"
        variants = [render_prompt("userhost", final.prefix, final.user, final.host, final.path, flip[final.sigil]),
                    render_prompt("userhost", final.prefix, other_user, final.host, final.path, final.sigil),
                    render_prompt("userhost", final.prefix, final.user, final.host + "-2", final.path, final.sigil),
                    render_prompt("bracket", final.prefix, final.user, final.host, "~" if final.path == "~" else base,
                                  final.sigil)]
    elif final.family == "bracket":
        variants = [render_prompt("bracket", final.prefix, final.user, final.host, final.path, flip[final.sigil]),
                    render_prompt("userhost", final.prefix, final.user, final.host, "~", final.sigil)]
    elif final.family == "shellver":
        other = "5.1" if final.host != "5.1" else "5.2"
        variants = [render_prompt("shellver", final.prefix, final.user, final.host, None, flip[final.sigil]),
                    render_prompt("shellver", final.prefix, final.user, other, None, final.sigil)]
    else:
        variants = [render_prompt("bare", "", "", "", None, flip[final.sigil]),
                    render_prompt("shellver", "", "bash", "5.2", None, final.sigil)]
    lines[last] = _replace_prompt(lines[last], final, rng.choice(variants))
    return _join(header, lines)


def unwrapped_line(ctx: TurnContext, rng: random.Random) -> str | None:
    _, cols = geometry(ctx.trajectory)
    if cols is None:
        return None
    header, lines = _split(ctx.observation)
    last = _last_index(lines)
    if last is None:
        return None
    # Two rows of a wrapped line joined into one, or a long line that was never wrapped.
    for i in range(last):
        if len(lines[i]) == cols and lines[i + 1].strip():
            lines[i: i + 2] = [lines[i] + lines[i + 1]]
            return _join(header, lines)
    lines.insert(last, "x" * (cols + rng.randint(1, 20)))
    return _join(header, lines)


def typed_text_runs(ctx: TurnContext, rng: random.Random) -> str | None:
    typed, enter = action_text(ctx.action)
    if typed is None or enter or not typed.strip():
        return None
    header, lines = _split(ctx.observation)
    last = _last_index(lines)
    prompt = facts_before(ctx).prompt
    if last is None or prompt is None:
        return None
    lines[last + 1:] = [typed.split()[-1], prompt.text.rstrip()]
    return _join(header, lines)


FAULTS: tuple[Fault, ...] = (
    Fault("echo_other_command", "command_echo", "the echo shows another command than the one typed",
          echo_other_command),
    Fault("cwd_ignores_cd", "prompt_cwd", "the prompt's directory does not follow cd", cwd_ignores_cd),
    Fault("wrong_pwd_output", "exact_output", "pwd prints another directory", wrong_pwd_output),
    Fault("wrong_echo_output", "exact_output", "echo prints other text than its arguments", wrong_echo_output),
    Fault("prompt_changes_shape", "prompt_format", "the new prompt has another sigil, user, host or layout",
          prompt_changes_shape),
    Fault("unwrapped_line", "screen_geometry", "a line wider than the terminal", unwrapped_line),
    Fault("typed_text_runs", "typed_echo_only", "keystrokes without Enter run as a command", typed_text_runs),
)
