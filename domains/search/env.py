"""The real search environment: the local FTS5 engine over the shipped corpus plus a key-value memory.

``SearchEnv.step`` takes one action text (any shape :class:`SearchActionCodec` accepts) and returns the
observation text in one of the layouts documented in :mod:`awctl_domains.search.codec`. Each episode uses
the layout of its task's tool set (``task.setup["layout"]``: the suites ``qwen`` and ``awb`` set it), else
the session's default (``SearchEnv(layout=...)``, ``"awctl"`` unless given):

* ``awctl``: web_search, web_extractor and memory in awctl's own layout;
* ``qwen``: web_search and web_extractor answered exactly as the Qwen web agents' ``search`` and ``visit``
  tools lay out their output (memory replies and ``Error:`` lines as in awctl's layout);
* ``awb``: AgentWorldBench's tool set — web_search (``[n] <url>`` blocks), web_extractor (pages as
  Markdown, ``urls`` and ``goal``) and dict_memory (JSON replies, any JSON value, keys listed in insertion
  order). Its pages are the corpus pages' Markdown; with a goal, the page's title and its passages that
  best match the goal.

A call to a memory tool the episode's tool set lacks (``dict_memory`` outside ``awb``, ``memory`` in ``awb``)
is answered ``Error: unknown tool ...``. In the Qwen layout a visit's evidence is the page's passages that best match the goal and its
summary a fixed sentence naming the page, its date and how many passages matched — deterministic
stand-ins for the tools' LLM-written extract; a visit without a goal gets the tools' invalid-request
text, an unknown page their "could not be accessed" page. Everything is deterministic:
the same actions after ``reset`` give byte-identical observations. Memory lives for one episode
(``reset`` empties it). The episode never ends by itself (``done`` is always False); tasks end it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import CodecError

from .awb_layout import MEMORY_NOT_FOUND
from .codec import (
    ErrorReply,
    MemoryReply,
    Observation,
    PageExtract,
    QueryBlock,
    SearchAction,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResult,
    SearchResults,
    VisitPage,
    VisitReport,
)
from .engine import DEFAULT_TOP_K, Page, SearchEngine, default_engine, words
from .observations import LAYOUTS, DictMemoryReply, ExtractedPage, ExtractedPages
from .qwen_layout import UNREADABLE_EVIDENCE, UNREADABLE_SUMMARY, VISIT_NEEDS_GOAL

if TYPE_CHECKING:
    from awctl.domain import Task

READY = "Search session ready. Tools: web_search, web_extractor, memory. Memory is empty."
# The initial state names the layout, so a simulator prompt built from it describes the right one.
READY_QWEN = (
    "Search session ready. Tools: web_search, web_extractor, memory; search and page outputs in the Qwen "
    "web-agent layout. Memory is empty."
)
READY_AWB = (
    "Search session ready. Tools: web_search, web_extractor, dict_memory. The dict_memory store is empty."
)
READY_BY_LAYOUT = {"awctl": READY, "qwen": READY_QWEN, "awb": READY_AWB}
GOAL_PASSAGES = 3
NO_PASSAGE = "No passage of this page matches the goal."


def goal_passages(page: Page, goal: str, limit: int = GOAL_PASSAGES, text: str | None = None) -> str:
    """The ``limit`` paragraphs of ``page`` (or of ``text``) sharing most distinct words with ``goal``, in
    page order.

    Ties go to the earlier paragraph; paragraphs sharing no word are never chosen.
    """
    wanted = set(words(goal))
    paras = [p for p in (page.text if text is None else text).split("\n\n") if p.strip()]
    scored = [(len(wanted & set(words(p))), i) for i, p in enumerate(paras)]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:limit]
    if not best:
        return NO_PASSAGE
    return "\n\n".join(paras[i] for _, i in sorted(best, key=lambda s: s[1]))


class MemoryStore:
    """The per-episode key-value store; :meth:`apply` is the one definition of memory semantics.

    The ``memory_replay`` verifier replays history through this same class, so simulator observations
    are judged against exactly what the real environment would answer.
    """

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def apply(self, args: dict[str, Any]) -> MemoryReply:
        op, key = args["op"], args.get("key")
        if op == "set":
            kind = "updated" if key in self.data else "stored"
            self.data[key] = args["value"]
            return MemoryReply(kind, key)  # type: ignore[arg-type]
        if op == "get":
            return (
                MemoryReply("value", key, self.data[key]) if key in self.data else MemoryReply("missing", key)
            )
        if op == "delete":
            if key not in self.data:
                return MemoryReply("missing", key)
            del self.data[key]
            return MemoryReply("deleted", key)
        return MemoryReply("keys", keys=tuple(sorted(self.data)))


class DictMemoryStore:
    """AgentWorldBench's dict_memory: a dict (insertion order kept) of JSON values; :meth:`apply` is the one
    definition of its replies, used by the env and replayed by the ``memory_replay`` verifier."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def apply(self, args: dict[str, Any]) -> DictMemoryReply:
        action, key = args["action"], args.get("key")
        if action == "list":
            return DictMemoryReply({"status": "ok", "action": "list", "keys": list(self.data)})
        if action == "set":
            previous = self.data.get(key)
            self.data[key] = args["value"]
            return DictMemoryReply({"status": "ok", "action": "set", "key": key, "previous": previous})
        if key not in self.data:
            return DictMemoryReply(
                {"status": "error", "action": action, "key": key, "error": MEMORY_NOT_FOUND}
            )
        value = self.data[key] if action == "get" else self.data.pop(key)
        return DictMemoryReply({"status": "ok", "action": action, "key": key, "value": value})


