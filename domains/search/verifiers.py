"""Deterministic verifiers for search-domain turns.

Each check reads the candidate observation from :class:`TurnContext` (so it judges a simulator's
prediction as well as a recording) and returns ``None`` when it does not apply to the turn. Error
observations (``Error: ...``: rate limits, timeouts, 404s, and the Qwen tools' own failure texts) are
legitimate answers to any action and are left alone by every check except ``observation_parses``.

Both observation layouts of :mod:`awctl_domains.search.codec` are checked. Numbering convention checked by
``search_numbering``: result numbers restart at 1 in every query block. What differs in the Qwen layout:

* its blocks carry no numbers, and a block may be the tools' no-results or timeout text instead of a list
  (its query, when it names one, must still be the action's query at that position);
* ``Date published:`` and ``Source:`` lines are optional and the snippet may be absent (the engine gives
  them or not), so ``search_fields_present`` asks only for a title and a URL, and for a value on every
  label line present; dates are the engine's free text, so ``dates_valid`` accepts the usual written
  forms (ISO, "Mar 3, 2024", "3 March 2024", RFC 2822, "5 days ago", "2024年3月5日") rather than only ISO;
* a trajectory without a ``top_k`` in its metadata is held to the tools' 10 results per query;
* a visit's evidence and summary are written by an LLM, so ``extract_consistent_with_search`` has nothing
  exact to compare and does not apply; ``extract_matches_action`` checks its URLs and goal.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import re
from typing import Any
from urllib.parse import urlsplit

from awctl.domain import TurnContext, Verifier, VerifyResult, verifier
from awctl.errors import CodecError

from .codec import (
    ErrorReply,
    MemoryReply,
    PageExtract,
    SearchAction,
    SearchActionCodec,
    SearchObservationCodec,
    SearchResults,
    VisitReport,
)
from .engine import DEFAULT_TOP_K, words
from .env import MemoryStore

_ACTIONS = SearchActionCodec()
_OBS = SearchObservationCodec()
_EXPECTED_KIND: dict[str, tuple[type, ...]] = {
    "web_search": (SearchResults,),
    "web_extractor": (PageExtract, VisitReport),
    "memory": (MemoryReply,),
}
QWEN_TOP_K = 10  # the Qwen tools' search returns the engine's first page: 10 results


def _action(ctx: TurnContext) -> SearchAction | None:
    if "action" not in ctx.state:
        try:
            ctx.state["action"] = _ACTIONS.parse(ctx.action)
        except CodecError:
            ctx.state["action"] = None
    return ctx.state["action"]


def _observation(ctx: TurnContext) -> Any:
    """The parsed candidate observation, or the CodecError raised parsing it."""
    if "obs" not in ctx.state:
        try:
            ctx.state["obs"] = _OBS.parse(ctx.observation)
        except CodecError as exc:
            ctx.state["obs"] = exc
    return ctx.state["obs"]


def _typed(ctx: TurnContext, kind: type) -> Any:
    obs = _observation(ctx)
    return obs if isinstance(obs, kind) else None


def _top_k(ctx: TurnContext, obs: SearchResults) -> int:
    # A trajectory recorded with another top-k says so in its metadata (the recorder writes it).
    default = QWEN_TOP_K if obs.layout == "qwen" else DEFAULT_TOP_K
    return int(ctx.trajectory.metadata.get("top_k", default))


@verifier(
    "observation_parses",
    "the observation parses, and has the kind the action's tool returns (or is an error)",
)
def observation_parses(ctx: TurnContext) -> VerifyResult:
    obs = _observation(ctx)
    if isinstance(obs, CodecError):
        return VerifyResult("observation_parses", False, obs.message)
    action = _action(ctx)
    if action is None:
        ok = isinstance(obs, ErrorReply)
        return VerifyResult(
            "observation_parses", ok, "" if ok else "an invalid action must get an Error: reply"
        )
    if isinstance(obs, (ErrorReply, *_EXPECTED_KIND[action.name])):
        return VerifyResult("observation_parses", True)
    return VerifyResult(
        "observation_parses", False, f"{action.name} returned a {type(obs).__name__} observation"
    )


@verifier(
    "search_numbering",
    "result numbers run 1, 2, 3... without gaps in every query block; blocks are numbered 1..n",
)
def search_numbering(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return None
    if obs.layout == "awctl" and list(obs.block_numbers) != list(range(1, len(obs.blocks) + 1)):
        return VerifyResult("search_numbering", False, f"query blocks numbered {list(obs.block_numbers)}")
    for b, block in enumerate(obs.blocks, 1):
        if list(block.numbers) != list(range(1, len(block.results) + 1)):
            return VerifyResult(
                "search_numbering", False, f"query {b}: results numbered {list(block.numbers)}, expected 1..n"
            )
    return VerifyResult("search_numbering", True)


@verifier(
    "search_result_count",
    "each block's 'Results: n' / 'found n results' equals its results, n <= top-k; one block per query, "
    "in order",
)
def search_result_count(ctx: TurnContext) -> VerifyResult | None:
    obs, action = _typed(ctx, SearchResults), _action(ctx)
    if obs is None:
        return None
    k = _top_k(ctx, obs)
    for b, block in enumerate(obs.blocks, 1):
        if block.notice is None and block.declared != len(block.results):
            return VerifyResult(
                "search_result_count",
                False,
                f"query {b}: says {block.declared} results, lists {len(block.results)}",
            )
        if len(block.results) > k:
            return VerifyResult(
                "search_result_count", False, f"query {b}: {len(block.results)} results > top-k {k}"
            )
    if action is not None and action.name == "web_search":
        queries = action.arguments["queries"]
        # A Qwen timeout block names no query (None); it still stands in its query's place.
        shown = [block.query for block in obs.blocks]
        if len(shown) != len(queries) or any(
            s is not None and s != q for s, q in zip(shown, queries, strict=True)
        ):
            return VerifyResult(
                "search_result_count", False, f"blocks answer {shown}, the action asked {queries}"
            )
    return VerifyResult("search_result_count", True)


@verifier(
    "search_fields_present",
    "every result has a URL and a non-empty title; awctl results also a Snippet and a Date, Qwen results a "
    "value on each Date published:/Source: line they have",
)
def search_fields_present(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return None
    for b, block in enumerate(obs.blocks, 1):
        for n, r in enumerate(block.results, 1):
            if obs.layout == "qwen":
                fields = [("title", r.title), ("URL", r.url)]
                fields += [
                    (name, v)
                    for name, v in (("Date published", r.date), ("Source", r.source))
                    if v is not None
                ]
            else:
                fields = [("Title", r.title), ("Snippet", r.snippet), ("Date", r.date)]
            empty = [name for name, v in fields if not (v or "").strip()]
            if empty:
                return VerifyResult("search_fields_present", False, f"query {b} result [{n}]: empty {empty}")
    return VerifyResult("search_fields_present", True)


def _url_ok(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


@verifier("urls_valid", "every result URL and page URL is an http(s) URL with a host")
def urls_valid(ctx: TurnContext) -> VerifyResult | None:
    obs = _observation(ctx)
    if isinstance(obs, SearchResults):
        urls = [r.url for block in obs.blocks for r in block.results]
    elif isinstance(obs, PageExtract):
        urls = [obs.url]
    elif isinstance(obs, VisitReport):
        urls = [p.url for p in obs.pages if p.url is not None]
    else:
        return None
    bad = [u for u in urls if not _url_ok(u)]
    return VerifyResult("urls_valid", not bad, f"malformed URL(s): {bad}" if bad else "")


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


def _date_ok(value: str) -> bool:
    try:
        return len(value) == 10 and _dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


@verifier(
    "dates_valid",
    "every awctl Date is a real calendar date written YYYY-MM-DD; every Qwen 'Date published' a real date in "
    "a form engines write",
)
def dates_valid(ctx: TurnContext) -> VerifyResult | None:
    obs = _observation(ctx)
    if isinstance(obs, SearchResults):
        dates = [r.date for block in obs.blocks for r in block.results if r.date is not None]
        ok = _loose_date_ok if obs.layout == "qwen" else _date_ok
        if obs.layout == "qwen" and not dates:
            return None
    elif isinstance(obs, PageExtract):
        dates, ok = [obs.date], _date_ok
    else:
        return None
    bad = [d for d in dates if not ok(d)]
    return VerifyResult("dates_valid", not bad, f"bad date(s): {bad}" if bad else "")


@verifier(
    "extract_matches_action",
    "a page extract / visit is of the URL(s) the action asked for, with the action's goal",
)
def extract_matches_action(ctx: TurnContext) -> VerifyResult | None:
    obs, action = _observation(ctx), _action(ctx)
    if action is None or action.name != "web_extractor" or not isinstance(obs, (PageExtract, VisitReport)):
        return None
    asked = action.arguments["url"]
    goal = action.arguments.get("goal")
    if isinstance(obs, PageExtract):
        want = asked.split("#", 1)[0] if isinstance(asked, str) else asked
        if obs.url != want:
            return VerifyResult(
                "extract_matches_action", False, f"page is {obs.url}, the action asked for {want}"
            )
        if obs.goal != goal:
            return VerifyResult(
                "extract_matches_action", False, f"Goal line {obs.goal!r} differs from the action's"
            )
        return VerifyResult("extract_matches_action", True)
    # The Qwen tools may fetch several URLs in parallel, so pages may come in any order.
    want_urls = sorted(asked if isinstance(asked, list) else [asked])
    got_urls = sorted(p.url or "?" for p in obs.pages)
    if got_urls != want_urls:
        return VerifyResult(
            "extract_matches_action", False, f"pages are {got_urls}, the action asked for {want_urls}"
        )
    for page in obs.pages:
        if page.notice is None and page.goal != goal:
            return VerifyResult(
                "extract_matches_action",
                False,
                f"page {page.url}: goal {page.goal!r}, the action's is {goal!r}",
            )
    return VerifyResult("extract_matches_action", True)


def _earlier_results(ctx: TurnContext) -> dict[str, list[Any]]:
    """URL -> the results that listed it in earlier turns' (parseable) search observations."""
    if "earlier" not in ctx.state:
        seen: dict[str, list[Any]] = {}
        for turn in ctx.history:
            try:
                obs = _OBS.parse(turn.observation)
            except CodecError:
                continue
            if isinstance(obs, SearchResults):
                for block in obs.blocks:
                    for r in block.results:
                        seen.setdefault(r.url, []).append(r)
        ctx.state["earlier"] = seen
    return ctx.state["earlier"]


