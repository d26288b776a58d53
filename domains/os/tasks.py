"""The ``basic`` task suite: everyday desktop work in mousepad (a GTK text editor) and galculator (a GTK
calculator) under openbox — editing and saving files, dialogs, closing windows, switching windows,
calculating with the keyboard and with the mouse, copying between applications.

Every task has a setup (files in the home directory, applications to start), a scripted reference solution
mixing both action forms (pyautogui code and computer_13 JSON), and a checker that only acts through
``env.step`` and reads the next accessibility tree, so a simulator's episode is judged the same way:

* a saved file is shown by opening it in a separate mousepad instance
  (``mousepad --disable-server <file>``, so an open, unsaved buffer is not mistaken for the file) and
  reading that window's text;
* a widget's text (galculator's display, the editor's buffer) and the windows that exist are read from
  the tree after a harmless probe action (``time.sleep``).

Checkers read OSWorld's XML form (the env's default observation); a table observation cannot say which
application a row belongs to, and the checker says so.

Coordinates in the solutions follow from the window placement :mod:`.desktop` gives openbox (mousepad at
(40, 40), galculator at (1000, 40)) on the default 1920x1080 screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from awctl.domain import CheckResult, Task
from awctl.env import Environment

from .a11y import Node, parse_observation
from .actions import code_text, computer13_text

PROBE = code_text("time.sleep(0.2)")


def code(src: str) -> str:
    return code_text(src)


def c13(action_type: str, **parameters: Any) -> str:
    return computer13_text(action_type, **parameters)


# ── reading the tree ─────────────────────────────────────────────────────────────────────────────────


class NeedsXml(Exception):
    pass


def tree_of(observation: str) -> Node:
    obs = parse_observation(observation)
    if obs.tree is None:
        raise NeedsXml("this checker reads OSWorld's XML tree; the env returned the table form "
                       "(set [domains.os] observation = 'xml')")
    return obs.tree


def app_nodes(tree: Node, app: str) -> list[Node]:
    return [a for a in tree.children if a.tag == "application" and a.name == app]


def windows(tree: Node, app: str) -> list[Node]:
    """The showing top-level windows (frames, dialogs) of every instance of ``app``."""
    return [w for a in app_nodes(tree, app) for w in a.children if w.state("showing")]


def first_text(node: Node) -> Node | None:
    return next((n for n in node.iter() if n.tag == "text"), None)


def galculator_display(tree: Node) -> str | None:
    for frame in windows(tree, "galculator"):
        text = first_text(frame)
        if text is not None:
            return (text.text or "").strip()
    return None


def probe(env: Environment) -> Node:
    return tree_of(env.step(PROBE).observation)


def _guard(fn: Callable[[Environment], CheckResult]) -> Callable[[Environment], CheckResult]:
    def check(env: Environment) -> CheckResult:
        try:
            return fn(env)
        except NeedsXml as exc:
            return CheckResult(False, str(exc), 0.0)

    return check


# ── checkers ─────────────────────────────────────────────────────────────────────────────────────────


def read_saved_file(env: Environment, rel: str, attempts: int = 6) -> str | None:
    """Open ``~/rel`` in a separate mousepad and return its text (None if no such window appeared).

    The editor is started detached from the action's output (an OSWorld server's ``/execute`` waits for
    the output pipes to close, which a GUI program holding them never does)."""
    name = rel.rsplit("/", 1)[-1]
    tree = tree_of(env.step(code(
        "import os, subprocess\n"
        f"subprocess.Popen(['mousepad', '--disable-server', os.path.expanduser('~/{rel}')], "
        "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)"
    )).observation)
    for _ in range(attempts):
        # The separate instance is a new application node after the others; its window is named after the file.
        for app in reversed(app_nodes(tree, "mousepad")):
            for frame in app.children:
                if frame.name.lstrip("*").endswith(f"/{name} - Mousepad"):
                    text = first_text(frame)
                    return (text.text or "") if text is not None else ""
        tree = tree_of(env.step(code("time.sleep(0.5)")).observation)
    return None


def saved_file_is(rel: str, expected: str) -> Callable[[Environment], CheckResult]:
    """Checker: the file ``~/rel`` holds exactly ``expected``."""

    @_guard
    def check(env: Environment) -> CheckResult:
        got = read_saved_file(env, rel)
        if got is None:
            return CheckResult(False, f"~/{rel} could not be opened to read it", 0.0)
        if got != expected:
            return CheckResult(False, f"~/{rel} holds {got[:200]!r}, expected {expected[:200]!r}", 0.0)
        return CheckResult(True, f"~/{rel} holds the expected text", 1.0)

    return check


def display_is(expected: str) -> Callable[[Environment], CheckResult]:
    """Checker: galculator's display shows ``expected``."""

    @_guard
    def check(env: Environment) -> CheckResult:
        shown = galculator_display(probe(env))
        if shown is None:
            return CheckResult(False, "no galculator window shows a display", 0.0)
        if shown != expected:
            return CheckResult(False, f"galculator shows {shown!r}, expected {expected!r}", 0.0)
        return CheckResult(True, f"galculator shows {expected}", 1.0)

    return check


