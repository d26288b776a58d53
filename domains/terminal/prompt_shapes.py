"""Shell and REPL prompts as a terminal shows them, read without assuming any particular machine.

A :class:`Prompt` is one prompt read off a screen line: its **family** (how PS1 is laid out) and the
fields the family shows. Families recognised:

* ``userhost`` — ``user@host:path$ `` (Debian/Ubuntu's default ``\\u@\\h:\\w\\$ ``; path ``~``, ``~/sub`` or
  absolute), with an optional ``(venv) ``/``(chroot)`` prefix;
* ``bracket`` — ``[user@host dir]$ `` (Red Hat's ``[\\u@\\h \\W]\\$ ``);
* ``shellver`` — ``bash-5.2# `` (``\\s-\\v\\$ ``: what ``bash --norc`` shows);
* ``bare`` — ``$ ``, ``# `` or ``% ``;
* ``repl:<name>`` — an interpreter's prompt: ``python`` (``>>> ``, ``... ``), ``sqlite`` (``sqlite> ``,
  ``   ...> ``), ``mysql`` (``mysql> ``, ``    -> ``), ``psql`` (``db=# ``), ``irb``, ``ipython``, ``gdb``.

The **shape** of a prompt is everything but its path: family, prefix, user, host, sigil. A shell keeps
its prompt's shape until something replaces the shell or its PS1 (``su``, ``ssh``, a REPL, ``PS1=...``);
``cd`` only changes the path. A terminal screen strips trailing spaces, so a prompt read from a screen
line carries the family's usual trailing space in :attr:`Prompt.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_PREFIX = r"(?P<prefix>(?:\([^()\n]{1,40}\) ?)?)"
_USER = r"(?P<user>[A-Za-z_][\w.-]{0,31})"
_HOST = r"(?P<host>[A-Za-z0-9][\w.-]{0,62})"
_SHELL_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("userhost", re.compile(rf"{_PREFIX}{_USER}@{_HOST}:(?P<path>[~/][^\n]*?)(?P<sigil>[#$])")),
    ("bracket", re.compile(rf"{_PREFIX}\[{_USER}@{_HOST} (?P<path>[^\]\n]+)\](?P<sigil>[#$])")),
    ("shellver", re.compile(rf"{_PREFIX}(?P<user>bash|sh|dash|zsh|ksh)-(?P<host>\d+(?:\.\d+)*)(?P<sigil>[#$])")),
    ("bare", re.compile(r"(?P<prefix>)(?P<sigil>[#$%])")),
)
#: Interpreter prompts by REPL name (each pattern matches a whole right-stripped line).
REPLS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r">>>|\.\.\."),
    "sqlite": re.compile(r"sqlite>|\s*\.\.\.>"),
    "mysql": re.compile(r"(?:mysql|MariaDB \[[^\]\n]*\])>|\s*(?:->|'>|\">|`>|/\*>)"),
    "psql": re.compile(r"[\w-]+[=\-(^'\"][#>]"),
    "irb": re.compile(r"irb\([^)\n]*\):\d+:\d+[>*\"']"),
    "ipython": re.compile(r"In \[\d+\]:|\s+\.\.\.:"),
    "gdb": re.compile(r"\(gdb\)"),
}
# Commands that start each REPL (the program name a shell command line starts).
REPL_PROGRAMS: dict[str, str] = {
    "python": "python", "python3": "python", "sqlite3": "sqlite", "mysql": "mysql", "mariadb": "mysql",
    "psql": "psql", "irb": "irb", "ipython": "ipython", "ipython3": "ipython", "gdb": "gdb",
}


@dataclass(frozen=True)
class Prompt:
    """One prompt as shown on a line. ``offset`` is where it starts (output without a final newline puts
    the prompt after it on the same line); ``text`` is the prompt itself, trailing space included."""

    family: str
    text: str
    user: str = ""
    host: str = ""
    path: str | None = None
    sigil: str = ""
    prefix: str = ""
    offset: int = 0

    @property
    def is_repl(self) -> bool:
        return self.family.startswith("repl:")

    @property
    def shape(self) -> tuple[str, str, str, str, str]:
        """What stays the same while one shell runs: family, prefix, user, host, sigil (not the path)."""
        if self.is_repl or self.family == "literal":
            return (self.family, "", "", "", "")
        return (self.family, self.prefix, self.user, self.host, self.sigil)

    def describe(self) -> str:
        """The shape in words, for failure messages."""
        if self.is_repl:
            return f"the {self.family[5:]} prompt {self.text.rstrip()!r}"
        if self.family == "literal":
            return f"the prompt {self.text!r}"
        return f"{self.family} prompt {self.text.rstrip()!r}"

    def with_path(self, path: str) -> Prompt:
        """The same shell's prompt in another directory (families without a path are unchanged)."""
        if self.path is None:
            return self
        return replace(self, path=path, text=render_prompt(self.family, self.prefix, self.user, self.host,
                                                           path, self.sigil), offset=0)