@verifier(
    "extract_consistent_with_search",
    "an extract keeps the title and date an earlier result gave its URL, and contains that result's snippet words",
)
def extract_consistent_with_search(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, PageExtract)
    if obs is None:
        return None
    earlier = _earlier_results(ctx).get(obs.url)
    if not earlier:
        return None
    body_words = set(words(obs.body)) | set(words(obs.title))
    for r in earlier:
        if r.title != obs.title:
            return VerifyResult(
                "extract_consistent_with_search", False, f"title {obs.title!r} but search said {r.title!r}"
            )
        if r.date is not None and r.date != obs.date:
            return VerifyResult(
                "extract_consistent_with_search", False, f"date {obs.date} but search said {r.date}"
            )
        if obs.goal is None:  # a goal-filtered extract shows only some passages
            missing = sorted(set(words(r.snippet)) - body_words)
            if missing:
                return VerifyResult(
                    "extract_consistent_with_search",
                    False,
                    f"snippet words missing from the page: {missing[:8]}",
                )
    return VerifyResult("extract_consistent_with_search", True)


@verifier(
    "search_results_consistent",
    "a URL keeps the same title in every search result of the episode, and the same date where both give one",
)
def search_results_consistent(ctx: TurnContext) -> VerifyResult | None:
    obs = _typed(ctx, SearchResults)
    if obs is None:
        return None
    earlier = _earlier_results(ctx)
    current: dict[str, Any] = {}
    for block in obs.blocks:
        for r in block.results:
            for prev in [*earlier.get(r.url, []), *([current[r.url]] if r.url in current else [])]:
                # Engines show a date for a page on some queries and not others (Qwen layout).
                dates_differ = None not in (prev.date, r.date) and prev.date != r.date
                if prev.title != r.title or dates_differ:
                    return VerifyResult(
                        "search_results_consistent", False,
                        f"{r.url}: now {r.title!r} ({r.date}), earlier {prev.title!r} ({prev.date})",
                    )  # fmt: skip
            current[r.url] = r
    return VerifyResult("search_results_consistent", True)


@verifier("memory_replay", "a memory reply equals what replaying every earlier memory action gives, exactly")
def memory_replay(ctx: TurnContext) -> VerifyResult | None:
    action = _action(ctx)
    if action is None or action.name != "memory":
        return None
    if isinstance(_observation(ctx), ErrorReply):
        return None
    store = MemoryStore()
    for turn in ctx.history:
        try:
            prev = _ACTIONS.parse(turn.action)
        except CodecError:
            continue
        # An action answered with an error (a perturbed turn) did not touch memory.
        if prev.name == "memory" and not turn.observation.lstrip("\n").startswith("Error:"):
            store.apply(prev.arguments)
    expected = _OBS.render(store.apply(action.arguments))
    ok = _OBS.normalize(expected) == _OBS.normalize(ctx.observation)
    return VerifyResult("memory_replay", ok, "" if ok else f"expected {expected!r}")


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
