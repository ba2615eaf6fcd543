"""``round`` with a base below 1 keeps huge values finite (it turned 1e300 into inf)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.deid.operators import OperatorContext, get_operator


@pytest.mark.parametrize("base", [0.5, 0.1, 0.25])
def test_huge_values_stay_finite(base: float) -> None:
    x = [1e300, -1e300, 1.7e308, 2.6, 0.1 + 0.2, np.nan]
    df = pd.DataFrame({"x": x})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way either
        out = get_operator("round", {"base": base}).apply(df, "x", OperatorContext())["x"]
    got = out.to_numpy(dtype=float)
    assert np.isfinite(got[:5]).all() and np.isnan(got[5])
    assert got[:3].tolist() == x[:3]  # already multiples of the base at that magnitude
    assert got[3] == pytest.approx(round(2.6 / base) * base)
    assert got[4] == pytest.approx(round(0.3 / base) * base) and repr(got[4]) == repr(
        round(got[4], 12)
    )
