"""``McpEnv``: a real environment over any stdio MCP server, driven through the ``mcp`` SDK client.

Lifecycle: ``reset(task)`` makes a fresh data folder (``$AWCTL_MCP_DATA``; the task's ``setup["data"]``
is written to ``seed.json`` in it), spawns the server command, runs the initialize handshake and
``tools/list``, and returns the initial state (server name and the tool list as a ``json mcp-tools``
block). ``step(action)`` sends one ``tools/call`` and returns the JSON-RPC response as observation text.
``close()`` shuts the client down, which ends (and if need be kills) the server process.

What the observation is, exactly: a transport tap records every JSON-RPC message the server sends, and
the observation is the server's own response to our ``tools/call`` -- its ``result`` (or ``error``) as
received, even when the SDK client would reject it (e.g. structured content that fails the tool's
outputSchema). Only the ``id`` is rewritten to the agent's request id, because the SDK numbers requests
itself. When no response arrives at all, the env writes a JSON-RPC error and marks the step
``info["synthetic"] = True``: ``-32001`` for a timeout, ``-32000`` when the connection closed, ``-32600``
for an action text that is not a valid request (the server is never contacted then).

Arguments are sent to the server unvalidated; servers built on ``MCPServer`` answer schema violations
with ``isError: true``. When a server *accepts* arguments that fail the declared inputSchema, the
observation is still the server's answer and ``info["schema_violation_accepted"]`` says so.

The SDK is async; this class is sync. A private event loop runs in a background thread and one long-lived
task owns the client (anyio scopes must be entered and left in the same task), fed through a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from awctl.env import Environment, StepResult
from awctl.errors import AwctlError, CodecError, EnvironmentUnavailable

from .codec import (
    McpActionCodec,
    ToolCall,
    error_response,
    render_tool_list,
)

if TYPE_CHECKING:
    from awctl.domain import Task

DATA_ENV = "AWCTL_MCP_DATA"
REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_CODE = -32001
CLOSED_CODE = -32000
INVALID_REQUEST_CODE = -32600


def resolve_command(command: Sequence[str]) -> list[str]:
    """``command`` with ``python`` mapped to this interpreter and console scripts found on PATH or next to
    this interpreter (a venv's ``bin`` need not be on PATH). Raises ``EnvironmentUnavailable``."""
    if not command:
        raise AwctlError(
            "empty MCP server command", hint='give e.g. ["python", "-m", "awctl_domains.mcp.servers.notes"]'
        )
    head, *rest = list(command)
    if head in ("python", "python3"):
        return [sys.executable, *rest]
    found = shutil.which(head) or shutil.which(head, path=str(Path(sys.executable).parent))
    if not found:
        raise EnvironmentUnavailable(
            f"MCP server program {head!r} not found on PATH or in {Path(sys.executable).parent}",
            hint=f"install the package that provides {head!r} (e.g. pip install {head})",
        )
    return [found, *rest]


class _Tap:
    """A Transport wrapper that records the server's JSON-RPC responses by id and our tools/call ids."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.responses: dict[Any, dict[str, Any]] = {}
        self.last_call_id: Any = None

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.inner.__aenter__()
        return _TapRead(read, self), _TapWrite(write, self)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


def _wire(message: Any) -> dict[str, Any] | None:
    inner = getattr(message, "message", None)
    if inner is None:
        return None
    return inner.model_dump(by_alias=True, mode="json", exclude_unset=True)


class _TapRead:
    def __init__(self, stream: Any, tap: _Tap) -> None:
        self.stream, self.tap = stream, tap
        self.last_context = getattr(stream, "last_context", None)

    async def receive(self) -> Any:
        item = await self.stream.receive()
        data = _wire(item)
        if data is not None and "id" in data and ("result" in data or "error" in data):
            self.tap.responses[data["id"]] = data
        self.last_context = getattr(self.stream, "last_context", None)
        return item

    async def aclose(self) -> None:
        await self.stream.aclose()

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except Exception as exc:  # anyio's EndOfStream / ClosedResourceError end the iteration
            import anyio

            if isinstance(exc, anyio.EndOfStream | anyio.ClosedResourceError):
                raise StopAsyncIteration from None
            raise

    async def __aenter__(self) -> _TapRead:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class _TapWrite:
    def __init__(self, stream: Any, tap: _Tap) -> None:
        self.stream, self.tap = stream, tap

    async def send(self, item: Any) -> None:
        data = _wire(item)
        if data is not None and data.get("method") == "tools/call" and "id" in data:
            self.tap.last_call_id = data["id"]
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _TapWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class McpEnv(Environment):
    """A real MCP environment over a stdio server command.

    ``command`` is the server command line (``["python", "-m", "awctl_domains.mcp.servers.notes"]`` or a console
    script such as ``["mcp-server-time"]``); ``{data}`` in an argument is replaced by the episode's data
    folder. A task's ``setup`` may override it with ``setup["server"]`` and seeds the data folder with
    ``setup["data"]``. ``env`` adds environment variables for the server; ``timeout_s`` bounds each call.
    """

    domain = "mcp"

    def __init__(
        self,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        timeout_s: float = 30.0,
        mode: str = "legacy",
    ) -> None:
        self.command = list(command) if command else None
        self.extra_env = dict(env or {})
        self.timeout_s = timeout_s
        self.mode = mode
        self.codec = McpActionCodec()
        self.tools: list[dict[str, Any]] = []
        self.server_info: dict[str, Any] = {}
        self.data_dir: Path | None = None
        self.stderr_path: Path | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._session_done: Future[None] | None = None

    # ── public API ──
    @property
    def raw_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list`` entries exactly as received (name, inputSchema, outputSchema...)."""
        return list(self.tools)

    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        self.close()
        setup = dict(task.setup) if task else {}
        command = setup.get("server") or self.command
        if not command:
            raise AwctlError(
                "McpEnv has no server command", hint="pass command=[...] or a task with setup['server']"
            )
        self._tmp = tempfile.TemporaryDirectory(prefix="awctl-mcp-")
        self.data_dir = Path(self._tmp.name) / "data"
        self.data_dir.mkdir()
        if setup.get("data") is not None:
            (self.data_dir / "seed.json").write_text(
                json.dumps(setup["data"], sort_keys=True), encoding="utf-8"
            )
        argv = [a.replace("{data}", str(self.data_dir)) for a in resolve_command(command)]
        env = {
            DATA_ENV: str(self.data_dir),
            # The demo servers are modules of this repo; they must import however the caller was started.
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
            **({"AWCTL_MCP_SEED": str(seed)} if seed is not None else {}),
            **self.extra_env,
            **{k: str(v) for k, v in setup.get("env", {}).items()},
        }
        self.stderr_path = Path(self._tmp.name) / "server.stderr"
        self._start(argv, env)
        tools = self._call_sync(("list_tools",))
        self.tools = tools
        name = self.server_info.get("name", argv[0])
        version = self.server_info.get("version", "")
        return f"Connected to MCP server {name} {version}".rstrip() + ".\n" + render_tool_list(tools)

    def step(self, action: str) -> StepResult:
        if self._queue is None:
            raise AwctlError("McpEnv.step called before reset", hint="call env.reset(task) first")
        started = time.perf_counter()
        try:
            call = self.codec.parse(action)
        except CodecError as exc:
            obs = error_response(None, INVALID_REQUEST_CODE, f"Invalid Request: {exc.message}")
            return StepResult(json.dumps(obs), info={"synthetic": True, "error": exc.message})
        response, info = self._call_sync(("call_tool", call))
        info["elapsed_s"] = round(time.perf_counter() - started, 4)
        if (
            self._violates_input_schema(call)
            and "result" in response
            and not response["result"].get("isError")
        ):
            info["schema_violation_accepted"] = True
        return StepResult(json.dumps(response, ensure_ascii=False), info=info)

    def close(self) -> None:
        loop, queue, done = self._loop, self._queue, self._session_done
        self._queue = None
        if loop is not None and queue is not None and done is not None and loop.is_running():
            loop.call_soon_threadsafe(queue.put_nowait, None)
            # A session that ended with an error has lost its process either way.
            with contextlib.suppress(Exception):
                done.result(timeout=15)
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
            if not loop.is_running():
                loop.close()
        self._loop = self._thread = self._session_done = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # ── internals ──
    def _violates_input_schema(self, call: ToolCall) -> bool:
        import jsonschema

        tool = next((t for t in self.tools if t.get("name") == call.name), None)
        if tool is None or not isinstance(tool.get("inputSchema"), dict):
            return False
        return (
            next(jsonschema.Draft202012Validator(tool["inputSchema"]).iter_errors(call.arguments), None)
            is not None
        )

    def _start(self, argv: list[str], env: dict[str, str]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="awctl-mcp-loop", daemon=True)
        self._thread.start()
        ready: Future[None] = Future()
        self._session_done = asyncio.run_coroutine_threadsafe(self._session(argv, env, ready), self._loop)
        try:
            ready.result(timeout=self.timeout_s + 30)
        except Exception as exc:
            stderr = self._stderr_tail()
            self.close()
            raise EnvironmentUnavailable(
                f"MCP server {' '.join(argv)} did not start: {exc}"
                + (f"\nserver stderr:\n{stderr}" if stderr else ""),
                hint="run the command by hand to see why; check its arguments and that its package is installed",
            ) from None

    def _stderr_tail(self, limit: int = 2000) -> str:
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-limit:]

    def _call_sync(self, request: tuple[Any, ...]) -> Any:
        assert self._loop is not None and self._queue is not None
        if self._session_done is not None and self._session_done.done():
            raise EnvironmentUnavailable(
                "the MCP client session has ended"
                + (f"; server stderr:\n{self._stderr_tail()}" if self._stderr_tail() else ""),
                hint="call reset() to start a new server",
            )
        reply: Future[Any] = Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (request, reply))
        return reply.result(timeout=self.timeout_s + 30)

    async def _session(self, argv: list[str], env: dict[str, str], ready: Future[None]) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._queue = asyncio.Queue()
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(REPO_ROOT))
        assert self.stderr_path is not None
        with open(self.stderr_path, "w", encoding="utf-8") as errlog:
            tap = _Tap(stdio_client(params, errlog=errlog))
            try:
                client = Client(tap, mode=self.mode, read_timeout_seconds=self.timeout_s, cache=None)
                async with client:
                    info = client.server_info
                    self.server_info = info.model_dump(mode="json", exclude_none=True) if info else {}
                    ready.set_result(None)
                    while True:
                        item = await self._queue.get()
                        if item is None:
                            return
                        request, reply = item
                        try:
                            reply.set_result(await self._handle(client, tap, request))
                        except BaseException as exc:  # hand every failure to the waiting caller
                            reply.set_exception(exc)
                            if not isinstance(exc, Exception):
                                raise
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
                raise

    async def _handle(self, client: Any, tap: _Tap, request: tuple[Any, ...]) -> Any:
        if request[0] == "list_tools":
            tools: list[dict[str, Any]] = []
            cursor = None
            while True:  # follow pagination so the initial state lists every tool
                page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return tools
        call: ToolCall = request[1]
        tap.last_call_id = None
        info: dict[str, Any] = {}
        try:
            await client.call_tool(call.name, call.arguments)
        except Exception as exc:  # the raw response (if any) is in the tap; the SDK's verdict goes to info
            info["client_error"] = f"{type(exc).__name__}: {exc}"
        raw = tap.responses.pop(tap.last_call_id, None) if tap.last_call_id is not None else None
        if raw is None:
            message = info.get("client_error", "no response")
            code = (
                TIMEOUT_CODE
                if "timed out" in message.lower() or "timeout" in message.lower()
                else CLOSED_CODE
            )
            info["synthetic"] = True
            return error_response(call.id, code, message), info
        out = {"jsonrpc": "2.0", "id": call.id}
        out.update({k: raw[k] for k in ("result", "error") if k in raw})
        return out, info


def record_episode(
    env: McpEnv, task: Task, actions: Sequence[str] | None = None, variant_id: str = ""
) -> Any:
    """Run ``actions`` (default: the task's reference solution) in ``env`` and return the Trajectory.

    The system prompt holds the task, the action schema, and the initial state (``reset``'s text with the
    tool list, plus the seed data); each turn's metadata keeps the step's ``info``.
    """
    from awctl.trajectory import Trajectory, Turn

    from .prompts import mcp_prompt_builder, mcp_sections

    initial = env.reset(task)
    turns = []
    for action in task.solution if actions is None else actions:
        step = env.step(action)
        turns.append(Turn(action=action, observation=step.observation, metadata={"info": step.info}))
    return Trajectory(
        id=task.id + (f"#{variant_id}" if variant_id else ""),
        domain="mcp",
        source="mcp-real",
        system=mcp_sections(task, initial, mcp_prompt_builder()),
        turns=turns,
        metadata={"task": task.id, "server": task.setup.get("server")},
    )
