"""Build the search domain's shipped corpus from documentation that ships with Python and installed packages.

Run ``python -m awctl_domains.search.build_corpus`` to (re)write ``domains/search/corpus/pages.jsonl`` and
``corpus/manifest.json``. The output is a pure function of the interpreter, the installed versions of the
distributions named in :data:`DISTRIBUTIONS`, and ``--date``: sources are fixed lists, pages are sorted by
URL and every page is written with sorted keys, so two runs on the same installation give identical bytes.

Where pages come from, and why their URL, title and date are what they are:

* **Language reference topics** — ``pydoc_data.topics`` (what ``help("assert")`` prints; CPython generates
  it from the reference manual). URL ``https://docs.python.org/<X.Y>/topics/<label>``: the host and version
  are the real documentation's; the path uses the pydoc label because pydoc_data does not record which
  HTML page a label came from. Title: the topic's own first heading. Long topics are split at paragraph
  boundaries into parts ``.../<label>?part=N`` titled ``<heading> (part N/M)`` so that every page fits the
  extractor unabridged (a search snippet is then always found in the page it points to).
* **Standard-library modules** — each module's docstring plus the first paragraph of each public
  function's and class's docstring. URL ``https://docs.python.org/<X.Y>/library/<module>.html``: the URL
  pydoc itself links to for a stdlib module (``pydoc.Doc.getdocloc``). Title ``<module> — <first docstring
  line>``, the shape of the real library pages' titles.
* **Installed distributions** — the long description (README) in each named distribution's METADATA. URL
  ``https://pypi.org/project/<name>/<version>/``, where PyPI shows that same description for that
  version. Title ``<name> <version>: <Summary>``.

Every page's **Date** is the corpus snapshot date (``--date``; default: the day the running interpreter
was built, ``platform.python_build()``, i.e. when the documentation indexed here was produced). It is
stored per page so a future corpus may mix snapshots.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import inspect
import json
import platform
import re
import sys
import warnings
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"

# The largest page body (characters). The extractor returns whole pages, so this also bounds an extract.
MAX_PAGE_CHARS = 6000

# Stdlib modules whose import has no side effects and whose docstrings are substantial. Fixed, sorted.
STDLIB_MODULES: tuple[str, ...] = tuple(
    sorted(
        [
            "abc",
            "argparse",
            "array",
            "ast",
            "asyncio",
            "base64",
            "bisect",
            "bz2",
            "calendar",
            "cmath",
            "codecs",
            "collections",
            "colorsys",
            "concurrent.futures",
            "configparser",
            "contextlib",
            "copy",
            "csv",
            "datetime",
            "decimal",
            "difflib",
            "dis",
            "email",
            "fnmatch",
            "fractions",
            "ftplib",
            "functools",
            "gc",
            "getopt",
            "gettext",
            "glob",
            "gzip",
            "hashlib",
            "heapq",
            "hmac",
            "html",
            "http.client",
            "imaplib",
            "inspect",
            "io",
            "ipaddress",
            "itertools",
            "json",
            "keyword",
            "linecache",
            "locale",
            "logging",
            "lzma",
            "mailbox",
            "math",
            "mimetypes",
            "operator",
            "optparse",
            "os",
            "pickle",
            "pkgutil",
            "platform",
            "plistlib",
            "pprint",
            "queue",
            "quopri",
            "random",
            "re",
            "reprlib",
            "sched",
            "secrets",
            "select",
            "selectors",
            "shelve",
            "shlex",
            "shutil",
            "smtplib",
            "socket",
            "sqlite3",
            "ssl",
            "stat",
            "statistics",
            "string",
            "struct",
            "subprocess",
            "symtable",
            "sys",
            "tarfile",
            "tempfile",
            "textwrap",
            "threading",
            "time",
            "timeit",
            "token",
            "tokenize",
            "trace",
            "traceback",
            "types",
            "typing",
            "unicodedata",
            "unittest",
            "urllib.parse",
            "urllib.request",
            "uuid",
            "warnings",
            "weakref",
            "wave",
            "xml.etree.ElementTree",
            "zipfile",
            "zlib",
        ]
    )
)

# Installed distributions whose README becomes a page. Missing ones are skipped and listed in the manifest.
DISTRIBUTIONS: tuple[str, ...] = (
    "attrs", "click", "datasketch", "filelock", "hypothesis", "idna", "jinja2", "jsonschema",
    "markdown-it-py", "packaging", "pluggy", "pydantic", "pygments", "pytest", "python-dateutil",
    "pyyaml", "requests", "rich", "ruff", "sortedcontainers", "structlog", "tqdm", "typer",
    "urllib3", "zstandard",
)  # fmt: skip

_HEADING_MARKS = {"*": "#", "=": "##", "-": "###", "~": "####"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _split_parts(body: str, limit: int = MAX_PAGE_CHARS) -> list[str]:
    """Cut ``body`` into chunks of at most ``limit`` characters at blank-line (paragraph) boundaries."""
    parts: list[str] = []
    current = ""
    for para in re.split(r"\n{2,}", body.strip()):
        while len(para) > limit:  # a single giant paragraph: cut it at a line boundary, else hard
            cut = para.rfind("\n", 0, limit)
            cut = cut if cut > 0 else limit
            if current:
                parts.append(current)
                current = ""
            parts.append(para[:cut].rstrip())
            para = para[cut:].lstrip("\n")
        candidate = f"{current}\n\n{para}" if current else para
        if len(candidate) > limit:
            parts.append(current)
            current = para
        else:
            current = candidate
    if current:
        parts.append(current)
    return parts


def _clip(body: str, limit: int = MAX_PAGE_CHARS) -> str:
    """The longest prefix of ``body`` made of whole paragraphs that fits in ``limit`` characters."""
    return _split_parts(body, limit)[0] if body.strip() else ""


def _rst_headings_to_markdown(text: str) -> str:
    """Turn reST-style underlined headings (``Title`` over ``*****``) into Markdown ``#`` headings."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        mark = nxt[:1]
        if line.strip() and mark in _HEADING_MARKS and nxt == mark * len(nxt) and len(nxt) >= 3:
            out.append(f"{_HEADING_MARKS[mark]} {line.strip()}")
            i += 2
            continue
        out.append(line.rstrip())
        i += 1
    return "\n".join(out).strip()


