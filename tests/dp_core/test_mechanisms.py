"""Mechanisms: distributions, accuracy intervals, privacy-loss audits, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from veil.dp import mechanisms as M
from veil.dp._samplers import grid_for
from veil.errors import BudgetError, ConfigError, InputError, InsecureRandomWarning

from ._audit import audit

ALPHA = 1e-6
N = 100_000


def test_laplace_distribution_scale_and_grid():
    m = M.Laplace(epsilon=0.5, delta=0.1, sensitivity=2.0, random_state=1)
    b = 2.0 / (0.5 - math.log(0.9))
    assert m.scale == pytest.approx(b)
    out = m.randomise(np.full(N, 3.0))
    assert stats.kstest(out - 3.0, stats.laplace(scale=b).cdf).pvalue > ALPHA
    assert np.all(np.mod(out / grid_for(b), 1) == 0)
    assert m.variance(0) == pytest.approx(2 * b * b, rel=1e-6)
    assert isinstance(m.randomise(1), float)


@pytest.mark.parametrize(
    "mech",
    [
        lambda: M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=2),
        lambda: M.GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0, random_state=2),
        lambda: M.Gaussian(epsilon=0.8, delta=1e-5, sensitivity=1.0, random_state=2),
        lambda: M.Geometric(epsilon=0.7, sensitivity=1, random_state=2),
        lambda: M.GaussianDiscrete(epsilon=1.0, delta=1e-5, random_state=2),
    ],
)
def test_confidence_interval_coverage(mech):
    m = mech()
    lo, hi = m.confidence_interval(0.1)
    out = m.randomise(np.zeros(20_000, dtype=np.int64))
    cover = np.mean((out >= lo) & (out <= hi))
    assert 0.9 - 4.9 * math.sqrt(0.09 / 20_000) <= cover < 0.95  # valid and not loose
    assert m.confidence_interval(0.1, value=5.0) == pytest.approx((lo + 5, hi + 5))


def test_laplace_privacy_audit_and_audit_power():
    eps = 1.0
    good = M.Laplace(epsilon=eps, sensitivity=1.0, random_state=3)
    bins = np.arange(-8, 9, 0.5)
    assert audit(good.randomise(np.zeros(N)), good.randomise(np.ones(N)), bins) <= eps
    leaky = M.Laplace(epsilon=3 * eps, sensitivity=1.0, random_state=4)  # claims eps, uses 3 eps
    assert audit(leaky.randomise(np.zeros(N)), leaky.randomise(np.ones(N)), bins) > eps


def test_geometric_privacy_audit_and_exact_pmf(chi2_pvalue):
    eps = 0.8
    m = M.Geometric(epsilon=eps, sensitivity=2, random_state=5)
    a = m.randomise(np.full(N, 10))
    b = m.randomise(np.full(N, 12))
    assert audit(a, b, np.arange(-10.5, 35.5)) <= eps
    support = np.arange(-40, 61)
    assert chi2_pvalue(a, support, np.exp(-eps * np.abs(support - 10) / 2)) > ALPHA
    assert isinstance(m.randomise(3), int)


def test_gaussian_variants():
    with pytest.raises(ConfigError):
        M.Gaussian(epsilon=2.0, delta=1e-5, sensitivity=1)
    with pytest.raises(ConfigError):
        M.GaussianAnalytic(epsilon=1.0, delta=0.0, sensitivity=1)
    g = M.GaussianAnalytic(epsilon=2.0, delta=1e-6, sensitivity=1.0, random_state=6)
    out = g.randomise(np.zeros(N))
    assert stats.kstest(out, stats.norm(scale=g.sigma).cdf).pvalue > ALPHA
    c = M.Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    assert g.sigma < c.sigma


def test_gaussian_discrete(chi2_pvalue):
    m = M.GaussianDiscrete(epsilon=2.0, delta=1e-3, sensitivity=1, random_state=7)
    x = m.randomise(np.zeros(N, dtype=np.int64))
    support = np.arange(-30, 31)
    assert chi2_pvalue(x, support, np.exp(-(support**2) / (2 * m.sigma**2))) > ALPHA
    assert np.var(x) == pytest.approx(m.variance(), rel=0.03)
    with pytest.raises(InputError):
        m.randomise(1.5)


def test_truncated_folded_bounded():
    t = M.LaplaceTruncated(epsilon=0.5, sensitivity=1, lower=0, upper=4, random_state=8)
    out = t.randomise(np.full(N, 1.0))
    assert out.min() >= 0 and out.max() <= 4
    assert out.mean() - 1.0 == pytest.approx(t.bias(1.0), abs=0.03)
    assert out.var() == pytest.approx(t.variance(1.0), rel=0.03)
    f = M.LaplaceFolded(epsilon=0.5, sensitivity=1, lower=0, upper=4, random_state=8)
    out = f.randomise(np.full(N, 1.0))
    assert out.min() >= 0 and out.max() <= 4
    assert out.mean() - 1.0 == pytest.approx(f.bias(1.0), abs=0.03)
    bd = M.LaplaceBoundedDomain(epsilon=1.0, sensitivity=1, lower=0, upper=10, random_state=8)
    out = bd.randomise(np.full(50_000, 2.0))
    assert out.min() >= 0 and out.max() <= 10
    assert out.mean() - 2.0 == pytest.approx(bd.bias(2.0), abs=0.05)
    assert bd.scale > 1.0 and bd.effective_epsilon() < 1.0


def test_bounded_domain_privacy_audit():
    eps = 1.0
    m = M.LaplaceBoundedDomain(epsilon=eps, sensitivity=1, lower=0, upper=3, random_state=9)
    bins = np.linspace(0, 3, 13)
    assert audit(m.randomise(np.zeros(N)), m.randomise(np.ones(N)), bins) <= eps


def test_geometric_truncated_and_folded():
    t = M.GeometricTruncated(epsilon=0.5, lower=0, upper=5, random_state=10)
    out = t.randomise(np.full(N, 1))
    assert out.min() >= 0 and out.max() <= 5
    assert out.mean() - 1 == pytest.approx(t.bias(1), abs=0.03)
    f = M.GeometricFolded(epsilon=0.5, lower=0, upper=5, random_state=10)
    out = f.randomise(np.full(N, 1))
    assert out.min() >= 0 and out.max() <= 5
    assert out.mean() - 1 == pytest.approx(f.bias(1), abs=0.03)


def test_exponential_matches_its_probabilities(chi2_pvalue):
    m = M.Exponential(epsilon=1.0, sensitivity=1.0, utility=[0, 1, 2, 4], random_state=11)
    p = m.probabilities()
    expected = np.exp(0.5 * np.array([0, 1, 2, 4]))
    assert p == pytest.approx(expected / expected.sum())
    draws = np.array([m.randomise() for _ in range(10_000)])
    assert chi2_pvalue(draws, np.arange(4), p) > ALPHA
    named = M.Exponential(
        epsilon=1.0, sensitivity=1, utility=[1, 2], candidates=["x", "y"], measure=[0, 1]
    )
    assert named.randomise() == "y"


def test_permute_and_flip_privacy_and_utility():
    eps = 1.0
    u1, u2 = np.array([3.0, 2.0, 0.0]), np.array([2.0, 3.0, 1.0])  # neighbours: |du| <= 1
    m1 = M.PermuteAndFlip(epsilon=eps, sensitivity=1, utility=u1, random_state=12)
    m2 = M.PermuteAndFlip(epsilon=eps, sensitivity=1, utility=u2, random_state=13)
    a = np.array([m1.randomise() for _ in range(10_000)])
    b = np.array([m2.randomise() for _ in range(10_000)])
    assert audit(a, b, np.arange(-0.5, 3.5), min_count=100) <= eps
    e = M.Exponential(epsilon=eps, sensitivity=1, utility=u1)
    assert u1[a].mean() >= (e.probabilities() * u1).sum() - 0.03


def test_report_noisy_max():
    m = M.ReportNoisyMax(epsilon=1.0, sensitivity=1.0, random_state=14)
    picks = np.array([m.randomise([0.0, 1.0, 30.0]) for _ in range(500)])
    assert np.mean(picks == 2) > 0.99
    a = np.array([m.randomise([1.0, 0.0]) for _ in range(10_000)])
    b = np.array([m.randomise([0.0, 1.0]) for _ in range(10_000)])
    assert audit(a, b, np.array([-0.5, 0.5, 1.5])) <= 1.0
    lo, hi = m.confidence_interval(0.05, n_candidates=3)
    assert lo == 0 and hi > 0


def test_sparse_vector():
    svt = M.SparseVector(epsilon=2.0, sensitivity=1.0, threshold=50, c=2, random_state=15)
    ans = svt.randomise([0, 0, 1000, 0, 2000, 5000])
    assert ans.tolist() == [False, False, True, False, True] and svt.halted
    with pytest.raises(BudgetError):
        svt.randomise([1])
    at = M.AboveThreshold(epsilon=2.0, sensitivity=1.0, threshold=50, random_state=16)
    assert at.randomise([0, 1, 2]) is None
    assert at.randomise([5000]) == 0


def test_sparse_vector_privacy_audit():
    eps = 1.0
    res = {}
    for name, q in [("D", [0.0, 0.0, 0.0]), ("D2", [1.0, 1.0, 1.0])]:
        outs = []
        for seed in range(4000):
            svt = M.AboveThreshold(epsilon=eps, sensitivity=1.0, threshold=1.0, random_state=seed)
            r = svt.randomise(q)
            outs.append(-1 if r is None else r)
        res[name] = np.array(outs)
    assert audit(res["D"], res["D2"], np.arange(-1.5, 3.5), min_count=100) <= eps


def test_randomized_response():
    cats = ["a", "b", "c", "d"]
    rr = M.RandomizedResponse(epsilon=1.0, categories=cats, random_state=17)
    p = rr.p_keep
    q = (1 - p) / 3
    assert p / q <= math.exp(1.0)
    truth = np.array(["a"] * 60_000 + ["b"] * 30_000 + ["c"] * 10_000, dtype=object)
    resp = rr.randomise(truth)
    est = rr.estimate(resp)
    h = rr.estimate_halfwidth(truth.size, alpha=1e-6)
    assert abs(est["a"] - 0.6) < h and abs(est["d"]) < h
    kept = np.mean(rr.randomise(np.array(["d"] * N, dtype=object)) == "d")
    assert stats.binomtest(int(kept * N), N, p).pvalue > ALPHA
    with pytest.raises(InputError):
        rr.randomise("zzz")
    b = M.Binary(epsilon=math.log(3), value0="no", value1="yes", random_state=18)
    assert b.p_keep == pytest.approx(0.75)


def test_coin_flip_survey_estimates_the_truth():
    truth = np.zeros(N, dtype=bool)
    truth[: N // 5] = True
    resp = M.coin_flip_survey(truth, random_state=19)
    est = M.estimate_proportion(resp)
    # sd of the estimate = 2 * sqrt(P(1-P)/N) with P = 0.2/2 + 1/4
    assert abs(est - 0.2) < 4.9 * 2 * math.sqrt(0.35 * 0.65 / N)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": -1.0, "sensitivity": 1},
        {"epsilon": float("nan"), "sensitivity": 1},
        {"epsilon": "1", "sensitivity": 1},
        {"epsilon": 1.0, "delta": 2.0, "sensitivity": 1},
        {"epsilon": 0.0, "delta": 0.0, "sensitivity": 1},
        {"epsilon": 1.0, "sensitivity": -1},
    ],
)
def test_bad_parameters_raise_config_error(kwargs):
    with pytest.raises(ConfigError):
        M.Laplace(**kwargs)


def test_bad_values_raise_input_error():
    m = M.Laplace(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(InputError):
        m.randomise(float("nan"))
    with pytest.raises(InputError):
        m.randomise("abc")


def test_seed_warns_insecure():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=1)
    assert any(issubclass(w.category, InsecureRandomWarning) for w in rec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.Laplace(epsilon=1.0, sensitivity=1.0)  # secure default: no warning


def test_scalar_fast_path_matches_distribution_and_grid():
    m = M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=20)
    out = np.array([m.randomise(2.5) for _ in range(20_000)])
    assert stats.kstest(out - 2.5, stats.laplace(scale=1.0).cdf).pvalue > ALPHA
    assert np.all(np.mod(out / grid_for(1.0), 1) == 0)
    with pytest.raises(InputError):
        m.randomise(float("inf"))
    assert M.Laplace(epsilon=1.0, sensitivity=0.0).randomise(3.0) == 3.0
