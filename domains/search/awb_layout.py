"""The AgentWorldBench search tool set's output layout (``web_search``, ``web_extractor``, ``dict_memory``).

The layout itself is documented in :mod:`awctl_domains.search.codec`. :func:`parse_awb` reads it into the
shared observation classes and :func:`render_awb` writes them back, byte for byte for every text
``parse_awb`` accepts. Errors name the line of the observation that breaks the layout.
"""

from __future__ import annotations

import json
import re
from typing import Any

from awctl.errors import CodecError

from .observations import (
    DictMemoryReply,
    ExtractedPage,
    ExtractedPages,
    Observation,
    QueryBlock,
    SearchResult,
    SearchResults,
)

SEARCH_HEADER = 'Search results for "{query}":'
NO_RESULTS = "No results found."
PAGE_HEADER = "## Page {n}: {url}"
MEMORY_ACTIONS = ("set", "get", "delete", "list")
MEMORY_NOT_FOUND = "key not found"

_SEARCH_HEAD = re.compile(r'Search results for "(.*)":')
_RESULT_HEAD = re.compile(r"\[(\d+)\] (\S+)")
_PAGE_HEAD = re.compile(r"## Page (\d+): (\S+)")
_PAGE_START = re.compile(r"^## Page (\d+): \S+$", re.M)
_FIELDS = ("Title", "Snippet")
_DATE = "Published"


def _err(message: str, line: int, hint: str | None = None) -> CodecError:
    return CodecError(message, where=f"observation line {line}", hint=hint)


def parse_awb(text: str) -> Observation | None:
    """The observation ``text`` holds in the AgentWorldBench layout; None when it does not start like it.

    Raises :class:`CodecError` naming the line when the text starts like this layout but breaks it.
    """
    if text.startswith('Search results for "'):
        return _parse_search(text)
    if text.startswith("## Page "):
        return _parse_pages(text)
    if text.startswith("{"):
        return _parse_memory(text)
    return None


# ── web_search ───────────────────────────────────────────────────────────────────────────────────────


def _parse_search(text: str) -> SearchResults:
    lines = text.split("\n")
    blocks: list[QueryBlock] = []
    i = 0
    while i < len(lines):
        head = _SEARCH_HEAD.fullmatch(lines[i])
        if head is None:
            raise _err(f"expected 'Search results for \"<query>\":', got {lines[i][:60]!r}", i + 1)
        if i + 1 >= len(lines) or lines[i + 1] != "":
            raise _err("expected a blank line after the query header", i + 2)
        i += 2
        if i < len(lines) and lines[i] == NO_RESULTS:
            blocks.append(QueryBlock(head.group(1), (), declared=None))
            i += 1
        else:
            results, numbers, i = _parse_results(lines, i)
            blocks.append(QueryBlock(head.group(1), tuple(results), tuple(numbers), None))
        if i < len(lines):
            if lines[i] != "":
                raise _err(f"expected a blank line between query blocks, got {lines[i][:60]!r}", i + 1)
            i += 1
            if i >= len(lines):
                raise _err("the observation ends with a blank line", i)
    return SearchResults(tuple(blocks), layout="awb")


def _parse_results(lines: list[str], i: int) -> tuple[list[SearchResult], list[int], int]:
    results: list[SearchResult] = []
    numbers: list[int] = []
    while True:
        head = _RESULT_HEAD.fullmatch(lines[i]) if i < len(lines) else None
        if head is None:
            got = repr(lines[i][:60]) if i < len(lines) else "the end"
            raise _err(f"expected a result line '[<n>] <url>' or '{NO_RESULTS}', got {got}", i + 1)
        values: dict[str, str] = {}
        for j, name in enumerate(_FIELDS, 1):
            line = lines[i + j] if i + j < len(lines) else None
            if line is None or not line.startswith(f"{name}: "):
                raise _err(
                    f"result [{head.group(1)}] lacks its '{name}: ' line",
                    i + j + 1,
                    hint="a result is '[n] <url>', 'Title: <title>', 'Snippet: <snippet>' and optionally "
                    "'Published: <date>'",
                )
            values[name] = line[len(name) + 2 :]
        i += 1 + len(_FIELDS)
        date = None
        if i < len(lines) and lines[i].startswith(f"{_DATE}: "):
            date = lines[i][len(_DATE) + 2 :]
            i += 1
        numbers.append(int(head.group(1)))
        results.append(SearchResult(head.group(2), values["Title"], values["Snippet"], date))
        if i < len(lines) and lines[i] != "":
            raise _err(f"unexpected line after result [{head.group(1)}]: {lines[i][:60]!r}", i + 1)
        # A blank line followed by another result continues this block; anything else ends it.
        if i + 1 < len(lines) and lines[i] == "" and _RESULT_HEAD.fullmatch(lines[i + 1]):
            i += 1
            continue
        return results, numbers, i


def _render_search(obs: SearchResults) -> str:
    blocks = []
    for block in obs.blocks:
        head = SEARCH_HEADER.format(query=block.query or "")
        if not block.results:
            blocks.append(f"{head}\n\n{NO_RESULTS}")
            continue
        numbers = block.numbers or tuple(range(1, len(block.results) + 1))
        items = []
        for n, r in zip(numbers, block.results, strict=True):
            item = f"[{n}] {r.url}\nTitle: {r.title}\nSnippet: {r.snippet}"
            if r.date is not None:
                item += f"\n{_DATE}: {r.date}"
            items.append(item)
        blocks.append(head + "\n\n" + "\n\n".join(items))
    return "\n\n".join(blocks)


# ── web_extractor ────────────────────────────────────────────────────────────────────────────────────


