"""Integer-typed input: the DP quantile is an integer candidate (permute-and-flip)."""

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
            [dp.tools.median(ages, epsilon=1.0, bounds=(17, 90), random_state=s) for s in range(40)]
        )
        floats = np.array(
            [
                dp.tools.median(ages.astype(float), epsilon=1.0, bounds=(17, 90), random_state=s)
                for s in range(40)
            ]
        )
    assert np.all(out == np.floor(out)) and np.all((out >= 17) & (out <= 90))
    assert np.mean(out == truth) >= 0.9
    # the float column keeps the continuous release (a uniform draw inside the chosen gap)
    assert np.mean(floats == np.floor(floats)) < 0.5
