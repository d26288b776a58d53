"""SWE agent tasks over the fixture repositories, each with a reference solution and a checker.

Every checker works only through ``env.step``: it may ``create`` a hidden test module under
``/testbed/tests/`` with the editor, then runs ``python3 -m unittest <ids>`` with a bash action and reads
the exit code from the observation's ``[exit_code: N]`` trailer. So the same checker judges a real
sandbox or a simulator. Reference solutions are scripted editor and bash actions (canonical JSON).

Suites: ``all`` (every task) and one suite per repository (``inikit``, ``ledger``, ``daterange``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from awctl.domain import CheckResult, Task
from awctl.env import Environment

from .codec import BashCall, EditorCall, SweActionCodec, parse_bash

_CODEC = SweActionCodec()
REPOS = ("inikit", "ledger", "daterange")
SUITES = (*REPOS, "all")


def editor(command: str, path: str, **fields: object) -> str:
    """Canonical text of an editor action."""
    view_range = fields.pop("view_range", None)
    call = EditorCall(command, path, view_range=tuple(view_range) if view_range else None, **fields)  # type: ignore[arg-type]
    return _CODEC.render(call)


def bash(command: str) -> str:
    return _CODEC.render(BashCall(command))


def run_tests(*ids: str) -> str:
    return bash(("cd /testbed && python3 -m unittest " + " ".join(ids)).rstrip())


def unittest_checker(ids: tuple[str, ...], hidden: str | None = None, name: str = "") -> Callable[[Environment], CheckResult]:
    """A checker that (optionally) adds hidden test module ``tests/<name>.py`` and runs ``ids`` with unittest."""

    def check(env: Environment) -> CheckResult:
        targets = list(ids)
        if hidden is not None:
            module = f"test_zz_awctl_check_{name}"
            env.step(editor("create", f"/testbed/tests/{module}.py", file_text=hidden))
            targets.insert(0, f"tests.{module}")
        result = env.step(run_tests(*targets))
        parsed = parse_bash(result.observation)
        if parsed is None or parsed.exit_code is None:
            return CheckResult(False, "the test run's observation has no exit code", 0.0)
        ok = parsed.exit_code == 0
        tail = parsed.text.strip().splitlines()[-1:] or [""]
        return CheckResult(ok, f"unittest exit code {parsed.exit_code}: {tail[0]}", 1.0 if ok else 0.0)

    return check


def _task(
    task_id: str, repo: str, instruction: str, solution: list[str], ids: tuple[str, ...], hidden: str | None = None,
    tags: tuple[str, ...] = (),
) -> Task:
    name = task_id.replace("-", "_")
    return Task(
        id=f"swe/{task_id}",
        domain="swe",
        suite=repo,
        instruction=instruction,
        solution=solution,
        check=unittest_checker(ids, hidden, name),
        setup={"repo": repo},
        max_turns=20,
        tags=(repo, *tags),
    )


# ── inikit ───────────────────────────────────────────────────────────────────────────────────────────

_INI = "/testbed/inikit/parser.py"
_INI_INIT = "/testbed/inikit/__init__.py"
_INI_FIX_LAST = editor(
    "str_replace", _INI,
    old_str="    # The last element is the empty string after the final newline.\n    for index in range(len(lines) - 1):",
    new_str="    for index in range(len(lines)):",
)
_INI_FIX_BOOL = editor(
    "str_replace", _INI, old_str="    if value in TRUE_WORDS:", new_str="    value = value.strip().lower()\n    if value in TRUE_WORDS:"
)
_INI_FIX_LINENO = [
    editor("str_replace", _INI, old_str="        line = lines[index].strip()",
           new_str="        lineno = index + 1\n        line = lines[index].strip()"),
    # The first attempt is ambiguous on purpose: the editor answers with both line numbers.
    editor("str_replace", _INI, old_str='f"line {index}', new_str='f"line {lineno}'),
    editor("str_replace", _INI, old_str='f"line {index}: unterminated', new_str='f"line {lineno}: unterminated'),
    editor("str_replace", _INI, old_str='f"line {index}: expected', new_str='f"line {lineno}: expected'),
]
_INI_DUMP = '''

def dump_ini(data):
    """Render {section: {key: value}} as INI text that parse_ini reads back unchanged."""
    out = [f"{key} = {value}" for key, value in data.get(DEFAULT_SECTION, {}).items()]
    for section, values in data.items():
        if section == DEFAULT_SECTION:
            continue
        out.append(f"[{section}]")
        out.extend(f"{key} = {value}" for key, value in values.items())
    return "\\n".join(out) + "\\n"'''
_INI_BOOL_ERR = '    raise ParseError(f"{section}.{key}: not a boolean: {value!r}")'


def _inikit() -> list[Task]:
    t = "tests.test_parser"
    return [
        _task("ini-fix-last-line", "inikit",
              "parse_ini in /testbed/inikit/parser.py drops the last key when the text does not end with a "
              "newline (an off-by-one in the line loop). Fix it; the tests are in /testbed/tests.",
              [editor("view", _INI), _INI_FIX_LAST, run_tests(f"{t}.ParseTest")],
              (f"{t}.ParseTest.test_last_line_without_newline", f"{t}.ParseTest.test_sections_and_default"),
              tags=("bugfix",)),
        _task("ini-fix-bool-case", "inikit",
              "get_bool in the inikit package rejects 'True' and 'OFF': boolean words must be matched "
              "case-insensitively. Fix it.",
              [editor("view", _INI, view_range=[34, 43]), _INI_FIX_BOOL, run_tests(f"{t}.GettersTest")],
              (f"{t}.GettersTest",), tags=("bugfix",)),
        _task("ini-fix-error-line", "inikit",
              "ParseError messages from parse_ini report 0-based line numbers; they must be 1-based "
              "(the first line is line 1). Fix both messages.",
              [bash("grep -n 'line {index}' /testbed/inikit/parser.py"), *_INI_FIX_LINENO,
               run_tests(f"{t}.ParseTest.test_error_reports_line_number")],
              (f"{t}.ParseTest.test_error_reports_line_number",), tags=("bugfix",)),
        _task("ini-add-dump", "inikit",
              "Add a function dump_ini(data) to /testbed/inikit/parser.py that renders a {section: {key: value}} "
              "dict as INI text such that parse_ini(dump_ini(d)) == d (keys of the 'DEFAULT' section come "
              "first, without a header).",
              [editor("str_replace", _INI, old_str=_INI_BOOL_ERR, new_str=_INI_BOOL_ERR + _INI_DUMP),
               bash("cd /testbed && python3 -c \"from inikit.parser import dump_ini; print(dump_ini({'DEFAULT': {'a': '1'}}))\"")],
              (), hidden=_HIDDEN_DUMP, tags=("feature",)),
        _task("ini-rename-get-int", "inikit",
              "Rename get_int to get_integer everywhere in the repository (the package, its exports and the "
              "tests). The old name must no longer exist.",
              [bash("cd /testbed && grep -rn get_int ."),
               editor("str_replace", _INI, old_str="def get_int(", new_str="def get_integer("),
               editor("str_replace", _INI_INIT, old_str="get_bool, get_int, parse_ini", new_str="get_bool, get_integer, parse_ini"),
               editor("str_replace", _INI_INIT, old_str='"get_int"', new_str='"get_integer"'),
               bash("cd /testbed && sed -i 's/get_int\\b/get_integer/g' tests/test_parser.py && git diff --stat"),
               run_tests(f"{t}.GettersTest.test_int")],
              (f"{t}.GettersTest.test_int",), hidden=_HIDDEN_RENAME_INI, tags=("refactor",)),
        _task("ini-docstring", "inikit",
              "Give parse_ini a docstring that starts with 'Parse' and explains that keys before any "
              "section go to the DEFAULT section.",
              [editor("str_replace", _INI, old_str="def parse_ini(text):\n",
                      new_str='def parse_ini(text):\n    """Parse INI text into {section: {key: value}}; keys before any '
                              'section go to the DEFAULT section."""\n')],
              (), hidden=_HIDDEN_DOC_INI, tags=("docs",)),
        _task("ini-semicolon-comments", "inikit",
              "inikit treats only '#' as a comment marker. Make lines starting with ';' comments too.",
              [editor("str_replace", _INI, old_str='line.startswith("#")', new_str='line.startswith(("#", ";"))'),
               bash("cd /testbed && python3 -c \"import inikit; print(inikit.parse_ini('; c\\n[a]\\nx = 1\\n'))\"")],
              (), hidden=_HIDDEN_SEMICOLON, tags=("feature",)),
        _task("ini-all-tests", "inikit",
              "Make the whole inikit test suite pass (python3 -m unittest in /testbed).",
              [run_tests(), _INI_FIX_LAST, _INI_FIX_BOOL, *_INI_FIX_LINENO, run_tests()],
              ("discover",), tags=("bugfix",)),
        _task("ini-version", "inikit",
              "Add a module attribute __version__ = \"1.1.0\" to the inikit package (inikit/__init__.py).",
              [editor("insert", _INI_INIT, insert_line=1, new_str='\n__version__ = "1.1.0"'),
               editor("view", _INI_INIT)],
              (), hidden=_HIDDEN_VERSION, tags=("feature",)),
    ]


