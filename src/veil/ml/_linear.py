"""Differentially private linear regression by sufficient-statistics perturbation."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from veil.errors import ConfigError, InputError
from veil.ml._base import (
    DPEstimatorMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    check_target,
    resolve_bounds,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._noise import add_laplace, check_laplace, resolve_rng

__all__ = ["LinearRegression"]


class LinearRegression(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Ordinary least squares with epsilon-differential privacy.

    Sufficient-statistics perturbation (SSP; the functional mechanism of Zhang et al. 2012 for
    the quadratic loss, analysed by Wang 2018): with ``z = [1, x - m_x, y - m_y]`` (features and
    target clipped to their bounds and centred on the bounds' mid-points ``m``) the entries of
    the upper triangle of ``Z^T Z`` are released with Laplace noise.  Adding or removing one row
    changes entry ``(i, j)`` by at most ``h_i h_j`` where ``h`` are the half-widths of the bounds
    (1 for the constant), so the L1 sensitivity is ``sum_{i <= j} h_i h_j``.  Each block uses
    the *correct* bound of its own column (diffprivlib #104 used the lower bound twice).  The
    noisy normal equations are solved with the smallest ridge that makes them positive
    definite (Wang 2018, AdaSSP's idea, without the extra eigenvalue release).

    Parameters
    ----------
    epsilon : float, default 1.0
    bounds_X : (lower, upper) or "data"
        Feature bounds (required).
    bounds_y : (lower, upper) or "data"
        Target bounds (required).
    fit_intercept : bool, default True
    random_state, accountant : see :class:`veil.ml.GaussianNB`.
    copy_X
        Accepted for diffprivlib compatibility; ``X`` is never modified.

    References
    ----------
    Zhang, Zhang, Xiao, Yang, Winslett (2012), "Functional mechanism: regression analysis under
    differential privacy", VLDB.  Wang (2018), "Revisiting differentially private linear
    regression: optimal and adaptive prediction & estimation in unbounded domain", UAI.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (5000, 2)); y = X @ [2.0, -1.0] + 0.5
    >>> reg = LinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(-1, 3), random_state=0)
    >>> reg = reg.fit(X, y)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds_X: Any = None,
        bounds_y: Any = None,
        fit_intercept: bool = True,
        random_state: Any = None,
        accountant: Any = None,
        copy_X: bool = True,
    ) -> None:
        self.copy_X = copy_X
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LinearRegression:
        """Fit the model; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        Xa = check_array_2d(X)
        # float64 and finite (checked before the charge below)
        ya = check_target(self, y, len(Xa), classification=False).reshape(-1, 1)
        lo_x, hi_x = resolve_bounds(self.bounds_X, Xa, name="bounds_X")
        lo_y, hi_y = resolve_bounds(self.bounds_y, ya, name="bounds_y")
        k = Xa.shape[1] + 1 + bool(self.fit_intercept)
        # scaled entries each change by <= 1: L1 sensitivity = number of released entries
        m = k * (k + 1) // 2
        _check_public_scales(m, float(self.epsilon), lo_x, hi_x, lo_y, hi_y, self.fit_intercept)
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            Z, h = scaled_design(Xa, ya, lo_x, hi_x, lo_y, hi_y, bool(self.fit_intercept))
            G = Z.T @ Z
            iu = np.triu_indices(k)
            noisy = add_laplace(G[iu], m / float(self.epsilon), rng, sensitivity=m, coords=m)
            Gn = np.zeros((k, k))
            Gn[iu] = noisy
            Gn = Gn + np.triu(Gn, 1).T
            Gn = Gn * np.outer(h, h)  # undo the scaling (post-processing)
            A, b = Gn[:-1, :-1], Gn[:-1, -1]
            w = _ridge_solve(
                A, b, noise_scale=len(iu[0]) / float(self.epsilon) * float(h[:-1].max() ** 2)
            )
            if self.fit_intercept:
                slope = w[1:]
                mx, my = (lo_x + hi_x) / 2, (lo_y + hi_y) / 2
                self.intercept_ = float(my[0] + w[0] - mx @ slope)
            else:
                slope = w
                self.intercept_ = 0.0
            self.coef_ = slope
            self.n_features_in_ = Xa.shape[1]
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        Xa = check_n_features(self, X)
        return Xa @ self.coef_ + self.intercept_


#: Largest ``h_max^2 * max(1, noise scale)`` accepted (``2^-200`` of float64's range): the
#: noisy entries times ``h_i h_j`` then overflow only for a row count or a noise draw beyond
#: ``2^200`` (never), instead of an infinite matrix failing ``eigvalsh`` after the charge.
_MAX_SCALED = float(np.finfo(np.float64).max) * 2.0**-200