def windows_are(**counts: int) -> Callable[[Environment], CheckResult]:
    """Checker: each named application shows exactly that many windows (0 = closed)."""

    @_guard
    def check(env: Environment) -> CheckResult:
        tree = probe(env)
        for app, n in counts.items():
            app_name = app.replace("_", "-")
            got = len(windows(tree, app_name))
            if got != n:
                return CheckResult(False, f"{app_name} shows {got} window(s), expected {n}", 0.0)
        return CheckResult(True, "the expected windows are open", 1.0)

    return check


def all_of(*checks: Callable[[Environment], CheckResult]) -> Callable[[Environment], CheckResult]:
    def check(env: Environment) -> CheckResult:
        for c in checks:
            result = c(env)
            if not result.ok:
                return result
        return CheckResult(True, "all checks passed", 1.0)

    return check


# ── the suite ────────────────────────────────────────────────────────────────────────────────────────

NOTES = "first line\nsecond line\n"
_MOUSEPAD_NOTES: dict[str, Any] = {"files": {"notes.txt": NOTES}, "apps": [["mousepad", "~/notes.txt"]]}
_CALC: dict[str, Any] = {"apps": ["galculator"]}
_BOTH: dict[str, Any] = {"files": {"notes.txt": NOTES}, "apps": ["galculator", ["mousepad", "~/notes.txt"]]}

# Centres of galculator's buttons with its window at (1000, 40) (read from the tree).
KEYPAD = {"7": (1037, 272), "8": (1104, 272), "9": (1171, 272), "/": (1238, 272), "sqrt": (1305, 272),
          "4": (1037, 319), "5": (1104, 319), "6": (1171, 319), "*": (1238, 319),
          "1": (1037, 366), "2": (1104, 366), "3": (1171, 366), "-": (1238, 366), "=": (1305, 390),
          "0": (1037, 413), ".": (1104, 413), "+": (1238, 413), "AC": (1253, 174)}


def click(key: str) -> str:
    x, y = KEYPAD[key]
    return c13("CLICK", x=x, y=y)


def _task(task_id: str, instruction: str, solution: list[str], check: Callable[[Environment], CheckResult],
          setup: dict[str, Any], tags: tuple[str, ...] = ()) -> Task:
    return Task(id=f"os/basic/{task_id}", domain="os", suite="basic", instruction=instruction,
                solution=solution, check=check, setup=setup, max_turns=15, tags=tags)


