"""Trajectory formats awctl reads and writes, by name.

``FORMATS`` maps a name to a :class:`Format`: ``awctl`` (the unified JSONL, both ways),
``agentworldbench`` (alias ``awb``; both ways, lossless, see :mod:`awctl.formats.agentworldbench`) and
``chat`` (write only: one record of chat messages plus training target per turn, see
:mod:`awctl.formats.view`). Domain importers (asciinema casts, SWE-agent trajectories...) are read-only
formats that :func:`reader_for` finds through the registered domains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from awctl.errors import AwctlError, InputError, UnknownNameError
from awctl.trajectory import Trajectory, read_trajectories, write_jsonl, write_trajectories

Domains = Mapping[str, Any]
Reader = Callable[[Path, Domains], Iterator[Trajectory]]
Writer = Callable[[Path, Iterable[Trajectory], Domains], int]


@dataclass(frozen=True)
class Format:
    """A named format. ``read``/``write`` are ``None`` where the direction does not exist. Both take the
    domains whose hooks apply (AgentWorldBench bodies, chat views).

    ``write`` returns the number of records written (rows for AWB and chat, trajectories for awctl).
    """

    name: str
    description: str
    read: Reader | None = None
    write: Writer | None = None


def _read_awctl(path: Path, domains: Domains) -> Iterator[Trajectory]:
    return read_trajectories(path)


def _write_awctl(path: Path, trajectories: Iterable[Trajectory], domains: Domains) -> int:
    return write_trajectories(path, trajectories)


def _read_awb(path: Path, domains: Domains) -> Iterator[Trajectory]:
    from awctl.formats.agentworldbench import read_rows

    return read_rows(path, domains)


def _write_awb(path: Path, trajectories: Iterable[Trajectory], domains: Domains) -> int:
    from awctl.formats.agentworldbench import write_rows

    return write_rows(path, trajectories, domains)


def _write_chat(path: Path, trajectories: Iterable[Trajectory], domains: Domains) -> int:
    from awctl.formats.view import chat_records

    return write_jsonl(path, (rec for traj in trajectories for rec in chat_records(traj, domains)))


FORMATS: dict[str, Format] = {
    "awctl": Format("awctl", "awctl trajectory JSONL (docs/trajectory.schema.json)", _read_awctl, _write_awctl),
    "agentworldbench": Format(
        "agentworldbench", "AgentWorldBench rows, one per evaluated turn (lossless)", _read_awb, _write_awb
    ),
    "chat": Format("chat", "chat messages + training target per turn (write only)", None, _write_chat),
}
ALIASES: dict[str, str] = {"awb": "agentworldbench", "jsonl": "awctl"}


def get_format(name: str) -> Format:
    """The built-in format called ``name`` (or an alias); raises :class:`UnknownNameError`."""
    key = ALIASES.get(name, name)
    if key not in FORMATS:
        raise UnknownNameError(
            f"unknown format {name!r}", hint=f"known formats: {', '.join(sorted(FORMATS))}"
        )
    return FORMATS[key]


def importer_formats(domains: Domains) -> dict[str, list[tuple[str, Any]]]:
    """Importer name → ``[(domain name, Importer), ...]`` over ``domains``."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for dname, domain in sorted(domains.items()):
        try:
            importers = domain.importers()
        except Exception:  # a domain whose importers() fails simply offers none
            continue
        for imp in importers:
            found.setdefault(imp.name, []).append((dname, imp))
    return found


def reader_for(name: str, domains: Domains, domain: str | None = None) -> Callable[[Path], Iterator[Trajectory]]:
    """A reader of ``path`` for a built-in format or a domain importer; ``domain`` picks among same-named
    importers."""
    key = ALIASES.get(name, name)
    if key in FORMATS:
        fmt = FORMATS[key]
        if fmt.read is None:
            raise UnknownNameError(f"format {name!r} cannot be read", hint="it is an output-only format")
        read = fmt.read
        return lambda path: read(path, domains)
    importers = importer_formats(domains)
    matches = importers.get(name, [])
    if domain is not None:
        matches = [(d, i) for d, i in matches if d == domain]
    if not matches:
        known = sorted({*(k for k, f in FORMATS.items() if f.read), *importers})
        raise UnknownNameError(
            f"unknown input format {name!r}" + (f" for domain {domain!r}" if domain else ""),
            hint=f"known input formats: {', '.join(known)}; `awctl domains` lists each domain's importers",
        )
    if len(matches) > 1:
        raise UnknownNameError(
            f"importer {name!r} is offered by several domains: {', '.join(d for d, _ in matches)}",
            hint="add --domain NAME to pick one",
        )
    return _guarded(matches[0][1])


def _guarded(importer: Any) -> Callable[[Path], Iterator[Trajectory]]:
    """The importer's reader, with any failure that is not already an awctl error turned into one that
    names the file, the importer and the item it was reading."""

    def read(path: Path) -> Iterator[Trajectory]:
        item = 0
        try:
            for traj in importer.load(path):
                item += 1
                yield traj
        except AwctlError:
            raise
        except Exception as exc:
            raise InputError(
                f"{path}: the {importer.name!r} importer cannot read item {item + 1}: "
                f"{type(exc).__name__}: {exc}",
                hint=f"is this a {importer.description} file? `awctl data convert --skip-bad` keeps the "
                "items before it",
            ) from None

    return read


def writer_for(name: str, domains: Domains) -> Callable[[Path, Iterable[Trajectory]], int]:
    fmt = get_format(name)
    if fmt.write is None:
        raise UnknownNameError(
            f"format {name!r} cannot be written", hint="use awctl, agentworldbench or chat"
        )
    write = fmt.write
    return lambda path, trajectories: write(path, trajectories, domains)
