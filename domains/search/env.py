"""The real search environment: the local FTS5 engine over the shipped corpus plus a key-value memory.

``SearchEnv.step`` takes one action text (any shape :class:`SearchActionCodec` accepts) and returns the
observation text in one of the layouts documented in :mod:`awctl_domains.search.codec`: ``layout="awctl"`` (the
default) or ``layout="qwen"``, which answers web_search and web_extractor exactly as the Qwen web agents'
``search`` and ``visit`` tools lay out their output (memory replies and ``Error:`` lines are the same in
both). In the Qwen layout a visit's evidence is the page's passages that best match the goal and its
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
from .observations import LAYOUTS
from .qwen_layout import UNREADABLE_EVIDENCE, UNREADABLE_SUMMARY, VISIT_NEEDS_GOAL

if TYPE_CHECKING:
    from awctl.domain import Task

READY = "Search session ready. Tools: web_search, web_extractor, memory. Memory is empty."
# The initial state names the layout, so a simulator prompt built from it describes the right one.
READY_QWEN = (
    "Search session ready. Tools: web_search, web_extractor, memory; search and page outputs in the Qwen "
    "web-agent layout. Memory is empty."
)
GOAL_PASSAGES = 3
NO_PASSAGE = "No passage of this page matches the goal."


def goal_passages(page: Page, goal: str, limit: int = GOAL_PASSAGES) -> str:
    """The ``limit`` paragraphs of ``page`` sharing most distinct words with ``goal``, in page order.

    Ties go to the earlier paragraph; paragraphs sharing no word are never chosen.
    """
    wanted = set(words(goal))
    paras = [p for p in page.text.split("\n\n") if p.strip()]
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


class SearchEnv(Environment):
    """A search-agent sandbox: ``web_search``, ``web_extractor`` and ``memory`` over a local corpus.

    ``top_k`` results per query (task ``setup`` may override it with ``{"top_k": n}``); ``layout`` is
    ``"awctl"`` or ``"qwen"`` (see the module docstring).
    """

    domain = "search"

    def __init__(
        self, engine: SearchEngine | None = None, top_k: int = DEFAULT_TOP_K, layout: str = "awctl"
    ) -> None:
        if layout not in LAYOUTS:
            from awctl.errors import ConfigError

            raise ConfigError([f"search env: unknown layout {layout!r}"], hint=f"use one of {list(LAYOUTS)}")
        self.layout = layout
        self.engine = engine or default_engine()
        self.default_top_k = top_k
        self.top_k = top_k
        self.actions = SearchActionCodec()
        self.observations = SearchObservationCodec()
        self.memory = MemoryStore()

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self.memory = MemoryStore()
        setup = task.setup if task else {}
        self.top_k = int(setup.get("top_k", self.default_top_k))
        return READY_QWEN if self.layout == "qwen" else READY

    def execute(self, action: SearchAction) -> Observation:
        """The structured observation for one parsed action, in this env's layout."""
        if action.name == "web_search":
            blocks = []
            for q in action.arguments["queries"]:
                hits = self.engine.search(q, self.top_k)
                results = tuple(SearchResult(h.url, h.title, h.snippet, h.date) for h in hits)
                # An empty qwen block without a declared count renders as the tools' no-results text.
                declared = None if self.layout == "qwen" and not results else len(results)
                blocks.append(QueryBlock(q, results, declared=declared))
            return SearchResults(tuple(blocks), layout=self.layout)  # type: ignore[arg-type]
        if action.name == "web_extractor":
            if self.layout == "qwen":
                return self._visit(action.arguments)
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
