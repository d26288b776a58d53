"""The unified trajectory format and its streaming JSONL io.

A trajectory is what a world model learns from and is evaluated on: a system prompt made of five named
sections (task description ⊕ action space ⊕ initial state ⊕ demonstrations ⊕ simulation instruction)
and a list of turns, each an agent action and the environment's observation.

One trajectory is one JSON object per line. Readers stream: they never hold more than one line in
memory, and every error names the file, the line and the field. ``docs/trajectory.schema.json`` is
generated from these models (a test keeps it in sync).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from awctl.errors import InputError

SCHEMA_VERSION = 1

SECTION_NAMES: tuple[str, ...] = (
    "task_description",
    "action_space",
    "initial_state",
    "demonstrations",
    "simulation_instruction",
)

SECTION_TITLES: dict[str, str] = {
    "task_description": "Task Description",
    "action_space": "Action Space",
    "initial_state": "Initial State",
    "demonstrations": "Demonstrations",
    "simulation_instruction": "Simulation Instruction",
}


class SystemPrompt(BaseModel):
    """The world model's system prompt as five named sections plus free extra text.

    ``raw`` holds a system prompt verbatim when a source only gave a flat string (AgentWorldBench's
    ``system_str``); :meth:`render` then returns it unchanged so conversions stay lossless.
    """

    model_config = ConfigDict(extra="forbid")

    task_description: str = ""
    action_space: str = ""
    initial_state: str = ""
    demonstrations: str = ""
    simulation_instruction: str = ""
    extra: str = ""
    raw: str | None = None

    def sections(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in SECTION_NAMES}

    def render(self) -> str:
        """The system prompt text: ``raw`` when set, else the non-empty sections under ``## Title`` headings."""
        if self.raw is not None:
            return self.raw
        parts = [f"## {SECTION_TITLES[k]}\n{v.strip()}" for k, v in self.sections().items() if v.strip()]
        if self.extra.strip():
            parts.append(self.extra.strip())
        return "\n\n".join(parts)


class Turn(BaseModel):
    """One agent action and the environment's response to it.

    ``action`` and ``observation`` are the texts exactly as the domain's codecs render them;
    ``reasoning`` is optional thinking that preceded the observation (a simulator's ``<think>``);
    ``metadata`` carries anything else (timings, exit codes, source-format leftovers).
    """

    model_config = ConfigDict(extra="forbid")

    action: str
    observation: str
    reasoning: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Trajectory(BaseModel):
    """A whole episode in one domain."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    domain: str = Field(min_length=1)
    source: str = ""
    split: str | None = None
    tags: list[str] = Field(default_factory=list)
    system: SystemPrompt = Field(default_factory=SystemPrompt)
    turns: list[Turn] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_defaults=False), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "") -> Trajectory:
        """Validate a dict; errors name ``where`` (e.g. ``file.jsonl:12``) and each bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InputError(
                f"{where or 'trajectory'}: not a valid trajectory: {format_validation_error(exc)}",
                hint="see docs/trajectory.schema.json for the format; "
                "`awctl data convert` turns other formats into it",
            ) from None


def format_validation_error(exc: ValidationError) -> str:
    """Pydantic errors as ``field.path: message`` pairs joined by ``; ``."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()
    )


# ── streaming io ─────────────────────────────────────────────────────────────────────────────────────


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """Open a text file, transparently (de)compressing ``.gz`` and ``.zst``; ``-`` is stdin/stdout.

    Reading reports damage (truncated streams, bytes that are not UTF-8) as :class:`InputError` naming the
    file, line and byte offset; writing goes to a temporary file renamed onto ``path`` when the handle
    closes without an error (see :mod:`awctl.textio`)."""
    from awctl.textio import open_text_reader, open_text_writer

    return open_text_reader(path) if "r" in mode else open_text_writer(path)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; a bad line raises naming file and line."""
    from awctl.textio import SKIP_HINT, iter_lines

    if str(path) == "-":
        import sys

        lines: Iterable[tuple[int, Any]] = enumerate(sys.stdin, 1)
    else:
        lines = iter_lines(path)
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})",
                hint=f"each line must be one complete JSON object. {SKIP_HINT}",
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}", hint=SKIP_HINT
            )
        yield lineno, obj


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Stream trajectories from a JSONL file (``.gz``/``.zst`` too), one line at a time."""
    for lineno, obj in iter_jsonl(path):
        yield Trajectory.from_dict(obj, where=f"{path}:{lineno}")


def write_jsonl(path: str | Path, objects: Iterable[dict[str, Any] | BaseModel]) -> int:
    """Write objects one per line (compressing by suffix); returns how many were written."""
    count = 0
    with open_text(path, "w") as handle:
        for obj in objects:
            if isinstance(obj, BaseModel):
                line = obj.to_json() if isinstance(obj, Trajectory) else obj.model_dump_json()
            else:
                line = json.dumps(obj, ensure_ascii=False)
            handle.write(line + "\n")
            count += 1
    return count


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    return write_jsonl(path, trajectories)


def trajectory_json_schema() -> dict[str, Any]:
    schema = Trajectory.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://awctl.dev/schemas/trajectory.schema.json"
    return schema
