"""Writes this folder's foreign search sessions, without awctl: run ``python tests/foreign/search/record.py``.

The sessions are hand-written: the pages in ``record_pages.py``, and below, per episode, which queries an agent
searched, which results the engine listed (with snippets cut from the pages), which pages it read for
which goal and what it kept in memory. This script only lays the episodes out in the foreign formats, with
its own writer (it imports nothing from awctl):

* ``agentworldbench_search_*.awb.jsonl``: AgentWorldBench rows (one row per evaluated turn, the whole
  trajectory's ``prompt``/``response`` lists, or the lists up to that turn) whose system prompt declares
  the AgentWorldBench search tools (``web_search``, ``web_extractor``, ``dict_memory``; the tool mix of
  each episode) and whose observations are in that tool set's layout (see
  ``awctl_domains.search.codec`` for the layout; the release's own prompt file was not available);
* ``agentworldbench_search_qwen_tools.awb.jsonl``: AgentWorldBench rows of sessions with the Qwen web
  agents' tools (``search``, ``visit``) in their output layout;
* ``deepresearch_runs.qwen-agent.jsonl``: run results as the Qwen web agents' ReAct loop (Tongyi
  DeepResearch, WebSailor) writes them: ``question``, ``messages`` with ``<tool_call>`` and
  ``<tool_response>`` turns, ``prediction``, ``termination``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # leave no __pycache__ among the data files
sys.path.insert(0, str(HERE))

from record_pages import PAGES  # noqa: E402

# ── the engine's side: snippets and pages ────────────────────────────────────────────────────────────


def plain(markdown: str) -> str:
    """The page's text as an engine shows it in a snippet: Markdown syntax dropped, one line."""
    text = re.sub(r"\]\([^)\s]*\)", "]", markdown)
    text = re.sub(r"^#+ |^- |^\|.*$", "", text, flags=re.M)
    text = text.replace("**", "").replace("*", "").replace("`", "").replace("[", "").replace("]", "")
    return " ".join(text.split())


def cut(key: str, start: str, n: int, lead: bool = True, tail: bool = True) -> str:
    """``n`` words of page ``key`` from the phrase ``start`` on, with ``…`` where text was left out."""
    text = plain(PAGES[key]["body"])
    at = text.find(start)
    if at < 0:
        raise SystemExit(f"snippet start {start!r} not on page {key}")
    words = text[at:].split()[:n]
    return ("…" if lead and at > 0 else "") + " ".join(words) + ("…" if tail else "")


def result(key: str, snippet: str) -> dict:
    p = PAGES[key]
    return {"url": p["url"], "title": p["engine_title"], "snippet": snippet, "date": p["date"], "key": key}


def paragraphs(key: str) -> list[str]:
    return [part.strip() for part in PAGES[key]["body"].split("\n\n") if part.strip()]


# ── AgentWorldBench layout ───────────────────────────────────────────────────────────────────────────


def awb_search(blocks: list[tuple[str, list[dict]]]) -> str:
    out = []
    for query, results in blocks:
        head = f'Search results for "{query}":\n\n'
        if not results:
            out.append(head + "No results found.")
            continue
        items = []
        for n, r in enumerate(results, 1):
            item = f"[{n}] {r['url']}\nTitle: {r['title']}\nSnippet: {r['snippet']}"
            if r["date"]:
                item += f"\nPublished: {r['date']}"
            items.append(item)
        out.append(head + "\n\n".join(items))
    return "\n\n".join(out)


def awb_pages(reads: list[tuple[str, list[int] | None]], goal: str) -> str:
    out = []
    for n, (key, shown) in enumerate(reads, 1):
        if key.startswith("http"):  # a URL the site did not serve
            url, page = key, None
        else:
            page = PAGES[key]
            url = page["url"]
        text = f"## Page {n}: {url}"
        if goal:
            text += f"\nGoal: {goal}"
        if page is None:
            text += "\n\nError: 404 Not Found"
        else:
            paras = paragraphs(key)
            body = "\n\n".join(paras if shown is None else [paras[i] for i in shown])
            text += f"\n\n# {page['title']}\n\n{body}"
        out.append(text)
    return "\n\n".join(out)


class DictMemory:
    """The dict_memory tool's side: a dict, replies as JSON objects."""

    def __init__(self, indent: int | None = None) -> None:
        self.data: dict = {}
        self.indent = indent

    def __call__(self, action: str, key: str | None = None, value=None) -> str:
        if action == "list":
            reply = {"status": "ok", "action": "list", "keys": list(self.data)}
        elif action == "set":
            reply = {"status": "ok", "action": "set", "key": key, "previous": self.data.get(key)}
            self.data[key] = value
        elif key not in self.data:
            reply = {"status": "error", "action": action, "key": key, "error": "key not found"}
        else:
            value = self.data[key] if action == "get" else self.data.pop(key)
            reply = {"status": "ok", "action": action, "key": key, "value": value}
        return json.dumps(reply, ensure_ascii=False, indent=self.indent)


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


