"""The terminal domain on real bash sessions awctl did not record (``tests/foreign/terminal``).

Every file there is in a foreign form (AgentWorldBench rows, asciinema casts, ``script`` typescripts),
recorded by ``tests/foreign/terminal/record.py`` through tmux/asciinema/script in a bubblewrap jail, or
written by hand (``record_handwritten.py``). These tests read them the way a user would, and prove:
zero failed turns, nothing quarantined by prep, AgentWorldBench rows round-trip byte for byte, and every
planted fault kind is caught by its verifier on at least 3 of 4 turns where it applies.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from functools import cache
from pathlib import Path

from awctl_domains.terminal.session import facts_before, read_turn

from awctl.data.config import PrepConfig
from awctl.data.pipeline import run_prep
from awctl.domain import TurnContext, verifier_outcomes
from awctl.formats.agentworldbench import read_rows, trajectory_to_rows
from awctl.formats.verify import verify_trajectories
from awctl.plugins import get_registry
from awctl.trajectory import Trajectory

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "foreign" / "terminal"


def data_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_file() and p.suffix not in (".py", ".md"))


@cache
def corpus() -> tuple[Trajectory, ...]:
    domains = get_registry().domains
    terminal = domains["terminal"]
    out: list[Trajectory] = []
    for path in data_files():
        if path.name.endswith(".awb.jsonl"):
            out += read_rows(path, domains)
            continue
        importer = next(i for i in terminal.importers() if i.matches(path))
        out += importer.load(path)
    return tuple(out)


def test_every_file_is_read_and_the_corpus_is_large_and_varied():
    trajectories = corpus()
    turns = [(t, i) for t in trajectories for i in range(len(t.turns))]
    assert len(trajectories) >= 40 and len(turns) >= 300
    with_output = sum(1 for t, i in turns
                      if read_turn(facts_before(TurnContext.at(t, i)), t.turns[i].action, t.turns[i].observation).output)
    assert with_output >= len(turns) / 2
    kinds = {p.name.split(".", 1)[1] for p in data_files()}
    assert {"awb.jsonl", "cast", "v3.cast", "typescript"} <= kinds


def test_verify_has_zero_failed_turns_and_every_verifier_decides():
    domains = get_registry().domains
    report = verify_trajectories(corpus(), domains)
    assert report.failed == 0, json.dumps(report.failures, indent=1)[:3000]
    decided: Counter[str] = Counter()
    for traj in corpus():
        for i in range(len(traj.turns)):
            for name, res in verifier_outcomes(domains["terminal"], traj, i):
                decided[name] += res is not None
    # A verifier that silently checks nothing would make "zero failures" meaningless.
    assert all(decided[v.name] >= 30 for v in domains["terminal"].verifiers()), decided


def test_agentworldbench_rows_round_trip_byte_for_byte():
    domains = get_registry().domains
    for path in data_files():
        if not path.name.endswith(".awb.jsonl"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        again = [json.dumps(row, ensure_ascii=False) for t in read_rows(path, domains)
                 for row in trajectory_to_rows(t, domains)]
        assert again == lines, path.name


def test_prep_quarantines_nothing(tmp_path: Path):
    config = PrepConfig(inputs=[str(p) for p in data_files()], out=str(tmp_path / "prep"), tokenizer="train:300")
    manifest = run_prep(config, get_registry().domains)
    assert manifest["quarantine"]["records"] == 0, (tmp_path / "prep" / "quarantine.jsonl").read_text()[:2000]
    assert manifest["counts"]["kept"] == len(corpus())


def fault_table() -> dict[str, tuple[int, int]]:
    """caught/planted per fault kind over every turn of the corpus (fixed seeds)."""
    domain = get_registry().domains["terminal"]
    verifiers = {v.name: v for v in domain.verifiers()}
    table: dict[str, list[int]] = {f.name: [0, 0] for f in domain.faults()}
    for traj in corpus():
        for i in range(len(traj.turns)):
            for fault in domain.faults():
                rng = random.Random(zlib.crc32(f"{traj.id}/{i}/{fault.name}".encode()))
                bad = fault.plant(TurnContext.at(traj, i), rng)
                if bad is None:
                    continue
                assert bad != traj.turns[i].observation, f"{fault.name} changed nothing in {traj.id} turn {i}"
                res = verifiers[fault.verifier](TurnContext.at(traj, i, bad))
                table[fault.name][1] += 1
                table[fault.name][0] += res is not None and not res.ok
    return {k: (c, p) for k, (c, p) in table.items()}


def test_every_planted_fault_kind_is_caught_on_three_of_four_turns():
    table = fault_table()
    print("\n".join(f"{k:22} {c}/{p}" for k, (c, p) in table.items()))
    for kind, (caught, planted) in table.items():
        assert planted >= 4, f"{kind} applies to only {planted} turns"
        assert caught / planted >= 0.75, f"{kind}: caught {caught}/{planted}"


def test_faults_cover_the_issue_kinds_and_every_verifier():
    domain = get_registry().domains["terminal"]
    faults = {f.name: f.verifier for f in domain.faults()}
    assert {"echo_other_command", "cwd_ignores_cd", "wrong_pwd_output", "wrong_echo_output",
            "prompt_changes_shape"} <= set(faults)
    assert set(faults.values()) == {v.name for v in domain.verifiers()}


def test_random_text_earns_no_verifier_credit_on_any_recorded_turn():
    domain = get_registry().domains["terminal"]
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_/"
    credited: list[str] = []
    checked = 0
    for traj in corpus():
        for i, turn in enumerate(traj.turns):
            for size in (80, max(8, len(turn.observation))):
                garbage = "".join(rng.choice(alphabet) for _ in range(size))
                for v in domain.verifiers():
                    ref = v(TurnContext.at(traj, i))
                    if ref is None or not ref.ok:
                        continue
                    checked += 1
                    got = v(TurnContext.at(traj, i, garbage))
                    if got is None or got.ok:
                        credited.append(f"{v.name} {'abstains' if got is None else 'passes'} on {traj.id} turn {i}")
    assert checked >= 1000 and not credited, credited[:10]


def test_a_recorded_turn_stripped_as_the_judge_strips_it_keeps_every_verdict_and_compares_equal():
    domain = get_registry().domains["terminal"]
    codec = domain.observation_codec
    lost: list[str] = []
    for traj in corpus():
        for i, turn in enumerate(traj.turns):
            stripped = turn.observation.strip()
            assert codec.normalize(stripped) == codec.normalize(turn.observation)
            if stripped == turn.observation:
                continue
            for v in domain.verifiers():
                ref = v(TurnContext.at(traj, i))
                got = v(TurnContext.at(traj, i, stripped))
                if ref is not None and ref.ok and (got is None or not got.ok):
                    lost.append(f"{v.name} on {traj.id} turn {i}: {got}")
    assert not lost, lost[:10]
