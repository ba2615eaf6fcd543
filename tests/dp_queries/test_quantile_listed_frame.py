"""``PrivateFrame`` quantiles over a public candidate list (``Agg(..., candidates=...)``).

The release is one of the listed values, chosen per group by permute-and-flip on the midrank
score ``|(#{x < c} + #{x <= c}) / 2 - q m|`` (values clamped to the candidates' range), at
``eps_group / (2 Delta)`` with the frame's ``Delta = max_rows max(q, 1 - q)`` (adding or
removing a person).  The oracles (``scores``, ``pf_pmf``) are written from that definition in
the ``veil.dp.tools`` tests, not from the implementation.  Many groups holding the same
values give independent draws in one release.  Fixed seeds and sample sizes, alpha = 1e-6.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import veil.dp as dp
from veil.dp.frame import PrivateFrame
from veil.dp.frame._quantile import listed_counts
from veil.dp.frame._spec import Agg
from veil.dp.tools._quantile_candidates import candidate_counts
from veil.errors import ConfigError

from ..dp_core._audit import audit
from ..dp_core.test_quantile_candidates import chi2_pvalue, max_privacy_loss, pf_pmf
from ..dp_core.test_quantile_listed import BAD, CANDS, DATA, scores

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

ALPHA = 1e-6
BOUNDS = (-2.0, 5.0)


def _frame(groups: list[list[float]], seed: int, **kw: object) -> PrivateFrame:
    g = np.repeat(np.arange(len(groups)), [len(v) for v in groups])
    x = np.concatenate([np.asarray(v, dtype=float) for v in groups]) if groups else []
    return PrivateFrame(pd.DataFrame({"g": g, "x": x}), random_state=seed, **kw)


def draws(data: list[float], n: int, q: float, eps: float, seed: int, **agg: object) -> np.ndarray:
    """``n`` independent releases: ``n`` groups holding ``data`` each (one person per row)."""
    pf = _frame([data] * n, seed, accountant=False)
    spec = Agg("quantile", "x", BOUNDS, q=q, candidates=agg.pop("candidates", CANDS), **agg)
    out = pf.groupby("g", keys=list(range(n))).agg(v=spec, epsilon=eps)
    return out["v"].to_numpy()


def t_of(eps: float, q: float) -> float:
    """Permute-and-flip's ``eps / (2 Delta)`` with ``Delta = max(q, 1 - q)`` (one row)."""
    return eps / (2 * max(q, 1 - q))


@pytest.mark.parametrize(("q", "eps"), [(0.5, 0.6), (0.3, 1.0), (0.9, 3.0)])
def test_release_follows_the_exact_permute_and_flip_law(q, eps):
    out = draws(DATA, 6000, q, eps, seed=21)
    assert np.isin(out, CANDS).all()
    assert chi2_pvalue(out, CANDS, pf_pmf(scores(DATA, q), t_of(eps, q))) > ALPHA
    # the test has power: the law at half / twice the calibration is rejected
    assert chi2_pvalue(out, CANDS, pf_pmf(scores(DATA, q), t_of(eps, q) / 2)) < ALPHA
    assert chi2_pvalue(out, CANDS, pf_pmf(scores(DATA, q), 2 * t_of(eps, q))) < ALPHA


def test_median_of_the_frame_and_of_the_tools_share_the_score():
    """``func="median"`` is the 0.5 quantile; each group is scored on its own values, and an
    empty group (a listed key without rows) is uniform over the candidates."""
    other = [2.5, 2.5, 3.0, 0.6]
    groups = [DATA] * 3000 + [other] * 3000
    pf = _frame(groups, seed=5, accountant=False)
    keys = list(range(len(groups) + 2000))  # 2,000 listed keys without data
    spec = {"func": "median", "column": "x", "bounds": BOUNDS, "candidates": list(CANDS[::-1])}
    out = pf.groupby("g", keys=keys).agg(m=spec, epsilon=0.8)["m"].to_numpy()
    t = t_of(0.8, 0.5)
    assert chi2_pvalue(out[:3000], CANDS, pf_pmf(scores(DATA, 0.5), t)) > ALPHA
    assert chi2_pvalue(out[3000:6000], CANDS, pf_pmf(scores(other, 0.5), t)) > ALPHA
    assert chi2_pvalue(out[6000:], CANDS, np.full(CANDS.size, 1 / CANDS.size)) > ALPHA


