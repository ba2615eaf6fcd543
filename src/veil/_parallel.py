"""A small persistent thread pool and block-wise array scans that use it.

numpy's reductions and pyarrow's hashing release the GIL, so a large one-dimensional scan split
into contiguous parts runs on several cores: the calling thread takes the first part, the
pool's workers the others.  Used by the k-anonymity encoder (text columns hashed on threads)
and by the DP statistics (min/max scans of large arrays; the exact sums of
:mod:`veil.dp._exact_sum`).

The pool has one worker fewer than the CPUs (at most 3 workers) and is made again in a child
process after ``fork`` (an inherited pool has no threads).

Example
-------
>>> import numpy as np
>>> x = np.arange(10.0)
>>> scan_moments(x)
(0.0, 9.0, 45.0, 0.0)
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
    "map_spans",
    "scan_moments",
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
    return map_spans(lambda a, b: fn(x[a:b]), x.size)


def map_spans(fn: Callable[[int, int], T], n: int) -> list[T]:
    """``fn(a, b)`` of each contiguous span ``[a, b)`` of ``range(n)``, as :func:`map_parts`
    cuts them (for work that writes into arrays of its own at the same positions)."""
    pool = thread_pool() if n >= PARALLEL_MIN_SIZE else None
    if pool is None:
        return [fn(0, n)]
    n_parts = _workers() + 1
    blocks = -(-n // BLOCK)
    cuts = [min(n, (blocks * i // n_parts) * BLOCK) for i in range(n_parts + 1)]
    futures = [pool.submit(fn, a, b) for a, b in zip(cuts[1:-1], cuts[2:])]
    first = fn(cuts[0], cuts[1])
    return [first] + [f.result() for f in futures]


def _moments(x: np.ndarray, squares: bool) -> tuple[float, float, float, float]:
    mn, mx, s, sq = math.inf, -math.inf, 0.0, 0.0
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, which the caller reads
        for i in range(0, x.size, BLOCK):
            b = x[i : i + BLOCK]
            mn = min(mn, float(np.minimum.reduce(b)))
            mx = max(mx, float(np.maximum.reduce(b)))
            s += float(np.add.reduce(b))
            if squares:
                sq += float(np.dot(b, b))
    return mn, mx, s, sq


def scan_moments(x: np.ndarray, *, squares: bool = False) -> tuple[float, float, float, float]:
    """``(min, max, sum, sum of squares)`` of a 1-d float array in one traversal.

    Block by block (the reductions of a block run from cache), on several threads when ``x``
    is large.  Any NaN makes min, max and sum NaN.  The sum of squares is 0 unless ``squares``;
    an empty array gives ``(inf, -inf, 0, 0)``.  The sums are plain float64 sums (rounded): DP
    sums and means use the exact sums of :mod:`veil.dp._exact_sum` instead.
    """
    parts = map_parts(lambda p: _moments(p, squares), x)
    s = sum(p[2] for p in parts)
    if math.isnan(s):  # a NaN (or +inf with -inf): min and max say so too
        return math.nan, math.nan, s, sum(p[3] for p in parts)
    return min(p[0] for p in parts), max(p[1] for p in parts), s, sum(p[3] for p in parts)


def far_from_zero(lo: float, hi: float) -> bool:
    """Bounds away from 0 (``max(|lo|, |hi|) > 2 (hi - lo)``): there DP sums add the values
    shifted by the middle of the bounds (their grid is then relative to the width, not to the
    magnitude), and ``E[x^2] - E[x]^2`` would cancel catastrophically (docs/dp.md).

    >>> far_from_zero(0.0, 100.0), far_from_zero(1000.0, 1100.0)
    (False, True)
    """
    return max(abs(lo), abs(hi)) > 2.0 * (hi - lo)
