"""Stream trajectories out of any number of input files, whatever their format.

Formats, decided per file:

* unified trajectory JSONL (first record has ``turns``) — ``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``;
* AgentWorldBench JSONL (first record has ``system_str`` or ``turn_idx``), grouped into trajectories by
  :mod:`awctl.formats.agentworldbench`;
* any file a registered domain's importer claims by filename pattern (asciinema casts, tool-call logs...);
  an importer's pattern wins over the JSONL readers (``*.openai.jsonl`` is a chat log, not trajectories).

Directories are walked recursively in sorted order. Nothing raises for bad data: a line that is not JSON,
not a valid trajectory or not a valid AWB row, a truncated compressed stream, or an importer that fails
becomes a :class:`Rejected` naming the file, the line and the check, and reading goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError, InputError
from awctl.textio import BadLine, iter_lines
from awctl.trajectory import Trajectory

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".ndjson")


@dataclass
class Record:
    """A trajectory read from ``file`` at ``line`` (1-based; for importers, the item number)."""

    trajectory: Trajectory
    file: str
    line: int
    fmt: str  # unified | agentworldbench | importer:<name>

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Rejected:
    """A record that did not make it, and why. ``check`` is a short machine-readable name."""

    file: str
    line: int
    check: str
    reason: str
    trajectory_id: str | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "line": self.line,
            "check": self.check,
            "reason": self.reason,
        }
        if self.trajectory_id is not None:
            out["trajectory_id"] = self.trajectory_id
        if self.turn is not None:
            out["turn"] = self.turn
        return out


def expand_inputs(inputs: list[str | Path]) -> list[Path]:
    """Files named by ``inputs`` (directories walked recursively, sorted); a missing path raises."""
    files: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith("."))
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"input {str(item)!r} does not exist", hint="pass existing files or folders")
    return files


def _is_jsonl(path: Path) -> bool:
    return path.name.endswith(JSONL_SUFFIXES)


def _is_awb(obj: Mapping[str, Any]) -> bool:
    return "turns" not in obj and ("system_str" in obj or "turn_idx" in obj)


def iter_records(files: list[Path], domains: Mapping[str, Any] | None = None) -> Iterator[Record | Rejected]:
    """Every trajectory (or rejection) of ``files`` in file order, streaming one line at a time."""
    domains = domains or {}
    importers = [imp for d in domains.values() for imp in _safe_importers(d)]
    for path in files:
        # A domain importer's pattern is more specific than ".jsonl" (e.g. "*.openai.jsonl"): it wins.
        matching = [imp for imp in importers if imp.matches(path)]
        if not matching and _is_jsonl(path):
            yield from _iter_jsonl_file(path, domains)
            continue
        if not matching:
            yield Rejected(
                str(path),
                0,
                "format",
                "no reader for this file: not JSONL and no domain importer matches its name",
            )
            continue
        yield from _iter_importer(path, matching[0])


def _safe_importers(domain: Any) -> list[Any]:
    try:
        return list(domain.importers())
    except Exception:  # a broken domain plugin must not stop prep; its files are reported unreadable
        return []


def _iter_importer(path: Path, importer: Any) -> Iterator[Record | Rejected]:
    item = 0
    try:
        for traj in importer.load(path):
            item += 1
            yield Record(traj, str(path), item, f"importer:{importer.name}")
    except Exception as exc:  # importer bugs and bad raw logs alike are reported, not fatal
        msg = exc.message if isinstance(exc, AwctlError) else f"{type(exc).__name__}: {exc}"
        yield Rejected(str(path), item + 1, f"importer:{importer.name}", msg)


def _lines_or_rejection(path: Path) -> Iterator[tuple[int, str | BadLine | Rejected]]:
    try:
        yield from iter_lines(path, keep_going=True)
    except InputError as exc:  # not a readable file at all (missing, a directory)
        yield 0, Rejected(str(path), 0, "read", exc.message)


def _iter_jsonl_file(path: Path, domains: Mapping[str, Any]) -> Iterator[Record | Rejected]:
    fmt: str | None = None
    grouper = None
    file = str(path)
    for lineno, line in _lines_or_rejection(path):
        if isinstance(line, Rejected):
            yield line
            return
        if isinstance(line, BadLine):
            yield Rejected(file, lineno, "read", f"{line.reason} (byte {line.offset})")
            if line.fatal:
                break
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Rejected(file, lineno, "json", f"invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            yield Rejected(file, lineno, "json", f"expected a JSON object, got {type(obj).__name__}")
            continue
        if fmt is None:
            fmt = "agentworldbench" if _is_awb(obj) else "unified"
            if fmt == "agentworldbench":
                from awctl.formats.agentworldbench import RowGrouper

                # Rows of one trajectory are adjacent in AWB files; 16 open groups tolerate interleaving.
                grouper = RowGrouper(domains, max_open=16)
        if grouper is not None:
            try:
                done = grouper.add_row(obj, where=f"{file}:{lineno}", line=lineno)
            except AwctlError as exc:
                yield Rejected(file, lineno, "agentworldbench", exc.message)
                continue
            for traj in done:
                yield Record(traj, file, _first_line(traj, lineno), fmt)
            continue
        try:
            traj = Trajectory.from_dict(obj, where=f"{file}:{lineno}")
        except AwctlError as exc:
            yield Rejected(file, lineno, "schema", exc.message, trajectory_id=_str_or_none(obj.get("id")))
            continue
        yield Record(traj, file, lineno, fmt)
    if grouper is not None:
        for traj in grouper.finish():
            yield Record(traj, file, _first_line(traj, 0), "agentworldbench")


def _first_line(traj: Trajectory, default: int) -> int:
    rows = traj.metadata.get("agentworldbench", {}).get("rows") or []
    return int(rows[0].get("line", default)) if rows else default


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
