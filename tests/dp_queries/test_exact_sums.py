"""Sums in DP queries are exact sums of grid terms: no order or neighbour changes their rounding.

A float64 sum of clamped values depends on the order of the rows and on every other value, so
one person could move it by more than the sensitivity the noise covers (Casacuberta et al., CCS
2022).  ``ColumnStats`` now adds terms rounded to a public grid exactly (veil.dp._exact_sum).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from veil.dp._exact_sum import FRAME_DIGITS, SumGrid, grid_terms
from veil.dp.frame._compute import ColumnStats


def _table() -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 1.0], 5000) * 2.0 ** rng.uniform(-20, 52, 5000)
    x[:3] = [2.0**53, np.nan, -(2.0**53)]
    return x


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("grouped", [False, True])
def test_sums_do_not_depend_on_row_order(grouped, centred) -> None:
    bounds = (-(2.0**53), 2.0**53)
    x = _table()
    order = np.random.default_rng(4).permutation(x.size)
    groups = np.zeros(x.size, dtype=np.int64) if grouped else None
    got = []
    for v in (x, x[order], x[::-1].copy()):
        d = ColumnStats(groups, 1, v)
        got.append(float((d.centred_sum if centred else d.total)(bounds)[0]))
    grid = SumGrid.make(*bounds, centred=centred, digits=FRAME_DIGITS)
    t = grid_terms(x[~np.isnan(x)], grid)
    want = sum(Fraction(v) for v in t.tolist())
    assert got[0] == got[1] == got[2] == want
    # the float64 sums this replaces do depend on the order
    kept = np.clip(x[~np.isnan(x)], *bounds)
    assert len({float(kept.sum()), float(kept[::-1].sum()), float(np.sort(kept).sum())}) > 1


@pytest.mark.parametrize("grouped", [False, True])
def test_one_row_moves_the_sum_by_at_most_its_bound(grouped) -> None:
    """Every single-row change of a table built to maximise float64 rounding moves the plain
    sum by at most ``max(|lo|, |hi|)`` (a row added or removed) and the centred one by at most
    ``half``."""
    bounds = (-(2.0**40), 2.0**41)
    half = (bounds[1] - bounds[0]) / 2
    x = _table()
    x = x[~np.isnan(x)]
    rng = np.random.default_rng(5)
    for _ in range(20):
        i = int(rng.integers(x.size))
        y = np.delete(x, i)
        gx = np.zeros(x.size, dtype=np.int64) if grouped else None
        gy = np.zeros(y.size, dtype=np.int64) if grouped else None
        a, b = ColumnStats(gx, 1, x), ColumnStats(gy, 1, y)
        assert abs(float(a.total(bounds)[0]) - float(b.total(bounds)[0])) <= 2.0**41
        assert abs(float(a.centred_sum(bounds)[0]) - float(b.centred_sum(bounds)[0])) <= half
