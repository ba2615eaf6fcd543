"""Private partition selection that keeps no group releases an empty table, whatever the mechanism.

With ``mechanism="gaussian"`` the counts' discrete Gaussian sampler raised ``ValueError`` on an
empty draw -- after the charge, and only when the selection happened to keep nothing (a few
persons), while the neighbouring table with one group above the threshold released.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.dp import BudgetAccountant
from veil.dp.frame import PrivateFrame

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

AGGS = {"n": "count", "s": ("v", "sum"), "m": ("v", "mean"), "q": ("v", "median")}


def _release(n_persons: int, mechanism: str) -> tuple[pd.DataFrame, tuple]:
    df = pd.DataFrame({"pid": range(n_persons), "g": "a", "v": 5.0})
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    pf = PrivateFrame(df, "pid", accountant=acc, bounds={"v": (0, 10)}, random_state=1)
    out = pf.groupby("g").agg(epsilon=5.0, delta=1e-4, mechanism=mechanism, **AGGS)
    return out, tuple(acc.total())


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_no_group_selected_is_an_empty_release_of_the_same_shape(mechanism) -> None:
    empty, charged = _release(2, mechanism)  # 2 persons: far below the threshold
    full, charged_too = _release(500, mechanism)  # one group far above it
    assert len(empty) == 0 and len(full) == 1
    assert list(empty.columns) == list(full.columns)
    assert empty.dtypes.drop("g").equals(full.dtypes.drop("g"))
    assert charged == charged_too
