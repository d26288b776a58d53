"""Near-duplicate detection: the banding matches datasketch's MinHashLSH (parameters and decisions) and
the vectorised shingle hash equals the plain polynomial hash it stands for."""

from __future__ import annotations

import random

import numpy as np
import pytest

from awctl.data.dedupe import Deduper, lsh_params
from awctl.errors import AwctlError
from awctl.trajectory import SystemPrompt, Trajectory, Turn


def _traj(tid: str, text: str) -> Trajectory:
    return Trajectory(
        id=tid,
        domain="toy",
        system=SystemPrompt(task_description="t"),
        turns=[Turn(action="cat notes.txt", observation=text)],
    )


@pytest.mark.parametrize("num_perm", [16, 64])
def test_lsh_params_equal_datasketch_optimum(num_perm: int) -> None:
    from datasketch.lsh import _optimal_param

    for threshold in np.round(np.arange(0.1, 0.96, 0.05), 2):
        assert lsh_params(float(threshold), num_perm) == _optimal_param(float(threshold), num_perm, 0.5, 0.5)


def test_a_threshold_that_leaves_one_band_is_refused_with_a_hint() -> None:
    with pytest.raises(AwctlError) as err:
        Deduper(near_threshold=0.99)
    assert "--near-dup-threshold" in (err.value.hint or "")


def test_near_duplicate_decisions_equal_datasketch_minhash_lsh() -> None:
    from datasketch import LeanMinHash, MinHashLSH

    rng = random.Random(5)
    words = [f"w{i}" for i in range(40)]
    base = [" ".join(rng.choice(words) for _ in range(120)) for _ in range(30)]
    texts = []
    for i in range(150):  # originals and edited copies, some close enough to be near-duplicates
        doc = base[i % 30].split()
        for _ in range(rng.choice([0, 1, 3, 30])):
            doc[rng.randrange(len(doc))] = rng.choice(words)
        texts.append(" ".join(doc))
    ours = Deduper(near_threshold=0.8, seed=7)
    theirs = MinHashLSH(threshold=0.8, num_perm=ours.num_perm)
    ids: list[str] = []
    near = 0
    for i, text in enumerate(texts):
        traj = _traj(f"t{i}", text)
        values = ours._minhash(traj)
        hits = theirs.query(LeanMinHash(seed=7, hashvalues=values, scheme="affine32"))
        expected = ("near", ids[min(hits)]) if hits else None
        got = ours.check(traj)
        if got is not None and got[0] == "exact":
            continue
        assert got == expected, i
        if hits:
            near += 1
        else:
            theirs.insert(len(ids), LeanMinHash(seed=7, hashvalues=values, scheme="affine32"))
            ids.append(traj.id)
    assert 0 < near < len(texts)


def test_shingle_hash_is_the_polynomial_hash_of_each_window() -> None:
    d = Deduper(near_threshold=0.9, shingle=5)
    text = "Hello   World\nthe quick brown fox"
    values = d._minhash(_traj("a", text))
    # Reference: Horner's rule per window, modulo 2**64, then the same mix, sample and permutations
    # (whose uint64 products wrap too, before the modulo, as datasketch's do).
    data = " ".join(f"cat notes.txt\n{text}".lower().split()).encode()
    mask = (1 << 64) - 1
    hashes = []
    for i in range(len(data) - 4):
        h = 0
        for byte in data[i : i + 5]:
            h = (h * 1_000_003 + byte) & mask
        h ^= h >> 31
        h = (h * 0xBF58476D1CE4E5B9) & mask
        h ^= h >> 29
        hashes.append(h)
    sampled = sorted({h >> 32 for h in hashes if h & 3 == 0} or {hashes[0] >> 32})
    a, b = (p.astype(object) for p in d._perms)
    expected = [
        min((((int(x) * ai + bi) & mask) % ((1 << 61) - 1)) & 0xFFFFFFFF for x in sampled)
        for ai, bi in zip(a, b, strict=True)
    ]
    assert [int(v) for v in values] == expected
