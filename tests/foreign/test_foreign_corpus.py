"""Data awctl did not write: every domain's foreign corpus reads, verifies with zero failures, preps without
loss, round-trips, and its planted faults are caught by the verifiers that target them.

Each ``tests/foreign/<domain>/`` folder holds sessions recorded by other programs (its README says which
and how): AgentWorldBench rows (``*.awb.jsonl``) and raw logs a domain importer reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from awctl.conformance.faults import format_tallies, plant_faults
from awctl.formats.agentworldbench import read_rows, write_rows
from awctl.formats.ingest import Record, Rejected, iter_records
from awctl.formats.verify import verify_files
from awctl.plugins import get_registry

HERE = Path(__file__).parent
DOMAINS = get_registry().domains
CORPORA = sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def corpus_files(name: str) -> list[Path]:
    return sorted(p for p in (HERE / name).rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".md", ".pyc") and "__pycache__" not in p.parts)


def corpus(name: str) -> list[Record]:
    items = list(iter_records(corpus_files(name), DOMAINS))
    rejected = [i for i in items if isinstance(i, Rejected)]
    assert not rejected, [r.to_dict() for r in rejected]
    return items  # type: ignore[return-value]


@pytest.fixture(params=CORPORA)
def name(request: pytest.FixtureRequest) -> str:
    return request.param


def test_every_corpus_is_for_a_registered_domain_and_not_empty(name: str) -> None:
    assert name in DOMAINS, f"tests/foreign/{name} is not a registered domain"
    records = corpus(name)
    assert records and {r.trajectory.domain for r in records} == {name}
    assert (HERE / name / "README.md").is_file()


def test_verify_fails_no_turn_of_the_foreign_corpus(name: str) -> None:
    report = verify_files(corpus_files(name), DOMAINS, max_failures=5)
    assert report.turns > 0
    assert report.failed == 0, report.failures


def test_prep_keeps_every_foreign_session(name: str, tmp_path: Path) -> None:
    from awctl.data.pipeline import PrepConfig, run_prep

    manifest = run_prep(PrepConfig(inputs=[str(p) for p in corpus_files(name)], out=str(tmp_path / "prep"), tokenizer="train:400",
                                   split="train=1", dedupe=False), DOMAINS)
    counts = manifest["counts"]
    assert counts["quarantined"] == 0 and counts["kept"] == len(corpus(name))


def test_agentworldbench_rows_round_trip_byte_for_byte(name: str, tmp_path: Path) -> None:
    files = [p for p in corpus_files(name) if p.name.endswith(".awb.jsonl")]
    for path in files:
        out = tmp_path / path.name
        write_rows(out, read_rows(path, DOMAINS), DOMAINS)
        assert out.read_bytes() == path.read_bytes(), path


def test_planted_faults_are_caught_by_their_verifiers(name: str) -> None:
    domain = DOMAINS[name]
    tallies = plant_faults(domain, [r.trajectory for r in corpus(name)])
    print(f"\n{name}\n{format_tallies(tallies)}")
    assert tallies, f"{name} lists no faults"
    for tally in tallies.values():
        assert tally.planted >= 4, f"{tally.fault}: planted only {tally.planted} times in the corpus"
        assert tally.caught * 4 >= tally.planted * 3, tally.to_dict()
