"""A small persistent thread pool and block-wise array scans that use it.

numpy's reductions and pyarrow's hashing release the GIL, so a large one-dimensional scan split
into contiguous parts runs on several cores: the calling thread takes the first part, the
pool's workers the others.  Used by the k-anonymity encoder (text columns hashed on threads)
and by the DP statistics (clamped sums and min/max scans of large arrays).

The pool has one worker fewer than the CPUs (at most 3 workers) and is made again in a child
process after ``fork`` (an inherited pool has no threads).

Example
-------
>>> import numpy as np
>>> x = np.arange(10.0)
>>> scan_moments(x)
(0.0, 9.0, 45.0, 0.0)
>>> clamped_sum(x, 2.0, 5.0)
38.0
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

__all__ = [
    "thread_pool",
    "map_parts",
    "scan_moments",
    "clamped_sum",
    "shifted_clamped_sum",
    "far_from_zero",
    "PARALLEL_MIN_SIZE",
]

T = TypeVar("T")

BLOCK = 1 << 16  # float64 values per block (512 KiB): the block's reductions run from L2
PARALLEL_MIN_SIZE = 1 << 20  # below this, handing parts to threads costs more than it saves

_pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid that made it, pool)
_pool_lock = threading.Lock()


def _workers() -> int:
    """Pool size: one worker fewer than the CPUs (the calling thread takes a part), at most 3."""
    return min(os.cpu_count() or 1, 4) - 1


def thread_pool() -> ThreadPoolExecutor | None:
    """The process's small persistent pool (one worker fewer than the CPUs); None on 1 CPU."""
    global _pool
    workers = _workers()
    if workers < 1:
        return None
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(workers, thread_name_prefix="veil"))
        return _pool[1]


