"""Utility at a large epsilon, sensitivity bounds, and an empirical privacy-loss audit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from sklearn.decomposition import PCA as SkPCA

from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
)
from veil.ml._linear import scaled_design


def test_gaussian_nb_recovers_class_moments_at_large_epsilon():
    rng = np.random.default_rng(2024)
    X0 = rng.normal([2.0, 5.0], [0.5, 1.0], (3000, 2))
    X1 = rng.normal([6.0, 3.0], [1.0, 0.5], (3000, 2))
    X, y = np.vstack([X0, X1]), np.repeat([0, 1], 3000)
    clf = GaussianNB(epsilon=500.0, bounds=(-2, 12), random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.theta_, [[2, 5], [6, 3]], atol=0.1)
    np.testing.assert_allclose(clf.var_, [[0.25, 1.0], [1.0, 0.25]], rtol=0.15)
    assert clf.score(X, y) > 0.97


def test_logistic_regression_learns_at_large_epsilon():
    rng = np.random.default_rng(2024)
    X = rng.normal(size=(4000, 3))
    y = (X @ [2.0, -1.0, 0.0] + 0.5 > 0).astype(int)
    clf = LogisticRegression(epsilon=50.0, data_norm=4.0, C=10.0, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.93
    cos = clf.coef_[0] @ [2, -1, 0] / np.linalg.norm(clf.coef_[0]) / np.sqrt(5)
    assert cos > 0.95
    multi = (X[:, 0] > 0.5).astype(int) + (X[:, 0] > -0.5).astype(int)
    clf3 = LogisticRegression(epsilon=50.0, data_norm=4.0, C=10.0, random_state=0).fit(X, multi)
    assert clf3.coef_.shape == (3, 3) and clf3.score(X, multi) > 0.8


def test_linear_regression_recovers_coefficients_with_asymmetric_bounds():
    rng = np.random.default_rng(2024)
    # bounds far from zero: the diffprivlib #104 situation (lower bound used twice)
    X = rng.uniform(100, 101, (20000, 2))
    y = (X - 100) @ [3.0, -2.0] + 10.0
    reg = LinearRegression(epsilon=20.0, bounds_X=(100, 101), bounds_y=(5, 15), random_state=0).fit(
        X, y
    )
    np.testing.assert_allclose(reg.coef_, [3.0, -2.0], atol=0.15)
    assert reg.score(X, y) > 0.97


@settings(max_examples=60, deadline=None)
@given(
    rows=arrays(np.float64, (5, 3), elements=st.floats(-1e6, 1e6)),
    lo=st.floats(-100, 100),
    width=st.floats(1e-3, 1e3),
    fit_intercept=st.booleans(),
)
def test_linear_regression_sensitivity_one_row_moves_each_entry_at_most_one(
    rows, lo, width, fit_intercept
):
    lo_x, hi_x = np.full(2, lo), np.full(2, lo + width)
    lo_y, hi_y = np.array([lo - 1]), np.array([lo + 2 * width])
    Z, h = scaled_design(rows[:, :2], rows[:, 2:], lo_x, hi_x, lo_y, hi_y, fit_intercept)
    assert np.all(np.abs(Z) <= 1 + 1e-12)
    contrib = np.einsum("ni,nj->nij", Z, Z)  # each row's contribution to Z^T Z
    assert np.abs(contrib).max() <= 1 + 1e-12


def test_kmeans_finds_separated_clusters_and_private_inertia():
    rng = np.random.default_rng(2024)
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 5.0]])
    X = np.vstack([rng.normal(c, 0.3, (2000, 2)) for c in centers])
    km = KMeans(3, epsilon=20.0, bounds=(-1, 6), random_state=3).fit(X)
    dist = np.linalg.norm(km.cluster_centers_[:, None] - centers[None], axis=2)
    assert dist.min(axis=0).max() < 0.3
    true_inertia = -km.score(X)
    assert km.inertia_ == pytest.approx(true_inertia, rel=0.3)


def test_kmeans_inertia_noise_is_laplace_with_the_stated_interval():
    """inertia_ - clipped true inertia ~ Laplace(D^2 / (share eps)) (KS, alpha 1e-6), and the
    stated 95 % half-width is that law's quantile; a noise-dominated release warns."""
    from veil.errors import AccuracyWarning, ConfigError

    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (400, 2))
    eps, share = 2.0, 0.5
    scale = 2.0 / (share * eps)  # D^2 = 1 + 1 for bounds (0, 1) in 2-D
    noise = []
    for seed in range(300):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            km = KMeans(2, epsilon=eps, bounds=(0, 1), inertia_share=share, random_state=seed)
            km.fit(X)
        assert km.inertia_ci_ == pytest.approx(scale * np.log(20))
        noise.append(km.inertia_ + km.score(X))  # score is minus the true inertia
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-6
    with pytest.warns(AccuracyWarning, match="within its noise"):
        KMeans(2, epsilon=0.01, bounds=(0, 1), random_state=0).fit(X[:50])
    km = KMeans(2, epsilon=1.0, bounds=(0, 1), inertia_share=0, random_state=0).fit(X)
    assert np.isnan(km.inertia_) and np.isnan(km.inertia_ci_)
    with pytest.raises(ConfigError, match="inertia_share"):
        KMeans(2, epsilon=1.0, bounds=(0, 1), inertia_share=1.0).fit(X)
    with pytest.raises(ConfigError, match="inertia_clip"):
        KMeans(2, epsilon=1.0, bounds=(0, 1), inertia_clip=0).fit(X)


