"""Where a page read later contradicts the snippet a search result gave for it.

A snippet is fragments of the page joined by ``…`` (or ``...``). A page *quotes* a fragment when
:data:`ANCHOR` consecutive words of the fragment occur in the page; it *contradicts* the fragment when, at
every place it quotes it, the quotation runs on word for word, then differs in one to
:data:`MAX_SWAP` words, then agrees again for :data:`RESYNC` words (or up to the fragment's end, at least
two words) — the same passage with other words put in (a changed number, name or date). A quotation that
simply stops agreeing (a paragraph boundary, a goal-filtered extract leaving text out, a link target in
the Markdown) proves nothing and is no contradiction; nor is a fragment the page does not quote at all.

Words are :func:`awctl_domains.search.engine.words` (lower-cased runs of letters and digits); Markdown
link targets ``](...)`` are dropped from the page first, since a snippet shows a link's text only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

ANCHOR = 5
RESYNC = 3
MAX_SWAP = 3
_WORD = re.compile(r"[^\W_]+")
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_ELISION = re.compile(r"…|\.\.\.")


@dataclass(frozen=True)
class Token:
    word: str
    start: int
    end: int


@dataclass(frozen=True)
class Contradiction:
    """The fragment's words ``said`` where the page has ``page_says``; ``at`` indexes the page's tokens."""

    fragment: str
    said: str
    page_says: str
    at: int
    length: int


def tokens(text: str) -> list[Token]:
    """The words of ``text`` with their character spans (link targets blanked, spans unchanged)."""
    blanked = _LINK_TARGET.sub(lambda m: "]" + " " * (len(m.group(0)) - 1), text)
    return [Token(m.group(0).lower(), m.start(), m.end()) for m in _WORD.finditer(blanked)]


def fragments(snippet: str) -> list[list[str]]:
    """The snippet's fragments (split at elisions) as word lists, longest first, each >= ANCHOR + 1 words."""
    out = [[t.word for t in tokens(f)] for f in _ELISION.split(snippet)]
    return sorted((f for f in out if len(f) > ANCHOR), key=len, reverse=True)


def _walk(frag: list[str], page: list[str], i: int, k: int, step: int) -> tuple[int, int] | None | str:
    """Follow the quotation from ``frag[i]``/``page[k]`` in direction ``step``.

    Returns ``"full"`` when it agrees to the fragment's end, ``(i, n)`` for a swap of ``n`` words at
    ``frag[i]``/``page[k']`` that re-agrees afterwards, or ``None`` when it just stops agreeing.
    """
    while 0 <= i < len(frag) and 0 <= k < len(page) and frag[i] == page[k]:
        i += step
        k += step
    if not 0 <= i < len(frag):
        return "full"
    if not 0 <= k < len(page):
        return None
    for n in range(1, MAX_SWAP + 1):
        left = len(frag) - (i + n) if step > 0 else i - n + 1
        need = min(RESYNC, left)
        if need < 2:
            break
        ok = True
        for m in range(need):
            fi, pk = i + step * (n + m), k + step * (n + m)
            if not (0 <= pk < len(page)) or frag[fi] != page[pk]:
                ok = False
                break
        if ok:
            return (i, n) if step > 0 else (i - n + 1, n)
    return None


def _quotations(frag: list[str], page: list[str], grams: dict[tuple[str, ...], list[int]]) -> Iterator[
    tuple[int, int]
]:  # fmt: skip
    for a in range(len(frag) - ANCHOR + 1):
        for j in grams.get(tuple(frag[a : a + ANCHOR]), ()):
            yield a, j


def snippet_contradiction(snippet: str, page_text: str) -> Contradiction | None:
    """The first fragment of ``snippet`` that ``page_text`` contradicts (see the module docstring)."""
    page = tokens(page_text)
    words = [t.word for t in page]
    grams: dict[tuple[str, ...], list[int]] = {}
    for j in range(len(words) - ANCHOR + 1):
        grams.setdefault(tuple(words[j : j + ANCHOR]), []).append(j)
    for frag in fragments(snippet):
        found: Contradiction | None = None
        agrees = False
        for a, j in _quotations(frag, words, grams):
            fwd = _walk(frag, words, a + ANCHOR, j + ANCHOR, 1)
            back = _walk(frag, words, a - 1, j - 1, -1)
            if fwd == "full" and back == "full":
                agrees = True
                break
            for side, base in ((fwd, j + ANCHOR - (a + ANCHOR)), (back, j - a)):
                if isinstance(side, tuple) and found is None:
                    i, n = side
                    at = i + base
                    found = Contradiction(
                        " ".join(frag), " ".join(frag[i : i + n]), " ".join(words[at : at + n]), at, n
                    )
        if found is not None and not agrees:
            return found
    return None
