"""Deterministic verifiers for search-domain turns.

Each check reads the candidate observation from :class:`TurnContext` (so it judges a simulator's
prediction as well as a recording) and returns ``None`` when it does not apply to the turn. Error
observations (``Error: ...``: rate limits, timeouts, 404s, and the Qwen tools' own failure texts) are
legitimate answers to any action and are left alone by every check except ``observation_parses``.

Whether a check applies is decided from the turn's action and the trajectory, not from the candidate
alone: a check about search results applies to a ``web_search`` call, one about pages to a
``web_extractor`` call, ``memory_replay`` to a memory call. Where it applies, a candidate that is neither
the kind of observation that tool returns nor an error reply (text that does not parse, a page where
results were due) fails the check, with the expected kind named (:func:`_lacks`); it is not let off as
"does not apply", so text the verifiers cannot read earns no credit.

Every expectation comes from the trajectory: the layout from the tool list its system prompt declares
(:mod:`awctl_domains.search.toolsets`), or, where the tool list names none, from the layout the
observations are written in and the layout of the earlier ones; consistency from earlier results and
earlier memory calls. A trajectory whose tool list is mixed (tools of two layouts) or unknown (no search
tool) says nothing checkable: every verifier abstains on it. A failure names the observation line (where
there is one) and what was expected.

All three layouts of :mod:`awctl_domains.search.codec` are checked. Numbering convention checked by
``search_numbering``: result numbers restart at 1 in every query block. What differs per layout:

* Qwen: blocks carry no numbers, and a block may be the tools' no-results or timeout text instead of a
  list (its query, when it names one, must still be the action's query at that position);
  ``Date published:`` and ``Source:`` lines are optional and the snippet may be absent, so
  ``search_fields_present`` asks only for a title and a URL, and for a value on every label line present;
  dates are the engine's free text, so ``dates_valid`` accepts the usual written forms (ISO, "Mar 3,
  2024", "3 March 2024", RFC 2822, "5 days ago", "2024年3月5日") rather than only ISO; a trajectory without
  a ``top_k`` in its metadata is held to the tools' 10 results per query; a visit's evidence and summary
  are written by an LLM, so ``extract_consistent_with_search`` has nothing exact to compare and does not
  apply; ``extract_matches_action`` checks its URLs and goal.
* AgentWorldBench: blocks state no count and the tool's top-k is not in the trajectory, so
  ``search_result_count`` checks one block per query in order (and a top-k only where the metadata gives
  one); ``Published:`` is optional and free text like the Qwen dates; a page's title is the page's own
  heading, which engines often shorten, so only the snippet is held against the page.
* ``extract_consistent_with_search`` (awctl and AgentWorldBench pages): a page read after a search must not
  contradict the snippet that result gave (:mod:`awctl_domains.search.snippets`); awctl pages also keep the
  result's title and date.
* ``memory_replay`` replays earlier ``memory``/``dict_memory`` calls: a key's value is known from the calls
  that wrote or deleted it (or an earlier read of it); other keys count as absent only where the system
  prompt says memory starts empty, else the check abstains on them.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.errors import CodecError

from .codec import (
    DictMemoryReply,
    ErrorReply,
    ExtractedPages,
    MemoryReply,
    PageExtract,
    SearchAction,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResults,
    VisitReport,
)
from .engine import DEFAULT_TOP_K, words
from .observations import layouts_of as obs_layouts
from .snippets import snippet_contradiction
from .toolsets import ToolSet, memory_starts_empty, tool_set

_ACTIONS = SearchActionCodec()
_OBS = SearchObservationCodec()
_EXPECTED_KIND: dict[str, tuple[type, ...]] = {
    "web_search": (SearchResults,),
    "web_extractor": (PageExtract, VisitReport, ExtractedPages),
    "memory": (MemoryReply,),
    "dict_memory": (DictMemoryReply,),
}
QWEN_TOP_K = 10  # the Qwen tools' search returns the engine's first page: 10 results
_LAYOUT_NAMES = {
    "awctl": "awctl's layout ('Query 1:' / 'URL:' / 'Memory:')",
    "qwen": "the Qwen web-agent layout (\"A Google search for '...'\" / 'The useful information in ...')",
    "awb": "the AgentWorldBench layout ('Search results for \"...\":' / '## Page 1:' / dict_memory JSON)",
}


@lru_cache(maxsize=4096)
def _parse(text: str) -> Any:
    """The parsed observation (frozen objects: safe to share), or the CodecError parsing raised."""
    try:
        return _OBS.parse(text)
    except CodecError as exc:
        return exc


@lru_cache(maxsize=4096)
def _parse_action(text: str) -> SearchAction | None:
    try:
        return _ACTIONS.parse(text)
    except CodecError:
        return None


def _action(ctx: TurnContext) -> SearchAction | None:
    return _parse_action(ctx.action)


def _observation(ctx: TurnContext) -> Any:
    """The parsed candidate observation, or the CodecError raised parsing it."""
    return _parse(ctx.observation)


def _tools(ctx: TurnContext) -> ToolSet:
    if "toolset" not in ctx.state:
        found = tool_set(ctx.system)
        traj = ctx.trajectory
        if traj.source == "openai-chat" and "tool_list" not in traj.metadata:
            # Chat logs imported by older awctl versions carry awctl's tool list whatever their outputs'
            # layout: that list is not the log's own, so it declares nothing.
            found = ToolSet("undeclared", None, found.tools, "a chat import without the log's own tool list")
        ctx.state["toolset"] = found
    return ctx.state["toolset"]


def _typed(ctx: TurnContext, kind: type) -> Any:
    if _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    return obs if isinstance(obs, kind) else None


_KIND_WORDS = {
    "web_search": "search results (one block per query)",
    "web_extractor": "the page(s) the call read",
    "memory": "a 'Memory:' reply",
    "dict_memory": "a dict_memory JSON reply",
}


def _lacks(ctx: TurnContext, check: str, tools: tuple[str, ...]) -> VerifyResult | None:
    """The failure of ``check`` when the turn's action calls one of ``tools`` (so the trajectory says what
    kind of observation answers it) and the candidate is neither that kind nor an error reply; ``None``
    when the check does not apply to the call or the candidate has the expected kind."""
    action = _action(ctx)
    if _tools(ctx).abstain or action is None or action.name not in tools:
        return None
    obs = _observation(ctx)
    if isinstance(obs, (ErrorReply, *_EXPECTED_KIND[action.name])):
        return None
    if isinstance(obs, CodecError):
        where = obs.where.replace("observation ", "") if obs.where else "line 1"
        got = f"{where}: {obs.message}"
    else:
        got = f"line 1: a {type(obs).__name__} observation"
    return VerifyResult(
        check, False, f"{got}; expected {_KIND_WORDS[action.name]} answering the {action.name} call, or an "
        "'Error: ...' reply",
    )  # fmt: skip


def _line(text: str, needle: str, start: int = 0) -> int | None:
    """The 1-based line of ``text`` where ``needle`` first occurs at or after ``start``."""
    at = text.find(needle, start)
    return None if at < 0 else text.count("\n", 0, at) + 1


def _at(text: str, needle: str) -> str:
    line = _line(text, needle)
    return f"line {line}: " if line else ""


def _expected_layouts(ctx: TurnContext) -> tuple[frozenset[str] | None, str]:
    """The layouts this turn's observation may be in, and why: the declared tool set, else the layouts
    the earlier observations have in common (None: nothing established yet)."""
    tools = _tools(ctx)
    if tools.status == "declared":
        return frozenset(
            {tools.layout}
        ), f"the tool list declares the {tools.layout} tool set ({tools.detail})"
    common: frozenset[str] | None = None
    why = ""
    for n, turn in enumerate(ctx.history, 1):
        lay = obs_layouts(_parse(turn.observation))
        if lay is None:
            continue
        common = lay if common is None else common & lay
        if not common:
            return None, ""  # the earlier turns disagree already: nothing to hold this one to
        why = f"turn {n}'s and earlier observations are in that layout"
    return (common, why) if common else (None, "")


@verifier(
    "observation_parses",
    "the observation parses, has the kind the action's tool returns (or is an error), and is in the layout "
    "the tool list (else the earlier observations) establishes",
)
def observation_parses(ctx: TurnContext) -> VerifyResult | None:
    if _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    if isinstance(obs, CodecError):
        return VerifyResult("observation_parses", False, obs.message)
    action = _action(ctx)
    if action is None:
        ok = isinstance(obs, ErrorReply)
        return VerifyResult(
            "observation_parses", ok, "" if ok else "an invalid action must get an Error: reply"
        )
    if not isinstance(obs, (ErrorReply, *_EXPECTED_KIND[action.name])):
        return VerifyResult(
            "observation_parses", False, f"{action.name} returned a {type(obs).__name__} observation"
        )
    layouts, why = _expected_layouts(ctx)
    got = obs_layouts(obs)
    if layouts is not None and got is not None and not layouts & got:
        want = " or ".join(_LAYOUT_NAMES[x] for x in sorted(layouts))
        return VerifyResult(
            "observation_parses", False,
            f"line 1: expected {want}, as {why}; the observation is in {_LAYOUT_NAMES[min(got)]}",
        )  # fmt: skip
    return VerifyResult("observation_parses", True)


def _result_line(text: str, obs: SearchResults, b: int, n: int) -> int | None:
    """The observation line of block ``b``'s ``n``-th result (both 1-based) as written."""
    block = obs.blocks[b - 1]
    number = block.numbers[n - 1] if block.numbers else n
    r = block.results[n - 1]
    if obs.layout == "qwen":
        needle = f"{number}. [{r.title}]({r.url})"
    else:
        needle = f"[{number}] {r.url}"
    start = 0
    for earlier in obs.blocks[: b - 1]:  # skip past earlier blocks that may list the same URL
        for e in earlier.results:
            found = text.find(e.url, start)
            start = found + 1 if found >= 0 else start
    return _line(text, needle, start)


