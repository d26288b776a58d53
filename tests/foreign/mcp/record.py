"""Record real third-party MCP servers through the official ``mcp`` client, without awctl.

Each episode starts its server (a PyPI console script or an npm package's bin), connects the SDK's
``mcp.Client`` over stdio, lists the tools and makes the episode's calls one by one -- successes, bad
arguments, unknown tools, tools that fail. For every call the script keeps what the client returned (the
``CallToolResult``, or the ``MCPError`` it raised) and, through a tap on the transport, the JSON-RPC request
and response as they crossed the wire. It then writes AgentWorldBench rows (one row per turn, the official
layout: ``### Turn N`` + ``**Action:**`` + a fenced JSON tool call; ``**Environment Observation:**`` + the
observation; a ``system_str`` naming the server and its tools) in the forms real harnesses store:

Rows are written for a sample of turns (the first, the middle, the last), each row carrying the whole
trajectory's ``prompt`` and ``response`` lists, as AgentWorldBench's rows do.

- ``<server>.awb.jsonl``        the CallToolResult as the client returns it, dumped as JSON (a raised
                                ``MCPError`` as its error data ``{"code", "message"}``)
- ``<server>-wire.awb.jsonl``   the JSON-RPC request and response as sent and received
- ``<server>-blocks.awb.jsonl`` the result's content blocks (what a harness hands a model as tool output)
- ``<server>-text.awb.jsonl``   the result's text (what most agent frameworks show)

Every form of one server comes from the same real calls. Nothing here imports awctl; awctl only reads the
files afterwards (``awctl data verify``). Re-run from the repository root::

    .venv/bin/python tests/foreign/mcp/record.py            # needs node/npm for the npm servers

The npm servers are installed into a scratch folder with ``npm install`` (the registry must be reachable
once); they run offline afterwards. CI does not run this script: the recordings are checked in.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
SCRATCH = Path(tempfile.gettempdir()) / "awctl-foreign-mcp"
NPM_VERSION = "2026.8.31"
NPM_PACKAGES = ("server-everything", "server-filesystem", "server-memory")
# A fixed, small environment for every server: results must not leak the recording machine's settings.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": str(SCRATCH / "home"),
    "LANG": "C.UTF-8",
    "TZ": "UTC",
}


# ── the transport tap: the JSON-RPC messages as they cross the wire ──────────────────────────────────


def _wire(item: Any) -> dict[str, Any] | None:
    message = getattr(item, "message", None)
    if message is None:
        return None
    return message.model_dump(by_alias=True, mode="json", exclude_unset=True)  # type: ignore[no-any-return]


class WireTap:
    """Wraps a transport; keeps every tools/call request sent and every response received, by id."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: dict[Any, dict[str, Any]] = {}
        self.responses: dict[Any, dict[str, Any]] = {}
        self.last_call_id: Any = None

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.inner.__aenter__()
        return _TapRead(read, self), _TapWrite(write, self)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


class _TapRead:
    def __init__(self, stream: Any, tap: WireTap) -> None:
        self.stream, self.tap = stream, tap

    async def receive(self) -> Any:
        item = await self.stream.receive()
        data = _wire(item)
        if data is not None and "id" in data and ("result" in data or "error" in data):
            self.tap.responses[data["id"]] = data
        return item

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _TapRead:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class _TapWrite:
    def __init__(self, stream: Any, tap: WireTap) -> None:
        self.stream, self.tap = stream, tap

    async def send(self, item: Any) -> None:
        data = _wire(item)
        if data is not None and data.get("method") == "tools/call" and "id" in data:
            self.tap.requests[data["id"]] = data
            self.tap.last_call_id = data["id"]
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _TapWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


# ── episodes ─────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Call:
    """One real call: what the agent asked, what the client returned, what crossed the wire."""

    name: str
    arguments: dict[str, Any]
    result: Any = None  # CallToolResult
    error: MCPError | None = None
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None


@dataclass
class Episode:
    server: str
    name: str
    calls: list[tuple[str, dict[str, Any]]]
    task: str
    recorded: list[Call] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    server_info: dict[str, Any] = field(default_factory=dict)


