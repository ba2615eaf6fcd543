"""The shared thread pool and the block-wise scans (min/max/sum) built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil import _parallel
from veil._parallel import (
    BLOCK,
    PARALLEL_MIN_SIZE,
    map_parts,
    map_spans,
    scan_moments,
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
def test_map_spans_cut_as_map_parts(n):
    """The spans cover ``range(n)`` in order, cut where map_parts cuts the array."""
    spans = map_spans(lambda a, b: (a, b), n)
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(s[1] == t[0] for s, t in zip(spans, spans[1:]))
    x = np.arange(n, dtype=np.float64)
    assert [p.size for p in map_parts(lambda p: p, x)] == [b - a for a, b in spans]


def test_column_stats_read_nan_and_in_bounds_sums_from_one_scan():
    """PrivateFrame's ungrouped statistics: +inf with -inf is not 'missing', NaN is; the
    in-bounds fast path and the clamped path give the clamped sum of the non-missing values."""
    from veil.dp._exact_sum import FRAME_DIGITS, SumGrid
    from veil.dp.frame._compute import ColumnStats

    def slack(bounds):  # the exact sums add terms rounded to the grid h: h / 2 each at most
        return n * SumGrid.make(*bounds, digits=FRAME_DIGITS).h / 2

    n = PARALLEL_MIN_SIZE + 7
    x = np.random.default_rng(3).uniform(1.0, 2.0, n)
    inside = ColumnStats(None, 1, x)
    assert not inside.has_nan
    assert inside.total((0.0, 3.0))[0] == pytest.approx(math.fsum(x), abs=slack((0.0, 3.0)))
    want = math.fsum(np.clip(x, 1.2, 1.8))
    assert inside.total((1.2, 1.8))[0] == pytest.approx(want, abs=slack((1.2, 1.8)))
    infs = x.copy()
    infs[5], infs[-5] = np.inf, -np.inf  # the raw sum is NaN, yet nothing is missing
    s = ColumnStats(None, 1, infs)
    assert not s.has_nan
    assert s.count()[0] == n
    want = math.fsum(np.clip(infs, 0.0, 3.0))
    assert s.total((0.0, 3.0))[0] == pytest.approx(want, abs=slack((0.0, 3.0)))
    gaps = x.copy()
    gaps[[0, n // 2, n - 1]] = np.nan
    g = ColumnStats(None, 1, gaps)
    assert g.has_nan and g.count()[0] == n - 3
    want = math.fsum(np.clip(gaps[~np.isnan(gaps)], 0.0, 1.5))
    assert g.total((0.0, 1.5))[0] == pytest.approx(want, abs=slack((0.0, 1.5)))