class SearchEnv(Environment):
    """A search-agent sandbox: ``web_search``, ``web_extractor`` and a memory tool over a local corpus.

    ``top_k`` results per query (task ``setup`` may override it with ``{"top_k": n}``); ``layout`` is the
    default tool set and layout, ``"awctl"``, ``"qwen"`` or ``"awb"``; a task's ``setup["layout"]``
    overrides it for its episode (see the module docstring).
    """

    domain = "search"

    def __init__(
        self, engine: SearchEngine | None = None, top_k: int = DEFAULT_TOP_K, layout: str = "awctl"
    ) -> None:
        if layout not in LAYOUTS:
            from awctl.errors import ConfigError

            raise ConfigError([f"search env: unknown layout {layout!r}"], hint=f"use one of {list(LAYOUTS)}")
        self.default_layout = layout
        self.layout = layout
        self.engine = engine or default_engine()
        self.default_top_k = top_k
        self.top_k = top_k
        self.actions = SearchActionCodec()
        self.observations = SearchObservationCodec()
        self.memory = MemoryStore()
        self.dict_memory = DictMemoryStore()

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self.memory = MemoryStore()
        self.dict_memory = DictMemoryStore()
        setup = task.setup if task else {}
        self.top_k = int(setup.get("top_k", self.default_top_k))
        layout = str(setup.get("layout", self.default_layout))
        if layout not in LAYOUTS:
            from awctl.errors import ConfigError

            raise ConfigError(
                [f"task {task.id if task else '?'}: unknown search layout {layout!r}"],
                hint=f"setup['layout'] is one of {list(LAYOUTS)}",
            )
        self.layout = layout
        return READY_BY_LAYOUT[layout]

    def execute(self, action: SearchAction) -> Observation:
        """The structured observation for one parsed action, in this env's layout."""
        if action.name == "web_search":
            blocks = []
            for q in action.arguments["queries"]:
                hits = self.engine.search(q, self.top_k)
                results = tuple(SearchResult(h.url, h.title, h.snippet, h.date) for h in hits)
                # An empty qwen block without a declared count renders as the tools' no-results text; the
                # awb layout states no count.
                declared = (
                    None if self.layout == "awb" or (self.layout == "qwen" and not results) else len(results)
                )
                blocks.append(QueryBlock(q, results, declared=declared))
            return SearchResults(tuple(blocks), layout=self.layout)  # type: ignore[arg-type]
        if action.name in ("memory", "dict_memory") and (action.name == "dict_memory") != (
            self.layout == "awb"
        ):
            tools = "web_search, web_extractor, " + ("dict_memory" if self.layout == "awb" else "memory")
            return ErrorReply(f"unknown tool {action.name!r}; this session's tools are {tools}")
        if action.name == "dict_memory":
            return self.dict_memory.apply(action.arguments)
        if action.name == "web_extractor":
            if self.layout == "qwen":
                return self._visit(action.arguments)
            if self.layout == "awb":
                return self._extract_pages(action.arguments)
            url = action.arguments["url"]
            if isinstance(url, list):
                return ErrorReply(f"web_extractor reads one URL per call in this layout, got {len(url)}")
            page = self.engine.page(url)
            if page is None:
                return ErrorReply(f"404 Not Found: {url}")
            goal = action.arguments.get("goal")
            body = page.text if goal is None else goal_passages(page, goal)
            return PageExtract(page.url, page.title, page.date, body, goal)
        return self.memory.apply(action.arguments)

    def _extract_pages(self, args: dict[str, Any]) -> ExtractedPages:
        goal = args.get("goal")
        urls = args["url"] if isinstance(args["url"], list) else [args["url"]]
        pages = []
        for url in urls:
            page = self.engine.page(url)
            if page is None:
                pages.append(ExtractedPage(url, None, "", goal, "404 Not Found"))
                continue
            heading = f"# {page.title}"
            # A corpus page's Markdown opens with its title heading; the layout writes that heading itself.
            text = (
                page.text[len(heading) :].lstrip("\n") if page.text.startswith(heading + "\n") else page.text
            )
            body = text if goal is None else goal_passages(page, goal, text=text)
            pages.append(ExtractedPage(url, page.title, body, goal))
        return ExtractedPages(tuple(pages))

    def _visit(self, args: dict[str, Any]) -> Observation:
        goal = args.get("goal")
        if goal is None:
            return ErrorReply(VISIT_NEEDS_GOAL, verbatim=True)
        urls = args["url"] if isinstance(args["url"], list) else [args["url"]]
        pages = []
        for i, url in enumerate(urls):
            page = self.engine.page(url)
            # Every page but the last keeps the blank line the tools leave after a summary.
            trailer = "\n\n" if i < len(urls) - 1 else ""
            if page is None:
                pages.append(VisitPage(url, goal, UNREADABLE_EVIDENCE, UNREADABLE_SUMMARY, trailer=trailer))
                continue
            evidence = goal_passages(page, goal)
            matched = 0 if evidence == NO_PASSAGE else evidence.count("\n\n") + 1
            summary = f"{page.title} ({page.date}): {matched} passage(s) of this page match the goal."
            pages.append(VisitPage(url, goal, evidence, summary, trailer=trailer))
        return VisitReport(tuple(pages))

    def step(self, action: str) -> StepResult:
        try:
            parsed = self.actions.parse(action)
        except CodecError as exc:
            return StepResult(f"Error: invalid action: {exc.message}", info={"error": "codec"})
        obs = self.execute(parsed)
        return StepResult(self.observations.render(obs), info={"tool": parsed.name})
