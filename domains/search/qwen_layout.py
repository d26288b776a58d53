"""The Qwen web-agent tool layout (WebSailor / WebDancer / Tongyi DeepResearch ``search`` and ``visit``).

Real search-agent logs and AgentWorldBench search rows carry tool outputs in this layout; the layout itself
is documented in :mod:`awctl_domains.search.codec`. :func:`parse_qwen` reads it into the shared observation
classes (recording spacing, so :func:`render_qwen` gives the text back byte for byte) and
:func:`canonical_style` drops the spacing differences that carry no meaning, for ``normalize``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from awctl.errors import CodecError

from .observations import (
    ErrorReply,
    Observation,
    QueryBlock,
    SearchResult,
    SearchResults,
    VisitPage,
    VisitReport,
)

SEPARATOR = "\n=======\n"
DATE_LABEL = "Date published: "
SOURCE_LABEL = "Source: "
NO_RESULTS = "No results found for '{query}'. Try with a more general query."
VISIT_HEADER = "The useful information in {url} for user goal {goal} as follows:"
UNREADABLE_EVIDENCE = (
    "The provided webpage content could not be accessed. Please check the URL or file format."
)
UNREADABLE_SUMMARY = "The webpage content could not be processed, and therefore, no information is available."
VISIT_NEEDS_GOAL = (
    "[Visit] Invalid request format: Input must be a JSON object containing 'url' and 'goal' fields"
)

_SEARCH_HEAD = re.compile(r"A (\w+) search for '(.*)' found (\d+) results:\n\n## Web Results\n")
_RESULT_HEAD = re.compile(r"^(\d+)\. \[(.*)\]\((.*)\)$", re.M)
# A query block that lists nothing: the tools' no-results text (naming the query) or a failure of the
# search backend for that one query.
_NO_RESULTS = re.compile(r"No results found for (?:query: )?'(.*?)'\..*", re.S)
_SEARCH_FAILURES = (
    re.compile(r"Google search Timeout, return None, Please try again later\."),
    re.compile(r"Tavily search failed: .*", re.S),
)
_BLOCK_START = r"A \w+ search for '|No results found for |Google search Timeout|Tavily search failed"
_SEARCH_SPLIT = re.compile(re.escape(SEPARATOR) + f"(?={_BLOCK_START})")

_VISIT_HEAD = re.compile(r"The useful information in (.+?) for user goal (.*) as follows:( ?)\n\n")
_EVIDENCE = re.compile(r"Evidence in page:( ?\n?)")
_SUMMARY_SEP = re.compile(r"( ?\n?)")
_FETCH_ERROR = re.compile(r"Error fetching (\S+?):? .*", re.S)
_PAGE_FAILED = re.compile(r"\[visit\] Failed to read page\.?")
_VISIT_SPLIT = re.compile(
    re.escape(SEPARATOR) + r"(?=The useful information in |Error fetching |\[visit\] Failed to read page)"
)

# Whole outputs that are a failure of the call itself (bad arguments, backend down).
_CALL_ERRORS = (
    *_SEARCH_FAILURES,
    _PAGE_FAILED,
    re.compile(r"\[(?:Search|Visit)\] Invalid request format: .*", re.S),
)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def parse_qwen(text: str) -> Observation | None:
    """The observation ``text`` holds in the Qwen layout; None when it is not in that layout at all.

    Raises :class:`CodecError` (naming the line) when the text starts like this layout but breaks it.
    """
    if any(p.fullmatch(text) for p in _CALL_ERRORS) and SEPARATOR not in text:
        return ErrorReply(text, verbatim=True)
    if re.match(_BLOCK_START, text):
        return _parse_search(text)
    if text.startswith(("The useful information in ", "Error fetching ")):
        return _parse_visit(text)
    return None


def _parse_search(text: str) -> SearchResults:
    blocks: list[QueryBlock] = []
    offset = 0
    for chunk in _SEARCH_SPLIT.split(text):
        blocks.append(_parse_block(chunk, text, offset))
        offset += len(chunk) + len(SEPARATOR)
    return SearchResults(tuple(blocks), layout="qwen")


def _parse_block(block: str, text: str, offset: int) -> QueryBlock:
    head = _SEARCH_HEAD.match(block)
    if head is None:
        m = _NO_RESULTS.fullmatch(block)
        if m:
            return QueryBlock(m.group(1), (), notice=block)
        if any(p.fullmatch(block) for p in _SEARCH_FAILURES):
            return QueryBlock(None, (), notice=block)
        raise CodecError(
            f"expected \"A Google search for '<query>' found <n> results:\", a blank line and '## Web Results', "
            f"got {block.split(chr(10))[0][:60]!r}",
            where=f"observation line {_line_of(text, offset)}",
        )
    section, base = block[head.end() :], offset + head.end()
    starts = [
        m
        for m in _RESULT_HEAD.finditer(section)
        if m.start() == 0 or section[m.start() - 2 : m.start()] == "\n\n"
    ]
    if section and (not starts or starts[0].start() != 0):
        raise CodecError(
            f"expected a result line '<n>. [<title>](<url>)', got {section.split(chr(10))[0][:60]!r}",
            where=f"observation line {_line_of(text, base)}",
        )
    results, numbers = [], []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() - 2 if i + 1 < len(starts) else len(section)
        rest = section[m.end() : end]
        values: dict[str, str | None] = {DATE_LABEL: None, SOURCE_LABEL: None}
        for label in (DATE_LABEL, SOURCE_LABEL):
            if rest.startswith("\n" + label):
                line, newline, tail = rest[1:].partition("\n")
                values[label] = line[len(label) :]
                rest = newline + tail
        gap = len(rest) - len(rest.lstrip("\n"))
        gap = min(gap, 2)
        numbers.append(int(m.group(1)))
        results.append(
            SearchResult(m.group(3), m.group(2), rest[gap:], values[DATE_LABEL], values[SOURCE_LABEL], gap)
        )
    return QueryBlock(head.group(2), tuple(results), tuple(numbers), int(head.group(3)), engine=head.group(1))


def _parse_visit(text: str) -> VisitReport:
    pages: list[VisitPage] = []
    offset = 0
    for piece in _VISIT_SPLIT.split(text):
        pages.append(_parse_page(piece, text, offset))
        offset += len(piece) + len(SEPARATOR)
    return VisitReport(tuple(pages))


def _parse_page(piece: str, text: str, offset: int) -> VisitPage:
    m = _FETCH_ERROR.fullmatch(piece)
    if m and not piece.startswith("The useful"):
        return VisitPage(m.group(1), None, "", "", notice=piece)
    if _PAGE_FAILED.fullmatch(piece):
        return VisitPage(None, None, "", "", notice=piece)
    head = _VISIT_HEAD.match(piece)
    if head is None:
        raise CodecError(
            "expected 'The useful information in <url> for user goal <goal> as follows:' and a blank line",
            where=f"observation line {_line_of(text, offset)}",
        )
    body = piece[head.end() :]
    ev = _EVIDENCE.match(body)
    if ev is None:
        raise CodecError(
            "expected 'Evidence in page:' after the header",
            where=f"observation line {_line_of(text, offset + head.end())}",
        )
    cut = body.rfind("\n\nSummary:")
    if cut < len("Evidence in page:"):
        raise CodecError(
            "the page has no 'Summary:' paragraph after its evidence",
            where=f"observation line {_line_of(text, offset + head.end())}",
        )
    start = min(ev.end(), cut)  # empty evidence: the label's spacing ends where the summary begins
    after = body[cut + len("\n\nSummary:") :]
    sep = _SUMMARY_SEP.match(after).group(1)  # type: ignore[union-attr]  # matches the empty string at worst
    summary = after[len(sep) :].rstrip("\n")
    return VisitPage(
        url=head.group(1),
        goal=head.group(2),
        evidence=body[start:cut],
        summary=summary,
        header_space=head.group(3),
        evidence_sep=body[len("Evidence in page:") : start],
        summary_sep=sep,
        trailer=after[len(sep) + len(summary) :],
    )


def render_qwen(observation: SearchResults | VisitReport) -> str:
    """The Qwen-layout text of ``observation``; ``render_qwen(parse_qwen(t)) == t`` for every parsed ``t``."""
    if isinstance(observation, SearchResults):
        return SEPARATOR.join(_render_block(b) for b in observation.blocks)
    return SEPARATOR.join(_render_page(p) for p in observation.pages)


def _render_block(block: QueryBlock) -> str:
    if block.notice is not None:
        return block.notice
    if not block.results and block.query is not None and block.declared is None:
        return NO_RESULTS.format(query=block.query)  # what the tools answer when nothing is found
    numbers = block.numbers or tuple(range(1, len(block.results) + 1))
    declared = len(block.results) if block.declared is None else block.declared
    items = []
    for n, r in zip(numbers, block.results, strict=True):
        text = f"{n}. [{r.title}]({r.url})"
        if r.date is not None:
            text += f"\n{DATE_LABEL}{r.date}"
        if r.source is not None:
            text += f"\n{SOURCE_LABEL}{r.source}"
        gap = max(r.snippet_gap, 1) if r.snippet else r.snippet_gap
        items.append(text + "\n" * gap + r.snippet)
    head = f"A {block.engine} search for '{block.query}' found {declared} results:\n\n## Web Results\n"
    return head + "\n\n".join(items)


def _render_page(page: VisitPage) -> str:
    if page.notice is not None:
        return page.notice
    head = VISIT_HEADER.format(url=page.url, goal=page.goal)
    return (
        f"{head}{page.header_space}\n\nEvidence in page:{page.evidence_sep}{page.evidence}"
        f"\n\nSummary:{page.summary_sep}{page.summary}{page.trailer}"
    )


def canonical_style(observation: SearchResults | VisitReport) -> SearchResults | VisitReport:
    """``observation`` with every *style* field set as the Qwen tools write it (meaning unchanged)."""
    if isinstance(observation, SearchResults):
        blocks = tuple(
            replace(b, results=tuple(replace(r, snippet_gap=2 if r.snippet else 0) for r in b.results))
            for b in observation.blocks
        )
        return replace(observation, blocks=blocks)
    pages = tuple(
        replace(p, header_space=" ", evidence_sep=" \n", summary_sep=" \n", trailer="")
        if p.notice is None
        else p
        for p in observation.pages
    )
    return VisitReport(pages)
