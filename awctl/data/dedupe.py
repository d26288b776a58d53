"""Trajectory-level deduplication: exact (content hash) and near-duplicate (MinHash LSH, datasketch).

The first trajectory seen wins; later copies are reported with the id of the one they duplicate.
Memory grows with the number of distinct trajectories (one 16-byte digest each, plus the LSH bands for
near-dedupe), which is the only part of prep that is not flat; ``--shard i/n`` divides it by n.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from awctl.trajectory import Trajectory

_MERSENNE = (1 << 61) - 1
_MAX32 = (1 << 32) - 1


def content_text(traj: Trajectory) -> str:
    """The text that decides identity: domain, system prompt and every turn (ids and metadata ignored)."""
    parts = [traj.domain, traj.system.render()]
    for t in traj.turns:
        parts += [t.action, t.observation, t.reasoning or ""]
    return "\x1e".join(parts)


def content_digest(traj: Trajectory) -> bytes:
    return hashlib.blake2b(content_text(traj).encode(), digest_size=16).digest()


@dataclass
class Deduper:
    """Stateful dedupe over a stream. ``near_threshold`` is the estimated Jaccard similarity of character
    ``shingle``-grams over the turns above which a trajectory is a near-duplicate; ``None`` disables it."""

    near_threshold: float | None = 0.9
    num_perm: int = 64
    shingle: int = 16
    seed: int = 1
    _exact: dict[bytes, str] = field(default_factory=dict)
    _lsh: Any = None
    _ids: list[str] = field(default_factory=list)
    _perms: Any = None

    def __post_init__(self) -> None:
        if self.near_threshold is not None:
            import numpy as np
            from datasketch import MinHashLSH

            self._lsh = MinHashLSH(threshold=self.near_threshold, num_perm=self.num_perm)
            rng = np.random.RandomState(self.seed)
            # Affine permutations (a*h + b) mod p, as datasketch draws them, once for the whole run.
            self._perms = (
                rng.randint(1, _MERSENNE, size=self.num_perm, dtype=np.uint64),
                rng.randint(0, _MERSENNE, size=self.num_perm, dtype=np.uint64),
            )

    def check(self, traj: Trajectory, digest: bytes | None = None) -> tuple[str, str] | None:
        """``None`` when ``traj`` is new (and remember it), else ``(kind, id_of_original)``."""
        digest = digest or content_digest(traj)
        seen = self._exact.get(digest)
        if seen is not None:
            return "exact", seen
        if self._lsh is not None:
            mh = self._minhash(traj)
            hits = self._lsh.query(mh)
            if hits:
                return "near", self._ids[min(hits)]
            self._lsh.insert(len(self._ids), mh)
        self._exact[digest] = traj.id
        self._ids.append(traj.id)
        return None

    def _minhash(self, traj: Trajectory) -> Any:
        """MinHash of the turns' character ``shingle``-grams (lower-cased, whitespace collapsed), all in
        numpy: a polynomial rolling hash per window, a 64-bit mix, a consistent 1-in-4 sample of the
        shingles (same shingle, same decision, so Jaccard is preserved in expectation), then the
        permutations. No per-word Python loop: this runs once per trajectory on every record."""
        import numpy as np
        from datasketch import LeanMinHash

        text = " ".join(" ".join(f"{t.action}\n{t.observation}" for t in traj.turns).lower().split())
        data = np.frombuffer(text.encode(), dtype=np.uint8).astype(np.uint64)
        k = self.shingle
        if len(data) < k:
            data = np.concatenate([data, np.zeros(k - len(data), dtype=np.uint64)])
        n = len(data) - k + 1
        h = np.zeros(n, dtype=np.uint64)
        for j in range(k):  # uint64 arithmetic wraps: a hash modulo 2**64
            h = h * np.uint64(1_000_003) + data[j : j + n]
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
        sample = h[(h & np.uint64(3)) == 0]
        sh = np.unique((sample if len(sample) else h[:1]) >> np.uint64(32))
        a, b = self._perms
        values = (((np.outer(sh, a) + b) % np.uint64(_MERSENNE)) & np.uint64(_MAX32)).min(axis=0)
        # LeanMinHash: just the values (a full MinHash would draw its own permutations each time).
        return LeanMinHash(seed=self.seed, hashvalues=values, scheme="affine32")
