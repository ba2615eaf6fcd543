"""Smith's quantile with bounds whose width overflows float64 (``upper - lower > 1.8e308``).

Before: two records far apart made an interval of infinite length, its acceptance weight NaN,
and the release failed (``ConfigError`` from the Bernoulli coin, after the budget was charged)
-- on that data only, so one record decided error against success.  Now the release succeeds
on every neighbour and has the law of the mechanism (scale equivariance checked by a
two-sample KS test against the same data and bounds scaled down by 4, which never overflow).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import veil.dp as dp
import veil.dp.tools as tools
from veil.dp._rng import SecureRandom

from .conftest import ALPHA

B = 1.7e308  # 2 B overflows float64
BASE = [-1.2e308, -1.0e308, -0.5e308]  # the last record decides whether a gap overflows


@pytest.mark.parametrize("last", [-1.5e308, 1.0, 1.0e308, B, -B])
def test_every_neighbour_is_released(last: float) -> None:
    acc = dp.BudgetAccountant(epsilon=10.0)
    for func in (tools.median, tools.nanmedian):
        m = func([*BASE, last], epsilon=1.0, bounds=(-B, B), random_state=1, accountant=acc)
        assert -B <= m <= B
    q = tools.quantile([*BASE, last], [0.1, 0.9], epsilon=1.0, bounds=(-B, B), random_state=2)
    assert np.all((-B <= q) & (q <= B)) and q[0] <= q[1]


def test_law_is_scale_equivariant() -> None:
    data = np.array([*BASE, 1.3e308, 1.6e308])  # the gap -0.5e308 .. 1.3e308 overflows
    rng_a, rng_b = SecureRandom(11), SecureRandom(12)
    wide = [
        tools.median(data, epsilon=2.0, bounds=(-B, B), random_state=rng_a) for _ in range(3000)
    ]
    narrow = [
        4.0 * tools.median(data / 4, epsilon=2.0, bounds=(-B / 4, B / 4), random_state=rng_b)
        for _ in range(3000)
    ]
    assert stats.ks_2samp(wide, narrow).pvalue > ALPHA