def render_prompt(family: str, prefix: str, user: str, host: str, path: str | None, sigil: str) -> str:
    """The prompt text (with its trailing space) of a shell family for the given fields."""
    if family == "userhost":
        return f"{prefix}{user}@{host}:{path}{sigil} "
    if family == "bracket":
        return f"{prefix}[{user}@{host} {path}]{sigil} "
    if family == "shellver":
        return f"{prefix}{user}-{host}{sigil} "
    return f"{sigil} "


def _shell_prompt(family: str, m: re.Match[str], offset: int) -> Prompt | None:
    fields = m.groupdict()
    path = fields.get("path")
    # "user@host:~# ls $" is a prompt with a command typed after it, not a prompt whose path is "~# ls".
    if path is not None and ("# " in path or "$ " in path or path != path.strip()):
        return None
    return Prompt(family, render_prompt(family, fields["prefix"], fields.get("user") or "",
                                        fields.get("host") or "", path, fields["sigil"]),
                  fields.get("user") or "", fields.get("host") or "", path, fields["sigil"], fields["prefix"],
                  offset)


def parse_shell_prompt(line: str, offset: int = 0) -> Prompt | None:
    """A shell prompt filling the whole (right-stripped) line from ``offset``, with nothing typed after it."""
    text = line.rstrip()[offset:]
    for family, pattern in _SHELL_FAMILIES:
        m = pattern.fullmatch(text)
        if m:
            return _shell_prompt(family, m, offset)
    return None


def parse_repl_prompt(line: str, repl: str | None = None) -> Prompt | None:
    """A REPL prompt filling the whole right-stripped line (``repl`` limits it to one interpreter)."""
    text = line.rstrip()
    for name, pattern in REPLS.items():
        if (repl is None or name == repl) and pattern.fullmatch(text):
            return Prompt(f"repl:{name}", text + " ")
    return None


def parse_prompt(line: str, known: Prompt | None = None, allow_repl: bool = False) -> Prompt | None:
    """The idle prompt a screen line shows, read in the light of the session's ``known`` prompt.

    A line that is a whole prompt of a known family is read as such. Otherwise, when the session's prompt
    is known, the line may end with that prompt after some output that lacked a final newline
    (``fooroot@host:~# ``); the prompt is then read from where it starts. REPL prompts are read while
    the session is in a REPL, when nothing is ``known`` yet, or when ``allow_repl`` (the command may
    have started one): a shell's output line that merely looks like ``>>>`` is not taken for a prompt.
    """
    text = line.rstrip()
    if known is not None and known.is_repl:
        repl = parse_repl_prompt(text, known.family[5:])
        if repl is not None:
            return repl
    whole = parse_shell_prompt(text)
    if whole is not None and (known is None or whole.shape == known.shape):
        return whole
    # Output glued to the prompt reads as part of the first field only for ``user@host`` prompts
    # ("done" + "root@h:~# " -> user "doneroot"); any other whole-line prompt is a prompt of its own.
    glued = whole is None or (whole.family == known.family == "userhost" and whole.user.endswith(known.user)
                              if known is not None else False)
    if known is not None and glued and not known.is_repl and known.family != "literal":
        suffix = prompt_suffix(text, known)
        if suffix is not None:
            return suffix
    if whole is not None:
        return whole
    if known is None or allow_repl or known.is_repl:
        return parse_repl_prompt(text)
    return None


def prompt_suffix(text: str, known: Prompt) -> Prompt | None:
    """``known``'s shape ending ``text`` after other output (``echo -n`` before the prompt), else None."""
    anchor = {"userhost": f"{known.prefix}{known.user}@{known.host}:",
              "bracket": f"{known.prefix}[{known.user}@{known.host} ",
              "shellver": f"{known.prefix}{known.user}-{known.host}{known.sigil}",
              "bare": known.sigil}.get(known.family)
    if not anchor:
        return None
    at = text.rfind(anchor)
    while at > 0:
        found = parse_shell_prompt(text, at)
        if found is not None and found.shape == known.shape:
            return found
        at = text.rfind(anchor, 0, at)
    return None


def repl_started_by(program: str) -> str | None:
    """The REPL a program name starts when run without a script (``python3`` → ``python``)."""
    base = program.rsplit("/", 1)[-1]
    if base in REPL_PROGRAMS:
        return REPL_PROGRAMS[base]
    m = re.fullmatch(r"python\d(?:\.\d+)?", base)
    return "python" if m else None
