"""Which observation layout a trajectory uses, read from the tool list its system prompt declares.

A search trajectory's layout is never a global setting: the tools the system prompt declares (its action
space, or a flat prompt such as AgentWorldBench's ``system_str``) say which tool set the agent had, and
each tool set writes one layout:

========  =========================================================  ====================================
layout    tools declared                                             what marks it
========  =========================================================  ====================================
``awb``   ``web_search``, ``web_extractor``, ``dict_memory``         ``dict_memory``, or ``web_extractor``
                                                                     taking ``urls``
``awctl`` ``web_search``, ``web_extractor``, ``memory``              ``memory``, or awctl's own
                                                                     ``web_extractor`` call with ``url``
``qwen``  ``search``, ``visit`` (the Qwen web agents)                ``search`` or ``visit``; or awctl's
                                                                     Qwen-layout initial state
========  =========================================================  ====================================

A tool is *declared* where the prompt names it as a JSON ``"name": "<tool>"`` (function schemas, tool-call
examples). What :func:`tool_set` may conclude:

* ``declared``: the marks of exactly one layout; verifiers hold every observation to it;
* ``mixed``: marks of two layouts (``dict_memory`` next to ``visit``...), and ``unknown``: tools declared
  but none of the search domain's: verifiers abstain, the trajectory does not say what to expect;
* ``undeclared``: no tool declared, or only names every layout shares (``web_search`` alone): each
  observation is read in the layout it is written in (every layout's text names itself) and held to the
  layout of the trajectory's earlier observations.

Tools outside the search domain (a code interpreter next to ``search``/``visit``) do not change the
decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from awctl.trajectory import SystemPrompt

TOOLSETS: dict[str, tuple[str, ...]] = {
    "awctl": ("web_search", "web_extractor", "memory"),
    "qwen": ("search", "visit", "memory"),
    "awb": ("web_search", "web_extractor", "dict_memory"),
}
SEARCH_TOOLS = frozenset(t for tools in TOOLSETS.values() for t in tools)
# awctl's SearchEnv names its Qwen layout in the initial state (``READY_QWEN``).
QWEN_STATE_MARK = "Qwen web-agent layout"

_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z_][\w.\-]{0,63})"')
_AWCTL_EXTRACTOR = re.compile(r'"name"\s*:\s*"web_extractor"\s*,\s*"arguments"\s*:\s*\{\s*"url"\s*:')
_URLS_PARAM = re.compile(r'"urls"\s*:')
_MEMORY_EMPTY = re.compile(
    r"\b(?:memory|dict_memory|store|dictionary)\b[^.\n]{0,60}?\b(?:is|starts|begins|starts out)\s+empty\b"
    r"|\bempty\s+(?:memory|dictionary|dict|store)\b",
    re.I,
)


@dataclass(frozen=True)
class ToolSet:
    """What a system prompt's tool list establishes (see the module docstring).

    ``layout`` is set only when ``status`` is ``declared``; ``tools`` are the declared names in order.
    """

    status: str
    layout: str | None
    tools: tuple[str, ...]
    detail: str

    @property
    def abstain(self) -> bool:
        """True when the tool list is mixed or unknown: the trajectory says nothing checkable."""
        return self.status in ("mixed", "unknown")


@lru_cache(maxsize=256)
def _tool_set(text: str) -> ToolSet:
    tools = tuple(dict.fromkeys(_NAME.findall(text)))
    marks: dict[str, list[str]] = {}
    for name in tools:
        if name == "dict_memory":
            marks.setdefault("awb", []).append("declares dict_memory")
        elif name == "memory":
            marks.setdefault("awctl", []).append("declares memory")
        elif name in ("search", "visit"):
            marks.setdefault("qwen", []).append(f"declares {name}")
    if "web_extractor" in tools:
        if _URLS_PARAM.search(text):
            marks.setdefault("awb", []).append("web_extractor takes urls")
        elif _AWCTL_EXTRACTOR.search(text):
            marks.setdefault("awctl", []).append("web_extractor takes url")
    if QWEN_STATE_MARK in text:
        # awctl's Qwen-layout sessions declared awctl's tool names before they declared search/visit.
        marks = {"qwen": [f"initial state names the {QWEN_STATE_MARK}"]}
    if "memory" in tools and "qwen" in marks and "awctl" in marks and marks["awctl"] == ["declares memory"]:
        del marks["awctl"]  # the Qwen agents' tool set may include awctl's memory tool
    if len(marks) == 1:
        ((layout, why),) = marks.items()
        return ToolSet("declared", layout, tools, "; ".join(why))
    if len(marks) > 1:
        detail = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(marks.items()))
        return ToolSet("mixed", None, tools, f"the tool list mixes layouts ({detail})")
    if tools and not SEARCH_TOOLS & set(tools):
        return ToolSet("unknown", None, tools, f"no search tool among the declared tools {list(tools)}")
    return ToolSet("undeclared", None, tools, "the tool list does not name a layout")


def tool_set(system: SystemPrompt) -> ToolSet:
    """The tool set ``system`` declares (cached per prompt text)."""
    return _tool_set(system.render())


def memory_starts_empty(system: SystemPrompt) -> bool:
    """Whether the system prompt says the memory store starts empty (e.g. "Memory is empty.")."""
    return bool(_MEMORY_EMPTY.search(system.render()))


# ── the tool list each layout's sessions declare (the action-space section) ──────────────────────────


def _function(name: str, description: str, properties: dict[str, str], required: list[str]) -> str:
    import json

    props = {k: json.loads(v) for k, v in properties.items()}
    schema = {"type": "object", "properties": props, "required": required}
    fn = {"name": name, "description": description, "parameters": schema}
    return json.dumps({"type": "function", "function": fn}, ensure_ascii=False)


def awb_schema(max_queries: int, tools: tuple[str, ...] = TOOLSETS["awb"]) -> str:
    """The AgentWorldBench tool list as JSON function schemas, one per line (only ``tools``)."""
    lines = {
        "web_search": _function(
            "web_search",
            f"Search the web; returns numbered results ([1] <url>, Title, Snippet, Published) per query "
            f"(1 to {max_queries} queries).",
            {"queries": '{"type": "array", "items": {"type": "string"}}'},
            ["queries"],
        ),
        "web_extractor": _function(
            "web_extractor",
            "Read web pages as Markdown; with a goal, only the passages relevant to it.",
            {
                "urls": '{"type": "array", "items": {"type": "string"}, "minItems": 1}',
                "goal": '{"type": "string"}',
            },
            ["urls", "goal"],
        ),  # fmt: skip
        "dict_memory": _function(
            "dict_memory",
            "A key-value memory kept for the episode: set, get, delete a key, or list the keys.",
            {
                "action": '{"type": "string", "enum": ["set", "get", "delete", "list"]}',
                "key": '{"type": "string"}',
                "value": "{}",
            },
            ["action"],
        ),  # fmt: skip
    }
    return "Tools (one JSON function schema per line):\n" + "\n".join(lines[t] for t in tools)


def qwen_schema(max_queries: int) -> str:
    """The Qwen web agents' tool list (search, visit) plus awctl's memory, as tool-call examples."""
    return (
        "Each action is one JSON tool call:\n"
        '- {"name": "search", "arguments": {"query": ["<query>", ...]}}: search the web (1 to '
        f"{max_queries} queries).\n"
        '- {"name": "visit", "arguments": {"url": "<url>" or ["<url>", ...], "goal": "<goal>"}}: read pages '
        "and report the evidence relevant to the goal.\n"
        '- {"name": "memory", "arguments": {"op": "set", "key": "<key>", "value": "<text>"}}, and ops '
        '"get"/"delete" (with "key") and "list": a key-value scratchpad kept for the episode.'
    )
