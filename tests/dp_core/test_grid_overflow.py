"""Grid noise on values beyond ``max float * g``, and folding into bounds wider than float64.

``(rint(x / g) + Z) g`` overflowed in ``x / g`` for ``|x| > 1.8e308 g`` (``x > ~8e298`` at
noise scale 1): the array path released ``inf`` with a RuntimeWarning, the scalar path raised
OverflowError.  Such an ``x`` is a multiple of ``g``, so ``x + Z g`` rounds exactly as the
formula would without the overflow -- that is what is released now.  ``LaplaceFolded`` with
bounds whose doubled width overflows (``+-1.7e308``) folded into NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.dp import mechanisms as M
from veil.errors import InsecureRandomWarning

HUGE = [1e300, -1e300, 1.7e308, -1.7e308]


def _quiet(func):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", InsecureRandomWarning)
        return func()


@pytest.mark.parametrize(
    "mech",
    [
        lambda: M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=1),
        lambda: M.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=2),
        lambda: M.GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1.0, random_state=3),
        lambda: M.Staircase(epsilon=1.0, sensitivity=1.0, random_state=4),
    ],
    ids=["laplace", "gaussian", "analytic", "staircase"],
)
def test_huge_values_keep_their_value(mech) -> None:  # type: ignore[no-untyped-def]
    m = _quiet(mech)
    out = _quiet(lambda: m.randomise(np.array(HUGE)))
    np.testing.assert_array_equal(out, HUGE)  # the noise is far below one ulp of them
    for v in HUGE:
        assert _quiet(lambda v=v: m.randomise(v)) == v
    small = _quiet(lambda: m.randomise(np.array([0.0, 5.0])))
    assert np.isfinite(small).all()


def test_folding_into_bounds_wider_than_float64() -> None:
    m = _quiet(
        lambda: M.LaplaceFolded(
            epsilon=1.0, sensitivity=1.0, lower=-1.7e308, upper=1.7e308, random_state=5
        )
    )
    out = _quiet(lambda: m.randomise(np.array([1.7e308, -1.7e308, 0.0, 1e308] * 50)))
    assert np.isfinite(out).all() and (np.abs(out) <= 1.7e308).all()
    # the fold itself: reflection at the upper bound, and identity inside
    folded = m._fold(np.array([1.0e308, -1.0e308, 2.5]))
    np.testing.assert_array_equal(folded, [1.0e308, -1.0e308, 2.5])
