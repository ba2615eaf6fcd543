"""``dp.tools.var`` / ``std`` / ``nanvar`` noise an *exact* variance of grid terms.

``E[x^2] - E[x]^2`` in float64 cancels catastrophically for values far from 0, and any
float64 sum of squares rounds depending on the order and on every other value, so one record
could move the computed variance by more than the sensitivity the noise covers (Casacuberta et
al., CCS 2022).  The terms are now rounded to a public grid and their sums and sums of squares
are exact integers (veil.dp._exact_moments); the tests recompute them with fractions and
attack them with neighbours.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import veil.dp as dp
from veil.dp import _exact_moments
from veil.dp._exact_sum import SumGrid, grid_terms
from veil.dp.tools import _moments

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def _spied(monkeypatch: pytest.MonkeyPatch, kind: str, x: np.ndarray, bounds) -> list:
    seen = []
    real = _moments.laplace_exact

    def spy(value, sens, eps, rng):
        seen.append((value, sens))
        return real(value, sens, eps, rng)

    monkeypatch.setattr(_moments, "laplace_exact", spy)
    getattr(dp.tools, kind)(x, epsilon=1.0, bounds=bounds, random_state=0)
    monkeypatch.undo()
    return seen


def _fraction_var(x: np.ndarray, grid: SumGrid) -> Fraction:
    t = [Fraction(v) for v in grid_terms(x, grid).tolist()]
    n = len(t)
    mean = sum(t) / n
    return sum((v - mean) ** 2 for v in t) / n


@pytest.mark.parametrize(
    "bounds", [(0.0, 10.0), (2.0**52, 2.0**52 + 8), (-1e9 - 3, -1e9), (-1.0, 1.0)]
)
@pytest.mark.parametrize("kind", ["var", "std"])
def test_neighbours_move_the_exact_variance_within_the_sensitivity(monkeypatch, bounds, kind):
    lo, hi = bounds
    rng = np.random.default_rng(2)
    for n in (2, 7, 1000, 5000):
        x = lo + rng.integers(0, 5, n) * (hi - lo) / 4
        y = x.copy()
        y[rng.integers(n)] = rng.choice([lo, hi])
        ((a, sens),) = _spied(monkeypatch, kind, x, bounds)
        ((b, _),) = _spied(monkeypatch, kind, y, bounds)
        assert abs(a - b) <= sens
        grid = SumGrid.make(lo, hi, centred=True, digits=_exact_moments.VAR_DIGITS)
        assert a == _fraction_var(x, grid)


def test_far_from_zero_variance_is_right():
    """2,000 values 2^52 + {0, 8}: the variance is 16; float64's E[x^2] - E[x]^2 is not."""
    x = np.full(2000, 2.0**52)
    x[::2] += 8
    assert float(np.mean(x * x) - np.mean(x) ** 2) != 16.0  # the cancellation this is about
    v = dp.tools.var(x, epsilon=1e9, bounds=(2.0**52, 2.0**52 + 8), random_state=1)
    assert v == pytest.approx(16.0, abs=1e-3)


@pytest.mark.parametrize("kind", ["nanvar", "nanstd"])
def test_nan_variants_noise_exact_moments(monkeypatch, kind):
    x = np.array([3.0, np.nan, 2.0**40, -5.0] + [1.5] * 1000)
    bounds = (-10.0, 10.0)
    first = _spied(monkeypatch, kind, x, bounds)
    again = _spied(monkeypatch, kind, x[::-1].copy(), bounds)
    assert [v for v, _ in first] == [v for v, _ in again]  # no order-dependent rounding
    grid = SumGrid.make(*bounds, centred=True, digits=_exact_moments.VAR_DIGITS)
    t = [Fraction(v) for v in grid_terms(x[~np.isnan(x)], grid).tolist()]
    (s1, sens1), (s2, sens2) = first
    assert s1 == sum(t) and s2 == sum(v * v for v in t)
    assert sens1 == 20.0 and sens2 == 100.0
    assert all(-10 <= v <= 10 for v in t)


def test_grid_moments_exact_across_blocks_and_threads():
    rng = np.random.default_rng(8)
    x = rng.normal(0, 50, 2**20 + 11)
    x[5] = np.inf
    grid = SumGrid.make(-100.0, 60.0, centred=True, digits=_exact_moments.VAR_DIGITS)
    s1, s2, n, _, cmax = _exact_moments.grid_moments(x, grid)
    m = [int(Fraction(v) / Fraction(grid.h)) for v in grid_terms(x, grid).tolist()]
    assert (s1, s2, n) == (sum(m), sum(v * v for v in m), x.size)
    assert cmax == np.inf and not grid.inside(0.0, cmax)
