"""The centred sums of AVG / VAR / STDDEV move by at most their sensitivity, even far from 0.

``csum`` was ``sum(clip(x)) - mid * count``: with bounds far from 0 both terms round to
multiples of ``ulp(n * hi)`` and their difference was off by thousands where one person moves
it by ``half`` -- the noise, calibrated to ``half``, then hid nothing (and the mean was wrong).
It is now the exact sum of grid terms (veil.dp._exact_sum), within ``n h / 2`` of the real sum.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.dp._exact_sum import FRAME_DIGITS, SumGrid
from veil.dp.frame import PrivateFrame
from veil.dp.frame._compute import ColumnStats

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def _slack(bounds: tuple[float, float], n: int) -> float:
    """How far ``n`` centred grid terms may sum from the float64 terms: ``h / 2`` each, plus the
    float64 rounding of those terms and of their sum (relative 1e-12 here)."""
    grid = SumGrid.make(*bounds, centred=True, digits=FRAME_DIGITS)
    return n * grid.h / 2 + 1e-12 * n * (bounds[1] - bounds[0])


T = 2.0**52  # floats here are whole numbers: ulp(T) = 1, ulp(1000 T) = 1024


def _tables(lo: float, hi: float) -> list[np.ndarray]:
    """Tables of values in ``[lo, hi]``: all at the middle just below a power of two of rows
    (where ``ulp(n * mid)`` doubles), and random ones."""
    rng = np.random.default_rng(0)
    mid = lo + (hi - lo) // 2
    fixed = [np.full(n, mid) for n in (511, 1023)]
    random = [lo + rng.integers(0, int(hi - lo) + 1, n).astype(np.float64) for n in (999, 4000)]
    return fixed + random


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("bounds", [(T, T + 2), (T, T + 3), (-T - 4, -T)])
def test_one_added_value_moves_the_centred_sums_by_at_most_their_sensitivity(
    grouped, bounds
) -> None:
    lo, hi = bounds
    half = (hi - lo) / 2.0
    for x in _tables(lo, hi):
        n = x.size
        groups = np.zeros(n + 1, dtype=np.int64) if grouped else None
        for extra in (lo, hi, (lo + hi) / 2.0):
            d = ColumnStats(None if groups is None else groups[:n], 1, x)
            d2 = ColumnStats(groups, 1, np.append(x, extra))
            moved = abs(float(d2.centred_sum(bounds)[0] - d.centred_sum(bounds)[0]))
            assert moved <= half, (n, extra, moved)
            sq = abs(float(d2.centred_squares(bounds)[0] - d.centred_squares(bounds)[0]))
            assert sq <= half * half / 2.0, (n, extra, sq)


@pytest.mark.parametrize("grouped", [False, True])
def test_the_mean_of_values_far_from_zero_is_right(grouped) -> None:
    """1,000 values at the top of the bounds ``(2^52, 2^52 + 2)``: with almost no noise the
    mean is ``2^52 + 2`` (it was clipped from a centred sum of -1024 to ``2^52``)."""
    df = pd.DataFrame({"g": ["a"] * 1000, "x": [T + 2] * 1000})
    pf = PrivateFrame(df, accountant=False, bounds={"x": (T, T + 2)}, random_state=3)
    query = pf.groupby("g", keys=["a"]) if grouped else pf
    out = query.agg(m=("x", "mean"), v=("x", "var"), epsilon=1e4)
    assert float(out["m"].iloc[0]) == T + 2
    assert float(out["v"].iloc[0]) <= 0.1


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("bounds", [(0.0, 100.0), (-3.0, 7.0), (-1e-3, 1e-3), (10.0, 25.0)])
def test_bounds_near_zero_move_within_the_sensitivity(grouped, bounds) -> None:
    """Bounds within two widths of 0 (where ``sum - mid * count`` used to be taken, relying on
    its rounding being small): an added value moves the exact centred sum by at most ``half``,
    and the sum is within ``n h / 2`` of the float64 sum of the centred values."""
    lo, hi = bounds
    half = (hi - lo) / 2.0
    rng = np.random.default_rng(1)
    for n in (100, 5000, 200_000):
        x = rng.uniform(lo - half, hi + half, n)  # some values outside the bounds
        groups = np.zeros(n + 1, dtype=np.int64) if grouped else None
        for extra in (lo, hi, lo - 1.0, hi + 1.0):
            d = ColumnStats(None if groups is None else groups[:n], 1, x)
            d2 = ColumnStats(groups, 1, np.append(x, extra))
            moved = abs(float(d2.centred_sum(bounds)[0] - d.centred_sum(bounds)[0]))
            assert moved <= half, (n, extra, moved)
        terms = float(d._centred(bounds)[0][0])
        assert float(d.centred_sum(bounds)[0]) == pytest.approx(terms, abs=_slack(bounds, n))


@pytest.mark.parametrize("squares", [None, set()])
def test_the_centred_scan_tells_missing_values(squares) -> None:
    """Ungrouped, the exact centred scan also tells whether a value is missing, so the count
    needs no scan of its own; with ``squares`` empty no square is summed."""
    lo, hi = 1000.0, 1100.0
    x = np.random.default_rng(5).uniform(990.0, 1110.0, 3000)
    x[[7, 2999]] = np.nan
    for values in (x, x[~np.isnan(x)]):
        d = ColumnStats(None, 1, values, squares)
        y = np.clip(values[~np.isnan(values)], lo, hi) - (lo + hi) / 2.0
        slack = _slack((lo, hi), y.size)
        assert d.centred_sum((lo, hi))[0] == pytest.approx(y.sum(), rel=1e-12, abs=slack)
        assert d.count()[0] == y.size
        assert d.has_nan == (values.size != y.size)
        if squares is None:
            want = (y * y).sum() - 50.0 * 50.0 / 2.0 * y.size
            assert d.centred_squares((lo, hi))[0] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("squares", [None, set(), {(1000.0, 1100.0)}])
def test_grouped_centred_sums_square_only_the_bounds_asked_for(squares) -> None:
    """Grouped, the centred values are summed per group whatever ``squares`` holds; their
    squares are summed only for the bounds a VAR/STDDEV needs (NaN otherwise, as ungrouped)."""
    lo, hi = 1000.0, 1100.0
    rng = np.random.default_rng(6)
    x = rng.uniform(990.0, 1110.0, 4000)
    x[[3, 3999]] = np.nan
    g = rng.integers(0, 3, x.size)
    d = ColumnStats(g, 3, x, squares)
    ok = ~np.isnan(x)
    y = np.clip(x[ok], lo, hi) - (lo + hi) / 2.0
    want1 = np.bincount(g[ok], weights=y, minlength=3)
    np.testing.assert_allclose(
        d.centred_sum((lo, hi)), want1, rtol=1e-12, atol=_slack((lo, hi), ok.sum())
    )
    got2 = d.centred_squares((lo, hi))
    if squares is None or (lo, hi) in squares:
        want2 = np.bincount(g[ok], weights=y * y, minlength=3) - 50.0**2 / 2 * d.count()
        np.testing.assert_allclose(got2, want2, rtol=1e-9)
    else:
        assert np.isnan(got2).all()