def topic_pages(version: str, date: str) -> Iterator[dict[str, Any]]:
    import pydoc_data.topics as topics

    for label in sorted(topics.topics):
        body = _rst_headings_to_markdown(topics.topics[label])
        first = body.splitlines()[0] if body else label
        heading = first.lstrip("#").strip() if first.startswith("#") else label
        parts = _split_parts(body)
        base = f"https://docs.python.org/{version}/topics/{label}"
        for n, part in enumerate(parts, 1):
            multi = len(parts) > 1
            yield {
                "url": f"{base}?part={n}" if multi and n > 1 else base,
                "title": _one_line(f"{heading} (part {n}/{len(parts)})" if multi else heading),
                "date": date,
                "source": "pydoc_data.topics",
                "text": part,
            }


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return inspect.cleandoc(doc).split("\n\n")[0].strip()


def module_page(name: str, version: str, date: str) -> dict[str, Any] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            module = importlib.import_module(name)
        except Exception:
            return None
    doc = inspect.cleandoc(module.__doc__ or "")
    if not doc:
        return None
    summary = _one_line(doc.splitlines()[0]).rstrip(".")
    lines = [f"# {name} — {summary}", "", doc]
    members = []
    for attr in sorted(getattr(module, "__all__", None) or dir(module)):
        if attr.startswith("_"):
            continue
        obj = getattr(module, attr, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
            continue
        if getattr(obj, "__module__", name) not in (name, f"_{name}", name.rsplit(".", 1)[-1]):
            continue  # re-exported from elsewhere; documented on its own module's page
        para = _first_paragraph(obj.__doc__)
        if para:
            kind = "class" if inspect.isclass(obj) else "function"
            members.append(f"### {name}.{attr} ({kind})\n\n{para}")
    if members:
        lines += ["", "## Members", "", "\n\n".join(members)]
    return {
        "url": f"https://docs.python.org/{version}/library/{name}.html",
        "title": _one_line(f"{name} — {summary}"),
        "date": date,
        "source": "stdlib docstrings",
        "text": _clip("\n".join(lines)),
    }


def distribution_page(dist_name: str, date: str) -> dict[str, Any] | None:
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    meta = dist.metadata
    body = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
    if not body.strip():
        return None
    name, version = meta["Name"], meta["Version"]
    summary = _one_line(meta.get("Summary") or "").rstrip(".")
    text = _clip(f"# {name} {version}\n\n{summary}\n\n{body.strip()}".replace("\r\n", "\n"))
    return {
        "url": f"https://pypi.org/project/{name.lower()}/{version}/",
        "title": _one_line(f"{name} {version}: {summary}" if summary else f"{name} {version}"),
        "date": date,
        "source": "distribution METADATA",
        "text": text,
    }


def build(date: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every page (sorted by URL) and the manifest describing how they were made."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    pages = list(topic_pages(version, date))
    skipped: list[str] = []
    for name in STDLIB_MODULES:
        page = module_page(name, version, date)
        if page is None:
            skipped.append(name)
        else:
            pages.append(page)
    for name in DISTRIBUTIONS:
        page = distribution_page(name, date)
        if page is None:
            skipped.append(name)
        else:
            pages.append(page)
    pages.sort(key=lambda p: p["url"])
    urls = [p["url"] for p in pages]
    assert len(urls) == len(set(urls)), "duplicate URLs in corpus"
    manifest = {
        "python": platform.python_version(),
        "date": date,
        "pages": len(pages),
        "max_page_chars": MAX_PAGE_CHARS,
        "sources": {
            "pydoc_data.topics": sum(p["source"] == "pydoc_data.topics" for p in pages),
            "stdlib docstrings": sum(p["source"] == "stdlib docstrings" for p in pages),
            "distribution METADATA": sum(p["source"] == "distribution METADATA" for p in pages),
        },
        "distributions": {
            p["url"].split("/")[4]: p["url"].split("/")[5]
            for p in pages
            if p["source"] == "distribution METADATA"
        },
        "skipped": skipped,
    }
    return pages, manifest


def interpreter_build_date() -> str:
    """The running interpreter's build date as YYYY-MM-DD (``platform.python_build()`` says e.g. 'May  9 2026')."""
    raw = " ".join(platform.python_build()[1].split()[:3])
    return _dt.datetime.strptime(raw, "%b %d %Y").date().isoformat()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=CORPUS_DIR, help="folder for pages.jsonl and manifest.json"
    )
    parser.add_argument(
        "--date", default=None, help="snapshot date YYYY-MM-DD (default: interpreter build date)"
    )
    args = parser.parse_args(argv)
    date = args.date or interpreter_build_date()
    try:  # reject a malformed --date before writing anything
        _dt.date.fromisoformat(date)
    except ValueError as exc:
        parser.error(f"--date {date!r} is not a YYYY-MM-DD date ({exc})")
    pages, manifest = build(date)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "pages.jsonl", "w", encoding="utf-8") as handle:
        for page in pages:
            handle.write(json.dumps(page, ensure_ascii=False, sort_keys=True) + "\n")
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    size = (args.out / "pages.jsonl").stat().st_size
    print(f"wrote {len(pages)} pages ({size / 1e6:.2f} MB) to {args.out}; skipped: {manifest['skipped']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
