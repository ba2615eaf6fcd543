"""Equal-width bin counts on extreme values: finite, increasing edges.

``-1e308 .. 1e308``: the width overflowed and linspace gave NaN edges (every value then fell
"outside" the bins, an error saying '0 below, 0 above'); one value of 1e17 got four equal
edges (1e17 + 1.0 == 1e17).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid.operators import OperatorContext, get_operator


@pytest.mark.parametrize(
    "values",
    [
        [1e308, -1e308, 1.0, 2.0],
        [-1.7e308, 1.7e308],
        [1e17] * 5,
        [-3e200] * 3,
        [1e17, 1e17 + 16, 1e17 + 32],  # floats are 16 apart here: fewer than 3 steps
    ],
)
def test_edges_are_finite_and_increasing(values: list[float]) -> None:
    op = get_operator("generalize", {"bins": 3})
    out = op.apply(pd.DataFrame({"x": values}), "x", OperatorContext())["x"]
    edges = np.asarray(op.stats()["edges"])
    assert np.isfinite(edges).all() and (np.diff(edges) > 0).all()
    assert out.notna().all()
    assert edges[0] == min(values) and (edges[-1] == max(values) or len(set(values)) == 1)


def test_one_value_at_the_end_of_float64_gets_finite_edges() -> None:
    """One value at float64's maximum: value + width overflowed, and the edges [nan, inf]
    failed the column ('fall outside the bins'); the unit bin then ends at the value."""
    top = float(np.finfo(np.float64).max)
    op = get_operator("generalize", {"bins": 3})
    out = op.apply(pd.DataFrame({"x": [top] * 4}), "x", OperatorContext())["x"]
    edges = np.asarray(op.stats()["edges"])
    assert np.isfinite(edges).all() and (np.diff(edges) > 0).all()
    assert edges[-1] == top and out.notna().all()
