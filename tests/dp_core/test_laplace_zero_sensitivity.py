"""Bounded Laplace mechanisms at sensitivity 0: no noise, so zero bias and zero variance.

With ``sensitivity=0`` the scale is 0 and ``randomise`` returns the (clipped) value itself, so
the output's bias and variance are exactly 0 whatever the value (diffprivlib's
``LaplaceBoundedDomain`` reports 0.0 too).  ``LaplaceBoundedDomain`` used to divide by the zero
scale in its numerical moments and report NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.dp import mechanisms as M


@pytest.mark.parametrize("cls", [M.LaplaceTruncated, M.LaplaceFolded, M.LaplaceBoundedDomain])
@pytest.mark.parametrize("value", [0.0, 3.0, 10.0])
def test_zero_sensitivity_has_zero_bias_and_variance(cls, value):
    m = cls(epsilon=1.0, sensitivity=0, lower=0, upper=10, random_state=0)
    draws = m.randomise(np.full(1000, value))
    assert np.all(draws == value)  # no noise at all: the moments below must be 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert m.bias(value) == 0.0
        assert m.variance(value) == 0.0
