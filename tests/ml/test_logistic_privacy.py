"""Objective perturbation for LogisticRegression: budget accounting, exact privacy-loss audit,
noise distribution and the released coefficient's distribution (see veil.ml._objpert)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

import veil.dp as dp
from veil.dp._rng import resolve_rng
from veil.ml import LogisticRegression
from veil.ml._objpert import (
    SHARE_MAX,
    SHARE_MIN,
    calibrate,
    default_jacobian_share,
    logistic_loss_bound,
    privacy_loss_bound,
    sample_perturbation,
)

# the audits fit many models on 0/1 labels without classes=: the label-set warning is tested
# in test_bounds_shapes.py
pytestmark = pytest.mark.filterwarnings("ignore:classes were not given")

C4 = 0.25


@pytest.mark.parametrize("n", [2, 10, 1000, 32561, 10**7])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.5, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("lam", [1e-9, 1e-5, 1e-2, 10.0])
@pytest.mark.parametrize("curvature", [None, C4])
def test_calibration_spends_exactly_epsilon(n, eps, lam, curvature):
    cal = calibrate(eps, n, lam, curvature=curvature)  # the default (n * eps) share
    share = default_jacobian_share(n, eps)
    assert cal.reg >= lam and cal.extra_reg >= 0 and cal.beta > 0
    assert cal.reg == pytest.approx(max(lam, C4 / (n * math.expm1(share * eps))))
    total = privacy_loss_bound(cal.reg, cal.beta, n, curvature)
    assert cal.eps_jacobian + cal.eps_noise == pytest.approx(total, rel=1e-14)
    assert total == pytest.approx(cal.epsilon, rel=1e-14)
    assert total <= eps  # never overspends, even by rounding
    assert total == pytest.approx(eps, rel=1e-10)  # and wastes nothing
    jac_generic = math.log1p(C4 / (n * cal.reg))
    assert jac_generic <= share * eps * (1 + 1e-12)
    if curvature is None:
        # the logistic bound is never above the generic one (so it buys less noise for eps)
        generic = privacy_loss_bound(cal.reg, cal.beta, n, C4)
        assert total <= generic * (1 + 1e-12)
        assert cal.beta >= (eps - jac_generic) / 2 * (1 - 1e-12)
    else:
        assert cal.eps_noise == 2 * cal.beta
        assert cal.eps_jacobian == pytest.approx(jac_generic, rel=1e-14)


def test_default_share_depends_on_n_eps_only_and_is_monotone():
    ne = np.geomspace(1e-3, 1e9, 400)
    shares = np.array([default_jacobian_share(int(round(x * 1000)), 1e-3) for x in ne])
    assert np.all((shares >= SHARE_MIN) & (shares <= SHARE_MAX))
    assert np.all(np.diff(shares) >= -1e-12)  # more data or budget never shrinks the share
    assert shares[0] == SHARE_MIN and shares[-1] == SHARE_MAX  # both clips are reached
    assert np.sum((shares > SHARE_MIN) & (shares < SHARE_MAX)) > 50  # and a ramp between
    for n, eps in [(1000, 0.5), (32561, 0.1), (10**6, 0.01), (77, 3.0)]:
        # a function of the product: the same share for (n, eps) and (2n, eps / 2)
        assert default_jacobian_share(n, eps) == pytest.approx(
            default_jacobian_share(2 * n, eps / 2), rel=1e-12
        )
    with pytest.raises(ValueError):
        default_jacobian_share(10, 0.0)


@pytest.mark.parametrize("n", [3, 1000, 32561, 10**6])
@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0])
def test_every_share_in_range_calibrates_within_epsilon(n, eps):
    # the rule only picks a share; every share it can return must give a release within eps
    for share in np.linspace(SHARE_MIN, SHARE_MAX, 10):
        cal = calibrate(eps, n, 1e-9, jacobian_share=float(share))
        assert privacy_loss_bound(cal.reg, cal.beta, n) <= eps
        assert math.log1p(C4 / (n * cal.reg)) <= share * eps * (1 + 1e-12)


def test_logistic_bound_is_the_supremum_over_p():
    # the closed-form worst p against a dense grid of p
    p = np.linspace(0, 1, 200001)
    for reg, beta, n in [(1e-4, 0.01, 100), (1e-3, 0.3, 10), (0.5, 3.0, 5), (1e-6, 1.0, 30000)]:
        jac, noise = logistic_loss_bound(reg, beta, n)
        grid = beta + np.max(beta * p + np.log1p(p * (1 - p) / (n * reg)))
        assert jac + noise == pytest.approx(grid, rel=1e-8)
        assert jac + noise >= grid - 1e-12


def test_calibration_rejects_bad_input():
    with pytest.raises(ValueError):
        calibrate(0.0, 10, 1e-3)
    with pytest.raises(ValueError):
        calibrate(1.0, 10, 1e-3, jacobian_share=1.0)
    with pytest.raises(ValueError):
        calibrate(1.0, 10, 0.0)


def _log_density(W, Z, s, reg, beta):
    """log p_D(w) up to a constant common to all datasets: -beta ||B_D(w)|| + log det H_D(w)."""
    n, d = Z.shape
    q = expit(-s * (W @ Z.T))  # (grid, n)
    B = (q * s) @ Z - n * reg * W
    h = q * (1 - q)
    H = np.einsum("gi,ij,ik->gjk", h, Z, Z) + n * reg * np.eye(d)
    return -beta * np.linalg.norm(B, axis=1) + np.linalg.slogdet(H)[1]


def _max_privacy_loss(eps, lam, R, curvature=None, beta_scale=1.0, share=None):
    """Largest |log p_D(w) - log p_D'(w)| over a grid of w and neighbouring pairs in 2-D.

    Shared rows are zero (no curvature: A = n Lambda I, the worst case); the replaced row runs
    over 8 directions of norm R with either label.
    """
    n = 3
    cal = calibrate(eps, n, lam, curvature=curvature, jacobian_share=share)
    beta = cal.beta * beta_scale
    g = np.linspace(-1.0, 1.0, 61)
    span = max(4.0 / (n * cal.reg), 30.0 / R)  # margins up to 30: p near 0 and 1 reached
    W = np.array(list(itertools.product(g, g))) * span
    W = np.vstack([W, W / 50.0])
    angles = np.arange(8) * np.pi / 4
    rows = [R * np.array([math.cos(a), math.sin(a)]) for a in angles]
    base = np.zeros((n - 1, 2))
    logs = [
        _log_density(W, np.vstack([base, r]), np.array([1.0, 1.0, label]), cal.reg, beta)
        for r in rows + [np.zeros(2)]
        for label in (1.0, -1.0)
    ]
    return max(np.max(np.abs(a - b)) for a, b in itertools.combinations(logs, 2))


@pytest.mark.parametrize("share", [None, SHARE_MIN, SHARE_MAX])
@pytest.mark.parametrize("eps, lam", [(0.5, 1e-4), (2.0, 1e-4), (1.0, 0.3)])
def test_exact_privacy_loss_within_epsilon(eps, lam, share):
    # the density of the released w is exact (change of variables), so its log-ratio between
    # neighbours is computed, not estimated; at the default share and at both ends of its range
    worst = _max_privacy_loss(eps, lam, R=1.0, share=share)
    assert worst <= eps * (1 + 1e-9)
    assert worst >= 0.6 * eps  # the audit sees most of the budget: it is not vacuous


@pytest.mark.parametrize("eps", [0.5, 0.8])
def test_audit_detects_curvature_c_times_r(eps):
    # negative control: rows of norm R = 2 calibrated with c.R (diffprivlib's Vector
    # mechanism) instead of c.R^2, noise for sensitivity 2R: the audit must catch it
    # (at the largest share: the Jacobian term, where c.R and c.R^2 differ, weighs most; at
    # n = 3 the default share is the smallest)
    R = 2.0
    worst = _max_privacy_loss(eps, 1e-4, R=R, curvature=C4 * R, beta_scale=1.0 / R, share=SHARE_MAX)
    assert worst > eps * 1.05


def test_perturbation_norm_is_gamma_and_direction_uniform():
    rng = resolve_rng(20261121)
    d, beta, N = 3, 0.7, 20000
    b = np.array([sample_perturbation(rng, d, beta) for _ in range(N)])
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(d, scale=1 / beta).cdf).pvalue > 1e-6
    # on the sphere in R^3 each coordinate of the direction is Uniform(-1, 1) (Archimedes)
    for j in range(d):
        assert stats.kstest(b[:, j] / norms, stats.uniform(-1, 2).cdf).pvalue > 1e-6


def test_released_coefficient_has_the_analysed_distribution():
    # 1-D, no intercept: the released w has CDF P(b >= B_D(w)) (B_D is decreasing), b Laplace
    # with rate beta.  This ties the estimator (scaling, calibration, solver) to the analysis.
    X = np.array([[2.0], [-1.0], [0.5], [2.0], [-3.0]])  # the last row is clipped to norm 2
    y = np.array([1, 0, 1, 0, 1])
    R, eps, C, N = 2.0, 1.0, 0.5, 1500
    rng = resolve_rng(7)
    acc = dp.BudgetAccountant(epsilon=float("inf"))
    fits = [
        LogisticRegression(
            epsilon=eps, data_norm=R, C=C, fit_intercept=False, random_state=rng, accountant=acc
        ).fit(X, y)
        for _ in range(N)
    ]
    cal = fits[0].calibration_
    w = np.array([f.coef_[0, 0] for f in fits]) * R  # coefficient on the scaled row x / R
    z = np.clip(X[:, 0], -R, R) / R
    s = np.where(y == 1, 1.0, -1.0)
    n = len(z)
    assert cal.reg == pytest.approx(calibrate(eps, n, 1.0 / (n * C * R**2)).reg)

    def cdf(t):
        t = np.atleast_1d(t)
        B = (s * expit(-s * z * t[:, None]) * z).sum(axis=1) - n * cal.reg * t
        return np.where(B >= 0, 0.5 * np.exp(-cal.beta * B), 1 - 0.5 * np.exp(cal.beta * B))

    assert stats.kstest(w, cdf).pvalue > 1e-6


@pytest.mark.slow
def test_released_coefficient_monte_carlo_audit(assert_ratio_within_eps):
    """Seeded fits on neighbouring 1-D datasets: no bucket's probability ratio may exceed
    e^eps beyond sampling error (Clopper-Pearson bounds at alpha = 1e-6)."""
    eps, runs = 1.0, 4000
    base = np.array([[0.0], [0.5], [-0.5], [1.0]])
    D, Dn = base, np.vstack([base[:-1], [[-1.0]]])  # the last person replaced
    y = np.array([1, 1, 0, 1])
    rng = resolve_rng(99)
    acc = dp.BudgetAccountant(epsilon=float("inf"))

    def release(X):
        clf = LogisticRegression(
            epsilon=eps,
            data_norm=1.0,
            C=1.0,
            fit_intercept=False,
            classes=[0, 1],
            random_state=rng,
            accountant=acc,
        )
        return clf.fit(X, y).coef_[0, 0]

    a = np.array([release(D) for _ in range(runs)])
    b = np.array([release(Dn) for _ in range(runs)])
    assert_ratio_within_eps(a, b, eps)


def test_newton_and_lbfgs_paths_find_the_same_minimiser(monkeypatch):
    from veil.ml import _objpert

    rng = np.random.default_rng(3)
    Z = rng.normal(size=(400, 5))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1, keepdims=True))
    s = np.where(Z @ [1.0, -2.0, 0.5, 0.0, 1.0] + rng.normal(size=400) > 0, 1.0, -1.0)
    b = rng.normal(size=5) * 3
    w_newton, it = _objpert.minimise_perturbed_logistic(Z, s, b, 1e-3, max_iter=100, gtol=1e-10)
    assert it < 30
    grad = -(Z.T @ (s * expit(-s * (Z @ w_newton)))) / 400 + b / 400 + 1e-3 * w_newton
    assert np.max(np.abs(grad)) <= 1e-10
    monkeypatch.setattr(_objpert, "_NEWTON_MAX_DIM", 0)  # force the large-d path
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # L-BFGS + Newton-CG reach gtol
        w_lbfgs, _ = _objpert.minimise_perturbed_logistic(Z, s, b, 1e-3, max_iter=100, gtol=1e-10)
    grad = -(Z.T @ (s * expit(-s * (Z @ w_lbfgs)))) / 400 + b / 400 + 1e-3 * w_lbfgs
    assert np.max(np.abs(grad)) <= 1e-10
    np.testing.assert_allclose(w_lbfgs, w_newton, atol=1e-6)