def test_max_rows_scales_the_sensitivity():
    """A person with up to 2 rows in a group: ``Delta = 2 max(q, 1 - q)``."""
    n = 5000
    df = pd.DataFrame(
        {
            "g": np.repeat(np.arange(n), len(DATA)),
            "pid": np.arange(n * len(DATA)),
            "x": np.tile(DATA, n),
        }
    )
    pf = PrivateFrame(df, "pid", max_rows=2, accountant=False, random_state=8)
    spec = Agg("median", "x", BOUNDS, candidates=CANDS)
    out = pf.groupby("g", keys=list(range(n))).agg(m=spec, epsilon=2.0)["m"].to_numpy()
    assert chi2_pvalue(out, CANDS, pf_pmf(scores(DATA, 0.5), 2.0 / (2 * 2 * 0.5))) > ALPHA
    assert chi2_pvalue(out, CANDS, pf_pmf(scores(DATA, 0.5), 2.0)) < ALPHA


def test_counts_per_group_match_the_tools_counts():
    rng = np.random.default_rng(3)
    for _ in range(100):
        n, n_groups = int(rng.integers(0, 40)), int(rng.integers(1, 6))
        g = rng.integers(0, n_groups, n)
        v = rng.choice(np.concatenate([CANDS, rng.uniform(-3, 6, 6)]), n)
        lt, cnt = listed_counts(g, v, n_groups, CANDS)
        for j in range(n_groups):
            want_lt, want_cnt = candidate_counts(v[g == j], CANDS)
            assert lt[j].tolist() == want_lt.tolist() and cnt[j].tolist() == want_cnt.tolist()


def test_large_epsilon_releases_each_groups_candidate_and_without_a_list_nothing_changes():
    groups = [[10.0] * 9, [20.0] * 9, [30.0] * 9]
    pf = _frame(groups, seed=2, accountant=False)
    spec = Agg("median", "x", (0, 40), candidates=[10, 20, 30])
    out = pf.groupby("g", keys=[0, 1, 2]).agg(m=spec, epsilon=200.0)
    assert out["m"].tolist() == [10.0, 20.0, 30.0]
    # same seed, no list: Smith's continuous release, as before
    a = _frame(groups, seed=4, accountant=False).groupby("g", keys=[0, 1, 2])
    b = _frame(groups, seed=4, accountant=False).groupby("g", keys=[0, 1, 2])
    ra = a.agg(m=("x", "median", (0, 40)), epsilon=1.0)["m"]
    rb = b.agg(m=Agg("median", "x", (0, 40), candidates=None), epsilon=1.0)["m"]
    assert ra.tolist() == rb.tolist() and not np.isin(ra, [10, 20, 30]).any()


def test_accuracy_gives_the_rank_bound_over_the_list():
    pf = _frame([DATA], seed=1, accountant=False)
    plan = pf.groupby("g", keys=[0]).plan(
        m=Agg("median", "x", BOUNDS, candidates=CANDS), epsilon=0.5
    )
    row = plan.accuracy(0.05).loc["m"]
    # 2 Delta (ln k + ln(1 / alpha)) / eps, Delta = 0.5, k = 5
    assert row["rank_halfwidth"] == pytest.approx((np.log(5) + np.log(20)) / 0.5)


# ------------------------------------------------------------------------ privacy
def test_exact_privacy_loss_of_adding_or_removing_a_row():
    """Every multiset of 4 values against each neighbour with one row more or fewer: the
    frame's law (``t = eps / (2 max(q, 1 - q))``) stays within eps, and the same selection
    without the factor 1/2 (``t = eps / max(q, 1 - q)``) exceeds it -- the check can fail."""
    eps = 1.0
    values = [-1.0, 0.25, 0.6, 1.0, 2.7, 4.0]
    for q in (0.5, 0.2, 0.9):
        worst, worst_uncal = 0.0, 0.0
        for d in itertools.combinations_with_replacement(values, 4):
            s = scores(list(d), q)
            pa, pa2 = pf_pmf(s, t_of(eps, q)), pf_pmf(s, 2 * t_of(eps, q))
            nbs = [list(d[:i] + d[i + 1 :]) for i in range(4)] + [[*d, v] for v in values]
            for nb in nbs:
                sb = scores(nb, q)
                worst = max(worst, max_privacy_loss(pa, pf_pmf(sb, t_of(eps, q))))
                worst_uncal = max(worst_uncal, max_privacy_loss(pa2, pf_pmf(sb, 2 * t_of(eps, q))))
        assert 0.5 * eps < worst <= eps + 1e-9, (q, worst)
        assert worst_uncal > 1.05 * eps, (q, worst_uncal)


