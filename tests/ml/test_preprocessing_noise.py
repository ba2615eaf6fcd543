"""Noise laws of the private StandardScaler and PCA: the scales their docstrings derive.

StandardScaler (``noisy_moments``): 5 % of epsilon for the count, the rest split evenly over the
``2 d`` sums (values scaled to [-1, 1], sensitivity 1 each), so a released mean deviates from
the data's by ``half * Laplace(1 / eps_each) / n`` (``eps_each = 0.95 eps / (2 d)``).
PCA: the upper triangle of the scatter matrix plus Laplace noise of scale
``(d + 1) R^2 / (2 eps_cov)`` per entry (L1 sensitivity of ``z z^T``'s upper triangle for
``||z|| <= R``).
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


def test_pca_scatter_noise_is_laplace_at_the_derived_scale():
    rng = np.random.default_rng(3)
    n, d, eps, R, fits = 500, 3, 2.0, 4.0, 1_000
    Z = rng.normal(0, 1, (n, d))
    Z *= np.minimum(1.0, (R - 1e-9) / np.linalg.norm(Z, axis=1))[:, None]  # no clipping at R
    scatter = Z.T @ Z
    iu = np.triu_indices(d)
    # centered=True: 95 % of eps for the scatter matrix, L1 sensitivity (d + 1) R^2 / 2
    scale = (d + 1) * R**2 / 2 / (0.95 * eps)
    noise = np.empty((fits, len(iu[0])))
    for i in range(fits):
        p = PCA(d, epsilon=eps, data_norm=R, centered=True, random_state=i).fit(Z)
        noisy = (p.components_.T * p.singular_values_**2) @ p.components_  # eigenvalues > 0 here
        noise[i] = (noisy - scatter)[iu]
    for j in range(len(iu[0])):  # every entry of the upper triangle, diagonal included
        assert stats.kstest(noise[:, j], stats.laplace(scale=scale).cdf).pvalue > ALPHA
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 0.15  # independent entries
    # the sensitivity d R^2 (L1 bound without the diagonal's saving), or the eps / 2 split used
    # when the mean is estimated too, would be caught
    pooled = noise.ravel()
    assert stats.kstest(pooled, stats.laplace(scale=scale * 2 * d / (d + 1)).cdf).pvalue < ALPHA
    assert stats.kstest(pooled, stats.laplace(scale=scale * 1.9).cdf).pvalue < ALPHA


def test_pca_mean_share_minimises_the_error_estimate():
    """The split is the minimiser of ``A / e^2 + B / (E - e)``, checked on a fine grid."""
    from veil.ml._preprocessing import pca_mean_share

    for d, n, R, E in [(1, 20.0, 1.0, 1.0), (5, 32561.0, 5**0.5, 0.49), (64, 1400.0, 8.0, 4.9)]:
        half = np.full(d, 0.5)
        a = 2 * d * d * (half**2).sum() / n
        b = np.sqrt(2 * d) * (d + 1) * R**2
        grid = np.linspace(E * 1e-4, E * (1 - 1e-4), 200_001)
        best = grid[np.argmin(a / grid**2 + b / (E - grid))]
        assert abs(pca_mean_share(d, half, R, n, E) - best) < 2e-4 * E


def test_pca_uncentred_mean_noise_is_laplace_at_the_derived_scale():
    """Without ``centered=True`` each released mean is the bounds' mid-point plus
    ``half * Laplace(d / eps_m) / n`` with ``eps_m = pca_mean_share(...)`` of ``0.98 eps``;
    the halves used until 2026-11-22 (``eps_m = eps / 2``, 5 % of it for the count) and a
    share read without dividing by ``d`` are caught."""
    from veil.ml._preprocessing import pca_mean_share

    n, d, eps, R, fits = 20_000, 2, 0.5, 2**0.5, 1_000
    X = np.tile([[0.0, 1.0], [1.0, 0.0]], (n // 2, 1))  # means (0.5, 0.5) = the mid-points
    dev = np.array(
        [
            PCA(1, epsilon=eps, data_norm=R, bounds=(0, 1), random_state=s).fit(X).mean_ - 0.5
            for s in range(fits)
        ]
    )
    # the noisy count (scale 1 / (0.02 eps) = 100 on n = 20,000) moves eps_m by ~0.2 %
    eps_m = pca_mean_share(d, np.full(d, 0.5), R, n, 0.98 * eps)
    scale = 0.5 * d / (eps_m * n)
    for j in range(d):
        assert stats.kstest(dev[:, j], stats.laplace(scale=scale).cdf).pvalue > ALPHA
    old = 0.5 * d / (0.95 * eps / 2 * n)
    assert stats.kstest(dev[:, 0], stats.laplace(scale=old).cdf).pvalue < ALPHA
    assert stats.kstest(dev[:, 0], stats.laplace(scale=scale / d).cdf).pvalue < ALPHA
