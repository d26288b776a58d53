"""The search domain's simulator prompt wording: ten role sentences and the simulation instruction."""

from __future__ import annotations

from awctl.prompts import DEFAULT_OUTPUT_RULES, PromptBuilder

SEARCH_ROLES: tuple[str, ...] = (
    "You are a world model of a web search toolkit: a search engine, a page extractor and a key-value memory.",
    "Act as the search engine, page fetcher and scratch memory a research agent calls; answer each tool call.",
    "You simulate a web search API and a web page reader for an AI research agent, one tool call at a time.",
    "Play the role of the tools behind a search agent: web_search returns ranked results, web_extractor "
    "returns pages, memory stores notes.",
    "You are the backend of a search agent's tools. Return exactly what the real search engine, page "
    "extractor or memory store would return.",
    "Simulate a documentation search engine with page extraction and a memory scratchpad; the agent sees "
    "only your tool outputs.",
    "You are an emulator of a search-and-browse environment used by a question-answering agent.",
    "Pretend to be a real web search service with a page reader and a note store, and answer every call "
    "with its true output.",
    "You model how a search engine, a web page extractor and a key-value memory respond to an agent's "
    "tool calls.",
    "As a simulator of a retrieval agent's tools, predict the output of each web_search, web_extractor "
    "and memory call.",
)

SEARCH_SIMULATION_INSTRUCTION = (
    "Predict the tool output for the agent's latest call, given everything before it. web_search returns, "
    "for each query in order, a block 'Query <i>: <query>' and 'Results: <n>' followed by numbered results "
    "([1], [2], ... restarting in each block, at most the engine's top-k) with URL, Title, Snippet and Date "
    "(YYYY-MM-DD) lines. web_extractor returns URL, Title and Date lines, a blank line and the page as "
    "Markdown, consistent with any earlier search result for that URL. memory replies exactly as a "
    "key-value store holding every earlier set/delete. Failures are 'Error: <message>'. Stay consistent "
    "with earlier observations; do not help or correct the agent. " + DEFAULT_OUTPUT_RULES
)

QWEN_SIMULATION_INSTRUCTION = (
    "Predict the tool output for the agent's latest call, given everything before it, in the layout of the "
    "Qwen web agents' search and visit tools. web_search returns, for each query in order, \"A Google search "
    "for '<query>' found <n> results:\", a blank line, '## Web Results' and numbered results ('1. [<title>]"
    "(<url>)', then 'Date published: <date>' when known, a blank line and the snippet; results separated by "
    "a blank line, at most the engine's top-k, numbering restarting in each block), or \"No results found "
    "for '<query>'. Try with a more general query.\"; blocks are joined by a line '======='. web_extractor "
    "returns, per URL, 'The useful information in <url> for user goal <goal> as follows: ', a blank line, "
    "'Evidence in page: ' with the page's passages relevant to the goal, a blank line and 'Summary: ' with "
    "a summary, consistent with any earlier search result for that URL. memory replies exactly as a "
    "key-value store holding every earlier set/delete. Stay consistent with earlier observations; do not "
    "help or correct the agent. " + DEFAULT_OUTPUT_RULES
)


AWB_SIMULATION_INSTRUCTION = (
    "Predict the tool output for the agent's latest call, given everything before it, in the layout of "
    "AgentWorldBench's search tools. web_search returns, for each query in order, 'Search results for "
    "\"<query>\":', a blank line and numbered results separated by blank lines ('[<n>] <url>', 'Title: "
    "<title>', 'Snippet: <snippet>', then 'Published: <date>' when known; numbering restarting at 1 in each "
    "block), or 'No results found.'; blocks are separated by a blank line. web_extractor returns, per URL in "
    "order, '## Page <n>: <url>', a 'Goal: <goal>' line when the call has a goal, a blank line and the page "
    "as Markdown starting '# <title>' (with a goal, only the passages relevant to it), or 'Error: <reason>'; "
    "pages are separated by a blank line and agree with any earlier search snippet for that URL. dict_memory "
    "answers one JSON object with status, action and key: set gives the previous value (null when new), get "
    "and delete the value, list the keys in insertion order, and a missing key status error, exactly as a "
    "dictionary holding every earlier set/delete. Stay consistent with earlier observations; do not help or "
    "correct the agent. " + DEFAULT_OUTPUT_RULES
)


def simulation_instruction_for(layout: str) -> str:
    """The simulation instruction describing observations in ``layout`` ("awctl", "qwen" or "awb")."""
    return {"qwen": QWEN_SIMULATION_INSTRUCTION, "awb": AWB_SIMULATION_INSTRUCTION}.get(
        layout, SEARCH_SIMULATION_INSTRUCTION
    )


def search_prompt_builder() -> PromptBuilder:
    return PromptBuilder(
        domain_title="web search",
        roles=SEARCH_ROLES,
        simulation_instruction=SEARCH_SIMULATION_INSTRUCTION,
    )


#: What a rubric judge checks in this domain's observations (``Domain.judge_guidance``).
JUDGE_GUIDANCE = """\
The environment is a web search engine and page extractor used by a research agent. Actions are search
queries or requests to read a page for a goal; answers are numbered result lists with titles, URLs and
snippets, or extracted page evidence and summaries. Check result counts, numbering, URL and date forms,
that extracted evidence could come from the page named, and that repeated queries agree with earlier
results.
"""
