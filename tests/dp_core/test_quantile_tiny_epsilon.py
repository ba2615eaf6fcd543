"""Smith's quantile: which sampler runs must not decide between a release and an error, nor
between microseconds and seconds.

The mechanism draws heavily tied data (fewer than a quarter of the intervals non-empty) with
exact coins and other data by discrete-Laplace proposals of scale ``2 / epsilon``, which the
exact sampler refuses beyond ``2^52``.  Before, ``median`` at ``epsilon = 1e-16`` was
released on ``[1, 2, 3, 4] * 5`` and raised NoiseScaleError -- after the charge -- once one
record moved from 4 to 50 (one more non-empty interval crosses the quarter).  Both now take
the exact-coin path, whose law at such an epsilon is (within 1e-14) the uniform law on the
bounds: checked by a KS test at alpha 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import veil.dp as dp
import veil.dp.tools as tools
from veil.dp._rng import SecureRandom

from .conftest import ALPHA

TIED = [1.0, 2.0, 3.0, 4.0] * 5
NEIGHBOUR = TIED[:-1] + [50.0]  # one record replaced


@pytest.mark.parametrize("epsilon", [1e-16, 2.0**-51, 1e-300])
@pytest.mark.parametrize("data", [TIED, NEIGHBOUR], ids=["tied", "neighbour"])
def test_both_neighbours_are_released(data: list[float], epsilon: float) -> None:
    acc = dp.BudgetAccountant()  # unlimited: a finite one refuses spends below 1e-14 of it
    for func in (tools.median, tools.nanmedian):
        m = func(data, epsilon=epsilon, bounds=(0, 100), random_state=4, accountant=acc)
        assert 0 <= m <= 100
    q = tools.quantile(data, [0.25, 0.75], epsilon=epsilon, bounds=(0, 100), random_state=5)
    assert q.shape == (2,) and 0 <= q[0] <= q[1] <= 100


def test_tiny_epsilon_law_is_uniform_on_the_bounds() -> None:
    rng = SecureRandom(21)
    draws = [
        tools.median(NEIGHBOUR, epsilon=1e-16, bounds=(0, 100), random_state=rng)
        for _ in range(2000)
    ]
    assert stats.kstest(np.asarray(draws) / 100, "uniform").pvalue > ALPHA


def test_clustered_data_need_few_proposals(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,000 values within 1e-9 of each other in bounds (-1e6, 1e6): every interval near the
    # median is ~1e-12 long against gaps of 1e6, so almost every proposal is refused.  Before,
    # 4 million were drawn (~0.7 s) before a float fallback; the exact-coin draw now takes
    # over after 4 (n + 1) -- the run time no longer grows with how tightly the data cluster.
    from veil.dp.tools import _quantiles as q_mod

    drawn: list[int] = []
    real = q_mod.discrete_laplace

    def counting(scale: object, size: int, rng: object) -> np.ndarray:
        drawn.append(size)
        return real(scale, size, rng)  # type: ignore[arg-type]

    monkeypatch.setattr(q_mod, "discrete_laplace", counting)
    x = 0.5 + np.random.default_rng(0).random(1000) * 1e-9
    m = tools.median(x, epsilon=1.0, bounds=(-1e6, 1e6), random_state=3)
    assert -1e6 <= m <= 1e6
    assert sum(drawn) < 2**16


def test_wide_noise_path_has_smiths_law(chi2_pvalue) -> None:  # type: ignore[no-untyped-def]
    # epsilon (n + 1) = 5 <= 8: the exact-coin path; the interval chosen must follow
    # length_i exp(-eps |i - q n| / 2) (Smith 2011)
    values, eps, lo, hi = np.array([1.0, 2.0, 4.0, 7.0]), 1.0, 0.0, 10.0
    edges = np.concatenate([[lo], values, [hi]])
    rng = SecureRandom(8)
    out = np.array(
        [tools.median(values, epsilon=eps, bounds=(lo, hi), random_state=rng) for _ in range(6000)]
    )
    picked = np.searchsorted(edges, out, side="right") - 1
    w = np.diff(edges) * np.exp(-eps * np.abs(np.arange(5) - 0.5 * 4) / 2)
    assert chi2_pvalue(picked, np.arange(5), w) > ALPHA