def _page_chunks(text: str) -> list[tuple[int, str]]:
    """``(offset, chunk)`` per page: a page starts at a ``## Page <k>: <url>`` line numbered one more than
    the previous page's, after a blank line (a heading inside a page's Markdown never splits it)."""
    starts = [0]
    expected = 2
    for m in _PAGE_START.finditer(text):
        if m.start() > 0 and int(m.group(1)) == expected and text[m.start() - 2 : m.start()] == "\n\n":
            starts.append(m.start())
            expected += 1
    ends = [s - 2 for s in starts[1:]] + [len(text)]
    return [(s, text[s:e]) for s, e in zip(starts, ends, strict=True)]


def _parse_pages(text: str) -> ExtractedPages:
    pages = []
    for n, (offset, chunk) in enumerate(_page_chunks(text), 1):
        line0 = text.count("\n", 0, offset) + 1
        lines = chunk.split("\n")
        head = _PAGE_HEAD.fullmatch(lines[0])
        if head is None or int(head.group(1)) != n:
            raise _err(f"expected '## Page {n}: <url>', got {lines[0][:60]!r}", line0)
        rest = lines[1:]
        goal = None
        if rest and rest[0].startswith("Goal: "):
            goal = rest[0][len("Goal: ") :]
            rest = rest[1:]
        at = line0 + len(lines) - len(rest)
        if len(rest) < 2 or rest[0] != "":
            raise _err("expected a blank line, then the page's '# <title>' or 'Error: <reason>'", at)
        first = rest[1]
        if first.startswith("Error: ") and len(rest) == 2:
            pages.append(ExtractedPage(head.group(2), None, "", goal, first[len("Error: ") :]))
            continue
        if not first.startswith("# "):
            raise _err(f"expected the page's Markdown title '# <title>', got {first[:60]!r}", at + 1)
        body_lines = rest[2:]
        if body_lines and (len(body_lines) < 2 or body_lines[0] != ""):
            raise _err("expected a blank line after the page title", at + 2)
        pages.append(ExtractedPage(head.group(2), first[2:], "\n".join(body_lines[1:]), goal))
    return ExtractedPages(tuple(pages))


def _render_pages(obs: ExtractedPages) -> str:
    out = []
    for n, page in enumerate(obs.pages, 1):
        text = PAGE_HEADER.format(n=n, url=page.url)
        if page.goal is not None:
            text += f"\nGoal: {page.goal}"
        if page.error is not None:
            text += f"\n\nError: {page.error}"
        else:
            text += f"\n\n# {page.title}"
            if page.body:
                text += f"\n\n{page.body}"
        out.append(text)
    return "\n\n".join(out)


# ── dict_memory ──────────────────────────────────────────────────────────────────────────────────────

_STYLES: tuple[tuple[int | None, bool, bool], ...] = tuple(
    (indent, ascii_, compact)
    for indent in (None, 2, 4)
    for ascii_ in (False, True)
    for compact in ((False, True) if indent is None else (False,))
)


def dump_memory(payload: dict[str, Any], indent: int | None = None, ensure_ascii: bool = False,
                compact: bool = False) -> str:  # fmt: skip
    """A dict_memory reply's JSON text in the given style."""
    seps = (",", ":") if compact else None
    return json.dumps(payload, ensure_ascii=ensure_ascii, indent=indent, separators=seps)


_REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {
    ("ok", "set"): ("key", "previous"),
    ("ok", "get"): ("key", "value"),
    ("ok", "delete"): ("key", "value"),
    ("ok", "list"): ("keys",),
    ("error", "set"): ("key", "error"),
    ("error", "get"): ("key", "error"),
    ("error", "delete"): ("key", "error"),
    ("error", "list"): ("error",),
}


def _parse_memory(text: str) -> DictMemoryReply:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _err(f"dict_memory reply is not JSON ({exc.msg} at column {exc.colno})", exc.lineno) from None
    if not isinstance(payload, dict):
        raise _err(f"dict_memory reply must be a JSON object, got {type(payload).__name__}", 1)
    status, action = payload.get("status"), payload.get("action")
    if status not in ("ok", "error") or action not in MEMORY_ACTIONS:
        raise _err(
            f'dict_memory reply needs "status" ok|error and "action" one of {list(MEMORY_ACTIONS)}, got '
            f"status={status!r} action={action!r}",
            1,
        )
    missing = [k for k in _REQUIRED[(status, action)] if k not in payload]
    if missing:
        raise _err(f"dict_memory {status} reply to {action} lacks {missing}", 1)
    if "key" in payload and not isinstance(payload["key"], str):
        raise _err(f'dict_memory "key" must be a string, got {payload["key"]!r}', 1)
    if (
        status == "ok"
        and action == "list"
        and not (isinstance(payload["keys"], list) and all(isinstance(k, str) for k in payload["keys"]))
    ):
        raise _err('dict_memory "keys" must be a list of strings', 1)
    for indent, ascii_, compact in _STYLES:
        if dump_memory(payload, indent, ascii_, compact) == text:
            return DictMemoryReply(payload, indent, ascii_, compact)
    raise _err(
        "dict_memory reply is JSON but not laid out as one json.dumps call writes it (compact, or indented by "
        "2 or 4 spaces)",
        1,
    )


# ── rendering ────────────────────────────────────────────────────────────────────────────────────────


def render_awb(observation: SearchResults | ExtractedPages | DictMemoryReply) -> str:
    """The AgentWorldBench-layout text of ``observation``; ``render_awb(parse_awb(t)) == t``."""
    if isinstance(observation, SearchResults):
        return _render_search(observation)
    if isinstance(observation, ExtractedPages):
        return _render_pages(observation)
    return dump_memory(observation.payload, observation.indent, observation.ensure_ascii, observation.compact)
