"""Scheduling a domain's named perturbation (a controllable fault) into a simulation.

A perturbation is declared by the domain (:class:`awctl.domain.Perturbation`: a name and an instruction
template). A :class:`PerturbationSchedule` decides on which steps it is injected:

* ``every=N`` — on every N-th *counted* action (N=1: every step; N=5: steps 5, 10, 15, ...);
* ``match=REGEX`` — only actions matching the regex are counted (and can be perturbed), so
  "permission denied on /etc" is ``perturbation="permission_denied", params={"path": "/etc"},
  match="/etc"`` and "rate-limit every 5th MCP call" is ``perturbation="rate_limit", every=5``.

On those steps the rendered instruction is appended to the system prompt's simulation instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from awctl.domain import Domain, Perturbation
from awctl.errors import AwctlError
from awctl.trajectory import SystemPrompt


def find_perturbation(domain: Domain, name: str) -> Perturbation:
    """The domain's perturbation called ``name``; the error lists the ones it has."""
    known = {p.name: p for p in domain.perturbations()}
    if name not in known:
        raise AwctlError(
            f"domain {domain.name!r} has no perturbation {name!r}",
            hint=f"known perturbations: {', '.join(sorted(known)) or 'none'} (`awctl domains --json` lists them)",
        )
    return known[name]


@dataclass
class PerturbationSchedule:
    """When and how one perturbation is injected. The instruction is rendered at construction, so a
    missing template parameter fails before any step runs."""

    perturbation: Perturbation
    params: dict[str, Any] = field(default_factory=dict)
    every: int = 1
    match: str | None = None
    counted: int = 0

    def __post_init__(self) -> None:
        if self.every < 1:
            raise AwctlError(f"perturb_every must be at least 1, got {self.every}")
        self.text = self.perturbation.render(**self.params)
        try:
            self._pattern = re.compile(self.match) if self.match else None
        except re.error as exc:
            raise AwctlError(f"perturbation match {self.match!r} is not a valid regex: {exc}") from None

    @classmethod
    def for_domain(
        cls,
        domain: Domain,
        name: str,
        params: dict[str, Any] | None = None,
        every: int = 1,
        match: str | None = None,
    ) -> PerturbationSchedule:
        return cls(find_perturbation(domain, name), dict(params or {}), every, match)

    def advance(self, action: str) -> bool:
        """Count ``action`` (when it matches) and say whether this step is perturbed."""
        if self._pattern is not None and not self._pattern.search(action):
            return False
        self.counted += 1
        return self.counted % self.every == 0

    def inject(self, sections: SystemPrompt) -> SystemPrompt:
        """``sections`` with the instruction appended to the simulation instruction (or raw prompt)."""
        if sections.raw is not None:
            return sections.model_copy(update={"raw": f"{sections.raw.rstrip()}\n\n{self.text}"})
        base = sections.simulation_instruction.rstrip()
        return sections.model_copy(update={"simulation_instruction": f"{base}\n\n{self.text}".strip()})

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.perturbation.name,
            "params": self.params,
            "every": self.every,
            "match": self.match,
        }
