"""Noise laws of the private StandardScaler and PCA: the scales their docstrings derive.

StandardScaler (``noisy_moments``): 5 % of epsilon for the count, the rest split evenly over the
``2 d`` sums (values scaled to [-1, 1], sensitivity 1 each), so a released mean deviates from
the data's by ``half * Laplace(1 / eps_each) / n`` (``eps_each = 0.95 eps / (2 d)``).
PCA (Jiang, Xie & Zhang 2016): the scatter matrix plus ``G.T @ G`` with ``G`` a
``(d + 1) x d`` matrix of N(0, s) entries, ``s = 3 R^2 / (2 eps_cov)``, so the trace of the
added noise over ``s`` is chi-square with ``d (d + 1)`` degrees of freedom.
Both are KS tests at alpha = 1e-6 over fixed numbers of seeded fits.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from veil.ml import PCA, StandardScaler

ALPHA = 1e-6


def test_standard_scaler_mean_noise_is_laplace_at_the_derived_scale():
    n, d, eps, fits = 20_000, 2, 0.5, 1_000
    X = np.tile([[0.0, 10.0], [4.0, 30.0]], (n // 2, 1))  # exact means 2 and 20
    lo, hi = np.array([0.0, 10.0]), np.array([4.0, 30.0])  # mid-points = means: sums are 0
    half = (hi - lo) / 2
    eps_each = 0.95 * eps / (2 * d)
    dev = np.array(
        [
            StandardScaler(epsilon=eps, bounds=(lo, hi), random_state=s).fit(X).mean_ - [2.0, 20.0]
            for s in range(fits)
        ]
    )
    for j in range(d):
        # the count's noise (scale 1 / (0.05 eps) = 40 on n = 20,000) moves the ratio by ~0.2 %
        scale = half[j] / (eps_each * n)
        assert stats.kstest(dev[:, j], stats.laplace(scale=scale).cdf).pvalue > ALPHA
    # a budget read wrongly (e.g. eps not split over the 2 d sums) is caught
    wrong = half[0] / (2 * eps_each * n)
    assert stats.kstest(dev[:, 0], stats.laplace(scale=wrong).cdf).pvalue < ALPHA


def test_pca_wishart_noise_trace_is_chi_square():
    rng = np.random.default_rng(3)
    n, d, eps, R, fits = 500, 3, 2.0, 4.0, 1_000
    Z = rng.normal(0, 1, (n, d))
    Z *= np.minimum(1.0, (R - 1e-9) / np.linalg.norm(Z, axis=1))[:, None]  # no clipping at R
    scatter = Z.T @ Z
    s = 3 * R**2 / (2 * 0.95 * eps)  # centered=True: 95 % of eps for the scatter matrix
    t = np.empty(fits)
    for i in range(fits):
        p = PCA(d, epsilon=eps, data_norm=R, centered=True, random_state=i).fit(Z)
        vals = p.explained_variance_ * max(p.n_samples_ - 1, 1)  # eigenvalues of the release
        noisy = (p.components_.T * vals) @ p.components_
        t[i] = np.trace(noisy - scatter) / s
    assert stats.kstest(t, stats.chi2(d * (d + 1)).cdf).pvalue > ALPHA
    # a Wishart with d degrees of freedom instead of d + 1, or the scale of eps / 2 (the
    # split used when the mean is estimated too), would be caught
    assert stats.kstest(t, stats.chi2(d * d).cdf).pvalue < ALPHA
    assert stats.kstest(t / 1.9, stats.chi2(d * (d + 1)).cdf).pvalue < ALPHA
