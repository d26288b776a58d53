"""``awctl simulate serve``: one HTTP server for a world model.

(a) OpenAI-compatible ``GET /v1/models`` and ``POST /v1/chat/completions`` (streaming as SSE
``chat.completion.chunk`` events ending with ``data: [DONE]``), so the ``openai`` client and
AgentWorldBench's ``eval.py`` work against it unchanged.

(b) Environment sessions over :class:`awctl.sim.env.SimEnv`: ``POST /v1/sessions`` (domain, task,
options) → session id + initial observation; ``POST /v1/sessions/{id}/step`` → observation, done, info;
``GET /v1/sessions[/{id}]``; ``DELETE /v1/sessions/{id}``. Sessions idle longer than their timeout are
closed by a reaper; a step longer than ``step_timeout`` answers 504.

``GET /health`` reports the model, the session count and batching statistics.

Every model call goes through one :class:`awctl.sim.batcher.BatchingBackend`, so concurrent chat
requests and session steps share backend batches. Stack: Starlette + uvicorn (already dependencies of
``mcp``), imported when the app is built.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from awctl.backend import Backend
from awctl.errors import AwctlError
from awctl.sim.batcher import BatchingBackend
from awctl.sim.openai_compat import (
    BadRequest,
    chat_completion,
    error_body,
    parse_chat_request,
    stream_chunks,
)

# SimEnv keyword arguments a session may set (anything else is refused with a 400 naming the key).
SESSION_OPTIONS = {
    "variant": int,
    "max_tokens": int,
    "temperature": float,
    "top_p": float,
    "seed": int,
    "resample": int,
    "resample_temperature": float,
    "perturbation": str,
    "perturbation_params": dict,
    "perturb_every": int,
    "perturb_match": str,
    "max_turns": int,
    "max_history_turns": int,
    "initial_state": str,
}


@dataclass
class ServerSettings:
    """What ``awctl simulate serve`` configures. ``session_defaults`` are SimEnv options applied to every
    new session before its own."""

    model_name: str
    max_batch: int = 64
    window_ms: float = 5.0
    default_max_tokens: int = 1024
    session_timeout: float = 600.0
    step_timeout: float = 300.0
    max_sessions: int = 4096
    split_reasoning: bool = False
    session_defaults: dict[str, Any] = field(default_factory=dict)


@dataclass
class Session:
    id: str
    env: Any
    task_id: str | None
    timeout: float
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    steps: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def describe(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "domain": self.env.domain,
            "task_id": self.task_id,
            "steps": self.steps,
            "idle_s": round(time.monotonic() - self.last_used, 3),
            "timeout_s": self.timeout,
        }


class SessionError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.param = status, param


class SessionManager:
    """Creates, steps and reaps SimEnv sessions that all use the shared batching backend."""

    def __init__(self, backend: Backend, settings: ServerSettings, domains: Mapping[str, Any]) -> None:
        self.backend = backend
        self.settings = settings
        self.domains = domains
        self.sessions: dict[str, Session] = {}
        self.closed_by_timeout = 0

    def create(self, body: dict[str, Any]) -> tuple[Session, str]:
        from awctl.sim.env import SimEnv

        if len(self.sessions) >= self.settings.max_sessions:
            raise SessionError(429, f"session limit ({self.settings.max_sessions}) reached; close some first")
        name = body.get("domain")
        if not isinstance(name, str) or not name:
            raise SessionError(400, "domain is required (see GET /v1/domains)", "domain")
        if name not in self.domains:
            raise SessionError(
                404, f"unknown domain {name!r}; known: {', '.join(sorted(self.domains))}", "domain"
            )
        domain = self.domains[name]
        options = dict(self.settings.session_defaults)
        for key, value in (body.get("options") or {}).items():
            kind = SESSION_OPTIONS.get(key)
            if kind is None:
                raise SessionError(
                    400,
                    f"unknown session option {key!r}; allowed: {', '.join(sorted(SESSION_OPTIONS))}",
                    f"options.{key}",
                )
            if value is not None and not (
                isinstance(value, kind) or (kind is float and isinstance(value, int))
            ):
                raise SessionError(
                    400, f"option {key} must be {kind.__name__}, got {value!r}", f"options.{key}"
                )
            options[key] = value
        task = self._task(domain, body)
        timeout = body.get("timeout_s", self.settings.session_timeout)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise SessionError(400, f"timeout_s must be a positive number, got {timeout!r}", "timeout_s")
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise SessionError(400, f"seed must be an integer, got {seed!r}", "seed")
        try:
            env = SimEnv(domain, self.backend, task=task, **options)
            observation = env.reset(seed=seed)
        except AwctlError as exc:
            raise SessionError(400, exc.message + (f" ({exc.hint})" if exc.hint else "")) from None
        session = Session(uuid.uuid4().hex, env, task.id if task else None, float(timeout))
        self.sessions[session.id] = session
        return session, observation

    @staticmethod
    def _task(domain: Any, body: dict[str, Any]) -> Any:
        from awctl.domain import CheckResult, Task

        task_id, instruction = body.get("task_id"), body.get("instruction")
        if task_id:
            suites = [body["suite"]] if body.get("suite") else domain.suites()
            for suite in suites:
                for task in domain.tasks(suite):
                    if task.id == task_id:
                        return task
            raise SessionError(
                404, f"domain {domain.name!r} has no task {task_id!r} in suites {suites}", "task_id"
            )
        if instruction is not None:
            if not isinstance(instruction, str):
                raise SessionError(400, "instruction must be a string", "instruction")
            return Task(
                id="adhoc",
                domain=domain.name,
                suite="adhoc",
                instruction=instruction,
                solution=[],
                check=lambda env: CheckResult(False, "an ad-hoc task has no checker"),
            )
        return None

    def get(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is not None and self._expired(session, time.monotonic()):
            # Checked on access too, so a timeout is exact rather than "at the next reaper pass".
            self.sessions.pop(sid).env.close()
            self.closed_by_timeout += 1
            raise SessionError(404, f"session {sid!r} timed out after {session.timeout}s idle")
        if session is None:
            raise SessionError(404, f"no session {sid!r} (closed, timed out or never created)")
        return session

    @staticmethod
    def _expired(session: Session, now: float) -> bool:
        return not session.lock.locked() and now - session.last_used > session.timeout

    async def step(self, sid: str, action: Any) -> dict[str, Any]:
        session = self.get(sid)
        if not isinstance(action, str):
            raise SessionError(400, "action must be a string", "action")
        if session.lock.locked():
            raise SessionError(409, f"session {sid} is already stepping; send one action at a time")
        async with session.lock:
            session.last_used = time.monotonic()
            try:
                result = await asyncio.wait_for(session.env.astep(action), self.settings.step_timeout)
            except asyncio.TimeoutError:
                raise SessionError(504, f"step took longer than {self.settings.step_timeout}s") from None
            session.steps += 1
            session.last_used = time.monotonic()
        return {"observation": result.observation, "done": result.done, "info": result.info}

    def close(self, sid: str) -> None:
        session = self.sessions.pop(sid, None)
        if session is None:
            raise SessionError(404, f"no session {sid!r}")
        session.env.close()

    def reap(self) -> int:
        now = time.monotonic()
        stale = [s.id for s in self.sessions.values() if self._expired(s, now)]
        for sid in stale:
            self.sessions.pop(sid).env.close()
        self.closed_by_timeout += len(stale)
        return len(stale)


def build_app(backend: Backend, settings: ServerSettings, domains: Mapping[str, Any]) -> Any:
    """The Starlette application serving ``backend`` (wrapped in a BatchingBackend) as a simulator of
    ``domains``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    batching = (
        backend
        if isinstance(backend, BatchingBackend)
        else BatchingBackend(backend, max_batch=settings.max_batch, window_ms=settings.window_ms)
    )
    manager = SessionManager(batching, settings, domains)
    started = time.time()
    tokenizer = getattr(getattr(batching, "inner", batching), "tokenizer", None)
    decode = (lambda tid: tokenizer.decode([tid])) if tokenizer is not None else None

    def err(
        status: int, message: str, param: str | None = None, kind: str = "invalid_request_error"
    ) -> Response:
        return JSONResponse(error_body(message, kind, param, status), status_code=status)

    async def read_json(request: Request) -> Any:
        try:
            return await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"the body is not valid JSON: {exc}") from None

    async def health(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "model": settings.model_name,
                "backend": batching.name,
                "sessions": len(manager.sessions),
                "sessions_timed_out": manager.closed_by_timeout,
                "queued": batching.queued,
                "uptime_s": round(time.time() - started, 1),
                **batching.stats.to_dict(),
            }
        )

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": settings.model_name,
                        "object": "model",
                        "created": int(started),
                        "owned_by": "awctl",
                    }
                ],
            }
        )

    async def chat(request: Request) -> Response:
        try:
            req, opts = parse_chat_request(await read_json(request), settings.default_max_tokens)
        except BadRequest as exc:
            return err(400, str(exc), exc.param)
        if opts["model"] not in (None, settings.model_name):
            return err(
                404,
                f"the model {opts['model']!r} does not exist; this server serves {settings.model_name!r}",
                "model",
                "not_found_error",
            )
        try:
            completions = (await batching.agenerate([req]))[0]
        except AwctlError as exc:
            return err(400, exc.message, kind="invalid_request_error")
        except Exception as exc:  # a backend failure is a server error, reported not hidden
            return err(500, f"{type(exc).__name__}: {exc}", kind="server_error")
        if not opts["stream"]:
            return JSONResponse(
                chat_completion(
                    settings.model_name, completions, decode=decode, split_reasoning=settings.split_reasoning
                )
            )

        async def events() -> Any:
            for chunk in stream_chunks(
                settings.model_name,
                completions,
                include_usage=opts["include_usage"],
                split_reasoning=settings.split_reasoning,
            ):
                yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )

    async def list_domains(request: Request) -> Response:
        doms = domains
        return JSONResponse(
            {
                "data": [
                    {"name": n, "suites": d.suites(), "perturbations": [p.name for p in d.perturbations()]}
                    for n, d in sorted(doms.items())
                ]
            }
        )

    async def sessions_root(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"data": [s.describe() for s in manager.sessions.values()]})
        try:
            body = await read_json(request)
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            session, observation = manager.create(body)
        except BadRequest as exc:
            return err(400, str(exc), exc.param)
        except SessionError as exc:
            return err(exc.status, str(exc), exc.param)
        return JSONResponse({**session.describe(), "observation": observation}, status_code=201)

    async def session_item(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            if request.method == "DELETE":
                manager.close(sid)
                return JSONResponse({"session_id": sid, "closed": True})
            return JSONResponse(manager.get(sid).describe())
        except SessionError as exc:
            return err(exc.status, str(exc), exc.param)

    async def session_step(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            body = await read_json(request)
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object with an 'action'")
            return JSONResponse(await manager.step(sid, body.get("action")))
        except BadRequest as exc:
            return err(400, str(exc), exc.param)
        except SessionError as exc:
            return err(exc.status, str(exc), exc.param)
        except Exception as exc:  # the backend failed for this step: a server error naming it
            return err(500, f"{type(exc).__name__}: {exc}", kind="server_error")

    async def reaper() -> None:
        while True:
            await asyncio.sleep(max(0.05, min(5.0, settings.session_timeout / 4)))
            manager.reap()

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        task = asyncio.get_running_loop().create_task(reaper())
        try:
            yield
        finally:
            task.cancel()

    app = Starlette(
        routes=[
            Route("/health", health),
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/domains", list_domains),
            Route("/v1/sessions", sessions_root, methods=["GET", "POST"]),
            Route("/v1/sessions/{sid}", session_item, methods=["GET", "DELETE"]),
            Route("/v1/sessions/{sid}/step", session_step, methods=["POST"]),
        ],
        lifespan=lifespan,
    )
    app.state.manager = manager
    app.state.backend = batching
    return app


def serve(
    backend: Backend,
    settings: ServerSettings,
    domains: Mapping[str, Any],
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    on_ready: Any = None,
) -> None:
    """Run the server until interrupted. ``on_ready(url)`` is called once the socket listens."""
    import uvicorn

    app = build_app(backend, settings, domains)
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, lifespan="on", timeout_keep_alive=30
    )
    server = uvicorn.Server(config)

    if on_ready is not None:
        original = server.startup

        async def startup(sockets: Any = None) -> None:
            await original(sockets=sockets)
            bound = [s.getsockname() for srv in server.servers for s in srv.sockets] if server.servers else []
            real_port = bound[0][1] if bound else port
            on_ready(f"http://{host}:{real_port}")

        server.startup = startup  # type: ignore[method-assign]
    server.run()
