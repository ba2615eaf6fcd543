"""Accuracy before release for integer quantiles (rank half-width), and the blocked path for
many groups x candidates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import veil.dp.frame._quantile as quantile_mod
from veil.dp import BudgetAccountant
from veil.dp.frame import Agg, PrivateFrame

ALPHA = 0.05


def _midrank_gap(values: np.ndarray, released: float, q: float, lo: int, hi: int) -> float:
    """Score of the release minus the best candidate's (score: |midrank - q m|)."""
    cands = np.arange(lo, hi + 1)
    below = np.searchsorted(np.sort(values), cands, side="left")
    upto = np.searchsorted(np.sort(values), cands, side="right")
    score = np.abs((below + upto) / 2.0 - q * len(values))
    return float(score[cands == int(released)][0] - score.min())


@pytest.mark.parametrize("q", [0.5, 0.25])
def test_rank_halfwidth_bounds_the_rank_error_at_its_level(q):
    rng = np.random.default_rng(11)
    n_groups, per_group, lo, hi = 2_000, 40, 0, 30
    df = pd.DataFrame(
        {
            "g": np.repeat(np.arange(n_groups), per_group),
            "v": rng.binomial(hi, 0.4, n_groups * per_group),
        }
    )
    pf = PrivateFrame(df, accountant=BudgetAccountant(), random_state=5, integer_columns=["v"])
    plan = pf.groupby("g", keys=list(range(n_groups))).plan(
        m=Agg("quantile", "v", (lo, hi), q), epsilon=0.3
    )
    acc = plan.accuracy(ALPHA)
    r = float(acc.loc["m", "rank_halfwidth"])
    assert math.isnan(float(acc.loc["m", "ci_halfwidth"]))
    assert r == pytest.approx(
        2 * max(q, 1 - q) * (math.log(hi - lo + 1) + math.log(1 / ALPHA)) / 0.3
    )
    out = plan.execute()
    by_group = df.groupby("g")["v"].apply(np.asarray)
    gaps = np.array([_midrank_gap(by_group[g], out["m"][g], q, lo, hi) for g in range(n_groups)])
    exceed = int((gaps > r).sum())
    # the bound says P(gap > r) <= alpha per group: more than that is a broken bound
    assert stats.binomtest(exceed, n_groups, ALPHA, alternative="greater").pvalue > 1e-6
    # and the errors are real (the bound is not vacuous at this epsilon)
    assert (gaps > 0).mean() > 0.2


def test_float_columns_have_no_rank_halfwidth():
    df = pd.DataFrame({"v": np.linspace(0, 10, 100)})
    plan = PrivateFrame(df, accountant=BudgetAccountant(), random_state=1).plan(
        m=("v", "median", (0.0, 10.0)), epsilon=1.0
    )
    acc = plan.accuracy(ALPHA)
    assert math.isnan(float(acc.loc["m", "rank_halfwidth"]))
    assert "spread" in acc.loc["m", "note"]


def test_many_groups_are_counted_in_blocks(monkeypatch):
    """Above the cells cap the integer path runs on blocks of groups: at a huge epsilon it
    releases, like one pass over all groups, each group's best candidate (midrank score)."""
    rng = np.random.default_rng(2)
    n_groups = 50
    v = rng.integers(0, 20, 50 * 31)
    g = np.repeat(np.arange(n_groups), 31)
    perm = rng.permutation(len(v))  # rows in no particular group order
    df = pd.DataFrame({"g": g[perm], "v": v[perm]})

    def release():
        pf = PrivateFrame(df, accountant=BudgetAccountant(), random_state=3, integer_columns=["v"])
        out = pf.groupby("g", keys=list(range(n_groups))).agg(
            m=("v", "median", (0, 20)), epsilon=1e9
        )
        return out["m"].to_numpy()

    whole = release()
    by_group = df.groupby("g")["v"].apply(np.asarray)
    assert all(_midrank_gap(by_group[i], whole[i], 0.5, 0, 20) == 0 for i in range(n_groups))
    monkeypatch.setattr(quantile_mod, "_MAX_CELLS", 21 * 7)  # blocks of 7 groups
    blocked = release()
    # a best candidate for every group, in the right row (ties between two best candidates
    # may break differently: another stream of coins)
    assert all(_midrank_gap(by_group[i], blocked[i], 0.5, 0, 20) == 0 for i in range(n_groups))
    assert (blocked == whole).mean() > 0.6