def map_parts(fn: Callable[[np.ndarray], T], x: np.ndarray) -> list[T]:
    """``fn`` of each contiguous part of the 1-d array ``x``, parts on the pool when large.

    The parts are cut at multiples of :data:`BLOCK` (so a block-wise ``fn`` sees the same blocks
    whatever the number of parts) and returned in order.  One part when ``x`` is smaller than
    :data:`PARALLEL_MIN_SIZE` or there is no pool.
    """
    pool = thread_pool() if x.size >= PARALLEL_MIN_SIZE else None
    if pool is None:
        return [fn(x)]
    n_parts = _workers() + 1
    blocks = -(-x.size // BLOCK)
    cuts = [min(x.size, (blocks * i // n_parts) * BLOCK) for i in range(n_parts + 1)]
    futures = [pool.submit(fn, x[a:b]) for a, b in zip(cuts[1:-1], cuts[2:])]
    first = fn(x[cuts[0] : cuts[1]])
    return [first] + [f.result() for f in futures]


def _moments(x: np.ndarray, squares: bool, shift: float) -> tuple[float, float, float, float]:
    mn, mx, s, sq = math.inf, -math.inf, 0.0, 0.0
    buf = np.empty(min(BLOCK, x.size)) if shift else None
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, which the caller reads
        for i in range(0, x.size, BLOCK):
            b = x[i : i + BLOCK]
            mn = min(mn, float(np.minimum.reduce(b)))
            mx = max(mx, float(np.maximum.reduce(b)))
            if buf is None:
                s += float(np.add.reduce(b))
            else:  # the terms b - shift, as shifted_clamped_sum forms them
                c = buf[: b.size]
                np.subtract(b, shift, out=c)
                s += float(np.add.reduce(c))
            if squares:
                sq += float(np.dot(b, b))
    return mn, mx, s, sq


def scan_moments(
    x: np.ndarray, *, squares: bool = False, shift: float = 0.0
) -> tuple[float, float, float, float]:
    """``(min, max, sum, sum of squares)`` of a 1-d float array in one traversal.

    Block by block (the reductions of a block run from cache), on several threads when ``x``
    is large.  Any NaN makes min, max and sum NaN.  The sum of squares is 0 unless ``squares``;
    an empty array gives ``(inf, -inf, 0, 0)``.  With ``shift`` the sum is ``sum(x - shift)``,
    each term formed before it is added: for ``x`` inside ``[lo, hi]`` it equals
    :func:`shifted_clamped_sum` bit for bit (same terms, same blocks and order), one pass
    fewer.
    """
    parts = map_parts(lambda p: _moments(p, squares, shift), x)
    s = sum(p[2] for p in parts)
    if math.isnan(s):  # a NaN (or +inf with -inf): min and max say so too
        return math.nan, math.nan, s, sum(p[3] for p in parts)
    return min(p[0] for p in parts), max(p[1] for p in parts), s, sum(p[3] for p in parts)


def _clamped(x: np.ndarray, lo: np.float64, hi: np.float64, centre: float | None) -> float:
    buf: np.ndarray | None = None
    total = 0.0
    for i in range(0, x.size, BLOCK):
        b = x[i : i + BLOCK]
        if centre is None and lo <= np.minimum.reduce(b) and np.maximum.reduce(b) <= hi:
            total += float(np.add.reduce(b))  # nothing to clamp (a NaN fails the test)
            continue
        if buf is None:
            buf = np.empty(min(BLOCK, x.size))
        c = buf[: b.size]
        np.minimum(b, hi, out=c)  # minimum/maximum propagate NaN (np.clip was slower)
        np.maximum(c, lo, out=c)
        if centre is not None:
            c -= centre
            c *= c
        total += float(np.add.reduce(c))
    return total


def clamped_sum(x: np.ndarray, lo: float, hi: float, centre: float | None = None) -> float:
    """``sum(clip(x, lo, hi))``, or ``sum((clip(x, lo, hi) - centre)^2)``; NaN propagates.

    Block by block: a block already inside ``[lo, hi]`` is summed without being clamped (its
    min and max are checked first); on several threads when ``x`` is large.
    """
    lo64, hi64 = np.float64(lo), np.float64(hi)
    return sum(map_parts(lambda p: _clamped(p, lo64, hi64, centre), x))


def _shifted(x: np.ndarray, lo: np.float64, hi: np.float64, shift: np.float64) -> float:
    buf = np.empty(min(BLOCK, x.size))
    total = 0.0
    for i in range(0, x.size, BLOCK):
        b = x[i : i + BLOCK]
        c = buf[: b.size]
        np.minimum(b, hi, out=c)
        np.maximum(c, lo, out=c)
        c -= shift
        total += float(np.add.reduce(c))
    return total


def far_from_zero(lo: float, hi: float) -> bool:
    """Bounds away from 0 (``max(|lo|, |hi|) > 2 (hi - lo)``), where sums of clipped values need
    :func:`shifted_clamped_sum`: a sum of ``n`` values in them rounds relative to
    ``n max(|lo|, |hi|)``, far beyond their width.  Within two widths of 0 that rounding is at
    most a few times the one relative to ``n (hi - lo)``, so ``sum(clip(x)) - n mid`` (and
    ``E[x^2] - E[x]^2``) may be used instead (docs/dp.md, known limitations).

    >>> far_from_zero(0.0, 100.0), far_from_zero(1000.0, 1100.0)
    (False, True)
    """
    return max(abs(lo), abs(hi)) > 2.0 * (hi - lo)


def shifted_clamped_sum(x: np.ndarray, lo: float, hi: float, shift: float) -> float:
    """``sum(clip(x, lo, hi) - shift)``, each term formed before it is added; NaN propagates.

    For bounds far from 0, ``sum(clip(x)) - n * shift`` would cancel catastrophically: both
    terms round to multiples of ``ulp(n * hi)``, and neighbouring inputs could then differ by
    far more than ``hi - lo``.  With ``shift`` inside ``[lo, hi]`` each term lies within the
    bounds' width of 0, so the rounding of the sum is relative to ``n (hi - lo)``, not to
    ``n max(|lo|, |hi|)``.  Block by block, on several threads when ``x`` is large.

    >>> x = np.full(1000, 2.0**52 + 2)
    >>> shifted_clamped_sum(x, 2.0**52, 2.0**52 + 2, 2.0**52 + 1)
    1000.0
    """
    lo64, hi64, s64 = np.float64(lo), np.float64(hi), np.float64(shift)
    return sum(map_parts(lambda p: _shifted(p, lo64, hi64, s64), x))