async def run_episode(argv: list[str], env: dict[str, str], episode: Episode, errlog: Path) -> None:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(SCRATCH))
    with open(errlog, "a", encoding="utf-8") as err:
        tap = WireTap(stdio_client(params, errlog=err))
        async with Client(tap, mode="legacy", read_timeout_seconds=60) as client:
            info = client.server_info
            episode.server_info = info.model_dump(mode="json", exclude_none=True) if info else {}
            listed = await client.list_tools()
            episode.tools = [
                t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools
            ]
            for name, arguments in episode.calls:
                call = Call(name, arguments)
                tap.last_call_id = None
                try:
                    call.result = await client.call_tool(name, arguments)
                except MCPError as exc:
                    call.error = exc
                rid = tap.last_call_id
                call.request, call.response = tap.requests.get(rid), tap.responses.get(rid)
                if call.request is None or call.response is None:
                    raise RuntimeError(f"{episode.name}: no wire exchange captured for {name}")
                episode.recorded.append(call)


# ── the forms a harness stores ───────────────────────────────────────────────────────────────────────


def result_json(call: Call, dump: str) -> str:
    """The client's view: the CallToolResult (or the raised error's data) dumped as JSON, ``dump`` naming the
    serialisation a harness would use."""
    model = call.result if call.error is None else call.error.error
    if dump == "pydantic-indent":  # model_dump_json(indent=2): every field, nulls included
        return model.model_dump_json(by_alias=True, indent=2)  # type: ignore[no-any-return]
    if dump == "exclude-none-indent":
        data = model.model_dump(by_alias=True, mode="json", exclude_none=True)
        return json.dumps(data, ensure_ascii=False, indent=2)
    data = model.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return json.dumps(data, ensure_ascii=False)


def blocks_json(call: Call) -> str:
    """The content blocks a harness passes on as the tool output (a raised error as one text block)."""
    if call.error is not None:
        blocks = [{"type": "text", "text": call.error.message}]
    else:
        blocks = [b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in call.result.content]
    return json.dumps(blocks, ensure_ascii=False, indent=2)


def plain_text(call: Call) -> str:
    """The text most frameworks show: the text blocks joined by newlines (a raised error: its message)."""
    if call.error is not None:
        return call.error.message
    return "\n".join(b.text for b in call.result.content if getattr(b, "type", "") == "text")


FORM_NOTES = {
    "result": "Each observation is the CallToolResult the MCP client returns, serialised as JSON (content, "
    "isError, structuredContent and any metadata the server adds); a protocol error the client raises is "
    "shown as its error object with code and message.",
    "wire": "Each action is the JSON-RPC tools/call request as sent, and each observation the JSON-RPC "
    "response as received over stdio.",
    "blocks": "Each observation is the list of content blocks the tool returned (text, image, resource, "
    "resource_link), as JSON.",
    "text": "Each observation is the text the tool returned, as the agent saw it.",
}


def tools_section(tools: list[dict[str, Any]], layout: str) -> str:
    if layout == "openai-lines":  # one OpenAI function spec per line inside <tools></tools>
        lines = [
            json.dumps(
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": t.get("inputSchema", {}),
                    },
                },
                ensure_ascii=False,
            )
            for t in tools
        ]
        return "<tools>\n" + "\n".join(lines) + "\n</tools>"
    value: Any = {"tools": tools} if layout == "tools-object" else tools
    return (
        "```json\n" + json.dumps(value, ensure_ascii=False, indent=1 if layout == "list" else None) + "\n```"
    )


def system_str(episode: Episode, form: str, layout: str) -> str:
    info = episode.server_info
    title = f"{info.get('name', episode.server)} {info.get('version', '')}".strip()
    return (
        "# Role and Objective\n\n"
        f"You are a **Tool World Model** standing in for the MCP server `{title}`. An agent calls its tools "
        "one at a time; for each call, predict exactly what the agent receives back, keeping every result "
        "consistent with the earlier turns.\n\n"
        f"# Task\n\n{episode.task}\n\n"
        f"# Available Tools\n\n{tools_section(episode.tools, layout)}\n\n"
        f"# Observation Format\n\n{FORM_NOTES[form]}\n\n"
        "# Output\n\nThink first, then give only the observation inside "
        "<predicted_observation></predicted_observation>."
    )


