"""Trajectory-level deduplication: exact (content hash) and near-duplicate (MinHash LSH).

Near-duplicates use datasketch's scheme (affine permutations drawn like its ``MinHash``, banding with
the parameters its ``MinHashLSH`` would choose; ``tests/test_data_dedupe.py`` checks both against
datasketch) computed in numpy, without importing datasketch: its import pulls in scipy, which alone
cost prep more time than deduplicating a few thousand trajectories.

The first trajectory seen wins; later copies are reported with the id of the one they duplicate.
Memory grows with the number of distinct trajectories (one 16-byte digest each, plus the LSH bands for
near-dedupe), which is the only part of prep that is not flat; ``--shard i/n`` divides it by n.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from awctl.errors import AwctlError
from awctl.trajectory import Trajectory

_MERSENNE = (1 << 61) - 1
_MAX32 = (1 << 32) - 1
_SHINGLE_BASE = 1_000_003


def content_text(traj: Trajectory) -> str:
    """The text that decides identity: domain, system prompt and every turn (ids and metadata ignored)."""
    parts = [traj.domain, traj.system.render()]
    for t in traj.turns:
        parts += [t.action, t.observation, t.reasoning or ""]
    return "\x1e".join(parts)


def content_digest(traj: Trajectory) -> bytes:
    return hashlib.blake2b(content_text(traj).encode(), digest_size=16).digest()


def lsh_params(threshold: float, num_perm: int) -> tuple[int, int]:
    """``(bands, rows)`` minimising the equal-weighted sum of false-positive and false-negative
    probability mass, searched over ``bands * rows <= num_perm`` in the order datasketch's
    ``MinHashLSH`` searches them (bands, then rows, ascending; the first minimum wins), so both pick the
    same banding. The integrands are polynomials of degree ``bands * rows <= num_perm``, which
    Gauss-Legendre quadrature with ``num_perm`` nodes integrates exactly: no scipy needed."""
    import numpy as np

    pairs = [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)]
    bands = np.array([b for b, _ in pairs], dtype=np.float64)[:, None]
    rows = np.array([r for _, r in pairs], dtype=np.float64)[:, None]
    nodes, weights = np.polynomial.legendre.leggauss(num_perm)

    def collide(lo: float, hi: float) -> tuple[Any, Any]:
        s = (hi - lo) / 2 * nodes + (hi + lo) / 2  # nodes mapped from [-1, 1] to [lo, hi]
        return 1 - (1 - s**rows) ** bands, (hi - lo) / 2 * weights

    p_low, w_low = collide(0.0, threshold)
    p_high, w_high = collide(threshold, 1.0)
    false_pos = (p_low * w_low).sum(axis=1)
    false_neg = ((1 - p_high) * w_high).sum(axis=1)
    return pairs[int(np.argmin(0.5 * false_pos + 0.5 * false_neg))]


class _BandIndex:
    """MinHash LSH banding: a trajectory is a candidate near-duplicate of an earlier one when all ``rows``
    values of any of the ``bands`` bands are equal (the scheme of datasketch's ``MinHashLSH``). Only the
    first id per band value is kept: ``Deduper`` wants the earliest original, and the first id stored
    for a bucket is its smallest."""

    def __init__(self, threshold: float, num_perm: int) -> None:
        self.bands, self.rows = lsh_params(threshold, num_perm)
        if self.bands < 2:
            raise AwctlError(
                f"near-duplicate threshold {threshold} is too high for {num_perm} MinHash permutations "
                "(it leaves a single LSH band)",
                hint="use a lower --near-dup (up to 0.96 with 64 permutations), or --near-dup 0 to turn it off",
            )
        self._buckets: list[dict[bytes, int]] = [{} for _ in range(self.bands)]

    def _keys(self, values: Any) -> list[bytes]:
        r = self.rows
        return [values[i * r : (i + 1) * r].tobytes() for i in range(self.bands)]

    def first_match(self, values: Any) -> tuple[int | None, list[bytes]]:
        """Smallest id sharing a band with ``values`` (``None`` if none), and the band keys for :meth:`add`."""
        keys = self._keys(values)
        hits = [
            h for bucket, key in zip(self._buckets, keys, strict=True) if (h := bucket.get(key)) is not None
        ]
        return (min(hits) if hits else None), keys

    def add(self, ident: int, keys: list[bytes]) -> None:
        for bucket, key in zip(self._buckets, keys, strict=True):
            bucket.setdefault(key, ident)


@dataclass
class Deduper:
    """Stateful dedupe over a stream. ``near_threshold`` is the estimated Jaccard similarity of character
    ``shingle``-grams over the turns above which a trajectory is a near-duplicate; ``None`` disables it."""

    near_threshold: float | None = 0.9
    num_perm: int = 64
    shingle: int = 16
    seed: int = 1
    _exact: dict[bytes, str] = field(default_factory=dict)
    _lsh: _BandIndex | None = None
    _ids: list[str] = field(default_factory=list)
    _perms: Any = None
    _powers: Any = None

    def __post_init__(self) -> None:
        if self.near_threshold is not None:
            import numpy as np

            self._lsh = _BandIndex(self.near_threshold, self.num_perm)
            rng = np.random.RandomState(self.seed)
            # Affine permutations (a*h + b) mod p, as datasketch draws them, once for the whole run.
            self._perms = (
                rng.randint(1, _MERSENNE, size=self.num_perm, dtype=np.uint64),
                rng.randint(0, _MERSENNE, size=self.num_perm, dtype=np.uint64),
            )
            # _SHINGLE_BASE ** (k-1-j): the polynomial hash of a window as one dot product.
            self._powers = np.array(
                [pow(_SHINGLE_BASE, self.shingle - 1 - j, 1 << 64) for j in range(self.shingle)],
                dtype=np.uint64,
            )

    def check(self, traj: Trajectory, digest: bytes | None = None) -> tuple[str, str] | None:
        """``None`` when ``traj`` is new (and remember it), else ``(kind, id_of_original)``."""
        digest = digest or content_digest(traj)
        seen = self._exact.get(digest)
        if seen is not None:
            return "exact", seen
        if self._lsh is not None:
            original, keys = self._lsh.first_match(self._minhash(traj))
            if original is not None:
                return "near", self._ids[original]
            self._lsh.add(len(self._ids), keys)
        self._exact[digest] = traj.id
        self._ids.append(traj.id)
        return None

    def _minhash(self, traj: Trajectory) -> Any:
        """MinHash values (``num_perm`` uint64) of the turns' character ``shingle``-grams (lower-cased,
        whitespace collapsed), all in numpy: a polynomial hash per window (one dot product over a sliding
        window view, modulo 2**64), a 64-bit mix, a consistent 1-in-4 sample of the shingles (same
        shingle, same decision, so Jaccard is preserved in expectation), then the permutations. No
        per-word Python loop: this runs once per trajectory on every record."""
        import numpy as np

        text = " ".join(" ".join(f"{t.action}\n{t.observation}" for t in traj.turns).lower().split())
        data = np.frombuffer(text.encode(), dtype=np.uint8).astype(np.uint64)
        k = self.shingle
        if len(data) < k:
            data = np.concatenate([data, np.zeros(k - len(data), dtype=np.uint64)])
        # uint64 products and sums wrap: this is sum_j data[i+j] * base**(k-1-j) mod 2**64.
        h = np.lib.stride_tricks.sliding_window_view(data, k) @ self._powers
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
        sample = h[(h & np.uint64(3)) == 0]
        # No np.unique: a repeated shingle cannot change a minimum.
        sh = (sample if len(sample) else h[:1]) >> np.uint64(32)
        a, b = self._perms
        return (((sh[:, None] * a + b) % np.uint64(_MERSENNE)) & np.uint64(_MAX32)).min(axis=0)