def _where(text: str, obs: SearchResults, b: int, n: int) -> str:
    line = _result_line(text, obs, b, n)
    return f"line {line}: " if line else ""


@verifier(
    "search_numbering",
    "result numbers run 1, 2, 3... without gaps in every query block; blocks are numbered 1..n",
)
def search_numbering(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return _lacks(ctx, "search_numbering", ("web_search",))
    if obs.layout == "awctl" and list(obs.block_numbers) != list(range(1, len(obs.blocks) + 1)):
        return VerifyResult("search_numbering", False, f"query blocks numbered {list(obs.block_numbers)}")
    for b, block in enumerate(obs.blocks, 1):
        if list(block.numbers) != list(range(1, len(block.results) + 1)):
            bad = next(n for n, got in enumerate(block.numbers, 1) if got != n)
            return VerifyResult(
                "search_numbering", False,
                f"{_where(ctx.observation, obs, b, bad)}query {b}: results numbered {list(block.numbers)}, "
                f"expected 1..{len(block.results)} (result {bad} is numbered {block.numbers[bad - 1]})",
            )  # fmt: skip
    return VerifyResult("search_numbering", True)


_BLOCK_HEADS = {
    "awctl": re.compile(r"^Query \d+: ", re.M),
    "awb": re.compile(r'^Search results for "', re.M),
    "qwen": re.compile(
        r"(?:^|\n=======\n)(?=A \w+ search for '|No results found for |Google search Timeout|Tavily)"
    ),
}


def _block_at(text: str, obs: SearchResults, b: int) -> str:
    """``"line N: "`` for query block ``b`` (1-based) as written, or ``""``."""
    heads = list(_BLOCK_HEADS[obs.layout].finditer(text))
    if b > len(heads):
        return ""
    return f"line {text.count(chr(10), 0, heads[b - 1].end()) + 1}: "


def _top_k(ctx: TurnContext, obs: SearchResults) -> int | None:
    # A trajectory recorded with another top-k says so in its metadata (the recorder writes it).
    if "top_k" in ctx.trajectory.metadata:
        return int(ctx.trajectory.metadata["top_k"])
    return {"qwen": QWEN_TOP_K, "awctl": DEFAULT_TOP_K}.get(obs.layout)


@verifier(
    "search_result_count",
    "each block's 'Results: n' / 'found n results' equals its results, n <= top-k; one block per query, "
    "in order",
)
def search_result_count(ctx: TurnContext) -> VerifyResult | None:
    obs, action = _typed(ctx, SearchResults), _action(ctx)
    if obs is None:
        return _lacks(ctx, "search_result_count", ("web_search",))
    k = _top_k(ctx, obs)
    for b, block in enumerate(obs.blocks, 1):
        if block.notice is None and block.declared is not None and block.declared != len(block.results):
            return VerifyResult(
                "search_result_count", False,
                f"{_block_at(ctx.observation, obs, b)}query {b}: says {block.declared} results, lists "
                f"{len(block.results)}; expected the count of the results listed",
            )  # fmt: skip
        if k is not None and len(block.results) > k:
            return VerifyResult(
                "search_result_count", False,
                f"{_block_at(ctx.observation, obs, b)}query {b}: {len(block.results)} results, expected at most "
                f"the top-k {k}",
            )  # fmt: skip
    if action is not None and action.name == "web_search":
        queries = action.arguments["queries"]
        # A Qwen timeout block names no query (None); it still stands in its query's place.
        shown = [block.query for block in obs.blocks]
        if len(shown) != len(queries):
            return VerifyResult(
                "search_result_count", False,
                f"{len(shown)} query block(s) answer {shown}, expected one per query of the action: {queries}",
            )  # fmt: skip
        for b, (s, q) in enumerate(zip(shown, queries, strict=True), 1):
            if s is not None and s != q:
                return VerifyResult(
                    "search_result_count", False,
                    f"{_block_at(ctx.observation, obs, b)}query block {b} answers {s!r}, expected the action's "
                    f"query {b} {q!r}",
                )  # fmt: skip
    return VerifyResult("search_result_count", True)


@verifier(
    "search_fields_present",
    "every result has a URL and a non-empty title; awctl results also a Snippet and a Date, Qwen and "
    "AgentWorldBench results a value on each date/source line they have",
)
def search_fields_present(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return _lacks(ctx, "search_fields_present", ("web_search",))
    for b, block in enumerate(obs.blocks, 1):
        for n, r in enumerate(block.results, 1):
            if obs.layout == "qwen":
                fields = [("title", r.title), ("URL", r.url)]
                fields += [
                    (name, v)
                    for name, v in (("Date published", r.date), ("Source", r.source))
                    if v is not None
                ]
            elif obs.layout == "awb":
                fields = [("Title", r.title), ("URL", r.url)]
                fields += [("Published", r.date)] if r.date is not None else []
            else:
                fields = [("Title", r.title), ("Snippet", r.snippet), ("Date", r.date)]
            empty = [name for name, v in fields if not (v or "").strip()]
            if empty:
                return VerifyResult(
                    "search_fields_present", False,
                    f"{_where(ctx.observation, obs, b, n)}query {b} result [{n}]: empty {empty}",
                )  # fmt: skip
    return VerifyResult("search_fields_present", True)


def _url_ok(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


@verifier("urls_valid", "every result URL and page URL is an http(s) URL with a host")
def urls_valid(ctx: TurnContext) -> VerifyResult | None:
    if _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    if isinstance(obs, SearchResults):
        urls = [r.url for block in obs.blocks for r in block.results]
    elif isinstance(obs, PageExtract):
        urls = [obs.url]
    elif isinstance(obs, VisitReport):
        urls = [p.url for p in obs.pages if p.url is not None]
    elif isinstance(obs, ExtractedPages):
        urls = [p.url for p in obs.pages]
    else:
        return _lacks(ctx, "urls_valid", ("web_search", "web_extractor"))
    bad = [u for u in urls if not _url_ok(u)]
    if not bad:
        return VerifyResult("urls_valid", True)
    return VerifyResult(
        "urls_valid",
        False,
        f"{_at(ctx.observation, bad[0])}malformed URL(s): {bad}, expected http(s)://<host>...",
    )


def _date_ok(value: str) -> bool:
    try:
        return len(value) == 10 and _dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_RELATIVE = re.compile(r"(?:\d+|an?) (?:second|minute|hour|day|week|month|year)s? ago")
_CJK = re.compile(r"(\d{4})年(\d{1,2})月(?:(\d{1,2})日)?")
_WRITTEN = (
    (re.compile(rf"{_MONTHS} \d{{1,2}}, \d{{4}}"), ("%b %d, %Y", "%B %d, %Y")),
    (re.compile(rf"\d{{1,2}} {_MONTHS},? \d{{4}}"), ("%d %b %Y", "%d %B %Y")),
    (re.compile(rf"{_MONTHS} \d{{4}}"), ("%b %Y", "%B %Y")),
)


def _loose_date_ok(value: str) -> bool:
    """A date as search engines write it: ISO (with or without a time), written month forms, RFC 2822,
    relative ("3 days ago") or CJK; every calendar part must exist."""
    value = value.strip()
    if _date_ok(value[:10]) and (len(value) == 10 or value[10] in "T "):
        return True
    if _RELATIVE.fullmatch(value):
        return True
    m = _CJK.fullmatch(value)
    if m:
        try:
            _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
            return True
        except ValueError:
            return False
    for pattern, formats in _WRITTEN:
        if pattern.fullmatch(value):
            text = value.replace(",", "").replace(".", "").replace("Sept", "Sep")
            for fmt in formats:
                try:
                    _dt.datetime.strptime(text, fmt.replace(",", ""))
                    return True
                except ValueError:
                    continue
            return False
    try:
        return email.utils.parsedate_to_datetime(value) is not None
    except (TypeError, ValueError, IndexError):
        return False


@verifier(
    "dates_valid",
    "every awctl Date is a real calendar date written YYYY-MM-DD; every Qwen 'Date published' and "
    "AgentWorldBench 'Published' a real date in a form engines write",
)
def dates_valid(ctx: TurnContext) -> VerifyResult | None:
    if _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    if isinstance(obs, SearchResults):
        dates = [r.date for block in obs.blocks for r in block.results if r.date is not None]
        loose = obs.layout in ("qwen", "awb")
        ok = _loose_date_ok if loose else _date_ok
        if loose and not dates:
            return None
    elif isinstance(obs, PageExtract):
        dates, ok = [obs.date], _date_ok
    else:
        return _lacks(ctx, "dates_valid", ("web_search", "web_extractor"))
    bad = [d for d in dates if not ok(d)]
    if not bad:
        return VerifyResult("dates_valid", True)
    form = "a real date in a form engines write" if ok is _loose_date_ok else "a real date written YYYY-MM-DD"
    return VerifyResult(
        "dates_valid", False, f"{_at(ctx.observation, bad[0])}bad date(s): {bad}, expected {form}"
    )


@verifier(
    "extract_matches_action",
    "a page extract / visit is of the URL(s) the action asked for, with the action's goal",
)
def extract_matches_action(ctx: TurnContext) -> VerifyResult | None:
    if _tools(ctx).abstain:
        return None
    obs, action = _observation(ctx), _action(ctx)
    kinds = (PageExtract, VisitReport, ExtractedPages)
    if action is None or action.name != "web_extractor":
        return None
    if not isinstance(obs, kinds):
        return _lacks(ctx, "extract_matches_action", ("web_extractor",))
    asked = action.arguments["url"]
    goal = action.arguments.get("goal")
    if isinstance(obs, PageExtract):
        want = asked.split("#", 1)[0] if isinstance(asked, str) else asked
        if obs.url != want:
            return VerifyResult(
                "extract_matches_action", False, f"line 1: page is {obs.url}, the action asked for {want}"
            )
        if obs.goal != goal:
            return VerifyResult(
                "extract_matches_action", False,
                f"{_at(ctx.observation, 'Goal: ') or 'line 4: '}Goal line {obs.goal!r}, expected the action's "
                f"goal {goal!r}",
            )  # fmt: skip
        return VerifyResult("extract_matches_action", True)
    if isinstance(obs, ExtractedPages):
        want_urls = asked if isinstance(asked, list) else [asked]
        got_urls = [p.url for p in obs.pages]
        if got_urls != want_urls:
            n = next(
                (i for i, (g, w) in enumerate(zip(got_urls, want_urls, strict=False), 1) if g != w),
                len(got_urls),
            )
            return VerifyResult(
                "extract_matches_action", False,
                f"{_at(ctx.observation, f'## Page {n}: ')}pages are {got_urls} in that order, expected the "
                f"action's {want_urls}",
            )  # fmt: skip
        for n, page in enumerate(obs.pages, 1):
            if page.goal != goal:
                return VerifyResult(
                    "extract_matches_action", False,
                    f"{_at(ctx.observation, f'## Page {n}: ')}page {n}: goal {page.goal!r}, the action's is "
                    f"{goal!r} (a Goal: line only when the action has a goal)",
                )  # fmt: skip
        return VerifyResult("extract_matches_action", True)
    # The Qwen tools may fetch several URLs in parallel, so pages may come in any order.
    want_sorted = sorted(asked if isinstance(asked, list) else [asked])
    got_sorted = sorted(p.url or "?" for p in obs.pages)
    if got_sorted != want_sorted:
        stray = next((p.url for p in obs.pages if p.url not in want_sorted), None)
        return VerifyResult(
            "extract_matches_action", False,
            f"{_at(ctx.observation, stray) if stray else ''}pages are {got_sorted}, expected the action's "
            f"{want_sorted} (in any order)",
        )  # fmt: skip
    for page in obs.pages:
        if page.notice is None and page.goal != goal:
            return VerifyResult(
                "extract_matches_action",
                False,
                f"{_at(ctx.observation, f'in {page.url} for user goal')}page {page.url}: goal {page.goal!r}, "
                f"the action's is {goal!r}",
            )
    return VerifyResult("extract_matches_action", True)


def earlier_results(ctx: TurnContext) -> dict[str, list[tuple[int, Any]]]:
    """URL -> ``(turn number, result)`` for every result that listed it in earlier turns' searches."""
    if "earlier" not in ctx.state:
        seen: dict[str, list[tuple[int, Any]]] = {}
        for n, turn in enumerate(ctx.history, 1):
            obs = _parse(turn.observation)
            if isinstance(obs, SearchResults):
                for block in obs.blocks:
                    for r in block.results:
                        seen.setdefault(r.url, []).append((n, r))
        ctx.state["earlier"] = seen
    return ctx.state["earlier"]


def _contradiction(ctx: TurnContext, url: str, page_text: str, page_line: int) -> VerifyResult | None:
    for n, r in earlier_results(ctx).get(url, []):
        found = snippet_contradiction(r.snippet, page_text) if r.snippet else None
        if found is not None:
            return VerifyResult(
                "extract_consistent_with_search", False,
                f"page {url} (from line {page_line}) says {found.page_says!r} where turn {n}'s search snippet "
                f"for it says {found.said!r}; expected the snippet's words: {found.fragment[:120]!r}",
            )  # fmt: skip
    return None


def _reads_listed(ctx: TurnContext) -> bool:
    """Whether the turn's web_extractor call reads a page an earlier search listed, in a trajectory whose
    pages are awctl or AgentWorldBench pages (a Qwen visit report is an LLM's summary: nothing to hold
    against a snippet)."""
    action = _action(ctx)
    if action is None or action.name != "web_extractor":
        return False
    layouts, _ = _expected_layouts(ctx)
    if layouts is not None and not layouts - {"qwen"}:
        return False
    asked = action.arguments["url"]
    listed = earlier_results(ctx)
    urls = asked if isinstance(asked, list) else [asked]
    return any(u in listed or u.split("#", 1)[0] in listed for u in urls)


@verifier(
    "extract_consistent_with_search",
    "a page read after a search does not contradict that result's snippet; awctl pages also keep its title "
    "and date and contain every snippet word",
)
def extract_consistent_with_search(ctx: TurnContext) -> VerifyResult | None:
    if _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    if isinstance(obs, ExtractedPages):
        pages = [
            (n, p) for n, p in enumerate(obs.pages, 1) if p.error is None and p.url in earlier_results(ctx)
        ]
        if not pages:
            return None
        for n, page in pages:
            line = _line(ctx.observation, f"## Page {n}: ") or 1
            bad = _contradiction(ctx, page.url, f"# {page.title}\n\n{page.body}", line)
            if bad is not None:
                return bad
        return VerifyResult("extract_consistent_with_search", True)
    if not isinstance(obs, PageExtract):
        if not _reads_listed(ctx):
            return None
        return _lacks(ctx, "extract_consistent_with_search", ("web_extractor",))
    earlier = earlier_results(ctx).get(obs.url)
    if not earlier:
        return None
    body_words = set(words(obs.body)) | set(words(obs.title))
    for n, r in earlier:
        if r.title != obs.title:
            return VerifyResult(
                "extract_consistent_with_search", False,
                f"line 2: title {obs.title!r} but turn {n}'s search said {r.title!r}",
            )  # fmt: skip
        if r.date is not None and r.date != obs.date:
            return VerifyResult(
                "extract_consistent_with_search", False,
                f"line 3: date {obs.date} but turn {n}'s search said {r.date}",
            )  # fmt: skip
        if obs.goal is None:  # a goal-filtered extract shows only some passages
            missing = sorted(set(words(r.snippet)) - body_words)
            if missing:
                return VerifyResult(
                    "extract_consistent_with_search",
                    False,
                    f"line {4 + (obs.goal is not None) + 1}: snippet words of turn {n}'s result missing from the "
                    f"page: {missing[:8]}; expected the page to hold every word of that snippet",
                )
    bad = _contradiction(ctx, obs.url, f"{obs.title}\n\n{obs.body}", 1)
    return bad or VerifyResult("extract_consistent_with_search", True)


@verifier(
    "search_results_consistent",
    "a URL keeps the same title in every search result of the episode, and the same date where both give one",
)
def search_results_consistent(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return _lacks(ctx, "search_results_consistent", ("web_search",))
    earlier = earlier_results(ctx)
    current: dict[str, Any] = {}
    for b, block in enumerate(obs.blocks, 1):
        for n, r in enumerate(block.results, 1):
            prevs = [*earlier.get(r.url, []), *([("this", current[r.url])] if r.url in current else [])]
            for turn, prev in prevs:
                # Engines show a date for a page on some queries and not others (Qwen layout).
                dates_differ = None not in (prev.date, r.date) and prev.date != r.date
                if prev.title != r.title or dates_differ:
                    where = "this turn" if turn == "this" else f"turn {turn}"
                    return VerifyResult(
                        "search_results_consistent", False,
                        f"{_where(ctx.observation, obs, b, n)}{r.url}: now {r.title!r} ({r.date}), expected "
                        f"{prev.title!r} ({prev.date}) as in {where}",
                    )  # fmt: skip
            current[r.url] = r
    return VerifyResult("search_results_consistent", True)


_ABSENT = object()


class _Known:
    """What the trajectory so far establishes about one memory tool's store (see the module docstring)."""

    def __init__(self, starts_empty: bool) -> None:
        self.complete = starts_empty
        self.values: dict[str, Any] = {}  # key -> value or _ABSENT; present keys in insertion order
        self.origin: dict[str, int] = {}  # key -> the turn that established its value
        self.order_known = True

    def lookup(self, key: str) -> tuple[bool, Any]:
        if key in self.values:
            return True, self.values[key]
        return self.complete, _ABSENT

    def set(self, key: str, value: Any, turn: int) -> None:
        if self.values.get(key, _ABSENT) is _ABSENT:
            self.values.pop(key, None)  # a new key goes to the end, as in a dict
        self.values[key] = value
        self.origin[key] = turn

    def absent(self, key: str, turn: int) -> None:
        self.values.pop(key, None)
        self.values[key] = _ABSENT
        self.origin[key] = turn

    def learn(self, key: str, value: Any, turn: int) -> None:
        """A read showed ``key``'s value (or its absence) where nothing earlier established it."""
        if key in self.values or self.complete:
            return
        if value is not _ABSENT:
            self.order_known = False  # where it sits among the keys is not known
        self.values[key] = value
        self.origin[key] = turn

    def present(self) -> list[str]:
        return [k for k, v in self.values.items() if v is not _ABSENT]

    def why(self, key: str) -> str:
        turn = self.origin.get(key)
        return f"as of turn {turn}" if turn else "memory starts empty"


def _replay(ctx: TurnContext, tool: str) -> _Known:
    known = _Known(memory_starts_empty(ctx.system))
    for n, turn in enumerate(ctx.history, 1):
        prev = _parse_action(turn.action)
        if prev is None or prev.name != tool:
            continue
        reply = _parse(turn.observation)
        if isinstance(reply, (ErrorReply, CodecError)):
            continue  # an action answered with an error did not touch memory
        args = prev.arguments
        op = args.get("op", args.get("action"))
        key = args.get("key")
        if isinstance(reply, DictMemoryReply) and reply.status == "error" and op == "set":
            continue  # a refused write changed nothing
        if op == "set":
            known.set(key, args["value"], n)
        elif op == "delete":
            known.absent(key, n)
        elif op == "get":
            if isinstance(reply, MemoryReply) and reply.kind in ("value", "missing"):
                known.learn(key, reply.value if reply.kind == "value" else _ABSENT, n)
            elif isinstance(reply, DictMemoryReply):
                value = reply.payload.get("value", _ABSENT) if reply.status == "ok" else _ABSENT
                known.learn(key, value, n)
    return known


def _memory_expected(known: _Known, args: dict[str, Any]) -> MemoryReply | None:
    op, key = args["op"], args.get("key")
    if op == "list":
        return MemoryReply("keys", keys=tuple(sorted(known.present()))) if known.complete else None
    is_known, value = known.lookup(key)
    if not is_known:
        return None
    present = value is not _ABSENT
    if op == "set":
        return MemoryReply("updated" if present else "stored", key)
    if op == "get":
        return MemoryReply("value", key, value) if present else MemoryReply("missing", key)
    return MemoryReply("deleted" if present else "missing", key)


def _dict_memory_check(
    ctx: TurnContext, known: _Known, args: dict[str, Any], obs: DictMemoryReply
) -> VerifyResult | None:
    text, op, key = ctx.observation, args["action"], args.get("key")

    def fail(field: str, message: str) -> VerifyResult:
        quoted = '"' + field + '"'
        return VerifyResult("memory_replay", False, f"{_at(text, quoted)}{message}")

    if obs.action != op:
        return fail("action", f'"action" is {obs.action!r}, expected {op!r} (the call\'s action)')
    if op != "list" and obs.key != key:
        return fail("key", f'"key" is {obs.key!r}, expected {key!r} (the call\'s key)')
    if op == "list":
        if not (known.complete and known.order_known):
            return None
        want = known.present()
        if obs.status != "ok" or obs.payload.get("keys") != want:
            return fail("keys", f"keys {obs.payload.get('keys')!r}, expected {want!r} (insertion order)")
        return VerifyResult("memory_replay", True)
    is_known, value = known.lookup(key)
    if not is_known or (op == "set" and obs.status == "error"):
        return None  # nothing establishes this key; a store may refuse a write
    present = value is not _ABSENT
    if op == "set":
        want = value if present else None
        if obs.payload.get("previous") != want:
            return fail(
                "previous",
                f'"previous" is {obs.payload.get("previous")!r}, expected {want!r} ({known.why(key)})',
            )
        return VerifyResult("memory_replay", True)
    if not present:
        if obs.status != "error":
            return fail("status", f"status {obs.status!r}: key {key!r} is not in memory ({known.why(key)}), "
                                  "expected an error reply")  # fmt: skip
        return VerifyResult("memory_replay", True)
    if obs.status != "ok" or obs.payload.get("value") != value:
        got = obs.payload.get("value") if obs.status == "ok" else f"status {obs.status!r}"
        return fail("value" if obs.status == "ok" else "status",
                    f"{op} of {key!r} returned {got!r}, expected {value!r} ({known.why(key)})")  # fmt: skip
    return VerifyResult("memory_replay", True)


@verifier(
    "memory_replay",
    "a memory / dict_memory reply equals what replaying the trajectory's earlier memory calls gives",
)
def memory_replay(ctx: TurnContext) -> VerifyResult | None:
    action = _action(ctx)
    if action is None or action.name not in ("memory", "dict_memory") or _tools(ctx).abstain:
        return None
    obs = _observation(ctx)
    known = _replay(ctx, action.name)
    if not isinstance(obs, (DictMemoryReply, MemoryReply)):
        return _lacks(ctx, "memory_replay", ("memory", "dict_memory"))
    if action.name == "dict_memory":
        return (
            _dict_memory_check(ctx, known, action.arguments, obs)
            if isinstance(obs, DictMemoryReply)
            else _lacks(ctx, "memory_replay", ("dict_memory",))
        )
    reply = _memory_expected(known, action.arguments)
    if reply is None:
        return None
    expected = _OBS.render(reply)
    ok = _OBS.normalize(expected) == _OBS.normalize(ctx.observation)
    return VerifyResult("memory_replay", ok, "" if ok else f"line 1: expected {expected!r}")


VERIFIERS: tuple[Verifier, ...] = (
    observation_parses,
    search_numbering,
    search_result_count,
    search_fields_present,
    urls_valid,
    dates_valid,
    extract_matches_action,
    extract_consistent_with_search,
    search_results_consistent,
    memory_replay,
)
