"""Streaming trajectory JSONL io: compression, located errors, laziness, and the committed JSON schema."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from awctl import textio
from awctl.errors import InputError
from awctl.formats.schema import schema_text
from awctl.trajectory import (
    SystemPrompt,
    Trajectory,
    Turn,
    read_trajectories,
    trajectory_json_schema,
    write_trajectories,
)

REPO = Path(__file__).resolve().parents[1]


def _traj(i: int) -> Trajectory:
    return Trajectory(
        id=f"t{i}",
        domain="terminal",
        source="test",
        tags=["a", "ünï"],
        system=SystemPrompt(task_description="make a file", action_space="keys"),
        turns=[
            Turn(action=f"echo {i}\n", observation=f"{i}\n$ ", reasoning="think  ", metadata={"exit": 0}),
            Turn(action="```json\n[]\n```", observation="  \t\n"),
        ],
        metadata={"nested": {"list": [1, 2.5, None, True]}},
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_round_trip_plain_and_compressed_files(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"data{suffix}"
    trajs = [_traj(i) for i in range(5)]
    assert write_trajectories(path, iter(trajs)) == 5
    assert list(read_trajectories(path)) == trajs
    raw = path.read_bytes()
    if suffix.endswith(".gz"):
        assert raw[:2] == b"\x1f\x8b"
    elif suffix.endswith(".zst"):
        assert raw[:4] == b"\x28\xb5\x2f\xfd"
    else:
        assert raw.decode().count("\n") == 5


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("\n" + _traj(1).to_json() + "\n   \n" + _traj(2).to_json() + "\n", encoding="utf-8")
    assert [t.id for t in read_trajectories(path)] == ["t1", "t2"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "x", "domain": "terminal"', ["d.jsonl:2", "invalid JSON"]),
        ("[1, 2]", ["d.jsonl:2", "expected a JSON object", "list"]),
        ('{"domain": "terminal"}', ["d.jsonl:2", "id", "Field required"]),
        (
            '{"id": "x", "domain": "terminal", "turns": [{"action": "a"}]}',
            ["d.jsonl:2", "turns.0.observation"],
        ),
        ('{"id": "x", "domain": "terminal", "colour": 1}', ["d.jsonl:2", "colour"]),
        ('{"id": "", "domain": "terminal"}', ["d.jsonl:2", "id"]),
    ],
)
def test_bad_line_error_names_file_line_and_field(tmp_path: Path, line: str, expected: list[str]) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(_traj(0).to_json() + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        list(read_trajectories(path))
    for part in expected:
        assert part in info.value.message


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_reader_is_lazy_and_yields_lines_before_a_bad_one(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    text = _traj(1).to_json() + "\n" + _traj(2).to_json() + "\n{not json\n"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    reader = read_trajectories(path)
    assert next(reader).id == "t1"
    assert next(reader).id == "t2"
    with pytest.raises(InputError, match=r"d\.jsonl(\.gz)?:3: invalid JSON"):
        next(reader)


def test_reader_does_not_read_ahead_of_the_consumer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.jsonl"
    write_trajectories(path, (_traj(i) for i in range(200)))
    lines_read = []
    real_iter_lines = textio.iter_lines

    def counting(*args, **kwargs):
        for item in real_iter_lines(*args, **kwargs):
            lines_read.append(1)
            yield item

    monkeypatch.setattr(textio, "iter_lines", counting)
    reader = read_trajectories(path)
    assert lines_read == []  # nothing happens before the first item is asked for
    next(reader)
    next(reader)
    assert len(lines_read) == 2
    assert sum(1 for _ in reader) == 198


def test_write_accepts_a_generator_and_consumes_it_once(tmp_path: Path) -> None:
    consumed = []

    def gen():
        for i in range(3):
            consumed.append(i)
            yield _traj(i)

    assert write_trajectories(tmp_path / "o.jsonl", gen()) == 3
    assert consumed == [0, 1, 2]


def test_committed_schema_equals_generated_schema() -> None:
    committed = (REPO / "docs" / "trajectory.schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(), (
        "regenerate: python -m awctl.formats.schema > docs/trajectory.schema.json"
    )


def test_schema_command_prints_the_schema() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "awctl.formats.schema"], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert json.loads(out) == trajectory_json_schema()


def test_schema_accepts_written_trajectories_and_rejects_bad_ones() -> None:
    schema = trajectory_json_schema()
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(json.loads(_traj(3).to_json()))
    bad = json.loads(_traj(3).to_json())
    del bad["turns"][0]["observation"]
    assert list(validator.iter_errors(bad))
