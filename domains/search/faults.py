"""Planted faults: one kind of deliberate error per search verifier, put into a copy of a real observation.

Each :class:`awctl.domain.Fault` returns the corrupted observation for a turn, or ``None`` where its kind
cannot occur in that turn (no result to renumber, no earlier search of the page read, no memory read of a
key an earlier call wrote...). The conditions are read from the trajectory only, never by running the
verifier. Corruptions keep the observation's own layout (read and re-written through the codec, byte for
byte elsewhere) unless the layout itself is the fault.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from typing import Any

from awctl.domain import Fault, TurnContext
from awctl.errors import CodecError

from .codec import SearchActionCodec, SearchObservationCodec
from .observations import (
    DictMemoryReply,
    ExtractedPages,
    MemoryReply,
    PageExtract,
    SearchResults,
    VisitReport,
)
from .snippets import ANCHOR, RESYNC, fragments, tokens
from .toolsets import tool_set

_ACTIONS = SearchActionCodec()
_OBS = SearchObservationCodec()


def _parsed(ctx: TurnContext) -> Any:
    try:
        return _OBS.parse(ctx.observation)
    except CodecError:
        return None


def _action(text: str) -> Any:
    try:
        return _ACTIONS.parse(text)
    except CodecError:
        return None


def _first_with_results(obs: SearchResults) -> int | None:
    return next((b for b, block in enumerate(obs.blocks) if block.results), None)


def _result_lines(text: str) -> list[re.Match[str]]:
    """awctl layout: every ``[n] <url>`` line, in order (one per result, blocks in order)."""
    return list(re.finditer(r"^\[(\d+)\] \S+$", text, re.M))


def _awctl_edit(ctx: TurnContext, obs: SearchResults, b: int, edit: Any) -> str:
    """Apply ``edit(text, match)`` to the first result line of block ``b`` in an awctl-layout text."""
    index = sum(len(block.results) for block in obs.blocks[:b])
    return edit(ctx.observation, _result_lines(ctx.observation)[index])


def _with_block(obs: SearchResults, b: int, **changes: Any) -> SearchResults:
    blocks = list(obs.blocks)
    blocks[b] = replace(blocks[b], **changes)
    return replace(obs, blocks=tuple(blocks))


def _with_result(obs: SearchResults, b: int, n: int, **changes: Any) -> SearchResults:
    results = list(obs.blocks[b].results)
    results[n] = replace(results[n], **changes)
    return _with_block(obs, b, results=tuple(results))


# ── the faults ───────────────────────────────────────────────────────────────────────────────────────


def _out_of_order(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if not isinstance(obs, SearchResults) or (b := _first_with_results(obs)) is None:
        return None
    count = len(obs.blocks[b].results)
    numbers = list(range(1, count + 1))
    if count >= 2:
        i = rng.randrange(count - 1)
        numbers[i], numbers[i + 1] = numbers[i + 1], numbers[i]  # two neighbours swap their numbers
    else:
        numbers = [2]
    if obs.layout != "awctl":
        return _OBS.render(_with_block(obs, b, numbers=tuple(numbers)))
    start = sum(len(block.results) for block in obs.blocks[:b])
    lines = _result_lines(ctx.observation)[start : start + count]
    text = ctx.observation
    for m, n in sorted(zip(lines, numbers, strict=True), key=lambda p: -p[0].start()):
        text = text[: m.start(1)] + str(n) + text[m.end(1) :]
    return text


def _malformed_block(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if not isinstance(obs, SearchResults) or (b := _first_with_results(obs)) is None:
        return None
    if obs.layout == "qwen":  # the result line loses its Markdown link: "1. <title> <url>"
        r = obs.blocks[b].results[0]
        head = f"{obs.blocks[b].numbers[0] if obs.blocks[b].numbers else 1}. [{r.title}]({r.url})"
        at = ctx.observation.find(head)
        return (
            ctx.observation[:at]
            + head.replace(f"[{r.title}]({r.url})", f"{r.title} {r.url}", 1)
            + (ctx.observation[at + len(head) :])
        )
    if obs.layout == "awb":
        index = sum(len(block.results) for block in obs.blocks[:b])
        m = list(re.finditer(r"^\[\d+\] \S+$", ctx.observation, re.M))[index]
    else:
        m = _result_lines(ctx.observation)[sum(len(block.results) for block in obs.blocks[:b])]
    # The result's Title line goes missing.
    title_end = ctx.observation.index("\n", m.end() + 1) if "\n" in ctx.observation[m.end() + 1 :] else None
    if title_end is None:
        return None
    return ctx.observation[: m.end()] + ctx.observation[title_end:]


def _query_mismatch(ctx: TurnContext, rng: random.Random) -> str | None:
    obs, action = _parsed(ctx), _action(ctx.action)
    if not isinstance(obs, SearchResults) or action is None or action.name != "web_search":
        return None
    b = rng.randrange(len(obs.blocks))
    block = obs.blocks[b]
    if block.query is None or block.notice is not None:
        return None
    other = f"{block.query} site:reddit.com"  # the engine answered a rewritten query
    if obs.layout != "awctl":
        return _OBS.render(_with_block(obs, b, query=other))
    return re.sub(rf"^Query {b + 1}: .*$", f"Query {b + 1}: {other}", ctx.observation, count=1, flags=re.M)


def _empty_title(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if not isinstance(obs, SearchResults) or (b := _first_with_results(obs)) is None:
        return None
    if obs.layout != "awctl":
        return _OBS.render(_with_result(obs, b, 0, title=""))

    def blank(text: str, m: re.Match[str]) -> str:
        return text[: m.end()] + re.sub(r"^Title: .*$", "Title:", text[m.end() :], count=1, flags=re.M)

    return _awctl_edit(ctx, obs, b, blank)


def _schemeless_url(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    url = None
    if isinstance(obs, SearchResults) and (b := _first_with_results(obs)) is not None:
        url = obs.blocks[b].results[0].url
    elif isinstance(obs, (PageExtract, ExtractedPages, VisitReport)):
        pages = [obs] if isinstance(obs, PageExtract) else [p for p in obs.pages if p.url]
        url = pages[0].url if pages else None
    if not url or "://" not in url:
        return None
    return ctx.observation.replace(url, url.split("://", 1)[1], 1)


def _impossible_date(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if isinstance(obs, PageExtract):
        return re.sub(r"^Date: .*$", "Date: 2026-02-30", ctx.observation, count=1, flags=re.M)
    if not isinstance(obs, SearchResults):
        return None
    label = {"awctl": "Date", "qwen": "Date published", "awb": "Published"}[obs.layout]
    if not any(r.date for block in obs.blocks for r in block.results):
        return None
    return re.sub(rf"^{label}: .*$", f"{label}: 2026-02-30", ctx.observation, count=1, flags=re.M)


def _other_url(ctx: TurnContext, rng: random.Random) -> str | None:
    obs, action = _parsed(ctx), _action(ctx.action)
    if action is None or action.name != "web_extractor":
        return None
    if isinstance(obs, PageExtract):
        url = obs.url
    elif isinstance(obs, (ExtractedPages, VisitReport)) and obs.pages and obs.pages[0].url:
        url = obs.pages[0].url
    else:
        return None
    other = url.rstrip("/") + "/related"  # a neighbouring page, not the one asked for
    return ctx.observation.replace(url, other, 1)


def _retitled_repeat(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if not isinstance(obs, SearchResults):
        return None
    seen: set[str] = set()
    for turn in ctx.history:
        try:
            prev = _OBS.parse(turn.observation)
        except CodecError:
            continue
        if isinstance(prev, SearchResults):
            seen |= {r.url for block in prev.blocks for r in block.results}
    for b, block in enumerate(obs.blocks):
        for n, r in enumerate(block.results):
            if r.url in seen:
                new = f"{r.title} (archived copy)"
                if obs.layout != "awctl":
                    return _OBS.render(_with_result(obs, b, n, title=new))
                index = sum(len(x.results) for x in obs.blocks[:b]) + n
                m = _result_lines(ctx.observation)[index]
                rest = ctx.observation[m.end() :].replace(f"Title: {r.title}", f"Title: {new}", 1)
                return ctx.observation[: m.end()] + rest
    return None


def _swapped_word(word: str, rng: random.Random) -> str:
    if word.isdigit():
        return str(int(word) + rng.randint(1, 9))
    choices = [w for w in ("never", "seven", "northern", "copper", "october", "legacy") if w != word.lower()]
    return rng.choice(choices)


def _contradicted_page(body_prefix: str, body: str, snippet: str, rng: random.Random) -> str | None:
    """``body`` with one word of a snippet fragment it quotes in full replaced (None: it quotes none)."""
    page = body_prefix + body
    toks = tokens(page)
    words = [t.word for t in toks]
    for frag in fragments(snippet):
        for j in range(len(words) - len(frag) + 1):
            if words[j : j + len(frag)] != frag:
                continue
            # A word with ANCHOR agreeing words before it and RESYNC after it, inside the body.
            choices = [
                k
                for k in range(j + ANCHOR, j + len(frag) - RESYNC)
                if toks[k].start >= len(body_prefix) and (words[k].isdigit() or len(words[k]) >= 4)
            ]
            if not choices:
                continue
            digits = [k for k in choices if words[k].isdigit()]
            k = rng.choice(digits or choices)
            tok = toks[k]
            new = _swapped_word(page[tok.start : tok.end], rng)
            start, end = tok.start - len(body_prefix), tok.end - len(body_prefix)
            return body[:start] + new + body[end:]
    return None


def _snippets_for(ctx: TurnContext, url: str) -> list[str]:
    out = []
    for turn in ctx.history:
        try:
            prev = _OBS.parse(turn.observation)
        except CodecError:
            continue
        if isinstance(prev, SearchResults):
            out += [r.snippet for block in prev.blocks for r in block.results if r.url == url and r.snippet]
    return out


def _contradicts_snippet(ctx: TurnContext, rng: random.Random) -> str | None:
    obs = _parsed(ctx)
    if isinstance(obs, PageExtract):
        for snippet in _snippets_for(ctx, obs.url):
            body = _contradicted_page(f"{obs.title}\n\n", obs.body, snippet, rng)
            if body is not None:
                return _OBS.render(replace(obs, body=body))
        return None
    if not isinstance(obs, ExtractedPages):
        return None
    for n, page in enumerate(obs.pages):
        if page.error is not None:
            continue
        for snippet in _snippets_for(ctx, page.url):
            body = _contradicted_page(f"# {page.title}\n\n", page.body, snippet, rng)
            if body is not None:
                pages = list(obs.pages)
                pages[n] = replace(page, body=body)
                return _OBS.render(ExtractedPages(tuple(pages)))
    return None


def _other_value(value: Any, others: list[Any]) -> Any:
    different = [o for o in others if o != value]
    if different:
        return different[-1]  # the read returns the value another key holds
    if isinstance(value, bool) or value is None:
        return "unknown"
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (draft)"
    return [value, "stale"]


def _memory_other_value(ctx: TurnContext, rng: random.Random) -> str | None:
    obs, action = _parsed(ctx), _action(ctx.action)
    if action is None or action.name not in ("memory", "dict_memory"):
        return None
    op_key = "op" if action.name == "memory" else "action"
    if action.arguments.get(op_key) != "get":
        return None
    key = action.arguments["key"]
    written, others = False, []
    for turn in ctx.history:  # the key's value must be one an earlier call of the trajectory wrote
        prev = _action(turn.action)
        if prev is None or prev.name != action.name or prev.arguments.get(op_key) != "set":
            continue
        if prev.arguments["key"] == key:
            written = True
        else:
            others.append(prev.arguments["value"])
    if not written:
        return None
    if isinstance(obs, MemoryReply) and obs.kind == "value":
        return _OBS.render(replace(obs, value=str(_other_value(obs.value, others))))
    if isinstance(obs, DictMemoryReply) and obs.status == "ok" and "value" in obs.payload:
        payload = dict(obs.payload)
        payload["value"] = _other_value(payload["value"], others)
        return _OBS.render(replace(obs, payload=payload))
    return None


_OTHER_LAYOUT = {"awctl": "awb", "awb": "awctl", "qwen": "awb"}


def _layout_switched(ctx: TurnContext, rng: random.Random) -> str | None:
    """A search answered in another layout than the one the trajectory's tool list declares."""
    obs = _parsed(ctx)
    tools = tool_set(ctx.system)
    if not isinstance(obs, SearchResults) or tools.status != "declared" or obs.layout != tools.layout:
        return None
    layout = _OTHER_LAYOUT[obs.layout]
    blocks = tuple(
        replace(
            b,
            results=tuple(replace(r, date=r.date or "2026-01-01") for r in b.results),
            numbers=(),
            declared=len(b.results),
            notice=None,
            query=b.query or "",
        )
        for b in obs.blocks
    )
    return _OBS.render(SearchResults(blocks, layout=layout))  # type: ignore[arg-type]


