"""Empirical privacy audit of a grouped count on neighbouring DataFrames.

D' adds one person with many rows in two groups.  After contribution bounding
(max_groups=1, max_rows=1) the released pair of counts must satisfy
P[D in S] <= e^eps P[D' in S] for every bucket S (checked with Clopper-Pearson bounds at a
Bonferroni-corrected alpha = 1e-6).  The same audit against the *row-level* unit, where that
person counts as 80 people, must fail: the test has the power to catch a broken bound.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from veil.dp.frame import PrivateFrame

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
EPS = 1.0
RUNS = 2000
ALPHA = 1e-6


def base() -> pd.DataFrame:
    return pd.DataFrame({"pid": np.arange(20), "g": ["a", "b"] * 10})


def neighbour() -> pd.DataFrame:
    extra = pd.DataFrame({"pid": [999] * 80, "g": ["a"] * 50 + ["b"] * 30})
    return pd.concat([base(), extra], ignore_index=True)


def release(
    df: pd.DataFrame, unit: str | None, seed: int, runs: int = RUNS
) -> list[tuple[int, int]]:
    pf = PrivateFrame(df, privacy_unit=unit, accountant=False, random_state=seed)
    plan = pf.groupby("g", keys=["a", "b"]).plan(n="count", epsilon=EPS)
    out = []
    for _ in range(runs):
        n = plan.execute()["n"].to_numpy()
        out.append((int(n[0]), int(n[1])))
    return out


def max_certified_ratio(xs: list, ys: list) -> float:
    n = len(xs)
    """Largest lower confidence bound of P_x(S) / P_y(S) over single-outcome buckets."""
    cx, cy = pd.Series(xs).value_counts(), pd.Series(ys).value_counts()
    buckets = set(cx.index) | set(cy.index)
    alpha = ALPHA / (2 * len(buckets))
    worst = 0.0
    for b in buckets:
        kx, ky = int(cx.get(b, 0)), int(cy.get(b, 0))
        lo_x = stats.beta.ppf(alpha, kx, n - kx + 1) if kx > 0 else 0.0
        hi_y = stats.beta.ppf(1 - alpha, ky + 1, n - ky) if ky < n else 1.0
        if lo_x > 0:
            worst = max(worst, lo_x / hi_y)
    return worst


def test_grouped_count_passes_audit_with_person_unit() -> None:
    d, d2 = release(base(), "pid", 1), release(neighbour(), "pid", 2)
    bound = math.exp(EPS)
    assert max_certified_ratio(d, d2) <= bound
    assert max_certified_ratio(d2, d) <= bound


def test_audit_catches_row_level_unit_with_many_rows() -> None:
    d, d2 = release(base(), None, 3, 300), release(neighbour(), None, 4, 300)
    a, a2 = [x for x, _ in d], [x for x, _ in d2]  # the count of group 'a' alone
    assert max(max_certified_ratio(a, a2), max_certified_ratio(a2, a)) > math.exp(EPS)
