"""The shared thread pool and the block-wise scans (min/max/sum, clamped sums) built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil import _parallel
from veil._parallel import (
    BLOCK,
    PARALLEL_MIN_SIZE,
    clamped_sum,
    map_parts,
    scan_moments,
    shifted_clamped_sum,
)

SIZES = [0, 1, 7, BLOCK - 1, BLOCK + 3, PARALLEL_MIN_SIZE + 12_345]


def test_thread_pool_is_made_again_after_fork(monkeypatch):
    """A pool inherited through fork has no threads: a process with another pid gets its own."""
    pool = _parallel.thread_pool()
    if pool is None:
        pytest.skip("one CPU: no pool")
    monkeypatch.setattr(_parallel, "_pool", (-1, pool))  # as if made by the parent process
    fresh = _parallel.thread_pool()
    assert fresh is not pool and _parallel.thread_pool() is fresh
    assert fresh.submit(lambda: 7).result(timeout=10) == 7
    fresh.shutdown()  # monkeypatch puts the process's own pool back at teardown


@pytest.mark.parametrize("n", [10, PARALLEL_MIN_SIZE + 5 * BLOCK + 17])
def test_map_parts_covers_the_array_in_order_at_block_boundaries(n):
    x = np.arange(n, dtype=np.float64)
    parts = map_parts(lambda p: (p[0], p[-1], p.size), x)
    assert sum(p[2] for p in parts) == n
    assert parts[0][0] == 0 and parts[-1][1] == n - 1
    for a, b in zip(parts, parts[1:]):
        assert b[0] == a[1] + 1  # contiguous, in order
        assert b[0] % BLOCK == 0  # cut at a block boundary
    if n >= PARALLEL_MIN_SIZE and _parallel.thread_pool() is not None:
        assert len(parts) >= 2


@pytest.mark.parametrize("n", SIZES)
def test_scan_moments_matches_numpy(n):
    x = np.random.default_rng(n).normal(3.0, 10.0, n)
    mn, mx, s, sq = scan_moments(x, squares=True)
    if n == 0:
        assert (mn, mx, s, sq) == (math.inf, -math.inf, 0.0, 0.0)
        return
    assert mn == x.min() and mx == x.max()
    assert s == pytest.approx(math.fsum(x), rel=1e-12, abs=1e-9)
    assert sq == pytest.approx(math.fsum(x * x), rel=1e-12)
    assert scan_moments(x)[3] == 0.0  # squares only on request


@pytest.mark.parametrize("n", [5, PARALLEL_MIN_SIZE + 99])
def test_scan_moments_reports_nan_anywhere(n):
    for where in (0, n // 2, n - 1):
        x = np.ones(n)
        x[where] = np.nan
        mn, mx, s, _ = scan_moments(x)
        assert math.isnan(mn) and math.isnan(mx) and math.isnan(s)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("centre", [None, 1.5])
def test_clamped_sum_matches_numpy(n, centre):
    x = np.random.default_rng(n + 1).uniform(-5.0, 8.0, n)
    if n > BLOCK:  # one block entirely inside the bounds (the unclamped fast path)
        x[:BLOCK] = np.random.default_rng(2).uniform(0.0, 3.0, BLOCK)
    lo, hi = 0.0, 3.0
    y = np.clip(x, lo, hi)
    want = math.fsum(y if centre is None else (y - centre) ** 2)
    assert clamped_sum(x, lo, hi, centre) == pytest.approx(want, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("n", SIZES)
def test_shifted_scan_sums_the_terms_of_shifted_clamped_sum(n):
    # values inside bounds far from 0: the scan's shifted sum stands in for the second pass,
    # so it must be that sum bit for bit (same terms, blocks and order), not merely close
    lo, hi = 2.0**40, 2.0**40 + 7.0
    x = np.random.default_rng(n + 3).uniform(lo, hi, n)
    c = (lo + hi) / 2.0
    mn, mx, s, _ = scan_moments(x, shift=c)
    assert s == shifted_clamped_sum(x, lo, hi, c)
    assert (mn, mx) == ((x.min(), x.max()) if n else (math.inf, -math.inf))
    assert s == pytest.approx(math.fsum(x - c), abs=1e-6 * n)


def test_clamped_sum_propagates_nan_from_any_block():
    n = PARALLEL_MIN_SIZE + 3 * BLOCK
    for where in (3, n - 2):
        x = np.full(n, 1.0)  # every block is inside [0, 2]: NaN must defeat the fast path
        x[where] = np.nan
        assert math.isnan(clamped_sum(x, 0.0, 2.0))
        assert math.isnan(clamped_sum(x, 0.0, 2.0, 1.0))


def test_column_stats_read_nan_and_in_bounds_sums_from_one_scan():
    """PrivateFrame's ungrouped statistics: +inf with -inf is not 'missing', NaN is; the
    in-bounds fast path and the clamped path give the clamped sum of the non-missing values."""
    from veil.dp.frame._compute import ColumnStats

    n = PARALLEL_MIN_SIZE + 7
    x = np.random.default_rng(3).uniform(1.0, 2.0, n)
    inside = ColumnStats(None, 1, x)
    assert not inside.has_nan
    assert inside.total((0.0, 3.0))[0] == pytest.approx(math.fsum(x), rel=1e-12)
    assert inside.total((1.2, 1.8))[0] == pytest.approx(math.fsum(np.clip(x, 1.2, 1.8)), rel=1e-12)
    infs = x.copy()
    infs[5], infs[-5] = np.inf, -np.inf  # the raw sum is NaN, yet nothing is missing
    s = ColumnStats(None, 1, infs)
    assert not s.has_nan
    assert s.count()[0] == n
    assert s.total((0.0, 3.0))[0] == pytest.approx(math.fsum(np.clip(infs, 0.0, 3.0)), rel=1e-12)
    gaps = x.copy()
    gaps[[0, n // 2, n - 1]] = np.nan
    g = ColumnStats(None, 1, gaps)
    assert g.has_nan and g.count()[0] == n - 3
    want = math.fsum(np.clip(gaps[~np.isnan(gaps)], 0.0, 1.5))
    assert g.total((0.0, 1.5))[0] == pytest.approx(want, rel=1e-12)
