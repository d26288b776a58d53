"""A bounded load generator for the environment-session API (``awctl simulate serve``).

``run_session_load(url, sessions=64, steps=200)`` opens ``sessions`` sessions concurrently, steps each
``steps`` times with short actions, closes them and reports throughput and every error. Used by
``benchmarks/sim.py --soak`` and the soak test; point it only at servers you run (e.g. 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ACTIONS = ("ls", "pwd", "echo hi", "cat notes.txt", "whoami")


@dataclass
class LoadReport:
    sessions: int
    steps_per_session: int
    steps_ok: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    health: dict[str, Any] = field(default_factory=dict)

    @property
    def steps_per_second(self) -> float:
        return self.steps_ok / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "steps_per_session": self.steps_per_session,
            "steps_ok": self.steps_ok,
            "errors": len(self.errors),
            "first_errors": self.errors[:5],
            "seconds": round(self.seconds, 2),
            "steps_per_second": round(self.steps_per_second, 1),
            "server": self.health,
        }


async def _session(
    client: Any,
    domain: str,
    steps: int,
    options: dict[str, Any],
    report: LoadReport,
    actions: tuple[str, ...],
    index: int,
) -> None:
    resp = await client.post("/v1/sessions", json={"domain": domain, "options": options})
    if resp.status_code != 201:
        report.errors.append(f"session {index}: create answered {resp.status_code}: {resp.text[:200]}")
        return
    sid = resp.json()["session_id"]
    for k in range(steps):
        resp = await client.post(
            f"/v1/sessions/{sid}/step", json={"action": actions[(index + k) % len(actions)]}
        )
        if resp.status_code != 200:
            report.errors.append(f"session {index} step {k}: {resp.status_code}: {resp.text[:200]}")
            return
        body = resp.json()
        if "observation" not in body or body["info"]["turn"] != k:
            report.errors.append(f"session {index} step {k}: unexpected body {str(body)[:200]}")
            return
        report.steps_ok += 1
    resp = await client.delete(f"/v1/sessions/{sid}")
    if resp.status_code != 200:
        report.errors.append(f"session {index}: close answered {resp.status_code}")


async def arun_session_load(
    url: str,
    domain: str,
    sessions: int = 64,
    steps: int = 200,
    options: dict[str, Any] | None = None,
    actions: tuple[str, ...] = DEFAULT_ACTIONS,
    timeout: float = 300.0,
) -> LoadReport:
    import httpx2

    report = LoadReport(sessions, steps)
    limits = httpx2.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx2.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        start = time.perf_counter()
        results = await asyncio.gather(
            *(
                _session(client, domain, steps, dict(options or {}), report, actions, i)
                for i in range(sessions)
            ),
            return_exceptions=True,
        )
        report.seconds = time.perf_counter() - start
        report.errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
        report.health = (await client.get("/health")).json()
    return report


def run_session_load(
    url: str,
    domain: str,
    sessions: int = 64,
    steps: int = 200,
    options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> LoadReport:
    """Synchronous wrapper of :func:`arun_session_load`."""
    return asyncio.run(arun_session_load(url, domain, sessions, steps, options, **kwargs))