def test_kmeans_inertia_clip_caps_each_point_and_scales_the_noise():
    rng = np.random.default_rng(8)
    X = np.vstack([rng.uniform(0, 0.2, (300, 2)), [[1.0, 1.0]]])  # one far point
    km = KMeans(1, epsilon=1e6, bounds=(0, 1), inertia_share=0.5, inertia_clip=0.01,
                n_iter=3, random_state=1).fit(X)  # fmt: skip
    d2 = ((X - km.cluster_centers_[0]) ** 2).sum(axis=1)
    assert km.inertia_ == pytest.approx(np.minimum(d2, 0.01).sum(), abs=1e-3)
    assert km.inertia_ci_ == pytest.approx(0.01 / (0.5e6) * np.log(20))


def test_pca_matches_principal_axis_at_large_epsilon():
    rng = np.random.default_rng(2024)
    X = rng.normal(size=(5000, 3)) * [3.0, 1.0, 0.2]
    rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    X = X @ rot.T + 1.0
    pca = PCA(2, epsilon=50.0, data_norm=15.0, bounds=(-12, 14), random_state=0).fit(X)
    ref = SkPCA(2).fit(X)
    assert abs(pca.components_[0] @ ref.components_[0]) > 0.99
    assert pca.explained_variance_ratio_[0] == pytest.approx(
        ref.explained_variance_ratio_[0], abs=0.05
    )
    assert pca.transform(X).shape == (5000, 2)


def test_standard_scaler_moments():
    rng = np.random.default_rng(2024)
    X = rng.normal([40.0, 10.0], [12.0, 2.0], (20000, 2))
    sc = StandardScaler(epsilon=20.0, bounds=([0, 0], [100, 20]), random_state=0).fit(X)
    np.testing.assert_allclose(sc.mean_, [40, 10], atol=0.3)
    np.testing.assert_allclose(sc.scale_, [12, 2], rtol=0.05)
    np.testing.assert_allclose(sc.inverse_transform(sc.transform(X)), X, atol=1e-9)


def test_random_trees_learn_a_threshold():
    rng = np.random.default_rng(2024)
    X = rng.uniform(0, 1, (20000, 2))
    y = (X[:, 0] > 0.4).astype(int)
    tree = DecisionTreeClassifier(max_depth=8, epsilon=5.0, bounds=(0, 1), random_state=1).fit(X, y)
    forest = RandomForestClassifier(
        20, max_depth=6, epsilon=5.0, bounds=(0, 1), random_state=1
    ).fit(X, y)
    assert tree.score(X, y) > 0.8
    assert forest.score(X, y) > 0.9
    proba = forest.predict_proba(X[:10])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_adult_naive_bayes_beats_majority_class(adult_xy):
    X, y = adult_xy
    acc = np.mean(
        [
            GaussianNB(epsilon=0.5, bounds=(0, 1), random_state=s).fit(X, y).score(X, y)
            for s in range(3)
        ]
    )
    assert acc > 0.78  # majority class is 0.759


def test_naive_bayes_privacy_loss_audit(assert_ratio_within_eps):
    """Empirical audit on neighbouring datasets: no output bucket's probability ratio may
    exceed e^eps beyond sampling error (Clopper-Pearson bounds at alpha = 1e-6)."""
    rng = np.random.default_rng(2024)
    eps, runs = 1.0, 2000
    base = np.concatenate([np.full(5, 0.2), np.full(5, 0.3)])[:, None]
    neighbour = np.vstack([base, [[1.0]]])  # one extra person at the upper bound
    y0, y1 = np.zeros(len(base), int), np.zeros(len(neighbour), int)
    seeds = rng.integers(0, 2**31, size=2 * runs)

    def release(X, y, seed):
        clf = GaussianNB(epsilon=eps, bounds=(0, 1), classes=[0], random_state=int(seed)).fit(X, y)
        return clf.theta_[0, 0]

    a = np.array([release(base, y0, s) for s in seeds[:runs]])
    b = np.array([release(neighbour, y1, s) for s in seeds[runs:]])
    assert_ratio_within_eps(a, b, eps)


def test_privacy_loss_audit_passes_laplace_and_catches_an_overspending_one(
    assert_ratio_within_eps,
):
    """The audit used above: Laplace(1/eps) on a sensitivity-1 value passes at eps, and the
    same release with a third of the noise (a 3 eps mechanism claiming eps) is caught."""
    rng = np.random.default_rng(7)
    eps, runs = 1.0, 2000
    assert_ratio_within_eps(rng.laplace(0.0, 1 / eps, runs), rng.laplace(1.0, 1 / eps, runs), eps)
    with pytest.raises(AssertionError):
        assert_ratio_within_eps(
            rng.laplace(0.0, 1 / (3 * eps), runs), rng.laplace(1.0, 1 / (3 * eps), runs), eps
        )


def test_gaussian_nb_count_share_balances_count_and_sum_noise():
    """The count's share s solves (1 - s)/s = (2d)^(2/3) (cube-root balance of the count and
    the 2d sums in a noisy mean), lies in (0, 1/2) and shrinks as d grows."""
    from veil.ml._naive_bayes import count_share

    shares = [count_share(d) for d in range(1, 200)]
    for d, s in zip(range(1, 200), shares):
        assert 0 < s < 0.5
        assert (1 - s) / s == pytest.approx((2 * d) ** (2 / 3))
    assert all(a > b for a, b in zip(shares, shares[1:]))
    # and it is the claimed optimum: it minimises the mean's error proxy 1/s^2 + (2d)^2/(1-s)^2
    grid = np.linspace(0.001, 0.999, 99_801)
    for d in (1, 4, 5, 81):
        proxy = 1 / grid**2 + (2 * d) ** 2 / (1 - grid) ** 2
        assert count_share(d) == pytest.approx(grid[np.argmin(proxy)], abs=2e-5)