_HIDDEN_DUMP = '''import unittest

from inikit import parse_ini
from inikit.parser import dump_ini


class HiddenDumpTest(unittest.TestCase):
    def test_round_trip(self):
        data = {"DEFAULT": {"a": "1"}, "s": {"b": "x y", "c": "3"}, "t": {}}
        self.assertEqual(parse_ini(dump_ini(data)), data)
'''
_HIDDEN_RENAME_INI = '''import unittest

import inikit
from inikit import parser


class HiddenRenameTest(unittest.TestCase):
    def test_new_name_only(self):
        self.assertTrue(hasattr(inikit, "get_integer"))
        self.assertFalse(hasattr(inikit, "get_int"))
        self.assertFalse(hasattr(parser, "get_int"))
'''
_HIDDEN_DOC_INI = '''import unittest

from inikit import parse_ini


class HiddenDocTest(unittest.TestCase):
    def test_docstring(self):
        doc = parse_ini.__doc__ or ""
        self.assertTrue(doc.strip().startswith("Parse"))
        self.assertIn("DEFAULT", doc)
        self.assertIn("section", doc)
'''
_HIDDEN_SEMICOLON = '''import unittest

from inikit import parse_ini


class HiddenSemicolonTest(unittest.TestCase):
    def test_semicolon_comment(self):
        self.assertEqual(parse_ini("; c\\n[a]\\n; d = 2\\nx = 1\\n"), {"DEFAULT": {}, "a": {"x": "1"}})
        self.assertEqual(parse_ini("# c\\n"), {"DEFAULT": {}})
'''
_HIDDEN_VERSION = '''import unittest

import inikit


class HiddenVersionTest(unittest.TestCase):
    def test_version(self):
        self.assertEqual(inikit.__version__, "1.1.0")
        self.assertTrue(callable(inikit.parse_ini))
'''

