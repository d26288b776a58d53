"""A local full-text search engine over the shipped corpus: SQLite FTS5 ranked with ``bm25()``.

The corpus (``corpus/pages.jsonl``, built by :mod:`awctl_domains.search.build_corpus`) is loaded once per process
into an in-memory FTS5 table; the engine is read-only afterwards and shared by every :class:`SearchEnv`.

What callers may rely on:

* ``search(query, k)`` is deterministic: the query's words (letters and digits) are OR-ed, ranked by
  ``bm25`` with the title weighted :data:`TITLE_WEIGHT` times the body, ties broken by corpus order
  (URL order). At most ``k`` results; a query without words has none.
* Each result's snippet is a fragment of the page body made of whole words (FTS5 ``snippet()``), joined
  into one line, with ``…`` where text was left out — so every word of a snippet occurs in the page that
  ``page(url)`` returns.
* ``page(url)`` returns the stored page for an exact URL (a ``#fragment`` is ignored), else ``None``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from awctl.errors import EnvironmentUnavailable

CORPUS_FILE = Path(__file__).resolve().parent / "corpus" / "pages.jsonl"
DEFAULT_TOP_K = 5
TITLE_WEIGHT = 5.0
SNIPPET_TOKENS = 24
ELLIPSIS = "…"
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lower-cased words (runs of letters/digits) of ``text``, as the engine and verifiers tokenise."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    date: str
    source: str
    text: str


@dataclass(frozen=True)
class Hit:
    url: str
    title: str
    snippet: str
    date: str


class SearchEngine:
    """FTS5 index over a list of pages. Thread-safe for concurrent ``search`` calls (one lock)."""

    def __init__(self, pages: list[Page]) -> None:
        self.pages = pages
        self._by_url = {p.url: p for p in pages}
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self._db.execute("CREATE VIRTUAL TABLE pages USING fts5(url UNINDEXED, title, text)")
        except sqlite3.OperationalError as exc:  # an sqlite3 built without FTS5
            raise EnvironmentUnavailable(
                f"this Python's SQLite ({sqlite3.sqlite_version}) lacks FTS5: {exc}",
                hint="use a Python whose sqlite3 module is compiled with FTS5 (CPython's official builds are)",
            ) from None
        self._db.executemany(
            "INSERT INTO pages(rowid, url, title, text) VALUES (?, ?, ?, ?)",
            [(i, p.url, p.title, p.text) for i, p in enumerate(pages)],
        )
        self._db.commit()

    @classmethod
    def from_file(cls, path: Path = CORPUS_FILE) -> SearchEngine:
        """Load a ``pages.jsonl`` corpus; a bad line raises naming the file and line."""
        from awctl.errors import InputError

        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.readlines()
        except OSError as exc:
            raise EnvironmentUnavailable(
                f"{path}: search corpus missing ({exc.strerror})",
                hint="rebuild it with `python -m awctl_domains.search.build_corpus`",
            ) from None
        pages = []
        for lineno, line in enumerate(lines, 1):
            try:
                obj = json.loads(line)
                pages.append(Page(obj["url"], obj["title"], obj["date"], obj["source"], obj["text"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputError(
                    f"{path}:{lineno}: not a corpus page ({type(exc).__name__}: {exc})",
                    hint="each line needs url, title, date, source and text",
                ) from None
        return cls(pages)

    def search(self, query: str, k: int = DEFAULT_TOP_K) -> list[Hit]:
        terms = words(query)
        if not terms or k <= 0:
            return []
        # Quoting each word makes FTS5 treat it as a literal token (no operators, no column filters).
        match = " OR ".join(f'"{t}"' for t in dict.fromkeys(terms))
        sql = (
            "SELECT rowid, snippet(pages, 2, '', '', ?, ?) FROM pages WHERE pages MATCH ? "
            "ORDER BY bm25(pages, 0.0, ?, 1.0), rowid LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(sql, (ELLIPSIS, SNIPPET_TOKENS, match, TITLE_WEIGHT, k)).fetchall()
        hits = []
        for rowid, snippet in rows:
            page = self.pages[rowid]
            hits.append(Hit(page.url, page.title, " ".join(snippet.split()), page.date))
        return hits

    def page(self, url: str) -> Page | None:
        return self._by_url.get(url.split("#", 1)[0].strip())


@lru_cache(maxsize=1)
def default_engine() -> SearchEngine:
    """The process-wide engine over the shipped corpus (built on first use, ~0.1 s)."""
    return SearchEngine.from_file(CORPUS_FILE)
