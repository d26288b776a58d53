"""Streaming conversion between formats (used by ``awctl data convert`` and the ``convert`` stage)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from awctl.errors import InputError
from awctl.formats import ALIASES, reader_for, writer_for
from awctl.trajectory import Trajectory

_UNITS = {"awctl": "trajectories", "agentworldbench": "rows", "chat": "chat records"}


def convert_files(
    inputs: Sequence[Path], output: Path, from_format: str, to_format: str, domain: str | None = None
) -> dict[str, Any]:
    """Read ``inputs`` as ``from_format`` and write ``output`` as ``to_format``, one record at a time.

    Returns ``{"trajectories": read, "written": records written, "unit": what a record is}``. Missing
    inputs are reported before anything is written.
    """
    missing = [str(p) for p in inputs if str(p) != "-" and not Path(p).exists()]
    if missing:
        raise InputError(f"input file(s) not found: {', '.join(missing)}", hint="check the paths")
    read = reader_for(from_format, domain)
    write = writer_for(to_format)
    seen = {"trajectories": 0}

    def stream() -> Iterator[Trajectory]:
        for path in inputs:
            for traj in read(Path(path)):
                seen["trajectories"] += 1
                yield traj

    Path(output).parent.mkdir(parents=True, exist_ok=True)
    written = write(Path(output), stream())
    key = ALIASES.get(to_format, to_format)
    return {"trajectories": seen["trajectories"], "written": written, "unit": _UNITS.get(key, "records")}
