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
from collections.abc import Sequence
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
    nodes, weights = _gauss_legendre(num_perm)

    def collide(lo: float, hi: float) -> tuple[Any, Any]:
        s = (hi - lo) / 2 * nodes + (hi + lo) / 2  # nodes mapped from [-1, 1] to [lo, hi]
        return 1 - (1 - s**rows) ** bands, (hi - lo) / 2 * weights

    p_low, w_low = collide(0.0, threshold)
    p_high, w_high = collide(threshold, 1.0)
    false_pos = (p_low * w_low).sum(axis=1)
    false_neg = ((1 - p_high) * w_high).sum(axis=1)
    return pairs[int(np.argmin(0.5 * false_pos + 0.5 * false_neg))]


def _gauss_legendre(n: int) -> tuple[Any, Any]:
    """Nodes (ascending) and weights of ``n``-point Gauss-Legendre quadrature on [-1, 1]: Newton's
    method on the Legendre polynomial P_n from the classic first guesses, all nodes at once.
    ``numpy.polynomial.legendre.leggauss`` would give the same to rounding, but through LAPACK, whose
    OpenBLAS threads then spin on the other cores for about a tenth of a second: more CPU time than
    deduplicating a few thousand trajectories."""
    import numpy as np

    def legendre(x: Any) -> tuple[Any, Any]:
        """P_n(x) and P_n'(x), by the three-term recurrence."""
        before, p = np.ones_like(x), x
        for j in range(2, n + 1):
            before, p = p, ((2 * j - 1) * x * p - (j - 1) * before) / j
        return p, n * (x * p - before) / (x * x - 1)

    x = np.cos(np.pi * (np.arange(n, 0, -1) - 0.25) / (n + 0.5))
    for _ in range(100):
        p, dp = legendre(x)
        step = p / dp
        x = x - step
        if np.abs(step).max() <= 1e-16:
            break
    _, dp = legendre(x)
    weights = 2 / ((1 - x * x) * dp * dp)
    # Symmetric about 0 and summing to 2, exactly as they must (and as numpy makes them).
    x = (x - x[::-1]) / 2
    weights = (weights + weights[::-1]) / 2
    return x, weights * (2.0 / weights.sum())


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
                hint="use a lower --near-dup-threshold (up to 0.96 with 64 permutations), or "
                "--near-dup-threshold none to turn it off",
            )
        self._buckets: list[dict[bytes, int]] = [{} for _ in range(self.bands)]

    def _keys(self, values: Any) -> list[bytes]:
        raw, width = values.tobytes(), self.rows * values.itemsize
        return [raw[i * width : (i + 1) * width] for i in range(self.bands)]

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
    _perm_columns: Any = None
    _powers: Any = None
    _inverse_powers: Any = None

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
            # As columns: each permutation's values over a document's shingles are then contiguous.
            self._perm_columns = (self._perms[0][:, None], self._perms[1][:, None])
            self._grow_powers(4096)

    def _grow_powers(self, n: int) -> None:
        """``_SHINGLE_BASE ** m`` and its inverse's powers modulo 2**64 for ``m < n`` (at least)."""
        import numpy as np

        size = 4096
        while size < n:
            size *= 2
        if self._powers is not None and len(self._powers) >= size:
            return
        # The base is odd, so it has an inverse modulo 2**64; uint64 products wrap modulo 2**64.
        inverse = pow(_SHINGLE_BASE, -1, 1 << 64)
        powers = np.empty(size, dtype=np.uint64)
        inverse_powers = np.empty(size, dtype=np.uint64)
        powers[0] = inverse_powers[0] = 1
        step, inverse_step, filled = _SHINGLE_BASE, inverse, 1
        while filled < size:  # doubling: [0, filled) times base**filled gives [filled, 2*filled)
            m = min(filled, size - filled)
            np.multiply(powers[:m], np.uint64(step), out=powers[filled : filled + m])
            np.multiply(inverse_powers[:m], np.uint64(inverse_step), out=inverse_powers[filled : filled + m])
            step, inverse_step = step * step % (1 << 64), inverse_step * inverse_step % (1 << 64)
            filled += m
        self._powers, self._inverse_powers = powers, inverse_powers

    def check(
        self, traj: Trajectory, digest: bytes | None = None, minhash: Any = None
    ) -> tuple[str, str] | None:
        """``None`` when ``traj`` is new (and remember it), else ``(kind, id_of_original)``. ``minhash``:
        its :meth:`minhashes` values when already computed (with other trajectories')."""
        digest = digest or content_digest(traj)
        seen = self._exact.get(digest)
        if seen is not None:
            return "exact", seen
        if self._lsh is not None:
            values = self._minhash(traj) if minhash is None else minhash
            original, keys = self._lsh.first_match(values)
            if original is not None:
                return "near", self._ids[original]
            self._lsh.add(len(self._ids), keys)
        self._exact[digest] = traj.id
        self._ids.append(traj.id)
        return None

    def _minhash(self, traj: Trajectory) -> Any:
        return self.minhashes([traj])[0]

    def minhashes(self, trajs: Sequence[Trajectory]) -> list[Any]:
        """MinHash values (``num_perm`` uint64) of each trajectory's character ``shingle``-grams of the
        turns (lower-cased, whitespace collapsed), all in numpy and for all trajectories at once: a
        polynomial hash per window (modulo 2**64), a 64-bit mix, a consistent 1-in-4 sample of the
        shingles (same shingle, same decision, so Jaccard is preserved in expectation), then the
        permutations. No per-word Python loop, and numpy's cost per call is paid once per batch."""
        import numpy as np

        if not trajs:
            return []
        k = self.shingle
        texts = [
            " ".join(" ".join(f"{t.action}\n{t.observation}" for t in traj.turns).lower().split()).encode()
            for traj in trajs
        ]
        # The texts end to end, each padded with zero bytes to at least one window.
        sizes = np.array([max(len(text), k) for text in texts], dtype=np.int64)
        data = np.frombuffer(b"".join(text.ljust(k, b"\0") for text in texts), dtype=np.uint8)
        self._grow_powers(int(sizes.max()))
        # With i a window's start within its text, its hash is sum_j data[i+j] * base**(k-1-j) =
        # base**(i+k-1) * sum_j data[i+j] * base**-(i+j) (mod 2**64): a difference of prefix sums.
        local = np.arange(len(data)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        prefix = np.empty(len(data) + 1, dtype=np.uint64)
        prefix[0] = 0
        np.cumsum(data * self._inverse_powers[local], out=prefix[1:])
        # Only windows within one text.
        windows = sizes - k + 1
        window_doc = np.repeat(np.arange(len(trajs)), windows)
        first_window = np.cumsum(windows) - windows
        start = np.arange(len(window_doc)) + np.repeat(np.cumsum(sizes) - sizes - first_window, windows)
        h = prefix[start + k] - prefix[start]
        h *= self._powers[local[start] + k - 1]
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
        sampled = (h & np.uint64(3)) == 0
        # A text without a sampled shingle keeps its first one.
        counts = np.bincount(window_doc[sampled], minlength=len(trajs))
        sampled[first_window[counts == 0]] = True
        # Each text's distinct shingles (a repeated one cannot change a minimum, only cost time):
        # (text, shingle) codes sorted, repeats dropped.
        codes = np.unique(
            (window_doc[sampled].astype(np.uint64) << np.uint64(32)) | (h[sampled] >> np.uint64(32))
        )
        sh = codes & np.uint64(_MAX32)
        counts = np.bincount((codes >> np.uint64(32)).astype(np.int64), minlength=len(trajs))
        starts = np.cumsum(counts) - counts
        out = np.empty((len(trajs), self.num_perm), dtype=np.uint64)
        # A few hundred shingles at a time (see _SHINGLES_AT_ONCE).
        doc = 0
        while doc < len(trajs):
            end = int(np.searchsorted(starts, starts[doc] + _SHINGLES_AT_ONCE, side="right"))
            end = max(end, doc + 1)
            stop = int(starts[end]) if end < len(trajs) else len(sh)
            out[doc:end] = _permuted_minima(
                sh[starts[doc] : stop], starts[doc:end] - starts[doc], *self._perm_columns
            ).T
            doc = end
        return list(out)


# Shingles whose permutations are computed together: 64 x 256 uint64 (128 KiB) arrays stay in cache.
_SHINGLES_AT_ONCE = 256


def _permuted_minima(sh: Any, starts: Any, a: Any, b: Any) -> Any:
    """Per permutation (``a``, ``b``: columns) and per segment of ``sh`` (from each of ``starts``),
    ``min over its shingles of ((a*sh + b) mod 2**64 mod p) & (2**32 - 1)``. For x < 2**64, x mod p
    (p = 2**61 - 1) is (x & p) + (x >> 61) unless that reaches p, and its low 32 bits are those of
    x + (x >> 61): no division. Where the sum may reach p (x & p >= p - 7, which is rare) the exact
    remainder is taken instead."""
    import numpy as np

    x = a * sh
    x += b
    low = x >> np.uint64(61)
    low += x
    low &= np.uint64(_MAX32)
    x &= np.uint64(_MERSENNE)
    if (x >= np.uint64(_MERSENNE - 7)).any():
        low = ((a * sh + b) % np.uint64(_MERSENNE)) & np.uint64(_MAX32)
    return np.minimum.reduceat(low, starts, axis=1)
