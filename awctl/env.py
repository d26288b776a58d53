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
    """What one step returns. ``info`` carries timings, exit codes, verifier reports and the like."""

    observation: str
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Environment(ABC):
    """One episode-capable environment session. Use as a context manager so ``close`` always runs."""

    domain: str = ""

    @abstractmethod
    def reset(self, task: Task | None = None, seed: int | None = None) -> str:
        """Start a fresh episode (applying ``task.setup`` when given) and return the initial observation."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action (the domain's action text) and return what the environment shows next."""

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release every resource (processes, containers, temp dirs). Safe to call twice."""

    async def areset(self, task: Task | None = None, seed: int | None = None) -> str:
        return await asyncio.to_thread(self.reset, task, seed)

    async def astep(self, action: str) -> StepResult:
        return await asyncio.to_thread(self.step, action)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