BASIC: tuple[Task, ...] = (
    _task("append_line", "Add the line `third line` at the end of ~/notes.txt (open in Mousepad) and save it.",
          [code("pyautogui.hotkey('ctrl', 'end')\npyautogui.write('third line\\n')"),
           code("pyautogui.hotkey('ctrl', 's')")],
          saved_file_is("notes.txt", NOTES + "third line\n"), _MOUSEPAD_NOTES, ("mousepad", "save")),
    _task("replace_all_text", "Replace the whole content of ~/notes.txt with `hello world` (one line) and save.",
          [c13("HOTKEY", keys=["ctrl", "a"]), c13("TYPING", text="hello world\n"), c13("HOTKEY", keys=["ctrl", "s"])],
          saved_file_is("notes.txt", "hello world\n"), _MOUSEPAD_NOTES, ("mousepad", "computer_13")),
    _task("delete_first_line", "Delete the first line of ~/notes.txt in Mousepad and save the file.",
          [code("pyautogui.hotkey('ctrl', 'home')\npyautogui.hotkey('shift', 'down')\npyautogui.press('delete')"),
           code("pyautogui.hotkey('ctrl', 's')")],
          saved_file_is("notes.txt", "second line\n"), _MOUSEPAD_NOTES, ("mousepad", "save")),
    _task("insert_at_top", "Insert the line `title` above the first line of ~/notes.txt and save.",
          [c13("HOTKEY", keys=["ctrl", "home"]), c13("TYPING", text="title\n"), c13("HOTKEY", keys=["ctrl", "s"])],
          saved_file_is("notes.txt", "title\n" + NOTES), _MOUSEPAD_NOTES, ("mousepad", "computer_13")),
    _task("undo_typo", "Type `oops` into ~/notes.txt, undo it, then add `done` as a new last line and save.",
          [code("pyautogui.hotkey('ctrl', 'end')\npyautogui.write('oops')"), code("pyautogui.hotkey('ctrl', 'z')"),
           code("pyautogui.hotkey('ctrl', 'end')\npyautogui.write('done\\n')\npyautogui.hotkey('ctrl', 's')")],
          saved_file_is("notes.txt", NOTES + "done\n"), _MOUSEPAD_NOTES, ("mousepad", "undo")),
    _task("save_as_new_file", "In the empty Mousepad window write `draft notes` and save it as ~/draft.txt.",
          [code("pyautogui.write('draft notes\\n')"), code("pyautogui.hotkey('ctrl', 's')"),
           code("pyautogui.write('~/draft.txt')"), "WAIT", code("pyautogui.press('enter')")],
          saved_file_is("draft.txt", "draft notes\n"), {"apps": ["mousepad"]}, ("mousepad", "dialog")),
    _task("close_unmodified", "Close the Mousepad window.",
          [c13("HOTKEY", keys=["alt", "f4"])],
          windows_are(mousepad=0), _MOUSEPAD_NOTES, ("window", "computer_13")),
    _task("close_discard_changes", "Type `scratch` into ~/notes.txt, then close Mousepad without saving.",
          [code("pyautogui.write('scratch')"), code("pyautogui.hotkey('alt', 'f4')"),
           code("pyautogui.hotkey('shift', 'tab')\npyautogui.press('space')")],
          all_of(windows_are(mousepad=0), saved_file_is("notes.txt", NOTES)), _MOUSEPAD_NOTES, ("window", "dialog")),
    _task("close_save_changes", "Add `saved on close` at the end of ~/notes.txt, then close Mousepad, saving.",
          [code("pyautogui.hotkey('ctrl', 'end')\npyautogui.write('saved on close\\n')"),
           c13("HOTKEY", keys=["alt", "f4"]), c13("PRESS", key="enter")],
          all_of(windows_are(mousepad=0), saved_file_is("notes.txt", NOTES + "saved on close\n")),
          _MOUSEPAD_NOTES, ("window", "dialog")),
    _task("add_numbers", "Use the calculator to compute 12 + 30.",
          [code("pyautogui.write('12+30=')")], display_is("42"), _CALC, ("galculator",)),
    _task("multiply_typing", "Use the calculator to compute 125 × 8.",
          [c13("TYPING", text="125*8="), "DONE"], display_is("1000"), _CALC, ("galculator", "computer_13")),
    _task("divide_with_mouse", "Compute 9 ÷ 4 with the calculator by clicking its buttons.",
          [click("9"), click("/"), click("4"), click("=")], display_is("2.25"), _CALC, ("galculator", "mouse")),
    _task("square_root", "Compute the square root of 81 with the calculator.",
          [code("pyautogui.write('81')"), code(f"pyautogui.click({KEYPAD['sqrt'][0]}, {KEYPAD['sqrt'][1]})")],
          display_is("9"), _CALC, ("galculator", "mouse")),
    _task("subtract_negative", "Compute 5 - 12 with the calculator, clicking the keypad.",
          [code("\n".join(f"pyautogui.click{KEYPAD[k]}" for k in ("5", "-", "1", "2", "=")))],
          display_is("-7"), _CALC, ("galculator", "mouse")),
    _task("switch_to_calculator", "Mousepad has the focus. Switch to the calculator and compute 7 + 8.",
          [code("pyautogui.hotkey('alt', 'tab')"), code("pyautogui.write('7+8=')")],
          display_is("15"), _BOTH, ("window", "galculator")),
    _task("quit_calculator", "Quit the calculator, keeping Mousepad open.",
          [c13("CLICK", x=1171, y=118), c13("HOTKEY", keys=["ctrl", "q"])],
          windows_are(galculator=0, mousepad=1), _BOTH, ("window", "computer_13")),
    _task("copy_result_to_notes", "Compute 6 × 7 in the calculator and append the result as a new last line of "
          "~/notes.txt, then save.",
          [code("pyautogui.hotkey('alt', 'tab')\npyautogui.write('6*7=')"), code("pyautogui.hotkey('ctrl', 'c')"),
           code("pyautogui.hotkey('alt', 'tab')"),
           code("pyautogui.hotkey('ctrl', 'end')\npyautogui.hotkey('ctrl', 'v')\npyautogui.press('enter')"),
           code("pyautogui.hotkey('ctrl', 's')")],
          saved_file_is("notes.txt", NOTES + "42\n"), _BOTH, ("window", "clipboard")),
    _task("select_word_and_replace", "In ~/notes.txt replace the word `second` with `2nd` by double-clicking it, "
          "then save.",
          [c13("DOUBLE_CLICK", x=64, y=136), c13("TYPING", text="2nd"), c13("HOTKEY", keys=["ctrl", "s"])],
          saved_file_is("notes.txt", "first line\n2nd line\n"), _MOUSEPAD_NOTES, ("mousepad", "mouse")),
)


TASKS_BY_ID: dict[str, Task] = {t.id: t for t in BASIC}
