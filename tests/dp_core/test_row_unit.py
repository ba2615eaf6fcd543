"""The tools' privacy unit is one row (axis 0), also for 2-d input reduced with ``axis=None``.

A row of an ``(n, d)`` array holds ``d`` values of the flattened statistic, so the release must
be calibrated as for ``epsilon / d`` on the flattened values (group privacy).  Checked by
distribution: releases on the 2-d array at ``epsilon`` and on the same values as 1-d at
``epsilon / d`` are samples of one law (two-sample KS at alpha = 1e-6), and a release at the
full ``epsilon`` on the 1-d values (the one-value unit) is rejected as that law.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import veil.dp as dp
from veil.errors import InputError

ALPHA = 1e-6
N_REL = 1500
X2 = np.full((100, 10), 0.5)
X2[::3, ::2] = 0.2  # not constant


def _releases(fn, seed: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # explicit seeds warn (insecure): tests only
        return np.array([fn(seed * 100_003 + i) for i in range(N_REL)], dtype=np.float64)


CASES = {
    "sum": lambda a, e, r: dp.tools.sum(a, epsilon=e, bounds=(0, 1), random_state=r),
    "mean": lambda a, e, r: dp.tools.mean(a, epsilon=e, bounds=(0, 1), random_state=r),
    "var": lambda a, e, r: dp.tools.var(a, epsilon=e, bounds=(0, 1), random_state=r),
    "count_nonzero": lambda a, e, r: dp.tools.count_nonzero(a - 0.2, epsilon=e, random_state=r),
    "histogram bin": lambda a, e, r: dp.tools.histogram(
        a, epsilon=e, bins=2, range=(0, 1), random_state=r
    )[0][0],
    "median": lambda a, e, r: dp.tools.median(  # declared integer: exact permute-and-flip
        np.rint(a * 10), epsilon=e / 100, bounds=(0, 10), integer=True, random_state=r
    ),  # (at eps 1 both calibrations always return the tied median 5: nothing to tell apart)
}


@pytest.mark.parametrize("name", list(CASES))
def test_axis_none_on_2d_protects_a_row(name):
    fn = CASES[name]
    eps = 1.0
    d = X2.shape[1]
    flat = X2.ravel()
    on_rows = _releases(lambda r: fn(X2, eps, r), 1)
    as_values = _releases(lambda r: fn(flat, eps / d, r), 2)
    assert stats.ks_2samp(on_rows, as_values).pvalue > ALPHA
    one_value_unit = _releases(lambda r: fn(flat, eps, r), 3)  # d times too little noise
    assert stats.ks_2samp(on_rows, one_value_unit).pvalue < ALPHA


def test_axis_zero_splits_over_columns_one_value_each():
    eps, d = 1.0, X2.shape[1]
    cols = _releases(
        lambda r: dp.tools.sum(X2, epsilon=eps, bounds=(0, 1), axis=0, random_state=r)[3], 4
    )
    alone = _releases(
        lambda r: dp.tools.sum(X2[:, 3], epsilon=eps / d, bounds=(0, 1), random_state=r), 5
    )
    assert stats.ks_2samp(cols, alone).pvalue > ALPHA


def test_histogram2d_refuses_2d_coordinates():
    with pytest.raises(InputError, match="1-d"):
        dp.tools.histogram2d(X2, X2, epsilon=1, bins=2, range=[(0, 1), (0, 1)])


@pytest.mark.parametrize("axis", [1, -1])
def test_reductions_that_keep_axis_0_protect_the_row_too(axis):
    """axis=1: each output cell is one row's 10 values, so a cell is released at eps / 10
    (the row's values all change together): same law as the 1-d release of that row at eps/10,
    and the one-value calibration (eps per cell) is rejected."""
    eps, d = 1.0, X2.shape[1]
    row = X2[3]
    few = X2[:5]  # cell 3's law depends on row 3 only: five rows make each draw 14x cheaper
    kept = _releases(
        lambda r: dp.tools.mean(few, epsilon=eps, bounds=(0, 1), axis=axis, random_state=r)[3], 6
    )
    alone = _releases(
        lambda r: dp.tools.mean(row, epsilon=eps / d, bounds=(0, 1), random_state=r), 7
    )
    assert stats.ks_2samp(kept, alone).pvalue > ALPHA
    one_value_unit = _releases(
        lambda r: dp.tools.mean(row, epsilon=eps, bounds=(0, 1), random_state=r), 8
    )
    assert stats.ks_2samp(kept, one_value_unit).pvalue < ALPHA


def test_row_attack_on_axis_1_is_bounded_by_eps():
    """Neighbours differing in row 0 (all zeros vs all ones): the event 'cell 0 > 0.5' must
    have probability ratio <= e^eps (it was ~280 when each cell got the full eps)."""
    eps = 1.0
    x0 = np.zeros((5, 10))
    x1 = x0.copy()
    x1[0] = 1.0
    a = _releases(
        lambda r: dp.tools.mean(x0, epsilon=eps, bounds=(0, 1), axis=1, random_state=r)[0], 9
    )
    b = _releases(
        lambda r: dp.tools.mean(x1, epsilon=eps, bounds=(0, 1), axis=1, random_state=r)[0], 10
    )
    pa, pb = (a > 0.5).mean(), (b > 0.5).mean()
    assert pb <= np.e**eps * pa + 0.05 and (1 - pa) <= np.e**eps * (1 - pb) + 0.05


def test_epsilon_too_small_for_the_row_is_refused_before_spending():
    from veil.errors import NoiseScaleError

    acc = dp.BudgetAccountant(epsilon=1.0)
    with pytest.raises(NoiseScaleError):
        dp.tools.sum(X2, epsilon=1e-323, bounds=(0, 1), accountant=acc)
    with pytest.raises(NoiseScaleError):
        dp.tools.histogram(X2, epsilon=1e-323, bins=2, range=(0, 1), accountant=acc)
    with pytest.raises(InputError, match="one point per record"):
        dp.tools.histogramdd(
            np.zeros((50, 4, 2)), epsilon=1, bins=2, range=[(0, 1)] * 4, accountant=acc
        )
    assert acc.spent_budget == []
