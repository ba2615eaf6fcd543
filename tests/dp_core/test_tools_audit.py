"""Audit findings on veil.dp.tools: integer sums, weights and misspelt keywords, messages."""

from __future__ import annotations

import numpy as np

import veil.dp as dp

from ._audit import audit

N_DRAWS = 20_000  # draws per neighbour in the privacy-loss audits


def _draws(f, data, seed: int, **kw) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([f(data, random_state=rng, **kw) for _ in range(N_DRAWS)], dtype=float)


def test_integer_sum_of_fractional_values_privacy_audit():
    # round-half-to-even of the total moved by 2 here (round(0.5) = 0, round(1.5) = 2) while
    # the geometric noise was calibrated for hi - lo = 1: log-ratio ~2 at epsilon 1
    a_data, b_data = np.array([0.5, 0.0]), np.array([0.5, 1.0])  # one record replaced
    kw = {"epsilon": 1.0, "bounds": (0, 1), "dtype": int}
    a = _draws(dp.tools.sum, a_data, 1, **kw)
    b = _draws(dp.tools.sum, b_data, 2, **kw)
    assert audit(a, b, np.arange(-0.5, 3.5)) <= 1.0


def test_integer_nansum_of_fractional_values_privacy_audit():
    a_data, b_data = np.array([0.5, np.nan]), np.array([0.5, 1.0])  # a value becomes NaN
    kw = {"epsilon": 1.0, "bounds": (0, 1), "dtype": int}
    a = _draws(dp.tools.nansum, a_data, 3, **kw)
    b = _draws(dp.tools.nansum, b_data, 4, **kw)
    assert audit(a, b, np.arange(-0.5, 3.5)) <= 1.0


def test_integer_sum_casts_each_value_like_numpy():
    # numpy's sum(dtype=int) casts every value (towards zero) before adding; with a huge
    # epsilon the DP sum is that integer sum (noise far below 1/2 with overwhelming probability)
    x = np.array([[0.5, 1.7, 2.9], [3.2, -0.7, 4.99]])
    rng = np.random.default_rng(5)
    for axis in (None, 0, 1):
        got = dp.tools.sum(x, epsilon=1e6, bounds=(-1, 5), dtype=int, axis=axis, random_state=rng)
        want = np.sum(x, dtype=int, axis=axis)
        assert np.array_equal(got, want)
        assert np.asarray(got).dtype.kind == "i"