# ── ledger ───────────────────────────────────────────────────────────────────────────────────────────

_MONEY = "/testbed/ledger/money.py"
_LEDGER_INIT = "/testbed/ledger/__init__.py"
_FIX_CENTS = editor(
    "str_replace", _MONEY, old_str="    return int(float(amount) * 100)",
    new_str='    from decimal import ROUND_HALF_UP, Decimal\n\n'
            '    return int((Decimal(amount) * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))',
)
_FIX_SPLIT = editor(
    "str_replace", _MONEY, old_str="    share = total_cents // parts\n    return [share] * parts",
    new_str="    share, extra = divmod(total_cents, parts)\n    return [share + 1 if i < extra else share for i in range(parts)]",
)
_FIX_NEG = editor("str_replace", _MONEY, old_str='        return "$-" + text[1:]', new_str='        return "-" + text')
_ADD_TAX = '''

def add_tax(cents, rate_percent):
    """cents plus rate_percent of it, rounded half up to a whole cent."""
    from decimal import ROUND_HALF_UP, Decimal

    tax = (Decimal(cents) * Decimal(str(rate_percent)) / 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP)
    return cents + int(tax)
'''
_HIDDEN_TAX = '''import unittest

from ledger.money import add_tax


class HiddenTaxTest(unittest.TestCase):
    def test_half_up(self):
        self.assertEqual(add_tax(1000, 8.25), 1083)
        self.assertEqual(add_tax(199, 10), 219)
        self.assertEqual(add_tax(5, 10), 6)
        self.assertEqual(add_tax(0, 20), 0)
'''
_HIDDEN_RENAME_LEDGER = '''import unittest

import ledger
from ledger import money


class HiddenRenameTest(unittest.TestCase):
    def test_allocate(self):
        self.assertFalse(hasattr(ledger, "split"))
        self.assertFalse(hasattr(money, "split"))
        self.assertEqual(ledger.allocate(100, 4), [25, 25, 25, 25])
'''
_HIDDEN_DOCTEST = '''import doctest
import unittest

from ledger import money


class HiddenDoctestTest(unittest.TestCase):
    def test_format_cents_has_passing_examples(self):
        finder = doctest.DocTestFinder()
        tests = finder.find(money.format_cents, "format_cents", globs={"format_cents": money.format_cents})
        self.assertGreater(sum(len(t.examples) for t in tests), 0)
        runner = doctest.DocTestRunner(verbose=False)
        for test in tests:
            runner.run(test)
        self.assertEqual(runner.failures, 0)
'''