TOOL_SCHEMAS = {
    "web_search": {"type": "function", "function": {
        "name": "web_search", "description": "Search for information from the internet.",
        "parameters": {"type": "object", "properties": {"queries": {
            "type": "array", "items": {"type": "string", "description": "The search query."},
            "description": "The list of search queries."}}, "required": ["queries"]}}},
    "web_extractor": {"type": "function", "function": {
        "name": "web_extractor",
        "description": "Read webpages as Markdown; with a goal, keep the passages relevant to it.",
        "parameters": {"type": "object", "properties": {
            "urls": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "The webpage urls."},
            "goal": {"type": "string", "description": "What to look for; empty for the whole page."}},
            "required": ["urls", "goal"]}}},
    "dict_memory": {"type": "function", "function": {
        "name": "dict_memory",
        "description": "A dictionary the agent keeps notes in during the session.",
        "parameters": {"type": "object", "properties": {
            "action": {"type": "string", "enum": ["set", "get", "delete", "list"]},
            "key": {"type": "string"}, "value": {"description": "Any JSON value (set only)."}},
            "required": ["action"]}}},
}  # fmt: skip

FORMATS = {
    "web_search": '- web_search: per query, a line `Search results for "<query>":`, a blank line, then numbered '
    "results `[n] <url>` with `Title:`, `Snippet:` and (when known) `Published:` lines, separated by blank "
    "lines; `No results found.` when nothing matches.",
    "web_extractor": "- web_extractor: per URL, `## Page <n>: <url>`, a `Goal:` line when a goal is given, a "
    "blank line, then the page as Markdown from its `# <title>` heading (only the passages relevant to the "
    "goal when there is one), or `Error: <reason>`.",
    "dict_memory": "- dict_memory: one JSON object with `status`, `action` and `key`; `set` reports the "
    "`previous` value, `get`/`delete` the `value`, `list` the `keys` in insertion order; a missing key is "
    "`status` `error`.",
}


def awb_system(tools: list[str]) -> str:
    schemas = "\n".join(json.dumps(TOOL_SCHEMAS[t], ensure_ascii=False) for t in tools)
    formats = "\n".join(FORMATS[t] for t in tools)
    state = "\n\n# Initial State\n\nThe dict_memory store is empty." if "dict_memory" in tools else ""
    return (
        "# Role\n\nYou are a world model of the tools a web research agent calls. Given the tools, the "
        "interaction so far and the agent's next tool call, predict exactly what the tool returns.\n\n"
        f"# Tools\n\n<tools>\n{schemas}\n</tools>\n\n# Output Formats\n\n{formats}{state}\n\n"
        "# Rules\n\nStay consistent with every earlier result: a page read after a search agrees with the "
        "snippet the search showed for it, and memory returns what was stored. Do not correct the agent.\n\n"
        "# Output\n\nThink step by step, then write only the tool output inside "
        "<predicted_observation></predicted_observation>."
    )


FENCE = "```"


def awb_prompt(n: int, action: dict, thought: str | None, fenced: bool) -> str:
    body = json.dumps(action, ensure_ascii=False)
    if fenced:
        body = f"{FENCE}json\n{body}\n{FENCE}"
    before = f"**Agent Thought:**\n{thought}\n\n" if thought else ""
    return f"### Turn {n}\n{before}**Action:**\n{body}"


def awb_rows(number: int, tools: list[str], turns: list[tuple[dict, str, str | None]], prefix_lists: bool,
             fenced: bool) -> list[dict]:  # fmt: skip
    system = awb_system(tools)
    prompts = [awb_prompt(i, a, thought, fenced) for i, (a, _, thought) in enumerate(turns, 1)]
    responses = [f"**Environment Observation:**\n{obs}" for _, obs, _ in turns]
    rows = []
    for k in range(1, len(turns) + 1):
        upto = k if prefix_lists else len(turns)
        rows.append({
            "task": "search", "id": f"search_{number:03d}_turn{k}", "prompt": prompts[:upto],
            "response": responses[:upto], "current_prompt": prompts[k - 1], "system_str": system,
            "turn_idx": k, "total_turns": len(turns), "lang": "en",
        })  # fmt: skip
    return rows


# ── Qwen web-agent layout ────────────────────────────────────────────────────────────────────────────


