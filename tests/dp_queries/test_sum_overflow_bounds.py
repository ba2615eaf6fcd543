"""Bounds whose clipped sum could overflow float64 are refused before the charge.

The number of rows is private (add/remove neighbours), so an overflow is no public event: with
bounds ``(-1e308, 1e308)`` a sum released on one row of ``1e308`` and raised (after the
charge) on three; a mean with bounds ``(-8e307, 8e307)`` likewise.  The refusal reads the
bounds alone, so it is the same on every table.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.dp import BudgetAccountant
from veil.dp.frame import PrivateFrame
from veil.errors import ConfigError


@pytest.mark.parametrize(
    ("func", "bounds", "value"),
    [
        ("sum", (-1e308, 1e308), 1e308),
        ("sum", (0.0, 1e300), 1e300),
        ("mean", (-8e307, 8e307), 8e307),
        ("var", (0.0, 1e150), 1e150),
    ],
)
@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("grouped", [False, True])
def test_refused_alike_before_the_charge(func, bounds, value, rows, grouped) -> None:
    acc = BudgetAccountant()
    pf = PrivateFrame(pd.DataFrame({"x": [value] * rows, "g": "a"}), accountant=acc)
    q = pf.groupby("g", keys=["a"]) if grouped else pf
    with pytest.raises(ConfigError, match="too wide"):
        q.agg(epsilon=1e300, s=("x", func, bounds))
    assert acc.spent_budget == []


@pytest.mark.parametrize("func", ["sum", "mean", "var"])
def test_wide_bounds_that_cannot_overflow_still_release(func) -> None:
    pf = PrivateFrame(pd.DataFrame({"x": [1e100, 2e100, 3e100]}), accountant=False)
    out = pf.agg(epsilon=1.0, s=("x", func, (0.0, 1e120)))
    assert out["s"].notna().all()