def _ledger() -> list[Task]:
    t = "tests.test_money"
    return [
        _task("ledger-fix-to-cents", "ledger",
              "to_cents('0.29') returns 28 in the ledger package: binary floating point truncation. Make "
              "to_cents exact for decimal strings.",
              [editor("view", _MONEY), run_tests(f"{t}.ToCentsTest"), _FIX_CENTS, run_tests(f"{t}.ToCentsTest")],
              (f"{t}.ToCentsTest",), tags=("bugfix",)),
        _task("ledger-fix-split", "ledger",
              "split(100, 3) in /testbed/ledger/money.py loses a cent. Shares must add up to the total and "
              "differ by at most one cent, larger shares first.",
              [editor("view", _MONEY, view_range=[6, 10]), _FIX_SPLIT, run_tests(f"{t}.SplitTest")],
              (f"{t}.SplitTest",), tags=("bugfix",)),
        _task("ledger-fix-negative-format", "ledger",
              "format_cents(-5) gives '$-0.05'; negative amounts must be written '-$0.05'. Fix it.",
              [bash("grep -n 'cents < 0' -A 2 /testbed/ledger/money.py"), _FIX_NEG, run_tests(f"{t}.FormatTest")],
              (f"{t}.FormatTest",), tags=("bugfix",)),
        _task("ledger-add-tax", "ledger",
              "Add add_tax(cents, rate_percent) to /testbed/ledger/money.py: the amount plus rate_percent "
              "percent of it, rounded half up to a whole cent (add_tax(5, 10) == 6).",
              [editor("view", _MONEY), bash(f"cat >> {_MONEY} <<'EOF'\n{_ADD_TAX.strip(chr(10))}\nEOF"),
               bash("cd /testbed && python3 -c 'from ledger.money import add_tax; print(add_tax(1000, 8.25))'")],
              (), hidden=_HIDDEN_TAX, tags=("feature",)),
        _task("ledger-rename-split", "ledger",
              "Rename the ledger function split to allocate everywhere (module, package exports, tests). "
              "The name split must be gone.",
              [editor("str_replace", _MONEY, old_str="def split(", new_str="def allocate("),
               editor("str_replace", _LEDGER_INIT, old_str="format_cents, split, to_cents",
                      new_str="allocate, format_cents, to_cents"),
               editor("str_replace", _LEDGER_INIT, old_str='["format_cents", "split", "to_cents"]',
                      new_str='["allocate", "format_cents", "to_cents"]'),
               bash("cd /testbed && sed -i -e 's/format_cents, split, to_cents/allocate, format_cents, to_cents/' "
                    "-e 's/\\bsplit(/allocate(/g' tests/test_money.py && grep -n allocate tests/test_money.py"),
               run_tests(f"{t}.SplitTest.test_even_split")],
              (f"{t}.SplitTest.test_even_split", f"{t}.SplitTest.test_rejects_zero_parts"),
              hidden=_HIDDEN_RENAME_LEDGER, tags=("refactor",)),
        _task("ledger-doctest", "ledger",
              "Document format_cents with a docstring containing at least one doctest example that passes.",
              [editor("str_replace", _MONEY, old_str="def format_cents(cents):\n",
                      new_str='def format_cents(cents):\n    """Format integer cents as dollars.\n\n'
                              "    >>> format_cents(123456)\n    '$1,234.56'\n    \"\"\"\n"),
               bash("cd /testbed && python3 -m doctest ledger/money.py && echo doctest ok")],
              (), hidden=_HIDDEN_DOCTEST, tags=("docs",)),
        _task("ledger-all-tests", "ledger",
              "Make the whole ledger test suite pass (python3 -m unittest in /testbed).",
              [run_tests(), _FIX_CENTS, _FIX_SPLIT, _FIX_NEG, run_tests()],
              ("discover",), tags=("bugfix",)),
    ]


