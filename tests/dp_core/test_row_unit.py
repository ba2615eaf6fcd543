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
