"""Random text earns no verifier credit: a check that passes a real turn fails (not abstains) when random
text replaces the observation of a trajectory whose other turns establish a JSON form; a trajectory of
plain text establishes no structure, and there the checks have nothing to hold text to."""

from __future__ import annotations

import random
import string
from pathlib import Path

from awctl_domains.mcp.domain import McpDomain
from awctl_domains.mcp.importers import load_openai_chat

from awctl.domain import verifier_credit, verifier_outcomes
from awctl.formats.agentworldbench import read_rows
from awctl.trajectory import Trajectory

DOMAIN = McpDomain()
CORPUS = Path(__file__).resolve().parents[3] / "tests" / "foreign" / "mcp"
ALPHABET = string.ascii_letters + string.digits + " .,;:-_/"


def _foreign() -> list[Trajectory]:
    trajs = [t for p in sorted(CORPUS.glob("*.awb.jsonl")) for t in read_rows(p, {"mcp": DOMAIN})]
    return trajs + [t for p in sorted(CORPUS.glob("*.openai.jsonl")) for t in load_openai_chat(p)]


def test_random_text_fails_every_check_that_passes_a_real_turn(recorded: dict[str, Trajectory]) -> None:
    rng = random.Random(3)
    checked, names = 0, set()
    for traj in [*recorded.values(), *_foreign()]:
        for i, turn in enumerate(traj.turns):
            garbage = "".join(rng.choice(ALPHABET) for _ in range(max(8, min(len(turn.observation), 400))))
            on_garbage = dict(verifier_outcomes(DOMAIN, traj, i, garbage))
            for name, ref in verifier_outcomes(DOMAIN, traj, i):
                if ref is None or not ref.ok:
                    continue
                got = on_garbage[name]
                assert got is not None and not got.ok, (traj.id, i, name, got)
                assert "line 1" in got.message and "expected" in got.message, got.message
                checked += 1
                names.add(name)
            assert verifier_credit(DOMAIN, traj, i, garbage).passed == 0
    assert checked > 600 and names == {v.name for v in DOMAIN.verifiers()}


def test_arguments_that_satisfy_the_schema_leave_nothing_to_check(recorded: dict[str, Trajectory]) -> None:
    # any answer, success or tool failure, is possible for valid arguments: the check abstains
    for traj in recorded.values():
        for i in range(len(traj.turns)):
            got = dict(verifier_outcomes(DOMAIN, traj, i))["mcp.arguments_schema"]
            assert got is None or got.ok
    valid = recorded["mcp/notes/fix-plan-day"]
    assert dict(verifier_outcomes(DOMAIN, valid, 0))["mcp.arguments_schema"] is None