# ── daterange ────────────────────────────────────────────────────────────────────────────────────────

_RANGES = "/testbed/daterange/ranges.py"
_FIX_DAYS = editor("str_replace", _RANGES, old_str="        return (self.end - self.start).days",
                   new_str="        return (self.end - self.start).days + 1")
_FIX_OVERLAP = editor("str_replace", _RANGES, old_str="self.start < other.end and other.start < self.end",
                      new_str="self.start <= other.end and other.start <= self.end")
_FIX_WEEKDAYS = editor("str_replace", _RANGES, old_str="day.weekday() < 6", new_str="day.weekday() < 5")
_FIX_REVERSED = editor(
    "str_replace", _RANGES, old_str="    return DateRange(start, end)",
    new_str='    if end < start:\n        raise ValueError(f"range ends before it starts: {text!r}")\n    return DateRange(start, end)',
)
_MERGE = '''

def merge(ranges):
    """Merge overlapping or adjacent ranges; the result is sorted by start."""
    merged = []
    for current in sorted(ranges, key=lambda r: r.start):
        if merged and current.start <= merged[-1].end + timedelta(days=1):
            last = merged[-1]
            merged[-1] = DateRange(last.start, max(last.end, current.end))
        else:
            merged.append(current)
    return merged'''
_HIDDEN_CONTAINS = '''import unittest
from datetime import date

from daterange import DateRange


class HiddenContainsTest(unittest.TestCase):
    def test_contains_is_inclusive(self):
        r = DateRange(date(2024, 3, 1), date(2024, 3, 10))
        self.assertIn(date(2024, 3, 1), r)
        self.assertIn(date(2024, 3, 10), r)
        self.assertNotIn(date(2024, 3, 11), r)
        self.assertNotIn(date(2024, 2, 29), r)
'''
_HIDDEN_MERGE = '''import unittest
from datetime import date

from daterange import DateRange
from daterange.ranges import merge


def r(a, b):
    return DateRange(date(2024, 1, a), date(2024, 1, b))


class HiddenMergeTest(unittest.TestCase):
    def test_merge(self):
        self.assertEqual(merge([r(5, 9), r(1, 3), r(4, 4), r(20, 25), r(22, 23)]), [r(1, 9), r(20, 25)])
        self.assertEqual(merge([]), [])
        self.assertEqual(merge([r(1, 2), r(10, 12)]), [r(1, 2), r(10, 12)])
'''


