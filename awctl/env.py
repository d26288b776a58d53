"""The Environment contract shared by real environments and simulators.

An agent talks to an :class:`Environment` through ``reset`` / ``step`` / ``close`` and cannot tell a
real sandbox from a simulated one (``SimEnv``). Actions and observations are the domain's rendered texts.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from awctl.domain import Task


@dataclass
class StepResult:
    """What one step returns. ``observation`` is the domain's observation text (as its codec renders it);
    ``done`` ends the episode early; ``info`` carries timings, exit codes, verifier reports and the like
    (the recorder copies its ``str``/``int``/``float``/``bool`` values into the turn's ``metadata``)."""

    observation: str
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Environment(ABC):
    """One episode-capable environment session. Use as a context manager so ``close`` always runs.

    A domain's ``real_env()`` returns a new one per episode; the recorder calls ``reset(task, seed)``, then
    ``step(action)`` for each action, then the task's checker (which also only calls ``step``), then
    ``close()``. ``domain`` names the domain the session belongs to.
    """

    domain: str = ""

    @abstractmethod
    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        """Start a fresh episode (applying ``task.setup`` when given) and return the initial observation.

        The returned text becomes the recorded trajectory's ``system.initial_state`` (the recorder passes it
        to ``Domain.sections_for``), which is what verifiers replay from: make it state everything a
        verifier needs to know about the starting state. The same ``task`` and ``seed`` must give the same
        text (conformance rule ``env.reset_reproducible``, compared after the codec's ``normalize``)."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action (the domain's action text) and return what the environment shows next. Bad
        actions are answered the way the real system answers them (an error observation), not raised."""

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release every resource (processes, containers, temp dirs). Safe to call twice."""

    async def areset(self, task: Task | None = None, seed: int | None = None) -> str:
        """``reset`` for asyncio callers (default: ``reset`` in a worker thread)."""
        return await asyncio.to_thread(self.reset, task, seed)

    async def astep(self, action: str) -> StepResult:
        """``step`` for asyncio callers (default: ``step`` in a worker thread)."""
        return await asyncio.to_thread(self.step, action)

    async def aclose(self) -> None:
        """``close`` for asyncio callers (default: ``close`` in a worker thread)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
