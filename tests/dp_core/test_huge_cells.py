"""A number beyond float64 is read by its value alone: ``+-inf``, as ``float`` reads it.

Neighbouring inputs differ in one record: an infinite value against an integer or fraction
too large for float64 (``10**400``), or a ``longdouble`` beyond float64.  The tools must treat
them alike (same release on the same seed, same error class, no warning of their own), and
text weights are refused without being parsed or quoted.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import veil.dp.tools as tools
from veil.errors import InputError, InsecureRandomWarning

BASE = [1.0, 2.5, 3.0, 7.0]
HUGE = [10**400, -(10**400), Fraction(10**400, 3), Fraction(-(10**401), 7)]
IDS = ["int", "-int", "fraction", "-fraction"]


def _hist(data: Any) -> np.ndarray:
    return tools.histogram(data, epsilon=1.0, range=(0, 10), random_state=3)[0]


@pytest.mark.parametrize("cell", HUGE, ids=IDS)
@pytest.mark.parametrize(
    "wrap", [list, lambda d: pd.Series(d, dtype=object)], ids=["list", "series"]
)
def test_histogram_huge_number_is_infinite(cell: Any, wrap: Any) -> None:
    # an infinite value falls outside the finite bins: so does a number beyond float64
    inf = math.inf if cell > 0 else -math.inf
    expected = _hist(wrap([*BASE, inf]))
    np.testing.assert_array_equal(_hist(wrap([*BASE, cell])), expected)


def test_histogram2d_huge_number_is_infinite() -> None:
    y = [1.0] * 5

    def run(cell: Any) -> np.ndarray:
        return tools.histogram2d(
            [*BASE, cell], y, epsilon=1.0, range=[(0, 10), (0, 10)], bins=3, random_state=5
        )[0]

    np.testing.assert_array_equal(run(10**400), run(math.inf))


@pytest.mark.parametrize("cell", HUGE, ids=IDS)
def test_statistics_refuse_a_huge_number_as_infinite(cell: Any) -> None:
    for func in (tools.sum, tools.nanmean, tools.median):
        with pytest.raises(InputError, match="infinite"):
            func([*BASE, cell], epsilon=1.0, bounds=(0, 10), random_state=0)
    with pytest.raises(InputError, match="infinite"):
        tools.count([*BASE, cell], epsilon=1.0, random_state=0)


def test_longdouble_beyond_float64_warns_nothing() -> None:
    big = np.longdouble(10) ** 4000
    if not np.isinf(np.float64(np.finfo(np.longdouble).max)):
        pytest.skip("longdouble is float64 on this platform")
    for data in ([*BASE, big], np.array([*BASE, big], dtype=np.longdouble)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", InsecureRandomWarning)  # the seeded generator's
            np.testing.assert_array_equal(_hist(data), _hist([*BASE, math.inf]))


def test_signalling_nan_decimal_in_pandas_is_an_input_error() -> None:
    from decimal import Decimal

    with pytest.raises(InputError, match="numeric"):
        _hist(pd.Series([*BASE, Decimal("sNaN")], dtype=object))


@pytest.mark.parametrize("cell", ["alice", "2"])
def test_text_weights_are_refused_unquoted(cell: str) -> None:
    with pytest.raises(InputError) as info:
        tools.histogram(
            BASE, weights=[1.0, 1.0, 1.0, cell], weight_bound=5, epsilon=1.0, range=(0, 10)
        )
    assert repr(cell) not in str(info.value)


@pytest.mark.parametrize(
    "cell", [10**400, Fraction(-(10**400)), math.inf], ids=["int", "fraction", "inf"]
)
def test_huge_weight_is_refused_as_infinite(cell: Any) -> None:
    with pytest.raises(InputError, match="finite"):
        tools.histogram(
            BASE, weights=[1.0, 1.0, 1.0, cell], weight_bound=5, epsilon=1.0, range=(0, 10)
        )