def awb_rows(episode: Episode, form: str, layout: str, dump: str, row_ids: str) -> list[dict[str, Any]]:
    prompts, responses = [], []
    for n, call in enumerate(episode.recorded, 1):
        if form == "wire":
            action = json.dumps(call.request, ensure_ascii=False)
            observation = json.dumps(call.response, ensure_ascii=False)
        else:
            action = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
            observation = {
                "result": lambda c: result_json(c, dump),
                "blocks": blocks_json,
                "text": plain_text,
            }[form](call)
        prompts.append(f"### Turn {n}\n**Action:**\n```json\n{action}\n```")
        responses.append(f"**Environment Observation:**\n{observation}")
    system = system_str(episode, form, layout)
    total = len(prompts)
    digest = hashlib.sha256(f"{episode.name}/{form}".encode()).hexdigest()
    base = int(digest[:12], 16) if row_ids == "int" else None
    rows = []
    # A benchmark evaluates a sample of turns; each row still carries the whole trajectory's lists.
    for n in sorted({1, (total + 1) // 2, total}):
        rows.append(
            {
                "task": "mcp",
                "id": base if base is not None else f"{episode.name}-{form}_turn{n}",
                "prompt": prompts,
                "response": responses,
                "current_prompt": prompts[n - 1],
                "system_str": system,
                "turn_idx": n,
                "total_turns": total,
            }
        )
    return rows


def openai_conversation(episode: Episode) -> dict[str, Any]:
    """The episode as an OpenAI chat log, what a harness bridging MCP tools into chat completions keeps:
    function specs, assistant tool calls, tool messages holding the result's text (no error flag: the
    chat format has none)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": episode.task}]
    for n, call in enumerate(episode.recorded, 1):
        call_id = f"call_{n:02d}"
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        function = {"name": call.name, "arguments": arguments}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": plain_text(call)})
    tools = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t["inputSchema"],
            },
        }
        for t in episode.tools
    ]
    return {"id": episode.name, "tools": tools, "messages": messages}


# ── servers and their episodes ───────────────────────────────────────────────────────────────────────


def git(*args: str, cwd: Path) -> None:
    env = {
        **BASE_ENV,
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada Lovelace",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
        "GIT_AUTHOR_DATE": "2026-11-30T09:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-11-30T09:00:00+00:00",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def setup_git_repo() -> Path:
    repo = SCRATCH / "repo"
    repo.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README.md").write_text("# Field notes\n\nA small repository for the recordings.\n")
    (repo / "app.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    git("add", "README.md", "app.py", cwd=repo)
    git("commit", "-q", "-m", "Initial commit", cwd=repo)
    (repo / "app.py").write_text('def greet(name: str) -> str:\n    return f"Hello, {name}!"\n')
    git("commit", "-q", "-am", "Type hints and f-string in greet", cwd=repo)
    # Work in progress the agent will find: an edited file and a new one.
    (repo / "README.md").write_text(
        "# Field notes\n\nA small repository for the recordings.\n\n## Usage\n\nRun app.py.\n"
    )
    (repo / "notes.txt").write_text("- ask about the release date\n")
    return repo


def setup_files() -> Path:
    root = SCRATCH / "files"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "plan.md").write_text("# Plan\n\n1. Draft\n2. Review\n3. Ship\n")
    (root / "data.csv").write_text("id,name,score\n1,Ada,92\n2,Grace,88\n3,Linus,75\n")
    # A 1x1 PNG, so read_media_file has an image to return.
    png = bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c6360f8cfc0f01f0005000201e221bc330000000049454e44ae426082"
    )
    (root / "pixel.png").write_bytes(png)
    return root


def episodes(repo: Path, files: Path) -> list[Episode]:
    r, f = str(repo), str(files)
    return [
        Episode(
            "git",
            "git-commit-work",
            [
                ("git_status", {"repo_path": r}),
                ("git_diff_unstaged", {"repo_path": r}),
                ("git_add", {"repo_path": r, "files": ["README.md", "notes.txt"]}),
                ("git_diff_staged", {"repo_path": r, "context_lines": 1}),
                ("git_status", {"repo_path": r}),
                ("git_commit", {"repo_path": r, "message": "Document usage and keep release notes"}),
                ("git_log", {"repo_path": r, "max_count": 2}),
                ("git_create_branch", {"repo_path": r, "branch_name": "feature/greeting"}),
                ("git_checkout", {"repo_path": r, "branch_name": "feature/greeting"}),
                ("git_branch", {"repo_path": r, "branch_type": "local"}),
                ("git_show", {"repo_path": r, "revision": "HEAD~1"}),
                ("git_status", {"repo_path": r}),
            ],
            "Commit the work in progress, then start a feature branch for the greeting change.",
        ),
        Episode(
            "git",
            "git-mistakes",
            [
                ("git_checkout", {"repo_path": r, "branch_name": "release"}),
                ("git_add", {"repo_path": r, "files": []}),
                ("git_status", {}),
                ("git_log", {"repo_path": r, "max_count": "1"}),
                ("git_log", {"repo_path": r, "max_count": "all"}),
                ("git_push", {"repo_path": r}),
                ("git_status", {"repo_path": "/etc"}),
                ("git_diff", {"repo_path": r, "target": "main"}),
                ("git_branch", {"repo_path": r, "branch_type": "all"}),
                ("git_log", {"repo_path": r, "max_count": 1}),
            ],
            "Find the release branch and list what it contains.",
        ),
        Episode(
            "time",
            "time-zones",
            [
                ("get_current_time", {"timezone": "UTC"}),
                ("get_current_time", {"timezone": "Europe/Paris"}),
                (
                    "convert_time",
                    {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"},
                ),
                ("get_current_time", {"timezone": "America/New_York"}),
                (
                    "convert_time",
                    {
                        "source_timezone": "Europe/London",
                        "time": "23:15",
                        "target_timezone": "America/Los_Angeles",
                    },
                ),
                ("get_current_time", {"timezone": "Asia/Kolkata"}),
                (
                    "convert_time",
                    {
                        "source_timezone": "Australia/Sydney",
                        "time": "08:00",
                        "target_timezone": "Europe/Berlin",
                    },
                ),
            ],
            "Plan a call across offices in Paris, New York, Tokyo and Kolkata.",
        ),
        Episode(
            "time",
            "time-mistakes",
            [
                ("get_current_time", {"timezone": "Mars/Olympus_Mons"}),
                ("get_current_time", {}),
                (
                    "convert_time",
                    {"source_timezone": "UTC", "time": "25:99", "target_timezone": "Asia/Tokyo"},
                ),
                ("convert_time", {"source_timezone": "UTC", "time": "10:00"}),
                ("get_time", {"timezone": "UTC"}),
                ("get_current_time", {"timezone": "Pacific/Auckland"}),
                (
                    "convert_time",
                    {"source_timezone": "Pacific/Auckland", "time": "07:45", "target_timezone": "UTC"},
                ),
            ],
            "Tell the user what time it is in Auckland right now and in UTC at 07:45 Auckland time.",
        ),
        Episode(
            "everything",
            "everything-tour",
            [
                ("echo", {"message": "hello from the recorder"}),
                ("get-sum", {"a": 2, "b": 40}),
                ("get-structured-content", {"location": "New York"}),
                ("get-sum", {"a": 0.5, "b": -3}),
                ("get-structured-content", {"location": "Chicago"}),
                ("get-tiny-image", {}),
                ("get-resource-links", {"count": 2}),
                ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
                ("get-annotated-message", {"messageType": "success", "includeImage": True}),
                ("get-annotated-message", {"messageType": "error"}),
                ("get-structured-content", {"location": "Los Angeles"}),
                ("echo", {"message": "done"}),
            ],
            "Try each demonstration tool of the reference server once.",
        ),
        Episode(
            "everything",
            "everything-mistakes",
            [
                ("get-sum", {"a": "2", "b": 3}),
                ("echo", {}),
                ("get-resource-links", {"count": 20}),
                ("get-weather", {"city": "Paris"}),
                ("get-structured-content", {"location": "Paris"}),
                ("get-structured-content", {"location": "Chicago"}),
                ("get-sum", {"a": 1, "b": 1}),
                ("echo", {"message": "retry worked", "loud": True}),
            ],
            "Get the weather in Paris.",
        ),
        Episode(
            "filesystem",
            "filesystem-notes",
            [
                ("list_allowed_directories", {}),
                ("list_directory", {"path": f}),
                ("read_text_file", {"path": f"{f}/docs/plan.md"}),
                ("create_directory", {"path": f"{f}/notes"}),
                ("write_file", {"path": f"{f}/notes/todo.md", "content": "- review the plan\n- ship\n"}),
                (
                    "edit_file",
                    {
                        "path": f"{f}/notes/todo.md",
                        "edits": [{"oldText": "- ship", "newText": "- ship on Friday"}],
                    },
                ),
                ("read_text_file", {"path": f"{f}/notes/todo.md"}),
                ("search_files", {"path": f, "pattern": "*.md"}),
                ("directory_tree", {"path": f}),
                ("read_text_file", {"path": f"{f}/data.csv", "head": 2}),
                ("move_file", {"source": f"{f}/notes/todo.md", "destination": f"{f}/docs/todo.md"}),
                ("list_directory", {"path": f"{f}/docs"}),
                ("read_media_file", {"path": f"{f}/pixel.png"}),
                ("list_directory_with_sizes", {"path": f, "sortBy": "name"}),
            ],
            "Turn the plan into a to-do list next to it.",
        ),
        Episode(
            "filesystem",
            "filesystem-mistakes",
            [
                ("read_text_file", {"path": f"{f}/docs/missing.md"}),
                ("read_text_file", {"path": "/etc/passwd"}),
                ("write_file", {"path": f"{f}/draft.md"}),
                (
                    "edit_file",
                    {"path": f"{f}/docs/plan.md", "edits": [{"oldText": "4. Celebrate", "newText": "5."}]},
                ),
                ("delete_file", {"path": f"{f}/data.csv"}),
                ("read_text_file", {"path": f"{f}/data.csv", "head": "2"}),
                ("read_text_file", {"path": f"{f}/data.csv", "tail": 1}),
                ("list_directory", {"path": f}),
                ("read_text_file", {"path": f"{f}/docs/plan.md"}),
            ],
            "Remove the scores file and summarise the plan.",
        ),
        Episode(
            "memory",
            "memory-team",
            [
                (
                    "create_entities",
                    {
                        "entities": [
                            {"name": "Ada", "entityType": "person", "observations": ["writes the parser"]},
                            {"name": "Parser", "entityType": "project", "observations": ["due in March"]},
                        ]
                    },
                ),
                (
                    "create_entities",
                    {"entities": [{"name": "Grace", "entityType": "person", "observations": []}]},
                ),
                (
                    "create_relations",
                    {"relations": [{"from": "Ada", "to": "Parser", "relationType": "works_on"}]},
                ),
                (
                    "add_observations",
                    {"observations": [{"entityName": "Grace", "contents": ["reviews code"]}]},
                ),
                ("read_graph", {}),
                ("search_nodes", {"query": "parser"}),
                ("open_nodes", {"names": ["Ada", "Grace"]}),
                (
                    "delete_observations",
                    {"deletions": [{"entityName": "Parser", "observations": ["due in March"]}]},
                ),
                (
                    "create_relations",
                    {"relations": [{"from": "Grace", "to": "Parser", "relationType": "reviews"}]},
                ),
                (
                    "delete_relations",
                    {"relations": [{"from": "Ada", "to": "Parser", "relationType": "works_on"}]},
                ),
                ("search_nodes", {"query": "Grace"}),
                ("delete_entities", {"entityNames": ["Ada"]}),
                ("read_graph", {}),
            ],
            "Record who works on the parser and keep the graph up to date.",
        ),
        Episode(
            "memory",
            "memory-mistakes",
            [
                ("create_entities", {"entities": "Ada"}),
                ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
                ("open_nodes", {"names": ["Grace"]}),
                ("forget_everything", {}),
                ("search_nodes", {}),
                ("search_nodes", {"query": "reviews"}),
                (
                    "create_entities",
                    {"entities": [{"name": "Linus", "entityType": "person", "observations": ["new"]}]},
                ),
                ("read_graph", {}),
            ],
            "Note that Linus joined, then show the graph.",
        ),
    ]


#: file name -> (server, form, tool-list layout, JSON dump, row ids)
OUTPUTS: dict[str, tuple[str, str, str, str, str]] = {
    "git.awb.jsonl": ("git", "result", "list", "exclude-unset", "str"),
    "git-wire.awb.jsonl": ("git", "wire", "tools-object", "", "str"),
    "git-text.awb.jsonl": ("git", "text", "openai-lines", "", "int"),
    "time.awb.jsonl": ("time", "result", "list", "pydantic-indent", "int"),
    "time-blocks.awb.jsonl": ("time", "blocks", "tools-object", "", "str"),
    "everything.awb.jsonl": ("everything", "result", "list", "exclude-none-indent", "str"),
    "everything-wire.awb.jsonl": ("everything", "wire", "list", "", "int"),
    "filesystem.awb.jsonl": ("filesystem", "result", "tools-object", "exclude-unset", "str"),
    "memory.awb.jsonl": ("memory", "result", "list", "exclude-unset", "int"),
    "memory-text.awb.jsonl": ("memory", "text", "openai-lines", "", "str"),
}


#: OpenAI chat logs (read by the mcp domain's ``openai-chat`` importer): file name -> server
OPENAI_OUTPUTS: dict[str, str] = {"filesystem.openai.jsonl": "filesystem", "time.openai.jsonl": "time"}


def npm_bin(name: str) -> str:
    return str(SCRATCH / "npm" / "node_modules" / ".bin" / f"mcp-{name}")


def install_npm() -> None:
    target = SCRATCH / "npm"
    target.mkdir(parents=True, exist_ok=True)
    (target / "package.json").write_text('{"name": "awctl-foreign-mcp", "private": true}\n')
    specs = [f"@modelcontextprotocol/{p}@{NPM_VERSION}" for p in NPM_PACKAGES]
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", *specs], cwd=target, check=True)


def commands(repo: Path, files: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    bindir = Path(sys.executable).parent
    return {
        "git": ([str(bindir / "mcp-server-git"), "--repository", str(repo)], {}),
        "time": ([str(bindir / "mcp-server-time"), "--local-timezone", "UTC"], {}),
        "everything": ([npm_bin("server-everything")], {}),
        "filesystem": ([npm_bin("server-filesystem"), str(files)], {}),
        "memory": ([npm_bin("server-memory")], {"MEMORY_FILE_PATH": str(SCRATCH / "memory.jsonl")}),
    }


def versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {
        "mcp": version("mcp"),
        "mcp-server-git": version("mcp-server-git"),
        "mcp-server-time": version("mcp-server-time"),
    }
    for p in NPM_PACKAGES:
        pkg = SCRATCH / "npm" / "node_modules" / "@modelcontextprotocol" / p / "package.json"
        out[f"@modelcontextprotocol/{p}"] = json.loads(pkg.read_text())["version"]
    out["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the .awb.jsonl files")
    parser.add_argument("--skip-npm-install", action="store_true", help="reuse the scratch npm install")
    args = parser.parse_args()

    npm_dir = SCRATCH / "npm"
    keep = npm_dir if args.skip_npm_install and npm_dir.exists() else None
    if keep is not None:
        shutil.move(str(npm_dir), str(SCRATCH.parent / "awctl-foreign-mcp-npm"))
    shutil.rmtree(SCRATCH, ignore_errors=True)
    (SCRATCH / "home").mkdir(parents=True)
    if keep is not None:
        shutil.move(str(SCRATCH.parent / "awctl-foreign-mcp-npm"), str(npm_dir))
    else:
        install_npm()
    repo, files = setup_git_repo(), setup_files()
    table = commands(repo, files)
    recorded: dict[str, list[Episode]] = {}
    for episode in episodes(repo, files):
        argv, extra = table[episode.server]
        anyio.run(run_episode, argv, {**BASE_ENV, **extra}, episode, SCRATCH / f"{episode.server}.stderr")
        recorded.setdefault(episode.server, []).append(episode)
        errors = sum(1 for c in episode.recorded if c.error is not None or c.result.is_error)
        print(f"{episode.name}: {len(episode.recorded)} calls, {errors} errors", file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    for filename, (server, form, layout, dump, row_ids) in OUTPUTS.items():
        rows = [row for ep in recorded[server] for row in awb_rows(ep, form, layout, dump, row_ids)]
        with open(args.out / filename, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {len(rows)} rows to {filename}", file=sys.stderr)
    for filename, server in OPENAI_OUTPUTS.items():
        with open(args.out / filename, "w", encoding="utf-8") as handle:
            for episode in recorded[server]:
                handle.write(json.dumps(openai_conversation(episode), ensure_ascii=False) + "\n")
        print(f"wrote {len(recorded[server])} conversations to {filename}", file=sys.stderr)
    # The README lists these; a data file beside the recordings would be read as one.
    print(json.dumps(versions(), indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
