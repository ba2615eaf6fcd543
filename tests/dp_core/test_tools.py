"""DP statistics: diffprivlib-style usage, error paths, accuracy and privacy audits."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

import veil.dp as dp
from veil.errors import BudgetError, ConfigError, InputError

from ._audit import audit as shared_audit

AGES = np.array([23, 35, 47, 51, 62, 29, 40, 33, 71, 58, 19, 44], dtype=float)


audit = partial(shared_audit, min_count=150)  # these tests' smaller samples
# statistical checks of calls without random_state: their generator is seeded (conftest)
pytestmark = pytest.mark.usefixtures("seeded_default")


def test_diffprivlib_style_session():
    acc = dp.BudgetAccountant(epsilon=1.2)
    m = dp.tools.mean(AGES, epsilon=0.5, bounds=(0, 100), accountant=acc)
    assert 0 <= m <= 100
    assert acc.total().epsilon == pytest.approx(0.5)
    assert acc.remaining(2).epsilon == pytest.approx(0.35)
    hist, edges = dp.tools.histogram(AGES, epsilon=0.1, range=[10, 100], accountant=acc)
    assert hist.shape == (10,) and edges[0] == 10 and edges[-1] == 100
    assert len(acc) == 2
    with pytest.raises(BudgetError):
        dp.tools.mean(AGES, epsilon=0.7, bounds=(0, 100), accountant=acc)
    assert len(acc) == 2  # nothing recorded for the refused query


def test_missing_bounds_and_range_are_errors():
    with pytest.raises(ConfigError, match="never read from the data"):
        dp.tools.mean(AGES, epsilon=1)
    with pytest.raises(ConfigError):
        dp.tools.quantile(AGES, 0.5, epsilon=1)
    with pytest.raises(ConfigError):
        dp.tools.histogram(AGES, epsilon=1)
    with pytest.raises(ConfigError):
        dp.tools.histogramdd(np.c_[AGES, AGES], epsilon=1, bins=3)
    with pytest.raises(ConfigError):
        dp.tools.mean(AGES, epsilon=1, bounds=(5, 1))


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), "1"])
def test_bad_epsilon(eps):
    with pytest.raises(ConfigError):
        dp.tools.mean(AGES, epsilon=eps, bounds=(0, 100))


def test_nan_is_never_silent():
    x = AGES.copy()
    x[0] = np.nan
    for f in (dp.tools.mean, dp.tools.sum, dp.tools.var, dp.tools.std, dp.tools.median):
        with pytest.raises(InputError, match="NaN"):
            f(x, epsilon=1, bounds=(0, 100))
    with pytest.raises(InputError):
        dp.tools.histogram(x, epsilon=1, range=(0, 100))
    # nan variants ignore NaN (not zero): mean of ones with NaN stays ~1
    ones = np.ones(5000)
    ones[:2500] = np.nan
    est = [dp.tools.nanmean(ones, epsilon=1, bounds=(0, 1)) for _ in range(50)]
    assert np.mean(est) > 0.97


def test_budget_checked_before_computing():
    acc = dp.BudgetAccountant(epsilon=0.3)
    with pytest.raises(BudgetError):
        dp.tools.quantile(AGES, [0.1, 0.9], epsilon=0.5, bounds=(0, 100), accountant=acc)
    # invalid input is rejected before the budget is touched
    with pytest.raises(InputError):
        dp.tools.mean([np.nan], epsilon=0.1, bounds=(0, 1), accountant=acc)
    with pytest.raises(ConfigError):
        dp.tools.histogram(AGES, epsilon=0.1, bins=-3, range=(0, 1), accountant=acc)
    assert len(acc) == 0


def test_mean_unbiased_with_predicted_error():
    x = np.random.default_rng(0).uniform(0, 100, 1000)
    est = np.array([dp.tools.mean(x, epsilon=1.0, bounds=(0, 100)) for _ in range(400)])
    sd = math.sqrt(2) * 100 / 1000  # Laplace scale (U - L) / (n eps)
    assert abs(est.mean() - x.mean()) < 4.9 * sd / math.sqrt(400)
    assert est.std() == pytest.approx(sd, rel=0.2)


def test_mean_privacy_audit():
    d1 = np.array([0.0] * 9 + [0.0])
    d2 = np.array([0.0] * 9 + [100.0])  # one record replaced
    a = np.array([dp.tools.mean(d1, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    b = np.array([dp.tools.mean(d2, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    assert audit(a, b, np.linspace(0, 100, 21)) <= 1.0


def test_nanmean_privacy_audit_nan_does_not_leak():
    d1 = np.array([50.0] * 9 + [np.nan])
    d2 = np.array([50.0] * 9 + [100.0])
    a = np.array([dp.tools.nanmean(d1, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    b = np.array([dp.tools.nanmean(d2, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    assert audit(a, b, np.linspace(0, 100, 21)) <= 1.0


def test_quantile_privacy_audit_and_accuracy():
    base = np.linspace(10, 90, 21)
    d2 = base.copy()
    d2[10] = 0.0  # replace the median record
    a = np.array([dp.tools.median(base, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    b = np.array([dp.tools.median(d2, epsilon=1.0, bounds=(0, 100)) for _ in range(4000)])
    assert audit(a, b, np.linspace(0, 100, 11)) <= 1.0
    big = np.random.default_rng(1).normal(50, 10, 10_000)
    qs = dp.tools.quantile(big, [0.25, 0.5, 0.75], epsilon=1.0, bounds=(0, 100))
    assert np.all(np.abs(qs - np.quantile(big, [0.25, 0.5, 0.75])) < 1.0)
    assert np.all(np.diff(qs) >= 0)
    p = dp.tools.percentile(big, 50, epsilon=1.0, bounds=(0, 100))
    assert abs(p - np.median(big)) < 1.0
    with pytest.raises(ConfigError):
        dp.tools.quantile(big, 1.5, epsilon=1, bounds=(0, 100))


def test_histogram_privacy_audit():
    d1 = np.array([15.0, 25.0, 35.0])
    d2 = np.array([15.0, 25.0, 35.0, 35.0])  # one record added
    a = np.array(
        [dp.tools.histogram(d1, epsilon=1.0, bins=3, range=(10, 40))[0][2] for _ in range(4000)]
    )
    b = np.array(
        [dp.tools.histogram(d2, epsilon=1.0, bins=3, range=(10, 40))[0][2] for _ in range(4000)]
    )
    assert audit(a, b, np.arange(-0.5, 8.5)) <= 1.0


def test_histogram_weights_honoured():
    x = np.full(100, 5.0)
    with pytest.raises(ConfigError, match="weight_bound"):
        dp.tools.histogram(x, epsilon=1, range=(0, 10), weights=np.ones(100))
    h = np.array(
        [
            dp.tools.histogram(
                x, epsilon=1.0, bins=1, range=(0, 10), weights=np.full(100, 3.0), weight_bound=10
            )[0][0]
            for _ in range(1000)
        ]
    )
    assert h.std() == pytest.approx(math.sqrt(2) * 10, rel=0.2)  # noise scale B / eps
    assert h.mean() == pytest.approx(300, abs=3)


def test_histogram_density_and_shapes():
    x = np.random.default_rng(2).uniform(0, 10, 5000)
    dens, edges = dp.tools.histogram(x, epsilon=1, bins=5, range=(0, 10), density=True)
    assert np.sum(dens * np.diff(edges)) == pytest.approx(1.0)
    h2, xe, ye = dp.tools.histogram2d(x, x, epsilon=1, bins=4, range=[(0, 10), (0, 10)])
    assert h2.shape == (4, 4) and xe.shape == (5,)
    hd, ed = dp.tools.histogramdd(np.c_[x, x, x], epsilon=1, bins=2, range=[(0, 10)] * 3)
    assert hd.shape == (2, 2, 2) and len(ed) == 3


def test_axis_keepdims_and_epsilon_split():
    x = np.random.default_rng(3).uniform(0, 1, (2000, 3))
    acc = dp.BudgetAccountant(epsilon=1.0)
    m = dp.tools.mean(x, epsilon=1.0, bounds=(0, 1), axis=0, accountant=acc)
    assert m.shape == (3,) and acc.total().epsilon == pytest.approx(1.0)
    assert dp.tools.mean(x, epsilon=1, bounds=(0, 1), axis=0, keepdims=True).shape == (1, 3)
    assert dp.tools.var(x, epsilon=1, bounds=(0, 1), axis=1).shape == (2000,)
    per_col = dp.tools.sum(x, epsilon=1, bounds=([0, 0, 0], [1, 1, 1]), axis=0)
    assert per_col.shape == (3,)
    with pytest.raises(ConfigError):
        dp.tools.mean(x, epsilon=1, bounds=(0, 1), axis=5)


def test_sum_count_var_std():
    x = np.random.default_rng(4).integers(0, 2, 5000)  # a 0/1 database
    s = dp.tools.sum(x, epsilon=1.0, bounds=(0, 1), dtype=int)
    assert isinstance(s, (int, np.integer)) and abs(s - x.sum()) < 30
    c = dp.tools.count_nonzero(x, epsilon=1.0)
    assert abs(c - x.sum()) < 30
    v = dp.tools.var(x.astype(float), epsilon=1.0, bounds=(0, 1))
    assert abs(v - x.var()) < 0.02
    sd = dp.tools.std(x.astype(float), epsilon=1.0, bounds=(0, 1))
    assert abs(sd - x.std()) < 0.03
    nv = dp.tools.nanvar(np.r_[x, [np.nan] * 10].astype(float), epsilon=1.0, bounds=(0, 1))
    assert abs(nv - x.var()) < 0.05


def test_estimated_bounds_opt_in():
    x = np.random.default_rng(5).uniform(18, 90, 20_000)
    lo, hi = dp.tools.estimate_bounds(x, epsilon=1.0)
    assert lo <= 18 and 90 <= hi <= 256
    acc = dp.BudgetAccountant(epsilon=1.0)
    m = dp.tools.mean(x, epsilon=1.0, bounds="estimate", accountant=acc)
    assert abs(m - x.mean()) < 1.0 and acc.total().epsilon == pytest.approx(1.0)


def test_pandas_inputs_follow_the_nan_rules():
    import pandas as pd

    s = pd.Series([20, 30, None, 50], dtype="Int64")
    with pytest.raises(InputError, match="NaN"):
        dp.tools.mean(s, epsilon=1, bounds=(0, 100))
    assert 0 <= dp.tools.nanmean(s, epsilon=1, bounds=(0, 100)) <= 100
    df = pd.DataFrame({"a": np.arange(100.0), "b": np.arange(100.0)}, index=np.arange(100) * 7)
    assert dp.tools.mean(df, epsilon=1, bounds=(0, 100), axis=0).shape == (2,)
    h, _ = dp.tools.histogram(df["a"], epsilon=1, bins=4, range=(0, 100))
    assert h.shape == (4,)
    with pytest.raises(InputError):
        dp.tools.mean(pd.Series(["x", "y"]), epsilon=1, bounds=(0, 1))


def test_secure_generator_reseeds_after_fork():
    import os

    from veil.dp._rng import SecureRandom

    rng = SecureRandom()
    rng.raw(1)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report its next words and exit immediately
        os.close(r)
        os.write(w, rng.raw(4).tobytes())
        os._exit(0)
    os.close(w)
    child = os.read(r, 32)
    os.close(r)
    os.waitpid(pid, 0)
    assert child != rng.raw(4).tobytes()


def test_accuracy_before_release_covers_the_noise():
    x = np.random.default_rng(6).uniform(0, 100, 500)
    h = dp.tools.accuracy("mean", 0.5, bounds=(0, 100), n=x.size, alpha=0.1)
    est = np.array([dp.tools.mean(x, epsilon=0.5, bounds=(0, 100)) for _ in range(2000)])
    cover = np.mean(np.abs(est - x.mean()) <= h)
    assert 0.9 - 4.9 * math.sqrt(0.09 / 2000) <= cover <= 0.95
    hs = dp.tools.accuracy("sum", 1.0, bounds=(0, 1), alpha=0.05)
    assert hs == pytest.approx(math.log(20), rel=1e-3)
    assert dp.tools.accuracy("histogram", 1.0) == 3.0
    with pytest.raises(ConfigError):
        dp.tools.accuracy("median", 1.0, bounds=(0, 1))
    with pytest.raises(ConfigError):
        dp.tools.accuracy("mean", 1.0, bounds=(0, 1))


def test_data_dependent_bins_are_refused():
    with pytest.raises(ConfigError, match="leaks"):
        dp.tools.histogram(AGES, epsilon=1, bins="auto", range=(0, 100))
    with pytest.raises(ConfigError, match="leaks"):
        dp.tools.histogramdd(np.c_[AGES, AGES], epsilon=1, bins=["auto", 3], range=[(0, 100)] * 2)
    h, e = dp.tools.histogram(AGES, epsilon=1, bins=[0, 50, 100])
    assert h.shape == (2,) and e.tolist() == [0, 50, 100]


def test_quantile_interval_choice_matches_smith_exactly(chi2_pvalue):
    from veil.dp._rng import SecureRandom
    from veil.dp.tools import _quantiles as Q

    edges = np.array([0.0, 1.0, 2.0, 4.0, 7.0, 10.0])
    length = np.diff(edges)
    rng = SecureRandom(21)
    mu, eps = 0.5 * 4, 1.0
    draws = np.array([Q._exact_interval(length, mu, eps, rng) for _ in range(10_000)])
    w = length * np.exp(-eps * np.abs(np.arange(5) - mu) / 2)
    assert chi2_pvalue(draws, np.arange(5), w) > 1e-6
    # zero-length intervals (ties) are never chosen
    tied = np.array([0.0, 3.0, 0.0, 0.0, 2.0])
    picks = {Q._exact_interval(tied, 2.0, 1.0, rng) for _ in range(300)}
    assert picks <= {1, 4}


def test_quantile_fallback_path(monkeypatch):
    from veil.dp.tools import _quantiles as Q

    monkeypatch.setattr(Q, "_MAX_PROPOSALS", 0)
    m = dp.tools.median(np.arange(100.0), epsilon=1.0, bounds=(0, 100))
    assert 0 <= m <= 100
