"""Row files of the evaluation pipeline and the inputs they come from.

A *prediction row* is an AgentWorldBench row plus ``gen`` (the raw generation); a *judged row* adds the
official judge keys (``total_score``, the five dimensions, ``failed``, ``strengths``, ``weaknesses``,
``extracted_output``, ``judge_raw_output`` or ``error_message``). Both are what the official
``eval.py judge``/``score`` read.

Inputs to ``infer`` may be AgentWorldBench JSONL (files or a directory of ``*_test.jsonl``, as
``eval.py --data-dir``) or unified trajectory JSONL; a trajectory becomes one row per turn through
:func:`awctl.formats.view.evaluation_rows` (so AWB-sourced trajectories give their rows back unchanged,
and the model sees an awctl trajectory's history as training showed it). The kind is decided per file
from its first object (``turns`` + ``domain`` ⇒ trajectories).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from awctl.errors import InputError
from awctl.trajectory import iter_jsonl


def input_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named by ``paths``; a directory contributes its ``*_test.jsonl`` (else ``*.jsonl``), sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*_test.jsonl")) or sorted(p.glob("*.jsonl"))
            if not found:
                raise InputError(f"{p}: no *_test.jsonl or *.jsonl files in this directory")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(
                f"{p}: no such file or directory", hint="pass AWB JSONL files, a directory, or trajectories"
            )
    return out


def _is_trajectory(obj: dict[str, Any]) -> bool:
    return "turns" in obj and "domain" in obj and "task" not in obj


def iter_input_rows(paths: Iterable[str | Path], domains: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """AWB rows of every input file, in file order; trajectories are converted turn by turn (with the
    AgentWorldBench hooks of ``domains``)."""
    from awctl.formats.view import evaluation_rows
    from awctl.trajectory import Trajectory

    for path in input_files(paths):
        kind: str | None = None
        for lineno, obj in iter_jsonl(path):
            if kind is None:
                kind = "trajectory" if _is_trajectory(obj) else "awb"
            if kind == "awb":
                if not isinstance(obj.get("task"), str):
                    raise InputError(
                        f"{path}:{lineno}: AWB row without a 'task' string",
                        hint="each row names its domain in 'task', e.g. \"terminal\"",
                    )
                yield obj
            else:
                traj = Trajectory.from_dict(obj, where=f"{path}:{lineno}")
                rows = evaluation_rows(traj, domains)
                for i, row in enumerate(rows):
                    # Trajectory-made rows may lack ids; give each a stable one so resume can skip it.
                    row.setdefault("id", f"{traj.id}_turn{row.get('turn_idx', i + 1)}")
                    yield row


def row_key(row: dict[str, Any]) -> str:
    """The identity used for resume: ``task`` + ``id`` + ``turn_idx``, or a content hash without an id."""
    if row.get("id") is not None:
        return f"{row.get('task')}\x00{row['id']}\x00{row.get('turn_idx')}"
    blob = json.dumps(
        {k: row.get(k) for k in ("task", "prompt", "response", "current_prompt", "turn_idx")},
        sort_keys=True,
        ensure_ascii=False,
    )
    return "sha1:" + hashlib.sha1(blob.encode()).hexdigest()


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a JSONL file (errors name file and line)."""
    return [obj for _, obj in iter_jsonl(path)]


def load_done(path: Path, is_done: Any) -> tuple[list[dict[str, Any]], set[str]]:
    """Rows of an existing output file that ``is_done(row)`` accepts, and their keys.

    The file is rewritten (atomically) without the rejected rows, so appending the redone rows later
    leaves exactly one row per key.
    """
    if not path.exists():
        return [], set()
    kept, keys, dropped = [], set(), 0
    for _, row in iter_jsonl(path):
        key = row_key(row)
        if is_done(row) and key not in keys:
            kept.append(row)
            keys.add(key)
        else:
            dropped += 1
    if dropped:
        write_rows_atomic(path, kept)
    return kept, keys


def write_rows_atomic(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` to ``path`` through a temporary file, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    os.replace(tmp, path)
    return count


class RowAppender:
    """Appends rows to a JSONL file, flushing after each batch so an interrupted run can resume."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.count = 0

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            self.count += 1
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RowAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
