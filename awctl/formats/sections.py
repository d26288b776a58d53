"""Best-effort recovery of the five named sections from a flat system prompt.

A source such as AgentWorldBench gives the system prompt as one string. :func:`parse_sections` keeps that
string verbatim in ``SystemPrompt.raw`` (which always wins when rendering, so nothing is lost) and fills
the named sections when it recognises their headings, so section-aware tools (masking, prompt variants)
can still use them. Recognised heading styles are the ones :mod:`awctl.prompts` writes (``## Title``,
``**Title:**``, ``<snake_title>``, ``TITLE``, ``[Title]``, ``Title:``, ``=== Title ===``...).
"""

from __future__ import annotations

import re

from awctl.trajectory import SECTION_TITLES, SystemPrompt

_TITLE_TO_NAME = {title.lower(): name for name, title in SECTION_TITLES.items()}
_TITLES = "|".join(re.escape(t) for t in SECTION_TITLES.values())
_HEADING = re.compile(
    rf"^(?:#{{1,6}}\s*(?P<a>{_TITLES})\s*:?"
    rf"|\*\*(?P<b>{_TITLES}):?\*\*:?"
    rf"|\[(?P<c>{_TITLES})\]"
    rf"|(?:===|---)\s*(?P<d>{_TITLES})\s*(?:===|---)"
    rf"|(?P<e>{_TITLES}):"
    rf"|<(?P<f>{'|'.join(SECTION_TITLES)})>)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_UPPER_HEADING = re.compile(
    rf"^(?P<g>{'|'.join(re.escape(t.upper()) for t in SECTION_TITLES.values())})\s*$", re.MULTILINE
)


def _name_of(match: re.Match[str]) -> str:
    text = next(v for v in match.groupdict().values() if v)
    return _TITLE_TO_NAME.get(text.lower().replace("_", " "), text.lower())


def parse_sections(text: str) -> SystemPrompt:
    """``SystemPrompt(raw=text)`` with the named sections filled where headings are recognised.

    Text before the first heading (and any closing ``</tag>`` lines) goes to ``extra``. A section named
    twice keeps both bodies joined by a blank line.
    """
    matches = sorted([*_HEADING.finditer(text), *_UPPER_HEADING.finditer(text)], key=lambda m: m.start())
    values: dict[str, str] = {}
    # Drop overlapping matches (an upper-case line also matches "Title:"-less styles only once).
    kept: list[re.Match[str]] = []
    for m in matches:
        if kept and m.start() < kept[-1].end():
            continue
        kept.append(m)
    if not kept:
        return SystemPrompt(raw=text)
    extra = text[: kept[0].start()].strip()
    for i, m in enumerate(kept):
        end = kept[i + 1].start() if i + 1 < len(kept) else len(text)
        name = _name_of(m)
        body = re.sub(rf"\n?</{name}>\s*$", "", text[m.end() : end].strip()).strip()
        values[name] = f"{values[name]}\n\n{body}" if name in values else body
    return SystemPrompt(raw=text, extra=extra, **values)
