"""A grouped MEDIAN with bounds whose width overflows float64 (``hi - lo > 1.8e308``).

Before: one person's value far from another opened a gap of length inf; ``log(inf)`` won every
Gumbel draw and the release was ``hi`` every time -- on that table only.  Its neighbour
without the person never released ``hi``: an unbounded privacy loss.  Now the mechanism runs
on the halved values and doubles the answer, which has the mechanism's law: checked against
the same data and bounds scaled down by 4 (which never overflow), by a two-sample KS test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from veil.dp.frame import PrivateFrame

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

ALPHA = 1e-4
B = 1.7e308  # 2 B overflows float64
BASE = [-1.2e308, -1.0e308, -0.5e308]  # with BASE alone, -0.5e308 .. B overflows


def _medians(values: list[float], scale: float, seed: int, runs: int = 800) -> np.ndarray:
    df = pd.DataFrame({"g": ["a"] * len(values), "x": np.asarray(values) / scale})
    pf = PrivateFrame(
        df, accountant=False, bounds={"x": (-B / scale, B / scale)}, random_state=seed
    )
    plan = pf.groupby("g", keys=["a"]).plan(m=("x", "median"), epsilon=1.0)
    return np.array([float(plan.execute()["m"].iloc[0]) for _ in range(runs)]) * scale


@pytest.mark.parametrize("last", [None, 1.0, -1.5e308, B])
def test_wide_bounds_release_the_law_of_the_mechanism(last) -> None:
    values = BASE if last is None else [*BASE, last]
    wide = _medians(values, 1.0, seed=1)
    narrow = _medians(values, 4.0, seed=2)
    assert np.all((-B <= wide) & (wide <= B))
    assert np.mean(wide == B) < 0.05  # was 1.0 for BASE alone and for -1.5e308
    assert stats.ks_2samp(wide, narrow).pvalue > ALPHA
