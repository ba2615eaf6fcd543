"""Bounds given in the Python API: a text is no pair, an integer beyond float64 is not finite.

``bounds="05"`` was read character by character as ``(0, 5)`` and ``(0, 10**400)`` raised a
bare ``OverflowError``; both are a ``ConfigError`` before anything is computed or charged.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.dp import BudgetAccountant
from veil.dp.frame import Agg, PrivateFrame
from veil.errors import ConfigError

DF = pd.DataFrame({"x": [1.0, 2.0]})


@pytest.mark.parametrize("bounds", ["05", b"05", "18", (0, 10**400), (-(10**400), 0)])
def test_bad_bounds_are_refused_before_the_charge(bounds) -> None:
    acc = BudgetAccountant(epsilon=10.0)
    pf = PrivateFrame(DF, accountant=acc)
    with pytest.raises(ConfigError, match="bounds of column 'x'"):
        pf.agg(s=("x", "sum", bounds), epsilon=1.0)
    with pytest.raises(ConfigError, match="bounds of column 'x'"):
        Agg("mean", "x", bounds)
    with pytest.raises(ConfigError, match="bounds of column 'x'"):
        PrivateFrame(DF, accountant=acc, bounds={"x": bounds}).agg(m=("x", "mean"), epsilon=1.0)
    assert acc.total()[0] == 0


def test_pairs_of_numbers_still_work() -> None:
    assert Agg("sum", "x", (0, 10**300)).bounds == (0.0, 1e300)
    assert Agg("sum", "x", [0, "5"]).bounds == (0.0, 5.0)
