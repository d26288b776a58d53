"""Search-agent tasks over the shipped corpus, each with a scripted reference solution and a checker.

Every checker talks to the environment only through ``env.step`` — it reads the agent's answer back
with a ``memory`` ``get``/``list`` action — so it judges an episode in :class:`SearchEnv` or in a
simulator alike. Answers are compared case-insensitively with whitespace collapsed; a fact task passes
when the stored answer contains the expected text.

Suites: ``facts`` (find a fact: search, read the page, store the answer), ``lookup`` (page titles and top
results), ``memory`` (remember, update, delete and recall) and ``all``, in awctl's tool set; ``qwen`` and
``awb`` hold the same tasks in the Qwen web agents' tool set (search, visit with a goal, memory) and in
AgentWorldBench's (web_search, web_extractor with ``urls``, dict_memory). A task of those two suites
names its layout in ``setup["layout"]``, so the real env answers it in that layout and the recorder
declares that tool list.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from awctl.domain import CheckResult, Task

from .codec import DictMemoryReply, MemoryReply, SearchObservationCodec

if TYPE_CHECKING:
    from awctl.env import Environment

DOMAIN = "search"
PY = "https://docs.python.org/3.11"
_OBS = SearchObservationCodec()


def search(*queries: str) -> str:
    return json.dumps({"name": "web_search", "arguments": {"queries": list(queries)}}, ensure_ascii=False)


def extract(url: str, goal: str | None = None) -> str:
    args = {"url": url} if goal is None else {"url": url, "goal": goal}
    return json.dumps({"name": "web_extractor", "arguments": args}, ensure_ascii=False)


def memory(op: str, key: str | None = None, value: str | None = None) -> str:
    args: dict[str, str] = {"op": op}
    if key is not None:
        args["key"] = key
    if value is not None:
        args["value"] = value
    return json.dumps({"name": "memory", "arguments": args}, ensure_ascii=False)


def _call(name: str, args: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCalls:
    """The action texts of one tool set (``layout``: awctl, qwen or awb) for the calls tasks make."""

    layout: str = "awctl"

    @property
    def memory_tool(self) -> str:
        return "dict_memory" if self.layout == "awb" else "memory"

    def search(self, *queries: str) -> str:
        if self.layout == "qwen":
            return _call("search", {"query": list(queries)})
        return search(*queries)

    def extract(self, url: str, goal: str | None = None) -> str:
        if self.layout == "qwen":  # the Qwen agents' visit always has a goal
            return _call("visit", {"url": url, "goal": goal or "the page's main content"})
        if self.layout == "awb":
            return _call("web_extractor", {"urls": [url], "goal": goal or ""})
        return extract(url, goal)

    def memory(self, op: str, key: str | None = None, value: str | None = None) -> str:
        if self.layout != "awb":
            return memory(op, key, value)
        args: dict[str, Any] = {"action": op}
        if key is not None:
            args["key"] = key
        if value is not None:
            args["value"] = value
        return _call("dict_memory", args)


AWCTL_CALLS = ToolCalls()


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _recall(env: Environment, key: str, calls: ToolCalls = AWCTL_CALLS) -> str | None:
    """The stored value of ``key`` read through ``env.step``; None when absent or unreadable."""
    try:
        reply = _OBS.parse(env.step(calls.memory("get", key)).observation)
    except Exception:
        return None
    if isinstance(reply, DictMemoryReply) and reply.status == "ok":
        value = reply.payload.get("value")
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return reply.value if isinstance(reply, MemoryReply) and reply.kind == "value" else None


def _listed(env: Environment, calls: ToolCalls) -> list[str] | None:
    try:
        reply = _OBS.parse(env.step(calls.memory("list")).observation)
    except Exception:
        return None
    if isinstance(reply, DictMemoryReply) and reply.status == "ok":
        return sorted(reply.payload.get("keys") or [])  # a dict lists keys in insertion order
    return list(reply.keys) if isinstance(reply, MemoryReply) and reply.kind == "keys" else None


def contains_check(
    key: str, expected: str, calls: ToolCalls = AWCTL_CALLS
) -> Callable[[Environment], CheckResult]:
    def check(env: Environment) -> CheckResult:
        got = _recall(env, key, calls)
        if got is None:
            return CheckResult(False, f"memory key {key!r} is not set", 0.0)
        ok = _norm(expected) in _norm(got)
        return CheckResult(ok, "" if ok else f"{key}={got[:80]!r} does not contain {expected!r}", float(ok))

    return check


def equals_check(
    expected: dict[str, str], keys: list[str] | None = None, calls: ToolCalls = AWCTL_CALLS
) -> Callable[[Environment], CheckResult]:
    """Each key holds exactly its value (normalised); with ``keys``, memory holds exactly those keys."""

    def check(env: Environment) -> CheckResult:
        problems = []
        for key, want in expected.items():
            got = _recall(env, key, calls)
            if got is None or _norm(got) != _norm(want):
                problems.append(f"{key}={got!r}, expected {want!r}")
        if keys is not None:
            listed = _listed(env, calls)
            if listed != sorted(keys):
                problems.append(f"keys are {listed}, expected {sorted(keys)}")
        ok = not problems
        return CheckResult(ok, "; ".join(problems), float(ok))

    return check


def _fact(
    tid: str, question: str, query: str, url: str, answer: str, expected: str | None = None,
    calls: ToolCalls = AWCTL_CALLS,
) -> Task:  # fmt: skip
    return Task(
        id=f"search/facts/{tid}",
        domain=DOMAIN,
        suite="facts",
        instruction=f"{question} Use web_search and web_extractor to find it, then store your answer "
        f'with {calls.memory_tool} under the key "answer".',
        solution=[
            calls.search(query),
            calls.extract(url, question if calls.layout == "qwen" else None),
            calls.memory("set", "answer", answer),
        ],
        check=contains_check("answer", expected or answer, calls),
        setup={},
        max_turns=8,
        tags=("fact",),
    )


def fact_tasks(calls: ToolCalls = AWCTL_CALLS) -> list[Task]:
    facts = [
        ("assert-exception", "Which exception does a failing assert statement raise?",
              "assert statement", f"{PY}/topics/assert", "AssertionError"),
        ("pass-statement", "What does the Python documentation call the pass statement?",
              "pass statement", f"{PY}/topics/pass", "a null operation", "null operation"),
        ("nonlocal-scope", "Which scope do names in a nonlocal statement refer to?",
              "nonlocal statement", f"{PY}/topics/nonlocal",
              "the nearest enclosing scope excluding globals", "nearest enclosing scope"),
        ("power-minus-one", 'What does the expression "-1**2" evaluate to in Python?',
              "power operator unary", f"{PY}/topics/power", "-1"),
        ("null-object", "What is the name of Python's null object?",
              "null object", f"{PY}/topics/bltin-null-object", "None"),
        ("ellipsis-literal", "Besides the name Ellipsis, how is the ellipsis object written?",
              "ellipsis object", f"{PY}/topics/bltin-ellipsis-object", "..."),
        ("del-unbound", "Which exception does deleting an unbound name raise?",
              "del statement deletion", f"{PY}/topics/del", "NameError"),
        ("heap-smallest", "In a heap built by the heapq module, which element is always the smallest?",
              "heapq heap queue algorithm", f"{PY}/library/heapq.html", "a[0]"),
        ("uuid-random", "Which function of the uuid module creates a random UUID?",
              "uuid random UUID", f"{PY}/library/uuid.html", "uuid4()", "uuid4"),
        ("uuid-rfc", "Which RFC do the uuid module's UUID objects follow?",
              "uuid universally unique identifiers", f"{PY}/library/uuid.html", "RFC 4122"),
        ("secrets-pep", "Which PEP introduced the secrets module?",
              "secrets cryptographically strong", f"{PY}/library/secrets.html", "PEP 506"),
        ("colorsys-hsv", "In the colorsys module, what do the letters of HSV stand for?",
              "colorsys color systems", f"{PY}/library/colorsys.html", "Hue, Saturation, Value"),
        ("sortedcontainers-license", "Under which license is the Sorted Containers library released?",
              "sortedcontainers sorted collections library", "https://pypi.org/project/sortedcontainers/2.4.0/",
              "Apache2"),
        ("pluggy-users", "Pluggy is the core framework of which test runner (named first in its README)?",
              "pluggy plugin hook calling", "https://pypi.org/project/pluggy/1.7.0/", "pytest"),
    ]  # fmt: skip
    return [_fact(*fact, calls=calls) for fact in facts]


def lookup_tasks(calls: ToolCalls = AWCTL_CALLS) -> list[Task]:
    tasks = []
    for slug, url, title in (
        ("truth", f"{PY}/topics/truth", "Truth Value Testing"),
        ("bisect", f"{PY}/library/bisect.html", "bisect — Bisection algorithms"),
        (
            "shlex",
            f"{PY}/library/shlex.html",
            "shlex — A lexical analyzer class for simple shell-like syntaxes",
        ),
    ):
        tasks.append(
            Task(
                id=f"search/lookup/title-{slug}",
                domain=DOMAIN,
                suite="lookup",
                instruction=f'Open the page {url} and store its exact title under the memory key "title".',
                solution=[calls.extract(url), calls.memory("set", "title", title)],
                check=equals_check({"title": title}, calls=calls),
                max_turns=5,
                tags=("lookup",),
            )
        )
    for slug, query, url in (
        ("textwrap", "textwrap dedent", f"{PY}/library/textwrap.html"),
        ("datasketch", "datasketch MinHash", "https://pypi.org/project/datasketch/2.0.0/"),
    ):
        tasks.append(
            Task(
                id=f"search/lookup/top-{slug}",
                domain=DOMAIN,
                suite="lookup",
                instruction=f'Search for "{query}" and store the URL of the first result under the memory '
                'key "top_url".',
                solution=[calls.search(query), calls.memory("set", "top_url", url)],
                check=equals_check({"top_url": url}, calls=calls),
                max_turns=5,
                tags=("lookup",),
            )
        )
    tasks.append(
        Task(
            id="search/lookup/two-modules",
            domain=DOMAIN,
            suite="lookup",
            instruction="Find the documentation pages of the zlib and shlex modules with one search call of two "
            'queries, and store their URLs under the keys "zlib" and "shlex".',
            solution=[
                calls.search("zlib crc32", "shlex quote"),
                calls.memory("set", "zlib", f"{PY}/library/zlib.html"),
                calls.memory("set", "shlex", f"{PY}/library/shlex.html"),
            ],
            check=equals_check(
                {"zlib": f"{PY}/library/zlib.html", "shlex": f"{PY}/library/shlex.html"}, calls=calls
            ),
            max_turns=6,
            tags=("lookup", "multi-query"),
        )
    )
    return tasks


def memory_tasks(calls: ToolCalls = AWCTL_CALLS) -> list[Task]:
    return [
        Task(
            id="search/memory/remember-two",
            domain=DOMAIN,
            suite="memory",
            instruction='Remember that the project codename is "heron" (key "codename") and the release '
            'is "2.1" (key "release").',
            solution=[calls.memory("set", "codename", "heron"), calls.memory("set", "release", "2.1")],
            check=equals_check(
                {"codename": "heron", "release": "2.1"}, keys=["codename", "release"], calls=calls
            ),
            max_turns=5,
            tags=("memory",),
        ),
        Task(
            id="search/memory/update-value",
            domain=DOMAIN,
            suite="memory",
            instruction='Store "draft" under the key "status", then change it to "final". Keep no other keys.',
            solution=[calls.memory("set", "status", "draft"), calls.memory("set", "status", "final")],
            check=equals_check({"status": "final"}, keys=["status"], calls=calls),
            max_turns=5,
            tags=("memory",),
        ),
        Task(
            id="search/memory/delete-scratch",
            domain=DOMAIN,
            suite="memory",
            instruction='Store "x" under "scratch" and "keep me" under "note", then delete "scratch" so that '
            'only "note" remains.',
            solution=[
                calls.memory("set", "scratch", "x"),
                calls.memory("set", "note", "keep me"),
                calls.memory("delete", "scratch"),
            ],
            check=equals_check({"note": "keep me"}, keys=["note"], calls=calls),
            max_turns=6,
            tags=("memory",),
        ),
        Task(
            id="search/memory/recall-copy",
            domain=DOMAIN,
            suite="memory",
            instruction='Store "42" under "a", read it back with memory get, and copy it to the key "b".',
            solution=[
                calls.memory("set", "a", "42"),
                calls.memory("get", "a"),
                calls.memory("set", "b", "42"),
            ],
            check=equals_check({"a": "42", "b": "42"}, keys=["a", "b"], calls=calls),
            max_turns=6,
            tags=("memory",),
        ),
        Task(
            id="search/memory/research-notes",
            domain=DOMAIN,
            suite="memory",
            instruction="Look up the statistics module and the fractions module; store each page title under "
            'the keys "statistics" and "fractions", then store "done" under "status".',
            solution=[
                calls.search("statistics median", "fractions Fraction"),
                calls.extract(f"{PY}/library/statistics.html"),
                calls.memory("set", "statistics", "statistics — Basic statistics module"),
                calls.extract(f"{PY}/library/fractions.html"),
                calls.memory(
                    "set", "fractions", "fractions — Fraction, infinite-precision, rational numbers"
                ),
                calls.memory("set", "status", "done"),
            ],
            check=equals_check(
                {
                    "statistics": "statistics — Basic statistics module",
                    "fractions": "fractions — Fraction, infinite-precision, rational numbers",
                    "status": "done",
                },
                keys=["fractions", "statistics", "status"],
                calls=calls,
            ),
            max_turns=10,
            tags=("memory", "lookup"),
        ),
    ]


SUITES: dict[str, Callable[..., list[Task]]] = {
    "facts": fact_tasks,
    "lookup": lookup_tasks,
    "memory": memory_tasks,
}


#: Suites that hold every task in another tool set than awctl's (the suite name is the layout).
LAYOUT_SUITES = ("qwen", "awb")


def layout_tasks(layout: str) -> list[Task]:
    """Every task in the tool set of ``layout``: same goals, that tool set's calls and memory tool."""
    calls = ToolCalls(layout)
    out = []
    for suite, make in SUITES.items():
        for task in make(calls):
            slug = task.id.rsplit("/", 1)[1]
            task.id = f"search/{layout}/{suite}/{slug}"
            task.suite = layout
            task.setup = {**task.setup, "layout": layout}
            out.append(task)
    return out


def tasks_for(suite: str) -> list[Task]:
    if suite == "all":
        return [t for make in SUITES.values() for t in make()]
    if suite in LAYOUT_SUITES:
        return layout_tasks(suite)
    if suite not in SUITES:
        return []
    return SUITES[suite]()
