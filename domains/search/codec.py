"""Action and observation codecs of the search domain.

Actions
-------
One canonical text per action, a JSON object with ``name`` then ``arguments`` (keys in the order below)::

    {"name": "web_search", "arguments": {"queries": ["python assert statement", "..."]}}
    {"name": "web_extractor", "arguments": {"url": "https://...", "goal": "optional"}}
    {"name": "web_extractor", "arguments": {"url": ["https://a...", "https://b..."], "goal": "..."}}
    {"name": "memory", "arguments": {"op": "set", "key": "answer", "value": "42"}}
    {"name": "memory", "arguments": {"op": "get" | "delete", "key": "answer"}}
    {"name": "memory", "arguments": {"op": "list"}}
    {"name": "dict_memory", "arguments": {"action": "set", "key": "answer", "value": <any JSON value>}}
    {"name": "dict_memory", "arguments": {"action": "get" | "delete", "key": "answer"}}
    {"name": "dict_memory", "arguments": {"action": "list"}}

``url`` is a string for one page and a list only for two or more (a one-element list becomes a string);
AgentWorldBench's ``urls`` (always a list) is read as ``url``. ``memory`` (awctl's and the Qwen agents'
scratchpad, values are text) and ``dict_memory`` (AgentWorldBench's, values are any JSON value) are two
tools: each tool set has one of them.

:meth:`SearchActionCodec.parse` also accepts the shapes agents commonly emit: an OpenAI tool call
(``{"function": {"name": ..., "arguments": "<json string>"}}``), ``tool``/``args``/``parameters``/``input``
instead of ``name``/``arguments``, arguments as a JSON string, a ``<tool_call>...</tool_call>`` wrapper,
tool aliases (``search`` → ``web_search``; ``visit``/``open``/``fetch``/``browse``/``extract`` →
``web_extractor``), ``query`` (string or list) for ``queries``, ``url`` as a string or a list, operation
aliases (``store``/``save``/``put`` → ``set``, ``read``/``recall`` → ``get``, ``remove``/``del`` →
``delete``, ``keys`` → ``list``; for dict_memory also ``op``/``operation`` for ``action``) and non-string
``memory`` values (stored as their compact JSON text). The Qwen
web agents' calls (``{"name": "search", "arguments": {"query": [...]}}`` and ``{"name": "visit",
"arguments": {"url": ... , "goal": "..."}}``) are among these shapes.

The parsed :class:`SearchAction` keeps the text it was read from, and ``render`` gives that text back
unchanged while the action still says what it says (``render(parse(text)) == text`` byte for byte: a
Qwen agent's ``search`` call stays a ``search`` call, AgentWorldBench's ``urls`` stays ``urls``); an action
built or changed in code renders in the canonical form above. :meth:`SearchActionCodec.canonical` gives the
canonical text of any accepted shape.

Observations: three layouts (``render`` writes each, ``parse`` reads them all back)
----------------------------------------------------------------------------------
Which layout a trajectory uses follows from the tool list its system prompt declares
(:mod:`awctl_domains.search.toolsets`); every layout's text also names itself, so ``parse`` needs no context.

**awctl layout** (the real env's default).

web_search — one block per query, in the action's order; blocks and results separated by one blank line;
result numbers **restart at 1 in every query block** and count up without gaps::

    Query 1: <query text on one line>
    Results: <n>

    [1] <url>
    Title: <title>
    Snippet: <snippet>
    Date: YYYY-MM-DD

    [2] ...

    Query 2: <query text>
    Results: 0

web_extractor — a header, one blank line, then the page as Markdown (or, with a goal, the page's passages
that best match the goal, separated by blank lines)::

    URL: <url>
    Title: <title>
    Date: YYYY-MM-DD
    Goal: <goal>            (only when the action had a goal)

    <markdown>

memory — one line (``get`` adds the value on the following lines, verbatim)::

    Memory: stored "key".          Memory: updated "key".        Memory: deleted "key".
    Memory: no key "key".          Memory: 2 keys: "a", "b".     Memory: 0 keys.
    Memory: value of "key":
    <value>

Keys are written as JSON strings. Any failure (bad action, unknown page, fault) is ``Error: <message>``.

**Qwen layout** (the ``search`` and ``visit`` tools of the Qwen / Alibaba-NLP web agents — WebSailor,
WebDancer, Tongyi DeepResearch — as found in their logs and in AgentWorldBench rows).

search — one block per query, blocks joined by a line ``=======``; results numbered from 1 in every
block, separated by one blank line; the ``Date published:`` and ``Source:`` lines appear only when the
engine gave them; the snippet follows after a blank line (the tools) or directly (some datasets)::

    A Google search for '<query>' found <n> results:

    ## Web Results
    1. [<title>](<url>)
    Date published: <date as the engine wrote it>
    Source: <source>

    <snippet>

    2. [<title>](<url>)
    ...
    =======
    No results found for '<query>'. Try with a more general query.

A block may instead be the tools' "No results found for '<query>'..." text, or a backend failure for that
query ("Google search Timeout, return None, Please try again later.").

visit — one page per requested URL, joined by ``=======`` lines; the evidence may span paragraphs::

    The useful information in <url> for user goal <goal> as follows:

    Evidence in page:
    <evidence>

    Summary:
    <summary>

(the tools end the header and both label lines with one space; the text may follow a label on its line). A page that could not be read
keeps this layout with the tools' fixed "could not be accessed" evidence; a page that failed outright is
``Error fetching <url>: <reason>``. Whole-call failures are the tools' own texts, kept verbatim:
``[Search] Invalid request format: ...``, ``[Visit] Invalid request format: ...``, ``[visit] Failed to read
page``, ``Google search Timeout, ...``. Memory replies and ``Error:`` lines are the same in both layouts.

``render(parse(text)) == text`` byte for byte for every text ``parse`` accepts, in any layout: a parsed
observation carries its text, and the Qwen layout also records its spacing, so an observation changed in
code keeps the source's spacing. ``canonical`` writes an accepted text in its layout's own form (the awctl
layout's tolerated surrounding blank lines and trailing spaces dropped). ``normalize`` maps both layouts
to a form where trailing spaces, blank-line runs and the Qwen layout's optional spacing (blank line before
a snippet, label text on the same line) no longer matter.

**AgentWorldBench layout** (the ``web_search``, ``web_extractor`` and ``dict_memory`` tools of
AgentWorldBench's search domain). The release's search prompt (``prompts/search/system_prompt.txt``) was not
available when this was written; the layout below is built from the benchmark's description of its tools
(numbered ``[1] <url>`` result blocks with a title and a snippet, page text in Markdown for a URL and a
goal, a dict-like key-value memory) and is what awctl reads, writes and serves.

web_search — one block per query, in the action's order, blocks and results separated by one blank line;
results numbered from 1 in every block; the ``Published:`` line only when the engine gave a date::

    Search results for "<query>":

    [1] <url>
    Title: <title>
    Snippet: <snippet on one line>
    Published: <date as the engine wrote it>

    [2] <url>
    ...

    Search results for "<query 2>":

    No results found.

web_extractor — one page per requested URL, in the action's order, pages separated by one blank line; the
``Goal:`` line only when the action's goal is not empty; the page is Markdown starting with its title as a
``#`` heading (the whole page without a goal, the passages relevant to the goal with one); a page that could
not be read is one ``Error: <reason>`` line::

    ## Page 1: <url>
    Goal: <goal>

    # <title>

    <markdown>

    ## Page 2: <url>

    Error: 404 Not Found

dict_memory — one JSON object, as one ``json.dumps`` call writes it (compact, or indented by 2 or 4
spaces; key order kept). ``status`` is ``ok`` or ``error``, ``action`` the call's action::

    {"status": "ok", "action": "set", "key": "k", "previous": null}        (previous: the value replaced)
    {"status": "ok", "action": "get", "key": "k", "value": <value>}
    {"status": "ok", "action": "delete", "key": "k", "value": <the deleted value>}
    {"status": "ok", "action": "list", "keys": ["a", "b"]}                 (insertion order, as a dict)
    {"status": "error", "action": "get", "key": "k", "error": "key not found"}

Whole-call failures are ``Error: <message>`` as in awctl's layout. ``render(parse(text)) == text`` byte for
byte for every AgentWorldBench-layout text ``parse`` accepts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from awctl.domain import ActionCodec, ObservationCodec
from awctl.errors import CodecError

from .awb_layout import parse_awb, render_awb
from .observations import (
    DictMemoryReply,
    ErrorReply,
    ExtractedPage,
    ExtractedPages,
    MemoryReply,
    Observation,
    PageExtract,
    QueryBlock,
    SearchResult,
    SearchResults,
    VisitPage,
    VisitReport,
)
from .qwen_layout import canonical_style, parse_qwen, render_qwen
from .toolsets import awb_schema, qwen_schema

__all__ = [
    "DictMemoryReply", "ErrorReply", "ExtractedPage", "ExtractedPages", "MemoryReply", "Observation", "PageExtract", "QueryBlock", "SearchAction",
    "SearchActionCodec", "SearchObservationCodec", "SearchResult", "SearchResults", "VisitPage", "VisitReport",
]  # fmt: skip

TOOLS = ("web_search", "web_extractor", "memory", "dict_memory")
MEMORY_OPS = ("set", "get", "delete", "list")
MAX_QUERIES = 5
MAX_URLS = 10

_TOOL_ALIASES = {
    "web_search": "web_search", "search": "web_search", "google_search": "web_search",
    "websearch": "web_search", "web_extractor": "web_extractor", "visit": "web_extractor",
    "open": "web_extractor", "fetch": "web_extractor", "browse": "web_extractor",
    "extract": "web_extractor", "open_url": "web_extractor", "memory": "memory",
    "dict_memory": "dict_memory",
}  # fmt: skip
_OP_ALIASES = {
    "set": "set", "store": "set", "save": "set", "put": "set", "write": "set",
    "get": "get", "read": "get", "recall": "get", "load": "get",
    "delete": "delete", "remove": "delete", "del": "delete",
    "list": "list", "keys": "list", "ls": "list",
}  # fmt: skip


@dataclass(frozen=True)
class SearchAction:
    """A tool call: ``name`` is one of :data:`TOOLS`; ``arguments`` is canonical (see module docstring).

    ``text`` is the text the action was parsed from (``None`` for one built in code); it takes no part in
    equality, and ``render`` writes it back only while it still parses to this action."""

    name: str
    arguments: dict[str, Any]
    text: str | None = field(default=None, compare=False, repr=False)


# ── actions ──────────────────────────────────────────────────────────────────────────────────────────


def _unwrap(text: str) -> str:
    text = text.strip()
    m = re.fullmatch(r"<tool_call>\s*(.*?)\s*</tool_call>", text, flags=re.S)
    if m:
        return m.group(1)
    m = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.S)
    return m.group(1) if m else text


def _as_str_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CodecError("must be a string or a list of strings", where=where)
    return value


class SearchActionCodec(ActionCodec):
    """Parses tool-call JSON (canonical and common variants) into :class:`SearchAction`."""

    def parse(self, text: str) -> SearchAction:
        body = _unwrap(text)
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as exc:
            raise CodecError(
                f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                where="action",
                hint='write e.g. {"name": "web_search", "arguments": {"queries": ["..."]}}',
            ) from None
        if not isinstance(obj, dict):
            raise CodecError(f"expected a JSON object, got {type(obj).__name__}", where="action")
        if isinstance(obj.get("function"), dict):  # OpenAI tool_call item
            obj = obj["function"]
        name = next((obj[k] for k in ("name", "tool", "tool_name", "action") if k in obj), None)
        if not isinstance(name, str):
            raise CodecError('missing the tool name ("name")', where="action", hint=f"one of {TOOLS}")
        tool = _TOOL_ALIASES.get(name.strip().lower())
        if tool is None:
            raise CodecError(f"unknown tool {name!r}", where="action.name", hint=f"use one of {TOOLS}")
        args = next((obj[k] for k in ("arguments", "args", "parameters", "input") if k in obj), {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                raise CodecError(
                    f"arguments string is not JSON ({exc.msg})", where="action.arguments"
                ) from None
        if not isinstance(args, dict):
            raise CodecError(f"must be an object, got {type(args).__name__}", where="action.arguments")
        return SearchAction(tool, getattr(self, f"_args_{tool}")(dict(args)), text)

    @staticmethod
    def _reject_extra(args: dict[str, Any], allowed: set[str], tool: str) -> None:
        extra = sorted(set(args) - allowed)
        if extra:
            raise CodecError(
                f"unexpected argument(s) {extra} for {tool}",
                where="action.arguments",
                hint=f"{tool} takes {sorted(allowed)}",
            )

    def _args_web_search(self, args: dict[str, Any]) -> dict[str, Any]:
        if "query" in args and "queries" not in args:
            args["queries"] = args.pop("query")
        self._reject_extra(args, {"queries"}, "web_search")
        if "queries" not in args:
            raise CodecError('missing "queries"', where="action.arguments", hint='e.g. {"queries": ["..."]}')
        queries = _as_str_list(args["queries"], "action.arguments.queries")
        if not queries:
            raise CodecError("needs at least one query", where="action.arguments.queries")
        if len(queries) > MAX_QUERIES:
            raise CodecError(f"at most {MAX_QUERIES} queries per call", where="action.arguments.queries")
        for i, q in enumerate(queries):
            if not q.strip() or "\n" in q:
                raise CodecError("a query must be one non-empty line", where=f"action.arguments.queries[{i}]")
        return {"queries": queries}

    def _args_web_extractor(self, args: dict[str, Any]) -> dict[str, Any]:
        if "urls" in args:  # AgentWorldBench's name for the same argument
            if "url" in args:
                raise CodecError('give "url" or "urls", not both', where="action.arguments")
            args["url"] = args.pop("urls")
        self._reject_extra(args, {"url", "goal"}, "web_extractor")
        url = args.get("url")
        if isinstance(url, list) and len(url) == 1:
            url = url[0]
        if isinstance(url, list):
            if not url or len(url) > MAX_URLS:
                raise CodecError(f"needs 1 to {MAX_URLS} URLs", where="action.arguments.url")
            for i, u in enumerate(url):
                if not isinstance(u, str) or not u.strip():
                    raise CodecError("must be a non-empty URL string", where=f"action.arguments.url[{i}]")
            out: dict[str, Any] = {"url": [u.strip() for u in url]}
        elif not isinstance(url, str) or not url.strip():
            raise CodecError("needs one URL string or a list of them", where="action.arguments.url")
        else:
            out = {"url": url.strip()}
        goal = args.get("goal")
        if goal is not None:
            if not isinstance(goal, str) or "\n" in goal:
                raise CodecError("must be one line of text", where="action.arguments.goal")
            if goal.strip():
                out["goal"] = goal.strip()
        return out

    def _args_memory(self, args: dict[str, Any]) -> dict[str, Any]:
        self._reject_extra(args, {"op", "key", "value"}, "memory")
        op = args.get("op")
        canonical = _OP_ALIASES.get(op.strip().lower()) if isinstance(op, str) else None
        if canonical is None:
            raise CodecError(
                f"unknown memory op {op!r}", where="action.arguments.op", hint=f"one of {MEMORY_OPS}"
            )
        if canonical == "list":
            if set(args) - {"op"}:
                raise CodecError("list takes no key or value", where="action.arguments")
            return {"op": "list"}
        key = args.get("key")
        if not isinstance(key, str) or not key.strip() or "\n" in key:
            raise CodecError("needs a one-line, non-empty key string", where="action.arguments.key")
        if canonical == "set":
            if "value" not in args:
                raise CodecError("set needs a value", where="action.arguments.value")
            value = args["value"]
            if not isinstance(value, str):
                value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            return {"op": "set", "key": key, "value": value}
        if "value" in args:
            raise CodecError(f"{canonical} takes no value", where="action.arguments.value")
        return {"op": canonical, "key": key}

    def _args_dict_memory(self, args: dict[str, Any]) -> dict[str, Any]:
        for alias in ("op", "operation"):
            if alias in args and "action" not in args:
                args["action"] = args.pop(alias)
        self._reject_extra(args, {"action", "key", "value"}, "dict_memory")
        op = args.get("action")
        canonical = _OP_ALIASES.get(op.strip().lower()) if isinstance(op, str) else None
        if canonical is None:
            raise CodecError(
                f"unknown dict_memory action {op!r}",
                where="action.arguments.action",
                hint=f"one of {MEMORY_OPS}",
            )
        if canonical == "list":
            if set(args) - {"action"}:
                raise CodecError("list takes no key or value", where="action.arguments")
            return {"action": "list"}
        key = args.get("key")
        if not isinstance(key, str) or not key.strip() or "\n" in key:
            raise CodecError("needs a one-line, non-empty key string", where="action.arguments.key")
        if canonical == "set":
            if "value" not in args:
                raise CodecError("set needs a value", where="action.arguments.value")
            return {"action": "set", "key": key, "value": args["value"]}
        if "value" in args:
            raise CodecError(f"{canonical} takes no value", where="action.arguments.value")
        return {"action": canonical, "key": key}

    def render(self, action: SearchAction) -> str:
        """The text ``action`` was parsed from while it still says the same, else the canonical text."""
        if action.text is not None:
            try:
                if self.parse(action.text) == action:
                    return action.text
            except CodecError:
                pass
        return json.dumps({"name": action.name, "arguments": action.arguments}, ensure_ascii=False)

    def canonical(self, text: str) -> str:
        """The canonical text (see the module docstring) of an action written in any accepted shape;
        raises :class:`CodecError` like :meth:`parse`."""
        return self.render(replace(self.parse(text), text=None))

    def family(self, text: str) -> str:
        try:
            return self.parse(text).name
        except CodecError:
            return "invalid"

    def schema_for(self, layout: str) -> str:
        """The action-space text (tool list) of sessions in ``layout``: awctl, qwen or awb."""
        if layout == "awb":
            return awb_schema(MAX_QUERIES)
        if layout == "qwen":
            return qwen_schema(MAX_QUERIES)
        return self.schema()

    def schema(self) -> str:
        return (
            "Each action is one JSON tool call:\n"
            '- {"name": "web_search", "arguments": {"queries": ["<query>", ...]}}: search the web (1 to '
            f"{MAX_QUERIES} queries); returns numbered results per query with URL, Title, Snippet and Date.\n"
            '- {"name": "web_extractor", "arguments": {"url": "<url>", "goal": "<optional goal>"}}: fetch a '
            "page as Markdown; with a goal, only the passages relevant to it (a list of URLs reads several "
            "pages where the tool supports it).\n"
            '- {"name": "memory", "arguments": {"op": "set", "key": "<key>", "value": "<text>"}}, and ops '
            '"get"/"delete" (with "key") and "list": a key-value scratchpad kept for the episode.'
        )


# ── observations ─────────────────────────────────────────────────────────────────────────────────────

_RESULT_FIELDS = ("Title", "Snippet", "Date")


def _q(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


class SearchObservationCodec(ObservationCodec):
    """Renders and parses the layouts in the module docstring; ``parse`` errors name the line.

    Which layout ``render`` writes follows the observation: a :class:`SearchResults` with ``layout="qwen"``,
    a :class:`VisitReport` and a ``verbatim`` :class:`ErrorReply` are written in the Qwen layout; one with
    ``layout="awb"``, :class:`ExtractedPages` and :class:`DictMemoryReply` in the AgentWorldBench layout.
    """

    def render(self, observation: Observation) -> str:
        source = getattr(observation, "text", None)
        if source is not None:  # parsed from text: that text, while the observation still says the same
            try:
                if self._parse(source) == observation:
                    return source
            except CodecError:
                pass
        if isinstance(observation, ErrorReply):
            return observation.message if observation.verbatim else f"Error: {observation.message}"
        if isinstance(observation, VisitReport) or (
            isinstance(observation, SearchResults) and observation.layout == "qwen"
        ):
            return render_qwen(observation)
        if isinstance(observation, (ExtractedPages, DictMemoryReply)) or (
            isinstance(observation, SearchResults) and observation.layout == "awb"
        ):
            return render_awb(observation)
        if isinstance(observation, SearchResults):
            blocks = []
            for i, block in enumerate(observation.blocks, 1):
                lines = [f"Query {i}: {block.query}", f"Results: {len(block.results)}"]
                for n, r in enumerate(block.results, 1):
                    lines += [
                        "",
                        f"[{n}] {r.url}",
                        f"Title: {r.title}",
                        f"Snippet: {r.snippet}",
                        f"Date: {r.date}",
                    ]
                blocks.append("\n".join(lines))
            return "\n\n".join(blocks)
        if isinstance(observation, PageExtract):
            head = [f"URL: {observation.url}", f"Title: {observation.title}", f"Date: {observation.date}"]
            if observation.goal is not None:
                head.append(f"Goal: {observation.goal}")
            return "\n".join(head) + "\n\n" + observation.body
        if isinstance(observation, MemoryReply):
            k = _q(observation.key or "")
            match observation.kind:
                case "stored" | "updated" | "deleted":
                    return f"Memory: {observation.kind} {k}."
                case "missing":
                    return f"Memory: no key {k}."
                case "value":
                    return f"Memory: value of {k}:\n{observation.value}"
                case "keys":
                    n = len(observation.keys)
                    if n == 0:
                        return "Memory: 0 keys."
                    return f"Memory: {n} key{'s' if n != 1 else ''}: {', '.join(_q(x) for x in observation.keys)}."
        raise TypeError(f"not a search-domain observation: {observation!r}")

    def parse(self, text: str) -> Observation:
        """The observation ``text`` holds, carrying ``text`` itself (so ``render`` gives it back)."""
        return replace(self._parse(text), text=text)

    def canonical(self, text: str) -> str:
        """``text`` rendered in its layout's own form (awctl layout: surrounding blank lines and spaces that
        parsing tolerates dropped); raises :class:`CodecError` like :meth:`parse`."""
        return self.render(self._parse(text))

    def _parse(self, text: str) -> Observation:
        qwen = parse_qwen(text.lstrip("\n"))
        if qwen is not None:
            return qwen
        text = text.strip("\n")
        awb = parse_awb(text)
        if awb is not None:
            return awb
        if text.startswith("Error:"):
            return ErrorReply(text[len("Error:") :].strip())
        if text.startswith("Memory:"):
            return self._parse_memory(text)
        if text.startswith("URL:"):
            return self._parse_page(text)
        if text.startswith("Query "):
            return self._parse_search(text)
        first = text.splitlines()[0] if text else "<empty>"
        raise CodecError(
            f"unrecognised observation starting {first[:60]!r}",
            where="observation line 1",
            hint="search results start 'Query 1:' (or \"A Google search for '...'\", 'Search results for \"...\":'), "
            "pages 'URL:' (or 'The useful information in ...', '## Page 1: '), memory replies 'Memory:' (or a "
            "dict_memory JSON object), errors 'Error:'",
        )

    @staticmethod
    def _parse_memory(text: str) -> MemoryReply:
        first, _, rest = text.partition("\n")
        key_re = r'("(?:[^"\\]|\\.)*")'
        m = re.fullmatch(rf"Memory: (stored|updated|deleted) {key_re}\.", first)
        if m and not rest:
            return MemoryReply(m.group(1), json.loads(m.group(2)))  # type: ignore[arg-type]
        m = re.fullmatch(rf"Memory: no key {key_re}\.", first)
        if m and not rest:
            return MemoryReply("missing", json.loads(m.group(1)))
        m = re.fullmatch(rf"Memory: value of {key_re}:", first)
        if m:
            return MemoryReply("value", json.loads(m.group(1)), value=rest)
        if first == "Memory: 0 keys." and not rest:
            return MemoryReply("keys")
        m = re.fullmatch(rf"Memory: (\d+) keys?: ({key_re}(?:, {key_re})*)\.", first)
        if m and not rest:
            keys = tuple(json.loads(k) for k in re.findall(key_re, m.group(2)))
            if len(keys) != int(m.group(1)):
                raise CodecError(f"says {m.group(1)} keys but lists {len(keys)}", where="observation line 1")
            return MemoryReply("keys", keys=keys)
        raise CodecError(f"malformed memory reply {first[:80]!r}", where="observation line 1")

    @staticmethod
    def _parse_page(text: str) -> PageExtract:
        head, sep, body = text.partition("\n\n")
        lines = head.splitlines()
        fields: dict[str, str] = {}
        order = ["URL", "Title", "Date", "Goal"]
        for i, line in enumerate(lines, 1):
            name, colon, value = line.partition(": ")
            if not colon or name not in order or name in fields:
                raise CodecError(f"bad page header line {line[:60]!r}", where=f"observation line {i}",
                                 hint="the header is URL:, Title:, Date: and optionally Goal:, then a blank line")  # fmt: skip
            fields[name] = value
        missing = [f for f in order[:3] if f not in fields]
        if missing:
            raise CodecError(f"page header lacks {', '.join(missing)}", where="observation header")
        if list(fields) != order[: len(fields)]:
            raise CodecError(f"page header fields out of order: {list(fields)}", where="observation header")
        if not sep:
            raise CodecError("page has no blank line after its header", where="observation header")
        return PageExtract(fields["URL"], fields["Title"], fields["Date"], body, fields.get("Goal"))

    @staticmethod
    def _parse_search(text: str) -> SearchResults:
        lines = text.split("\n")
        blocks: list[QueryBlock] = []
        block_numbers: list[int] = []
        i = 0

        def err(msg: str, at: int) -> CodecError:
            return CodecError(msg, where=f"observation line {at + 1}")

        while i < len(lines):
            m = re.fullmatch(r"Query (\d+): (.*)", lines[i])
            if not m:
                raise err(f"expected 'Query <n>: <query>', got {lines[i][:60]!r}", i)
            block_numbers.append(int(m.group(1)))
            query = m.group(2)
            i += 1
            m2 = re.fullmatch(r"Results: (\d+)", lines[i]) if i < len(lines) else None
            if not m2:
                raise err("expected 'Results: <n>' after the query line", i)
            declared = int(m2.group(1))
            i += 1
            results: list[SearchResult] = []
            numbers: list[int] = []
            while i < len(lines):
                if lines[i] != "":
                    raise err(f"expected a blank line, got {lines[i][:60]!r}", i)
                i += 1
                if i < len(lines) and lines[i].startswith("Query "):
                    break
                m3 = re.fullmatch(r"\[(\d+)\] (\S+)", lines[i]) if i < len(lines) else None
                if not m3:
                    raise err("expected '[n] <url>'", i)
                numbers.append(int(m3.group(1)))
                values: dict[str, str] = {}
                for j, name in enumerate(_RESULT_FIELDS, 1):
                    line = lines[i + j] if i + j < len(lines) else ""
                    if not line.startswith(f"{name}: ") and line != f"{name}:":
                        raise err(f"result [{m3.group(1)}] lacks its '{name}:' line", i + j)
                    values[name] = line[len(name) + 1 :].strip()
                results.append(SearchResult(m3.group(2), values["Title"], values["Snippet"], values["Date"]))
                i += 1 + len(_RESULT_FIELDS)
            blocks.append(QueryBlock(query, tuple(results), tuple(numbers), declared))
        return SearchResults(tuple(blocks), tuple(block_numbers))

    def normalize(self, text: str) -> str:
        # Trailing spaces and runs of blank lines carry no meaning in any of the layouts; nor does the
        # Qwen layout's optional spacing, so a Qwen-layout text is first rewritten in its canonical style.
        try:
            parsed = parse_qwen(text.lstrip("\n"))
        except CodecError:
            parsed = None
        if isinstance(parsed, (SearchResults, VisitReport)):
            text = render_qwen(canonical_style(parsed))
        elif text.lstrip().startswith("{"):
            try:
                reply = parse_awb(text.strip())
            except CodecError:
                reply = None
            if isinstance(reply, DictMemoryReply):  # JSON spacing carries no meaning
                return render_awb(DictMemoryReply(reply.payload))
        lines = [line.rstrip() for line in text.strip().splitlines()]
        out: list[str] = []
        for line in lines:
            if line == "" and out and out[-1] == "":
                continue
            out.append(line)
        return "\n".join(out)