def qwen_search(blocks: list[tuple[str, list[dict]]]) -> str:
    out = []
    for query, results in blocks:
        if not results:
            out.append(f"No results found for '{query}'. Try with a more general query.")
            continue
        items = []
        for n, r in enumerate(results, 1):
            item = f"{n}. [{r['title']}]({r['url']})"
            if r["date"]:
                item += f"\nDate published: {r['date']}"
            items.append(item + f"\n\n{r['snippet']}")
        out.append(
            f"A Google search for '{query}' found {len(results)} results:\n\n## Web Results\n"
            + "\n\n".join(items)
        )
    return "\n=======\n".join(out)


def qwen_visit(reads: list[tuple[str, str, str]], goal: str) -> str:
    pages = []
    for i, (key, evidence, summary) in enumerate(reads):
        url = PAGES[key]["url"]
        text = (f"The useful information in {url} for user goal {goal} as follows: \n\nEvidence in page: \n"
                f"{evidence}\n\nSummary: \n{summary}")  # fmt: skip
        pages.append(text + ("\n\n" if i < len(reads) - 1 else ""))
    return "\n=======\n".join(pages)


QWEN_TOOLS = [
    {"type": "function", "function": {"name": "search", "description": "Perform Google web searches then "
     "returns a string of the top search results. Accepts multiple queries.", "parameters": {"type": "object",
     "properties": {"query": {"type": "array", "items": {"type": "string"}, "minItems": 1,
     "description": "The list of search queries."}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "visit", "description": "Visit webpage(s) and return the summary "
     "of the content.", "parameters": {"type": "object", "properties": {"url": {"type": ["string", "array"],
     "items": {"type": "string"}, "minItems": 1, "description": "The URL(s) of the webpage(s) to visit."},
     "goal": {"type": "string", "description": "The goal of the visit for webpage(s)."}},
     "required": ["url", "goal"]}}},
    {"type": "function", "function": {"name": "PythonInterpreter", "description": "Executes Python code in a "
     "sandboxed environment.", "parameters": {"type": "object", "properties": {}, "required": []}}},
]  # fmt: skip


def qwen_agent_system(date: str) -> str:
    tools = "\n".join(json.dumps(t, ensure_ascii=False) for t in QWEN_TOOLS)
    return (
        "You are a deep research assistant. Your core function is to conduct thorough, multi-source "
        "investigations into any topic. When you have gathered enough information, answer inside "
        "<answer></answer> tags.\n\n# Tools\n\nYou may call one or more functions to assist with the user "
        "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
        f"{tools}\n</tools>\n\nFor each function call, return a json object with function name and arguments "
        'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        f"<args-json-object>}}\n</tool_call>\n\nCurrent date: {date}"
    )


def qwen_run(question: str, date: str, steps: list[tuple[str, dict, str]], answer: str) -> dict:
    messages = [{"role": "system", "content": qwen_agent_system(date)}, {"role": "user", "content": question}]
    for think, action, output in steps:
        body = json.dumps(action, ensure_ascii=False)
        messages.append(
            {"role": "assistant", "content": f"<think>\n{think}\n</think>\n<tool_call>\n{body}\n</tool_call>"}
        )
        messages.append({"role": "user", "content": f"<tool_response>\n{output}\n</tool_response>"})
    messages.append(
        {"role": "assistant", "content": f"<think>\nI have what I need.\n</think>\n<answer>{answer}</answer>"}
    )
    return {"question": question, "answer": answer, "messages": messages, "prediction": answer,
            "termination": "answer"}  # fmt: skip


# ── writing ──────────────────────────────────────────────────────────────────────────────────────────


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    from record_episodes import awb_episodes, qwen_awb_episodes, qwen_runs

    files: dict[str, list[dict]] = {}
    for number, (group, tools, turns, prefix, fenced) in enumerate(awb_episodes(), 1):
        files.setdefault(f"agentworldbench_search_{group}.awb.jsonl", []).extend(
            awb_rows(number, tools, turns, prefix, fenced)
        )
    for number, (tools_text, turns) in enumerate(qwen_awb_episodes(), 101):
        rows = awb_rows(number, ["web_search"], turns, False, False)
        for row in rows:
            row["system_str"] = tools_text
        files.setdefault("agentworldbench_search_qwen_tools.awb.jsonl", []).extend(rows)
    files["deepresearch_runs.qwen-agent.jsonl"] = qwen_runs()
    for name, rows in files.items():
        write_jsonl(HERE / name, rows)
        print(f"wrote {len(rows)} rows to {name}")


if __name__ == "__main__":
    main()
