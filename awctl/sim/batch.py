"""Teacher-forced batch replay: predict every turn of recorded data from its true history.

The library call behind ``awctl simulate batch`` and the ``simulate`` stage kind. Each evaluated turn is
rendered by :mod:`awctl.formats.view` in the model's chat style and sent to the backend in batches; each
output line holds ``id, trajectory_id, domain, turn, prediction`` (the parsed observation), ``raw_output,
reasoning, reference`` (the recorded observation as the model sees it in its history), ``diagnostics``
and ``finish_reason``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from awctl.backend import Backend, ChatRequest
from awctl.errors import AwctlError
from awctl.trajectory import Trajectory, iter_jsonl, open_text, read_trajectories


@dataclass
class BatchSummary:
    input: str
    format: str
    output: str
    predictions: int
    empty_extractions: int
    seconds: float
    backend: str
    model: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def detect_format(path: Path) -> str:
    """``trajectories`` or ``awb`` from the first record of ``path``."""
    for _, obj in iter_jsonl(path):
        if "turns" in obj:
            return "trajectories"
        if any(k in obj for k in ("current_prompt", "system_str", "response")):
            return "awb"
        raise AwctlError(
            f"{path}:1: neither a trajectory (no 'turns') nor an AgentWorldBench row",
            hint="pass --format trajectories or --format awb",
        )
    raise AwctlError(f"{path} is empty", hint="pass a file with trajectories or AgentWorldBench rows")


def read_input(path: Path, fmt: str, domains: Mapping[str, Any]) -> Iterator[Trajectory]:
    """Trajectories of ``path`` in format ``fmt`` (``auto``, ``trajectories`` or ``awb``)."""
    from awctl.formats.agentworldbench import read_rows

    fmt = detect_format(path) if fmt == "auto" else fmt
    return read_trajectories(path) if fmt == "trajectories" else read_rows(path, domains)


def simulate_batch(
    trajectories: Iterable[Trajectory],
    domains: Mapping[str, Any],
    backend: Backend,
    output: Path,
    *,
    style: str = "agentworldbench",
    batch_size: int = 32,
    limit: int | None = None,
    max_tokens: int = 1024,
    temperature: float = 0.0,
    seed: int | None = None,
    source: str = "",
    fmt: str = "",
) -> BatchSummary:
    """Write one prediction line per evaluated turn of ``trajectories`` to ``output`` (written whole or
    not at all); returns counts and timing."""
    from awctl.formats.view import chat_records
    from awctl.sim.parse import parse_output

    if batch_size < 1:
        raise AwctlError("batch_size must be at least 1")
    start, written, empty = time.time(), 0, 0

    def records() -> Iterator[dict[str, Any]]:
        for traj in trajectories:
            yield from chat_records(traj, domains, style)

    with open_text(output, "w") as out:
        pending: list[dict[str, Any]] = []

        def flush() -> None:
            nonlocal written, empty
            requests = [ChatRequest(messages=r["messages"], max_tokens=max_tokens, temperature=temperature,
                                    seed=seed) for r in pending]
            for rec, completions in zip(pending, backend.generate(requests), strict=True):
                comp = completions[0]
                parsed = parse_output(comp.text, comp.reasoning)
                empty += int(parsed.diagnostics["empty"])
                line = {"id": rec["id"], "trajectory_id": rec["trajectory_id"], "domain": rec["domain"],
                        "turn": rec["turn"], "prediction": parsed.observation, "raw_output": comp.text,
                        "reasoning": parsed.reasoning, "reference": rec["reference"],
                        "diagnostics": parsed.diagnostics, "finish_reason": comp.finish_reason}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                written += 1
            pending.clear()

        for rec in records():
            if limit is not None and written + len(pending) >= limit:
                break
            pending.append(rec)
            if len(pending) >= batch_size:
                flush()
        if pending:
            flush()
    return BatchSummary(source, fmt, str(output), written, empty, round(time.time() - start, 2),
                        getattr(backend, "name", type(backend).__name__), str(getattr(backend, "model", "")))