FAULTS: tuple[Fault, ...] = (
    Fault("result_out_of_order", "search_numbering",
          "two neighbouring results of a query block swap their numbers (a lone result is numbered 2)", _out_of_order),
    Fault("malformed_result_block", "observation_parses",
          "a result block breaks the layout: its Title line is missing (Qwen: its Markdown link)", _malformed_block),
    Fault("query_block_mismatch", "search_result_count",
          "a query block answers another query than the action asked at that position", _query_mismatch),
    Fault("empty_result_title", "search_fields_present", "a result's title is empty", _empty_title),
    Fault("schemeless_url", "urls_valid", "a result or page URL loses its http(s):// scheme", _schemeless_url),
    Fault("impossible_date", "dates_valid", "a result's (or page's) date becomes 2026-02-30", _impossible_date),
    Fault("extract_other_url", "extract_matches_action",
          "the page read is another URL than the action asked for", _other_url),
    Fault("extract_contradicts_snippet", "extract_consistent_with_search",
          "one word of a passage an earlier search snippet quoted from the page is changed on the page "
          "(a number first)", _contradicts_snippet),
    Fault("retitled_repeat_result", "search_results_consistent",
          "a URL an earlier search listed comes back with another title", _retitled_repeat),
    Fault("memory_read_other_value", "memory_replay",
          "a memory read returns another value than the trajectory's earlier write stored (another key's, "
          "else an altered one)", _memory_other_value),
    Fault("search_layout_switched", "observation_parses",
          "a search answered in another layout than the tool list declares", _layout_switched),
)  # fmt: skip
