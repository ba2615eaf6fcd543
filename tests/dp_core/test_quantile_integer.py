"""Declared integer data (``integer=True``): the DP quantile is an integer candidate
(permute-and-flip); an integer dtype alone keeps the continuous release."""

from __future__ import annotations

import warnings

import numpy as np

import veil.dp as dp
from veil.errors import InsecureRandomWarning


def test_integer_median_is_an_integer_and_usually_exact():
    ages = np.random.default_rng(3).integers(17, 91, 10_000)
    truth = np.median(ages)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomWarning)
        out = np.array(
            [
                dp.tools.median(ages, epsilon=1.0, bounds=(17, 90), integer=True, random_state=s)
                for s in range(40)
            ]
        )
        undeclared = np.array(
            [dp.tools.median(ages, epsilon=1.0, bounds=(17, 90), random_state=s) for s in range(40)]
        )
    assert np.all(out == np.floor(out)) and np.all((out >= 17) & (out <= 90))
    assert np.mean(out == truth) >= 0.9
    # not declared: the continuous release (a uniform draw inside the chosen gap), int64 or not
    assert np.mean(undeclared == np.floor(undeclared)) < 0.5


def test_float_quantile_on_heavily_tied_data_follows_smiths_law():
    """Float input with few distinct values takes the non-empty-interval sampler: the chosen
    interval has probability ~ length_i exp(-eps |i - q n| / 2) (chi-square at alpha 1e-6),
    and the law at twice the epsilon is rejected (negative control)."""
    import warnings

    from scipy import stats

    data = np.array([1.0] * 40 + [2.0] * 30 + [3.0] * 20 + [5.0] * 10)
    lo, hi, q, eps, draws = 0.0, 8.0, 0.5, 0.2, 4000
    edges = np.array([lo, 1.0, 2.0, 3.0, 5.0, hi])
    ranks = np.array([0, 40, 70, 90, 100])  # index i of each non-empty interval
    length = np.diff(edges)

    def law(e: float) -> np.ndarray:
        w = length * np.exp(-e / 2 * np.abs(ranks - q * data.size))
        return w / w.sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.array(
            [dp.tools.quantile(data, q, epsilon=eps, bounds=(lo, hi), random_state=s)
             for s in range(draws)]
        )  # fmt: skip
    assert ((out >= lo) & (out <= hi)).all()
    seen = np.bincount(np.searchsorted(edges, out, side="right") - 1, minlength=5)[:5]
    assert stats.chisquare(seen, law(eps) * draws).pvalue > 1e-6
    assert stats.chisquare(seen, law(2 * eps) * draws).pvalue < 1e-6