def _worst_pair(q: float, eps: float) -> tuple[list[float], list[float], float]:
    values = [-1.0, 0.25, 1.0, 2.5, 4.0]
    best = ([], [], 0.0)
    for d in itertools.combinations_with_replacement(values, 5):
        pa = pf_pmf(scores(list(d), q), t_of(eps, q))
        for v in values:
            nb = [*d, v]
            loss = max_privacy_loss(pa, pf_pmf(scores(nb, q), t_of(eps, q)))
            if loss > best[2]:
                best = (list(d), nb, loss)
    return best


def test_empirical_privacy_audit_add_one_row():
    """Sampled releases of the frame on the worst add-one pair of the exact search: every
    bucket's log-ratio stays within eps; the frame run at 3x the epsilon is caught."""
    eps, n = 1.0, 30_000
    d1, d2, exact = _worst_pair(0.5, eps)
    assert 0.8 * eps < exact <= eps + 1e-9
    bins = np.concatenate([[CANDS[0] - 1], (CANDS[:-1] + CANDS[1:]) / 2, [CANDS[-1] + 1]])
    a = draws(d1, n, 0.5, eps, seed=31)
    b = draws(d2, n, 0.5, eps, seed=32)
    assert audit(a, b, bins) <= eps
    for out, data in ((a, d1), (b, d2)):  # and each side follows its exact law
        assert chi2_pvalue(out, CANDS, pf_pmf(scores(data, 0.5), t_of(eps, 0.5))) > ALPHA
    a3 = draws(d1, n, 0.5, 3 * eps, seed=33)
    b3 = draws(d2, n, 0.5, 3 * eps, seed=34)
    assert audit(a3, b3, bins, min_count=100) > eps


# -------------------------------------------------------------------- validation
@pytest.mark.parametrize("func", ["median", "quantile"])
@pytest.mark.parametrize(("bad", "match"), BAD)
def test_invalid_candidates_raise_before_the_accountant_is_charged(func, bad, match):
    acc = dp.BudgetAccountant(epsilon=5.0)
    pf = _frame([[1.0, 2.0, 3.0]], seed=1, accountant=acc)
    q = 0.5 if func == "median" else 0.3
    with pytest.raises(ConfigError, match=match):
        spec = {"func": func, "column": "x", "bounds": (0, 10), "q": q, "candidates": bad}
        pf.groupby("g", keys=[0]).agg(v=spec, epsilon=1.0)
    assert acc.spent_budget == []


def test_other_invalid_uses_are_refused_before_any_charge():
    acc = dp.BudgetAccountant(epsilon=5.0)
    pf = _frame([[1.0, 2.0, 3.0]], seed=1, accountant=acc, bounds={"x": (0, 2)})
    grouped = pf.groupby("g", keys=[0])
    # the frame's bounds are the ones the list must lie in
    with pytest.raises(ConfigError, match="inside the bounds"):
        grouped.agg(m=Agg("median", "x", candidates=[1.0, 3.0]), epsilon=1.0)
    with pytest.raises(ConfigError, match="takes no candidates"):
        grouped.agg(m=Agg("mean", "x", (0, 2), candidates=[1.0]), epsilon=1.0)
    ints = _frame([[1.0, 2.0, 3.0]], seed=1, accountant=acc, integer_columns=["x"])
    with pytest.raises(ConfigError, match="integer_columns"):
        ints.groupby("g", keys=[0]).plan(m=Agg("median", "x", (0, 5), candidates=[1.0]), epsilon=1)
    assert acc.spent_budget == []
    grouped.agg(m=Agg("median", "x", candidates=[1.0]), epsilon=1.0)  # one candidate is fine
    assert acc.total().epsilon == 1.0
