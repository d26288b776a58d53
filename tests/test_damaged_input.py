"""Damaged input never passes silently: every reader names the file, the line or byte offset and the cause;
outputs appear only when complete; quarantining commands read on, converting commands say how to skip."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awctl.cli.data import data
from awctl.errors import AwctlError, InputError
from awctl.formats import importer_formats, reader_for
from awctl.formats.agentworldbench import read_rows
from awctl.plugins import get_registry
from awctl.textio import iter_lines, open_text_writer
from awctl.trajectory import Trajectory, Turn, iter_jsonl, read_trajectories, write_trajectories

FIXTURES = Path(__file__).parent / "fixtures" / "awb"


def _rows(n: int) -> list[dict]:
    """``n`` AgentWorldBench rows: copies of the fixture trajectories under new ids."""
    base = [json.loads(line) for line in (FIXTURES / "terminal_test.jsonl").read_text().splitlines()]
    out = []
    for k in range(n // len(base) + 1):
        for row in base:
            out.append({**row, "id": f"{row['id']}-{k}", "system_str": f"{row['system_str']} #{k}"})
    return out[:n]


def _gzip_rows(path: Path, rows: list[dict]) -> bytes:
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    path.write_bytes(data)
    return data


def test_a_truncated_gzip_fails_convert_naming_file_line_and_cause_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "rows.jsonl.gz"
    whole = _gzip_rows(src, _rows(450))
    src.write_bytes(whole[: len(whole) // 2])
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(data, ["convert", "--from", "awb", str(src), "-o", str(out)])
    assert isinstance(res.exception, InputError), res.output
    message = res.exception.message
    assert str(src) in message and "truncated" in message and "byte" in message
    assert "--skip-bad" in (res.exception.hint or "")
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl.tmp-*"))

    res = CliRunner().invoke(data, ["convert", "--from", "awb", "--skip-bad", str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    kept = list(read_trajectories(out))
    assert kept and "skipped 1 damaged line(s)" in res.output and "truncated" in res.output


def test_the_cli_reports_a_damaged_file_as_an_error_not_as_ctrl_c(tmp_path: Path) -> None:
    from tests.conftest import run_awctl

    src = tmp_path / "rows.jsonl.gz"
    whole = _gzip_rows(src, _rows(40))
    src.write_bytes(whole[: len(whole) // 2])
    proc = run_awctl("data", "convert", "--from", "awb", str(src), "-o", str(tmp_path / "o.jsonl"))
    assert proc.returncode == 2, proc.stderr
    assert "aborted" not in proc.stderr and "truncated" in proc.stderr and "rows.jsonl.gz" in proc.stderr


def test_non_utf8_and_binary_files_are_named_with_line_and_byte(tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(InputError) as info:
        list(iter_jsonl(latin))
    assert "latin.jsonl:2 (byte 23)" in info.value.message and "not UTF-8" in info.value.message

    binary = tmp_path / "image.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(InputError, match=r"image\.jsonl:1 .*not UTF-8"):
        list(read_rows(binary))


def test_a_huge_line_is_an_error_that_names_it(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"id": "' + "x" * 20_000_000 + "\n")
    with pytest.raises(InputError, match=r"huge\.jsonl:1: invalid JSON"):
        list(read_trajectories(huge))


def test_an_empty_file_converts_to_an_empty_output(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(data, ["convert", str(empty), "-o", str(out)])
    assert res.exit_code == 0 and out.read_text() == ""


def test_an_output_appears_only_when_its_writer_closes_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl.gz"
    with pytest.raises(RuntimeError), open_text_writer(out) as handle:
        handle.write("partial\n")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []
    write_trajectories(out, [Trajectory(id="t", domain="x", turns=[Turn(action="a", observation="b")])])
    assert [t.id for t in read_trajectories(out)] == ["t"] and len(list(tmp_path.iterdir())) == 1


def test_verify_and_prep_read_on_past_damaged_lines(tmp_path: Path) -> None:
    first, second = (Trajectory(id=f"ok{k}", domain="nosuch", source=f"s{k}",
                                turns=[Turn(action=f"echo {k}", observation=f"{k}")]) for k in (1, 2))
    src = tmp_path / "mixed.jsonl"
    src.write_bytes(first.to_json().encode() + b"\n{broken\n\xff\xfe\n" + second.to_json().encode() + b"\n")
    res = CliRunner().invoke(data, ["verify", "--json", str(src)])
    assert res.exit_code == 1
    report = json.loads(res.output)
    assert report["trajectories"] == 2
    reasons = [f["trajectory"] + " " + f["message"] for f in report["failures"]["read"]]
    assert any("mixed.jsonl:2" in r and "invalid JSON" in r for r in reasons)
    assert any("mixed.jsonl:3" in r and "not UTF-8" in r for r in reasons)

    from awctl.data.pipeline import PrepConfig, run_prep

    manifest = run_prep(PrepConfig(inputs=[str(src)], out=str(tmp_path / "prep"), tokenizer="train:300",
                                   split="train=1", allow_unknown_domains=True), get_registry().domains)
    assert (manifest["counts"]["quarantined"], manifest["counts"]["kept"]) == (2, 2)


def test_iter_lines_keeps_going_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl.gz"
    whole = gzip.compress(b"a\n\xff\nc\n" * 2000)
    path.write_bytes(whole[: len(whole) // 2])
    items = list(iter_lines(path, keep_going=True))
    bad = [v for _, v in items if not isinstance(v, str)]
    assert bad[-1].fatal and "truncated" in bad[-1].reason
    assert all(not b.fatal and "not UTF-8" in b.reason for b in bad[:-1])


# ── every reader, fuzzed ─────────────────────────────────────────────────────────────────────────────

def _importers() -> list[tuple[str, str, object]]:
    return [(name, dname, imp) for name, offers in sorted(importer_formats(get_registry().domains).items()) for dname, imp in offers]


_damaged = st.one_of(
    st.binary(max_size=400),
    st.sampled_from([b"", b"\n", b"\xff\xfe\x00", b"{", b"[", b"null\n", b'{"a": 1}\n' * 3, b"x" * 100_000]),
    st.binary(max_size=400).map(gzip.compress).map(lambda b: b[: len(b) // 2]),
)


@pytest.mark.parametrize("name,domain,importer", _importers(), ids=lambda v: v if isinstance(v, str) else "")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=_damaged)
def test_every_importer_reports_damage_as_an_input_error_naming_the_file(
    name: str, domain: str, importer, content: bytes, tmp_path: Path
) -> None:
    pattern = importer.patterns[0]
    path = tmp_path / pattern.replace("**/", "").replace("*", "fuzz")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    read = reader_for(name, get_registry().domains, domain)
    try:
        for traj in read(path):
            assert isinstance(traj, Trajectory)
    except AwctlError as exc:
        assert path.name in exc.message, exc.message


@pytest.mark.parametrize("fmt", ["awctl", "agentworldbench"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=_damaged, suffix=st.sampled_from([".jsonl", ".jsonl.gz"]))
def test_the_jsonl_readers_report_damage_as_an_input_error(fmt: str, content: bytes, suffix: str,
                                                            tmp_path: Path) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(gzip.compress(content) if suffix == ".jsonl.gz" and content[:2] != b"\x1f\x8b" else content)
    try:
        list(reader_for(fmt, get_registry().domains)(path))
    except AwctlError as exc:
        assert path.name in exc.message, exc.message
