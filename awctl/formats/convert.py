"""Streaming conversion between formats (used by ``awctl data convert`` and the ``convert`` stage)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from awctl.errors import InputError
from awctl.formats import ALIASES, reader_for, writer_for
from awctl.trajectory import Trajectory

_UNITS = {"awctl": "trajectories", "agentworldbench": "rows", "chat": "chat records"}


def convert_files(
    inputs: Sequence[Path],
    output: Path,
    from_format: str,
    to_format: str,
    domains: Mapping[str, Any],
    domain: str | None = None,
    skip_bad: Callable[[str], None] | None = None,
    transform: str | None = None,
) -> dict[str, Any]:
    """Read ``inputs`` as ``from_format`` and write ``output`` as ``to_format``, one record at a time.

    Returns ``{"trajectories": read, "written": records written, "unit": what a record is, "skipped":
    damaged lines skipped, "transformed", "untransformable"}``. Missing inputs are reported before anything
    is written; the output appears only when the conversion completes. A damaged line stops the conversion
    with an error naming it, unless ``skip_bad`` is given: then each damaged line is passed to it as one
    message and skipped. ``transform`` names a domain transform (:meth:`awctl.domain.Domain.transforms`,
    e.g. the terminal's ``incremental``) applied to each trajectory of a domain that has it; trajectories
    it cannot convert faithfully are left out and counted.
    """
    missing = [str(p) for p in inputs if str(p) != "-" and not Path(p).exists()]
    if missing:
        raise InputError(f"input file(s) not found: {', '.join(missing)}", hint="check the paths")
    read = reader_for(from_format, domains, domain)
    write = writer_for(to_format, domains)
    seen = {"trajectories": 0, "skipped": 0, "transformed": 0, "untransformable": 0}

    def stream() -> Iterator[Trajectory]:
        for path in inputs:
            for traj in read(Path(path)) if skip_bad is None else _tolerant(Path(path), domains, skip_bad, seen):
                seen["trajectories"] += 1
                if transform is None:
                    yield traj
                    continue
                fn = _transform(domains, traj.domain, transform)
                out = fn(traj) if fn is not None else traj
                if out is None:
                    seen["untransformable"] += 1
                    continue
                seen["transformed"] += fn is not None
                yield out

    Path(output).parent.mkdir(parents=True, exist_ok=True)
    written = write(Path(output), stream())
    key = ALIASES.get(to_format, to_format)
    return {"trajectories": seen["trajectories"], "written": written, "unit": _UNITS.get(key, "records"),
            "skipped": seen["skipped"], "transformed": seen["transformed"],
            "untransformable": seen["untransformable"]}


def _transform(domains: Mapping[str, Any], name: str, transform: str) -> Callable[[Trajectory], Any] | None:
    domain = domains.get(name)
    return domain.transforms().get(transform) if domain is not None else None


def _tolerant(
    path: Path, domains: Mapping[str, Any], report: Callable[[str], None], seen: dict[str, int]
) -> Iterator[Trajectory]:
    """Every readable trajectory of ``path`` (format detected as prep detects it); each damaged line is
    reported and skipped."""
    from awctl.formats.ingest import Rejected, iter_records

    for item in iter_records([path], domains):
        if isinstance(item, Rejected):
            seen["skipped"] += 1
            report(f"skipped {item.file}:{item.line}: {item.check}: {item.reason}")
        else:
            yield item.trajectory
