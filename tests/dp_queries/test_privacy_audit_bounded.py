"""Empirical privacy-loss audits of grouped SUM, AVG and MEDIAN on neighbouring DataFrames.

``D`` holds a few persons per group (public keys ``a, b, c``); ``D'`` adds ONE person with 20-30
rows in each of the three groups, while the query bounds contributions to ``max_groups=2`` and
``max_rows=2``.  A statistic of the release (the total over the groups: post-processing, so it
is as private as the release) is histogrammed on both tables and the shared audit
(``tests/dp_core/_audit.py``: 4.9-sigma lower bound on ``|log P(bucket | D) / P(bucket | D')|``)
must stay below epsilon.  The same audit must exceed epsilon when the bounding step is broken
(every row kept, or ``max_rows`` ignored): the tests can fail.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ._neighbours import releases, unbounded, with_person, worst_over_cuts

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
RUNS = 1200  # per table: ~1.5 s each
BROKEN_RUNS = 1000
INF = 1e12
CASES = {
    # name: (value dtype, base value per group, person's value, agg, epsilon, bins)
    "sum": (float, 5.0, 10.0, ("x", "sum", (0.0, 10.0)), 1.0,
            [-INF, -50, 0, 50, 100, 150, 200, INF]),
    "avg": (float, 2.0, 10.0, ("x", "mean", (0.0, 10.0)), 1.0,
            [-INF, 3, 5, 7, 9, 11, 13, 15, INF]),
    "median_int": (int, None, 20, ("x", "median", (0, 20)), 2.0,
                   [-INF, 10.5, 15.5, 20.5, 25.5, 30.5, 35.5, 40.5, INF]),
    "median_float": (float, None, 20.0, ("x", "median", (0.0, 20.0)), 2.0,
                     [-INF, 10.5, 15.5, 20.5, 25.5, 30.5, 35.5, 40.5, INF]),
}  # fmt: skip


def tables(case: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    dtype, value, extra, *_ = CASES[case]
    if value is None:  # quantiles: nine persons per group with values 0..8 (x.5 for floats)
        x = np.tile(np.arange(9), 3) + (0.5 if dtype is float else 0)
        g = np.repeat(list("abc"), 9)
    else:
        per = 20 if case == "avg" else 4  # the mean needs enough rows to be informative
        x, g = np.full(3 * per, value), np.tile(list("abc"), per)
    base = pd.DataFrame({"pid": np.arange(x.size), "g": g, "x": x.astype(dtype)})
    return base, with_person(base, {"a": 30, "b": 25, "c": 20}, extra)


def totals(case: str, df: pd.DataFrame, seed: int, runs: int) -> np.ndarray:
    dtype, *_, agg, eps, _ = CASES[case]
    out = releases(
        df, seed, runs, keys=list("abc"), max_groups=2, max_rows=2, epsilon=eps, s=agg,
        integer_columns=["x"] if dtype is int else None,  # the integer path is declared
    )  # fmt: skip
    return np.array([r["s"].sum() for r in out])


def worst(case: str, a: np.ndarray, b: np.ndarray, min_count: int = 200) -> float:
    """Audit over the case's buckets and over the half-lines cut at each bucket edge."""
    return worst_over_cuts(a, b, CASES[case][-1], min_count)


@pytest.mark.parametrize("case", list(CASES))
def test_bounded_query_passes_audit(case: str) -> None:
    d, d2 = tables(case)
    eps = CASES[case][4]
    assert worst(case, totals(case, d, 1, RUNS), totals(case, d2, 2, RUNS)) <= eps


BROKEN = [(case, b) for case in ("sum", "avg") for b in ({}, {"max_rows": 10**6})] + [
    ("median_int", {})
]  # float / no_max_rows medians: 1.79 / 1.31 < eps 2 at 1000 runs


@pytest.mark.parametrize(("case", "broken"), BROKEN)
def test_audit_catches_broken_bounding(
    case: str, broken: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    d, d2 = tables(case)
    eps = CASES[case][4]
    a = totals(case, d, 3, BROKEN_RUNS)
    with unbounded(monkeypatch, **broken):
        b = totals(case, d2, 4, BROKEN_RUNS)
    assert worst(case, a, b, min_count=50) > eps
