"""Edge cases of the exact grid sums (:mod:`veil.dp._exact_sum`) found by a hostile review.

* Bounds narrower than the grid ``h`` with no multiple of ``h`` between them (``PrivateFrame``
  ``SUM`` with bounds ``(1000.00002, 1000.00004)``: ``h = 2^-14``): the clamp ``[A, B]`` was
  empty (``A > B``) and every term became ``A = 1000.0000610...``, above ``hi``, so one added row
  moved the sum by more than ``max(|lo|, |hi|)``, the sensitivity the noise covers.
* Centred bounds whose half-width rounds to 0 (``(0, 2^-1074)``) were refused as "too wide"
  after the frame had charged the budget (its ``AVG`` released before exact sums).
* ``C = 1.5 * 2^52 * h`` overflowed for the frame's coarser grid (24 digits) with bounds beyond
  ``2^994`` (the ``2^1016`` limit assumed 45 digits): every term became NaN.
* Arrays not of float64 (``float32``) were lifted in their own precision.
* Centred terms are clamped to ``+-w/2``; where the middle of the bounds rounds
  (``(2^53, 2^53 + 2)``: ``mid = 2^53``) a value at ``hi`` lost ``w/2`` to that clamp.
  ``symmetric=False`` clamps to the exact ``[lo - mid, hi - mid]`` instead (for replaced
  records, where ``B - A <= w`` is what the noise needs).

Tools bugs in ``veil.dp.tools._moments`` (fixed there): ``sum``/``mean`` now use that grid;
``nansum`` with bounds far from 0 dropped the public shift, and ``mean``'s pre-charge check of
its noise scale read ``(hi - lo) / n`` where the exact sum is noised at ``(hi - lo) / eps``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import veil.dp as dp
from veil.dp import BudgetAccountant
from veil.dp._exact_sum import FRAME_DIGITS, TOOLS_DIGITS, SumGrid, grid_sum, grid_terms
from veil.dp.frame import PrivateFrame
from veil.dp.frame._compute import ColumnStats
from veil.errors import NoiseScaleError

_NARROW = [
    (1000.00002, 1000.00004),
    (-1000.00004, -1000.00002),
    (1.0 + 2.0**-52, 1.0 + 2.0**-51),
    (-(1.0 + 2.0**-51), -(1.0 + 2.0**-52)),
    (2.0**900 * (1 + 2.0**-40), 2.0**900 * (1 + 2.0**-39)),
]
_BOUNDS = _NARROW + [
    (0.0, 1.0),
    (-3.0, -1.0),
    (0.1, 0.7),
    (5e-324, 1e-323),
    (-1e-310, 3e-310),
    (2.0**52, 2.0**52 + 2),
    (2.0**53, 2.0**53 + 2),
    (2.0**1015, 2.0**1016 * 0.999),
]
_VALUES = [0.0, -0.0, 5e-324, -5e-324, 1e-300, 1.0, -1.0, 1e300, -1e300, math.inf, -math.inf]


def _grids():
    for (lo, hi), centred, digits in itertools.product(
        _BOUNDS, (False, True), (TOOLS_DIGITS, FRAME_DIGITS)
    ):
        try:
            grid = SumGrid.make(lo, hi, centred=centred, digits=digits)
        except NoiseScaleError:
            continue  # public refusal before anything is charged
        yield lo, hi, centred, grid


def test_asymmetric_centred_terms_keep_the_width_and_lose_no_half_width() -> None:
    for (lo, hi), digits in itertools.product(_BOUNDS, (TOOLS_DIGITS, FRAME_DIGITS)):
        try:
            grid = SumGrid.make(lo, hi, centred=True, digits=digits, symmetric=False)
        except NoiseScaleError:
            continue
        a, b, h = Fraction(grid.lo_term), Fraction(grid.hi_term), Fraction(grid.h)
        w, s = Fraction(hi - lo), Fraction(grid.shift)
        assert Fraction(lo) - s <= a <= b <= Fraction(hi) - s and b - a <= w, (lo, hi)
        assert max(abs(a), abs(b)) <= w and 2**52 * h <= Fraction(grid.c_lo)
        assert Fraction(grid.c_hi) < 2**53 * h
        x = np.array(_VALUES + [lo, hi, np.nextafter(lo, -1e308), np.nextafter(hi, 1e308)])
        terms = grid_terms(x, grid)
        assert all(a <= Fraction(t) <= b for t in terms.tolist()), (lo, hi)
        units = grid_sum(np.tile(x, 3), grid)[0]
        assert Fraction(units) * h == 3 * sum(Fraction(t) for t in terms.tolist())
        # the bounds themselves: their terms are within one grid step of clip(x) - mid
        for v, t in zip((lo, hi), terms.tolist()[-4:-2]):
            assert abs(Fraction(t) - (Fraction(v) - s)) <= h, (lo, hi)


def test_every_term_lies_in_a_clamp_the_sensitivities_cover() -> None:
    for lo, hi, centred, grid in _grids():
        a, b = Fraction(grid.lo_term), Fraction(grid.hi_term)
        w = Fraction(hi - lo)
        assert math.isfinite(grid.big), (lo, hi, centred)
        assert a <= b and b - a <= w, (lo, hi, centred)
        bound = w / 2 if centred else max(abs(Fraction(lo)), abs(Fraction(hi)))
        assert max(abs(a), abs(b)) <= bound, (lo, hi, centred)
        # the band where one addition of C rounds to the grid and the bits are linear
        h = Fraction(grid.h)
        assert 2**52 * h <= Fraction(grid.c_lo) and Fraction(grid.c_hi) < 2**53 * h
        x = np.array(_VALUES + [lo, hi, np.nextafter(lo, -1e308), np.nextafter(hi, 1e308)])
        terms = grid_terms(x, grid)
        assert all(a <= Fraction(t) <= b for t in terms.tolist()), (lo, hi, centred)
        units = grid_sum(np.tile(x, 3), grid)[0]
        assert Fraction(units) * h == 3 * sum(Fraction(t) for t in terms.tolist())


@pytest.mark.parametrize("bounds", _NARROW[:2])
@pytest.mark.parametrize("grouped", [False, True])
def test_frame_sum_of_narrow_bounds_moves_by_at_most_max_bound(bounds, grouped) -> None:
    """One added row moves the plain sum by at most ``max(|lo|, |hi|)`` (add/remove)."""
    x = np.full(10, (bounds[0] + bounds[1]) / 2)
    y = x[:-1]
    sums = []
    for v in (x, y):
        groups = np.zeros(v.size, dtype=np.int64) if grouped else None
        sums.append(Fraction(float(ColumnStats(groups, 1, v).total(bounds)[0])))
    assert abs(sums[0] - sums[1]) <= max(abs(Fraction(bounds[0])), abs(Fraction(bounds[1])))


@pytest.mark.parametrize("func", ["mean", "var", "sum"])
def test_frame_subnormal_width_releases_or_refuses_before_the_charge(func) -> None:
    acc = BudgetAccountant()
    pf = PrivateFrame(pd.DataFrame({"x": [0.0, 5e-324, 1.0]}), accountant=acc)
    try:
        out = pf.agg(epsilon=1.0, s=("x", func, (0.0, 5e-324)))
    except NoiseScaleError:
        assert acc.spent_budget == []
    else:
        assert 0.0 <= float(out["s"].iloc[0]) <= (3 * 5e-324 if func == "sum" else 5e-324)


def test_float32_terms_are_lifted_in_float64() -> None:
    grid = SumGrid.make(0.0, 1e31)
    x = np.full(8, 3e30, dtype=np.float32)
    assert grid_sum(x, grid)[0] == grid_sum(x.astype(np.float64), grid)[0]
    assert np.array_equal(grid_terms(x, grid), grid_terms(x.astype(np.float64), grid))


def test_nansum_far_from_zero_is_accurate() -> None:
    x = np.full(1000, 1050.0)
    x[::10] = np.nan
    got = dp.tools.nansum(x, epsilon=100.0, bounds=(1000.0, 1100.0), random_state=1)
    assert abs(got - 900 * 1050.0) < 1000.0  # the noise's scale is 11; the bias was 945000


def test_mean_noise_scale_is_checked_before_the_charge() -> None:
    acc = BudgetAccountant()
    x = np.full(1000, 5e269)
    with pytest.raises(NoiseScaleError):
        dp.tools.mean(x, epsilon=0.1, bounds=(0.0, 1e270), accountant=acc)
    assert acc.spent_budget == []


def test_sum_where_the_middle_of_the_bounds_rounds_is_accurate() -> None:
    t = 2.0**53
    x = np.full(1000, t + 2)  # mid = fl(t + 1) = t: hi - mid = 2 > w / 2 = 1
    got = dp.tools.sum(x, epsilon=100.0, bounds=(t, t + 2), random_state=1)
    assert abs(got - 1000 * (t + 2)) < 100.0  # the noise's scale is 0.02; the bias was 1000