def _half_widths(lo: np.ndarray, hi: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """The scaling ``h`` of :func:`scaled_design` for one block of bounds (inf on overflow)."""
    if fit_intercept:
        return np.maximum((hi - lo) / 2, 1e-12)
    return np.maximum(np.maximum(abs(lo), abs(hi)), 1e-12)


def _check_public_scales(
    m: int,
    epsilon: float,
    lo_x: np.ndarray,
    hi_x: np.ndarray,
    lo_y: np.ndarray,
    hi_y: np.ndarray,
    fit_intercept: bool,
) -> None:
    """Refuse, before the charge, an epsilon or bounds the release cannot use.

    The Laplace scale ``m / epsilon`` of the ``m`` released entries (:func:`check_laplace`),
    and bounds so wide that undoing the scaling (``h_i h_j`` times a noisy entry) or the ridge
    (``h_max^2`` times the scale) overflows, or whose mid-points overflow: all read public
    values only, where they failed after the charge (a ``NoiseScaleError`` while drawing, a
    ``LinAlgError`` on an infinite matrix, an overflow warning -- an error under ``-W error``
    -- on the unused ``y``-``y`` entry).
    """
    check_laplace((float(m), epsilon, m))
    with np.errstate(over="ignore"):
        hx = float(np.max(_half_widths(lo_x, hi_x, fit_intercept), initial=1.0))
        hy = float(np.max(_half_widths(lo_y, hi_y, fit_intercept)))
        h = np.array([hx, hy])
        mid = np.concatenate([lo_x + hi_x, lo_y + hi_y]) if fit_intercept else h
        # A = X^T X scales by hx^2 (and the ridge by hx^2 times the scale), b = X^T y by
        # hx hy, the (unused) y-y entry by hy^2
        worst = max(hx * hx, hy * hy) * max(1.0, m / epsilon)
    if not (np.isfinite(mid).all() and worst <= _MAX_SCALED):
        raise ConfigError(
            "bounds_X / bounds_y are too wide for float64 (their half-width squared times the "
            "noise scale must stay below 2^-200 of float64's range); pass narrower bounds"
        )


def scaled_design(
    X: np.ndarray,
    y: np.ndarray,
    lo_x: np.ndarray,
    hi_x: np.ndarray,
    lo_y: np.ndarray,
    hi_y: np.ndarray,
    fit_intercept: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``z = [1, (x - m_x) / h_x, (y - m_y) / h_y]`` with every entry in [-1, 1].

    Returns ``(Z, h)`` where ``h`` are the half-widths (1 for the constant).  Every entry of
    ``Z^T Z`` then changes by at most 1 when a row is added or removed: the L1 sensitivity of
    its upper triangle is its number of entries.
    """
    if fit_intercept:  # centre on the mid-points: the intercept absorbs the shift
        mx, hx = (lo_x + hi_x) / 2, np.maximum((hi_x - lo_x) / 2, 1e-12)
        my, hy = (lo_y + hi_y) / 2, np.maximum((hi_y - lo_y) / 2, 1e-12)
    else:  # through the origin: no centring, scale by the largest magnitude
        mx, hx = 0 * lo_x, np.maximum(np.maximum(abs(lo_x), abs(hi_x)), 1e-12)
        my, hy = 0 * lo_y, np.maximum(np.maximum(abs(lo_y), abs(hi_y)), 1e-12)
    cols = [(np.clip(X, lo_x, hi_x) - mx) / hx, (np.clip(y, lo_y, hi_y) - my) / hy]
    half = [hx, hy]
    if fit_intercept:
        cols.insert(0, np.ones((len(X), 1)))
        half.insert(0, np.ones(1))
    # the final clip guards against rounding in (x - m) / h pushing an entry past 1
    return np.clip(np.hstack(cols), -1.0, 1.0), np.concatenate(half)


def _ridge_solve(A: np.ndarray, b: np.ndarray, noise_scale: float) -> np.ndarray:
    """Solve ``(A + r I) w = b`` with the smallest ridge ``r`` keeping it well conditioned."""
    eig_min = float(np.linalg.eigvalsh(A).min())
    r = max(0.0, noise_scale - eig_min)
    M = A + r * np.eye(len(A))
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError:
        # exactly singular: a noise scale (a huge epsilon) below the rounding of the entries,
        # with collinear features; the minimum-norm solution instead of an error that, after
        # the charge, depends on the data (post-processing of the noisy matrix)
        return np.linalg.lstsq(M, b, rcond=None)[0]