def _daterange() -> list[Task]:
    t = "tests.test_ranges.RangeTest"
    return [
        _task("dr-fix-days", "daterange",
              "DateRange.days() must count both ends (a one-day range has 1 day); it is off by one. Fix it.",
              [editor("view", _RANGES, view_range=[1, 15]), _FIX_DAYS, run_tests(f"{t}.test_days_counts_both_ends")],
              (f"{t}.test_days_counts_both_ends",), tags=("bugfix",)),
        _task("dr-fix-overlap", "daterange",
              "Ranges are inclusive, so ranges that share an end day overlap; DateRange.overlaps says they "
              "do not. Fix it without breaking the other overlap test.",
              [bash("grep -n overlaps -A 2 /testbed/daterange/ranges.py"), _FIX_OVERLAP,
               run_tests(f"{t}.test_overlap", f"{t}.test_touching_ranges_overlap")],
              (f"{t}.test_overlap", f"{t}.test_touching_ranges_overlap"), tags=("bugfix",)),
        _task("dr-fix-weekdays", "daterange",
              "DateRange.weekdays() counts Saturdays. Count Monday to Friday only.",
              [editor("view", _RANGES), _FIX_WEEKDAYS, run_tests(f"{t}.test_weekdays")],
              (f"{t}.test_weekdays",), tags=("bugfix",)),
        _task("dr-make-test-pass", "daterange",
              "Make the test tests.test_ranges.RangeTest.test_parse_reversed pass.",
              [run_tests(f"{t}.test_parse_reversed"), editor("view", _RANGES, view_range=[27, 33]), _FIX_REVERSED,
               run_tests(f"{t}.test_parse_reversed", f"{t}.test_parse")],
              (f"{t}.test_parse_reversed", f"{t}.test_parse"), tags=("bugfix",)),
        _task("dr-add-contains", "daterange",
              "Support `day in date_range` for DateRange (inclusive at both ends).",
              [editor("str_replace", _RANGES, old_str="    def overlaps(self, other):",
                      new_str="    def __contains__(self, day):\n        return self.start <= day <= self.end\n\n"
                              "    def overlaps(self, other):")],
              (f"{t}.test_each_day",), hidden=_HIDDEN_CONTAINS, tags=("feature",)),
        _task("dr-add-merge", "daterange",
              "Add merge(ranges) to /testbed/daterange/ranges.py: merge overlapping or adjacent DateRanges "
              "(adjacent: the next starts the day after the previous ends) and return them sorted by start.",
              [editor("str_replace", _RANGES, old_str="    return DateRange(start, end)",
                      new_str="    return DateRange(start, end)" + _MERGE)],
              (f"{t}.test_parse",), hidden=_HIDDEN_MERGE, tags=("feature",)),
        _task("dr-all-tests", "daterange",
              "Make the whole daterange test suite pass (python3 -m unittest in /testbed).",
              [run_tests(), _FIX_DAYS, _FIX_OVERLAP, _FIX_WEEKDAYS, _FIX_REVERSED, run_tests()],
              ("discover",), tags=("bugfix",)),
    ]


@cache
def _all_tasks() -> tuple[Task, ...]:
    return (*_inikit(), *_ledger(), *_daterange())


def tasks(suite: str) -> list[Task]:
    """Tasks of ``suite`` (``all`` = every task); unknown suites give an empty list."""
    if suite == "all":
        return list(_all_tasks())
    return [t for t in _all_tasks() if t.suite == suite]
