"""Structured search-domain observations, shared by the text layouts (see :mod:`awctl_domains.search.codec`).

Fields that only one layout writes have defaults, so code building an awctl-layout observation never
names them. Fields marked *style* record how a Qwen-layout text was spaced, so that rendering a parsed
text gives it back byte for byte; they carry no meaning and ``normalize`` ignores them.

Every whole observation (the classes of :data:`Observation`) also has ``text``: the text the codec parsed
it from (``None`` for one built in code). It takes no part in equality; the codec's ``render`` gives it
back while the observation still equals what that text parses to, so any text the codec accepts renders
back byte for byte, and a changed observation (``dataclasses.replace``) renders in the layout's own form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Layout = Literal["awctl", "qwen", "awb"]
#: awctl's own layout, the Qwen web agents' layout, and AgentWorldBench's search tool set.
LAYOUTS: tuple[str, ...] = ("awctl", "qwen", "awb")


@dataclass(frozen=True)
class SearchResult:
    """One hit. ``date`` is None only in the Qwen layout, when the result has no ``Date published:`` line.

    Qwen layout only: ``source`` (the ``Source:`` line, None when absent) and ``snippet_gap`` (*style*:
    newlines between the result's last header line and its snippet — 2 as the Qwen tools write it, 1 as
    some datasets write it, 0 when nothing follows the header).
    """

    url: str
    title: str
    snippet: str
    date: str | None
    source: str | None = None
    snippet_gap: int = 2


@dataclass(frozen=True)
class QueryBlock:
    """The answer to one query.

    ``numbers`` are the result numbers as written and ``declared`` the count the block states (``Results:
    n`` / ``found n results``); empty/None mean "as rendered": 1..n and the number of results.
    Qwen layout only: ``notice`` is the verbatim text of a block that lists no results (the tools' "No
    results found for '<query>'..." or a timeout message) and then ``query`` is the query that text names,
    or None; ``engine`` is the word in "A <engine> search for".
    """

    query: str | None
    results: tuple[SearchResult, ...]
    numbers: tuple[int, ...] = ()
    declared: int | None = None
    notice: str | None = None
    engine: str = "Google"


@dataclass(frozen=True)
class SearchResults:
    """A web_search answer: one block per query, in the action's order.

    ``block_numbers`` are the awctl layout's ``Query <i>:`` numbers as written (the Qwen layout numbers
    no blocks).
    """

    blocks: tuple[QueryBlock, ...]
    block_numbers: tuple[int, ...] = ()
    layout: Layout = "awctl"
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PageExtract:
    """An awctl-layout web_extractor answer: the page (or its passages matching ``goal``) as Markdown."""

    url: str
    title: str
    date: str
    body: str
    goal: str | None = None
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class VisitPage:
    """One page of a Qwen-layout visit: the evidence and summary found in ``url`` for ``goal``.

    A page that could not be fetched at all in a multi-URL visit is a ``notice`` (verbatim text such as
    "Error fetching <url>: ..."), with ``url`` the URL it names or None, and empty evidence and summary.
    *Style*: ``header_space`` follows "as follows:", ``evidence_sep``/``summary_sep`` follow the
    "Evidence in page:"/"Summary:" labels, and ``trailer`` is the whitespace after the summary.
    """

    url: str | None
    goal: str | None
    evidence: str
    summary: str
    notice: str | None = None
    header_space: str = " "
    evidence_sep: str = " \n"
    summary_sep: str = " \n"
    trailer: str = ""


@dataclass(frozen=True)
class VisitReport:
    """A Qwen-layout visit answer: one :class:`VisitPage` per requested URL."""

    pages: tuple[VisitPage, ...]
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class MemoryReply:
    """``kind`` is stored | updated | deleted | missing | value | keys."""

    kind: Literal["stored", "updated", "deleted", "missing", "value", "keys"]
    key: str | None = None
    value: str | None = None
    keys: tuple[str, ...] = field(default_factory=tuple)
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ErrorReply:
    """A failed call. awctl layout: ``Error: <message>``; ``verbatim`` (Qwen layout): the message alone."""

    message: str
    verbatim: bool = False
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ExtractedPage:
    """One page of an AgentWorldBench web_extractor answer.

    ``title`` is the page's Markdown heading and ``body`` the Markdown after it (the whole page, or with a
    ``goal`` the passages relevant to it); a page that could not be read has ``error`` set and no title.
    """

    url: str
    title: str | None
    body: str
    goal: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ExtractedPages:
    """An AgentWorldBench web_extractor answer: one :class:`ExtractedPage` per requested URL, in order."""

    pages: tuple[ExtractedPage, ...]
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class DictMemoryReply:
    """An AgentWorldBench dict_memory reply: a JSON object (``payload``, key order kept).

    Every reply has ``status`` ("ok" | "error") and ``action`` (set | get | delete | list); see the
    codec's docstring for the other keys. *Style*: ``indent``, ``ensure_ascii`` and ``compact`` record
    how the JSON was written so rendering gives the text back byte for byte.
    """

    payload: dict[str, object]
    indent: int | None = None
    ensure_ascii: bool = False
    compact: bool = False
    text: str | None = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> str:
        return str(self.payload.get("status"))

    @property
    def action(self) -> str:
        return str(self.payload.get("action"))

    @property
    def key(self) -> str | None:
        key = self.payload.get("key")
        return key if isinstance(key, str) else None


def layouts_of(obs: object) -> frozenset[str] | None:
    """The layouts an observation can belong to; None for layout-neutral ones (``Error:`` lines)."""
    if isinstance(obs, SearchResults):
        return frozenset({obs.layout})
    if isinstance(obs, PageExtract):
        return frozenset({"awctl"})
    if isinstance(obs, VisitReport):
        return frozenset({"qwen"})
    if isinstance(obs, (ExtractedPages, DictMemoryReply)):
        return frozenset({"awb"})
    if isinstance(obs, MemoryReply):
        return frozenset({"awctl", "qwen"})  # both layouts answer memory the same way
    if isinstance(obs, ErrorReply) and obs.verbatim:
        return frozenset({"qwen"})
    return None


Observation = (
    SearchResults | PageExtract | VisitReport | MemoryReply | ErrorReply | ExtractedPages | DictMemoryReply
)
