"""Differentially private StandardScaler and PCA."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted

from veil.errors import ConfigError, InputError, NoiseScaleError
from veil.ml._base import (
    DPEstimatorMixin,
    check_array_2d,
    check_bounds_span,
    check_n_features,
    check_privacy_params,
    clip_rows_to_norm,
    resolve_bounds,
    resolve_norm,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._naive_bayes import posterior_mean_variance
from veil.ml._noise import (
    COUNT_SHARE,
    add_laplace,
    check_laplace,
    check_laplace_scale,
    noisy_count,
    resolve_rng,
)

__all__ = [
    "StandardScaler",
    "PCA",
    "noisy_moments",
    "moment_shares",
    "noisy_scatter",
    "pca_mean_share",
]


def unit_scaled(
    X: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` clipped to ``[lo, hi]`` and scaled to [-1, 1] per feature, with the bounds'
    mid-points and half-widths: a sum over rows of a scaled feature has sensitivity 1.

    Examples
    --------
    >>> X, lo, hi = np.array([[0.0], [5.0], [12.0]]), np.array([0.0]), np.array([10.0])
    >>> Z, mid, half = unit_scaled(X, lo, hi)
    >>> Z.ravel().tolist(), mid.tolist(), half.tolist()
    ([-1.0, 0.0, 1.0], [5.0], [5.0])
    """
    mid, half = (lo + hi) / 2.0, np.maximum((hi - lo) / 2.0, 1e-12)
    return np.clip((np.clip(X, lo, hi) - mid) / half, -1.0, 1.0), mid, half


def noisy_moments(
    X: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    epsilon: float,
    rng: Any,
    *,
    want_var: bool = True,
) -> tuple[float, np.ndarray, np.ndarray]:
    """DP count, per-feature mean and variance of ``X`` clipped to ``[lo, hi]``.

    Values are centred on the bounds' mid-points and scaled to [-1, 1]; the count (5 % of the
    budget), the ``d`` sums and (if ``want_var``) the ``d`` sums of squares are released with
    Laplace noise, each scaled coordinate having sensitivity 1.
    """
    d = X.shape[1]
    Z, mid, half = unit_scaled(X, lo, hi)
    eps_count, eps_each = moment_shares(d, epsilon, want_var)
    n = max(1.0, float(add_laplace(np.array([len(Z)], dtype=float), 1.0 / eps_count, rng)[0]))
    mean_z = np.clip(add_laplace(Z.sum(0), 1.0 / eps_each, rng) / n, -1, 1)
    var = np.zeros(d)
    if want_var:
        second = np.clip(add_laplace((Z * Z).sum(0), 1.0 / eps_each, rng) / n, 0, 1)
        var = np.clip(second - mean_z**2, 0, 1) * half**2
    return n, mean_z * half + mid, var


def moment_shares(d: int, epsilon: float, want_var: bool = True) -> tuple[float, float]:
    """Epsilon of :func:`noisy_moments`' count (5 %) and of each of its ``d`` sums (and ``d``
    sums of squares if ``want_var``): public, so a fit checks the noise scales ``1 / share``
    (:func:`~veil.ml._noise.check_laplace`) before it spends the budget.

    >>> moment_shares(2, 1.0)
    (0.05, 0.2375)
    """
    eps_count = 0.05 * epsilon
    return eps_count, (epsilon - eps_count) / (d * (2 if want_var else 1))


def pca_mean_share(d: int, half: np.ndarray, norm: float, n_hat: float, epsilon: float) -> float:
    """The part ``eps_m`` of ``epsilon`` that :class:`PCA` spends on the mean (the rest on the
    scatter matrix): the minimiser over ``(0, epsilon)`` of ``A / eps_m^2 + B / (epsilon - eps_m)``.

    ``A / eps_m^2`` is the expected spectral norm ``n E||delta||^2`` of the error ``n delta
    delta^T`` that centring on a mean off by ``delta`` adds to the scatter matrix, with ``d``
    sums of coordinates scaled to [-1, 1] each given Laplace(``d / eps_m``): ``E delta_i^2 = 2
    d^2 half_i^2 / (n eps_m)^2``, so ``A = 2 d^2 sum(half^2) / n``.  ``B / eps_c`` is the
    spectral norm of the scatter noise, a symmetric matrix with independent entries of sd ``sqrt
    2 b``, ``b = (d + 1) R^2 / (2 eps_c)``: about ``2 sqrt(d) sqrt(2) b`` (the edge of Wigner's
    semicircle), so ``B = sqrt(2 d) (d + 1) R^2``.  Both are bounds on the perturbation that
    moves the components (Davis & Kahan 1970's sin-theta theorem divides it by the eigengap).
    The stationarity condition ``2 A (epsilon - eps_m)^2 = B eps_m^3`` has one root in ``(0,
    epsilon)`` (left side decreasing, right side increasing), found by bisection.  Only public
    values and the noisy count ``n_hat`` enter: choosing the split is post-processing.

    Examples
    --------
    >>> round(pca_mean_share(1, np.array([1.0]), 1.0, 20.0, 1.0), 2)
    0.32
    """
    a = 2.0 * d * d * float(np.sum(np.asarray(half, dtype=float) ** 2)) / max(float(n_hat), 1.0)
    b = np.sqrt(2.0 * d) * (d + 1) * float(norm) ** 2
    try:
        lo, hi = 0.0, float(epsilon)
        for _ in range(100):
            mid = (lo + hi) / 2.0
            if 2.0 * a * (epsilon - mid) ** 2 > b * mid**3:
                lo = mid
            else:
                hi = mid
    except OverflowError:
        # a huge epsilon (beyond ~1e100): the same condition divided by epsilon^2, on the
        # share t = eps_m / epsilon, where the powers of epsilon overflowed after the charge
        lo, hi = 0.0, 1.0
        with np.errstate(over="ignore"):
            for _ in range(100):
                mid = (lo + hi) / 2.0
                if 2.0 * a * (1.0 - mid) ** 2 > b * float(epsilon) * mid**3:
                    lo = mid
                else:
                    hi = mid
        return (lo + hi) / 2.0 * float(epsilon)
    return (lo + hi) / 2.0


def scatter_noise_scale(d: int, norm: float, epsilon: float) -> float:
    """Laplace scale per entry of :func:`noisy_scatter`: ``(d + 1) norm^2 / (2 epsilon)``."""
    return (d + 1) * float(norm) ** 2 / (2.0 * float(epsilon))


def noisy_scatter(Z: np.ndarray, norm: float, epsilon: float, rng: Any) -> np.ndarray:
    """``Z^T Z`` for rows of L2 norm at most ``norm``, released with ``epsilon``-DP Laplace noise.

    One row ``z`` added or removed changes the upper triangle by ``z_i z_j``, of L1 norm
    ``(||z||_1^2 + ||z||_2^2) / 2 <= (d + 1) norm^2 / 2``; the ``d (d + 1) / 2`` entries get
    Laplace noise of scale ``sensitivity / epsilon`` (the Laplace mechanism) and the noisy
    matrix is symmetrised.  Not positive semi-definite in general (:class:`PCA` replaces each
    eigenvalue by the posterior mean of a variance >= 0).

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> Z = np.array([[0.6, 0.8], [1.0, 0.0]])
    >>> noisy_scatter(Z, 1.0, 1.0, SecureRandom()).shape
    (2, 2)
    """
    d = Z.shape[1]
    iu = np.triu_indices(d)
    sens = (d + 1) * float(norm) ** 2 / 2.0
    scatter = Z.T @ Z
    noisy = add_laplace(
        scatter[iu],
        scatter_noise_scale(d, norm, epsilon),
        rng,
        sensitivity=sens,
        coords=len(iu[0]),
    )
    out = np.zeros((d, d))
    out[iu] = noisy
    return out + np.triu(out, 1).T


#: The norm bound's ``(d + 1) R^2`` must stay below ``2^-64`` of float64's range, so that no
#: entry of the scatter matrix (at most ``n R^2``) overflows for any table that fits in memory.
_MAX_SCATTER = float(np.finfo(np.float64).max) * 2.0**-64


def _check_pca_plan(
    est: Any, d: int, norm: float, eps: float, bounds: tuple[np.ndarray, np.ndarray] | None
) -> tuple[float, float]:
    """Check, before the charge, every noise scale a :class:`PCA` fit can draw, and return
    the range ``[lo, hi]`` its mean share is clamped to.

    The split between mean and scatter (:func:`pca_mean_share`) reads the noisy count, so it
    is only known after the charge: the share is clamped to ``[d 2^-50, e - max(m 2^-50,
    s 2^-899, e 2^-40)]`` (``e`` the epsilon left after the count, ``s`` the scatter's
    sensitivity, ``m = d (d + 1) / 2`` its entries), whose ends give the largest and smallest
    scale of both releases, and these are checked here.  The clamp binds only where a release
    would come within a factor 4 of its sampler's limits (a grid-unit scale of ``2^52``, about
    ``coords / share``, and a scale of ``2^900``: the fit failed after the charge, at a split
    read from the noisy count) or the scatter would keep less than ``2^-40`` of ``e`` (a
    ``data_norm`` far below the bounds' widths: its share rounded to 0, a ZeroDivisionError
    after the charge).  A ``data_norm`` whose ``(d + 1) R^2`` overflows (or underflows to 0)
    and bounds whose squared widths overflow are refused too.  All public values.
    """
    sens = (d + 1) * norm * norm / 2.0  # the scatter's L1 sensitivity (noisy_scatter)
    if not 0 < 2.0 * sens <= _MAX_SCATTER:
        raise ConfigError(
            f"data_norm={est.data_norm!r} is out of float64's range for a scatter matrix of "
            f"{d} features: (d + 1) data_norm^2 must be positive and below 2^-64 of float64's "
            "largest value"
        )
    if bounds is None:  # centred: the count, then the scatter with 95 %
        check_laplace((1.0, 0.05 * eps), (sens, 0.95 * eps, d * (d + 1) // 2))
        return (0.0, 0.0)
    lo, hi = bounds
    check_bounds_span(lo, hi)
    with np.errstate(over="ignore"):
        a = 2.0 * d * d * np.sum(np.maximum((hi - lo) / 2.0, 1e-12) ** 2)
    if not np.isfinite(a):
        raise ConfigError("bounds: the sum of the squared widths is beyond float64's range")
    eps_n = COUNT_SHARE * eps
    rest = eps - eps_n
    n_entries = d * (d + 1) // 2
    high = rest - max(n_entries * 2.0**-50, sens * 2.0**-899, rest * 2.0**-40)
    low = min(d * 2.0**-50, high)
    if not low > 0:
        raise NoiseScaleError(
            f"epsilon {eps!r} is too small to split over the PCA releases (the mean and the "
            "scatter matrix) with this data_norm"
        )
    check_laplace((1.0, eps_n))
    for eps_mean in (low, high):  # the mean: d sums, each Laplace(d / eps_mean), sensitivity 1
        check_laplace_scale(d / eps_mean)
        check_laplace((sens, rest - eps_mean, n_entries))
    return (low, high)


class StandardScaler(DPEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features with a differentially private mean and variance.

    Parameters
    ----------
    epsilon : float, default 1.0
    bounds : (lower, upper) or "data"
        Per-feature bounds (required).
    with_mean, with_std : bool, default True
    copy : bool, default True (the input is never modified in any case).
    random_state, accountant : see :class:`veil.ml.GaussianNB`.

    Attributes
    ----------
    mean_, var_, scale_, n_samples_seen_ (noisy), epsilon_spent_

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(50, 10, (1000, 2))
    >>> Xs = StandardScaler(epsilon=1.0, bounds=(0, 100), random_state=0).fit_transform(X)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        copy: bool = True,
        with_mean: bool = True,
        with_std: bool = True,
        random_state: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> StandardScaler:
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        Xa = check_array_2d(X)
        lo, hi = resolve_bounds(self.bounds, Xa)
        check_bounds_span(lo, hi)  # the variances scale by the squared half-widths
        eps_count, eps_each = moment_shares(Xa.shape[1], float(self.epsilon), self.with_std)
        check_laplace((1.0, eps_count), (1.0, eps_each))  # public: before the charge
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            n, mean, var = noisy_moments(
                Xa, lo, hi, float(self.epsilon), rng, want_var=self.with_std
            )
            self.n_samples_seen_ = n
            self.mean_ = mean if self.with_mean else None
            self.var_ = var if self.with_std else None
            scale = np.sqrt(var)
            scale[scale <= 1e-12 * np.maximum(hi - lo, 1)] = 1.0
            self.scale_ = scale if self.with_std else None
            self.n_features_in_ = Xa.shape[1]
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def transform(self, X: Any, copy: bool | None = None) -> np.ndarray:
        check_is_fitted(self, "n_samples_seen_")
        Xa = check_n_features(self, X).copy()
        if self.with_mean:
            Xa -= self.mean_
        if self.with_std:
            Xa /= self.scale_
        return Xa

    def inverse_transform(self, X: Any, copy: bool | None = None) -> np.ndarray:
        check_is_fitted(self, "n_samples_seen_")
        Xa = check_n_features(self, X).copy()
        if self.with_std:
            Xa *= self.scale_
        if self.with_mean:
            Xa += self.mean_
        return Xa


class PCA(DPEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis with epsilon-differential privacy (Laplace scatter matrix).

    Rows are centred (on a DP mean computed from ``bounds``, unless ``centered=True`` says the
    data are already centred) and clipped to L2 norm ``R = data_norm``; the upper triangle of
    the scatter matrix ``Z^T Z`` is released with Laplace noise (the Laplace mechanism, Dwork,
    McSherry, Nissim & Smith 2006, on the symmetric matrix, i.e. input perturbation of the
    covariance as in Dwork, Talwar, Thakurta & Zhang 2014's "Analyze Gauss" with Laplace
    instead of Gaussian noise for a pure epsilon) and the components are the eigenvectors of
    the noisy symmetric matrix (post-processing).  Privacy unit: one row added or removed.  A
    row ``z`` adds ``z z^T``, whose upper triangle has L1 norm ``sum_{i <= j} |z_i z_j| =
    (||z||_1^2 + ||z||_2^2) / 2 <= (d + 1) R^2 / 2`` (``||z||_1 <= sqrt(d) ||z||_2``): that is
    the sensitivity, and each of the ``d (d + 1) / 2`` entries gets Laplace(``(d + 1) R^2 / (2
    eps_cov)``).  The noisy matrix is not positive semi-definite:
    each eigenvalue is replaced by the posterior mean of a variance ``>= 0`` given its noisy
    value (normal noise of sd ``2 b``, the largest sd of ``u^T E u`` over unit ``u`` for entry
    scale ``b``; :func:`veil.ml._naive_bayes.posterior_mean_variance`), a smooth floor that keeps
    ``noise_variance_`` and :meth:`get_covariance` positive (post-processing).

    Budget (sequential composition).  ``centered=True``: 5 % for a noisy row count (it scales
    ``explained_variance_``), 95 % for the matrix.  Otherwise ``COUNT_SHARE`` (2 %) for a noisy
    count ``n_hat``, then ``eps_m`` = :func:`pca_mean_share` of the rest for the mean (the ``d``
    sums of the rows clipped to ``bounds`` and scaled to [-1, 1], Laplace(``d / eps_m``) each)
    and the remainder for the matrix.  The split minimises an estimate of the spectral norm of
    the two errors (the mean's ``n delta delta^T`` and the matrix noise) from public values and
    ``n_hat`` (post-processing of the count), instead of the fixed halves used until 2026-11-22:
    on Adult's five numeric features (R = sqrt 5, n = 32561) the matrix gets about 95 % of
    ``epsilon`` at ``epsilon = 1``.

    The additive Wishart noise of Jiang, Xie & Zhang (2016), used until 2026-11-22, is *not*
    differentially private: ``A + W`` with ``W ~ Wishart_d(d + 1, C)`` has support
    ``{B : B - A positive definite}``, which moves with the data; a row ``x`` added to the data
    makes every output with ``B - A`` below ``x x^T`` impossible, and for ``d = 1`` (one-sided
    exponential noise) that event has probability ``1 - exp(-eps_cov / 3)`` (0.27 at
    ``eps_cov = 0.95``) under the smaller table: an unbounded privacy loss
    (``tests/ml/test_privacy_audits.py`` attacks both the old and the new release).

    Parameters
    ----------
    n_components : int, optional
    epsilon : float, default 1.0
    data_norm : float or "data"
        Bound on the L2 norm of the centred rows (required).
    centered : bool, default False
    bounds : (lower, upper) or "data"
        Feature bounds for the DP mean (required unless ``centered``).
    whiten : bool, default False
    random_state, accountant : see :class:`veil.ml.GaussianNB`.

    Attributes
    ----------
    components_, explained_variance_, explained_variance_ratio_, mean_, n_components_,
    noise_variance_ (mean variance of the dropped noisy components, as scikit-learn), epsilon_spent_

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(0, 1, (2000, 3)) * [3, 1, 0.1]
    >>> pca = PCA(2, epsilon=1.0, data_norm=8, centered=True, random_state=0).fit(X)  # doctest: +SKIP
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        epsilon: float = 1.0,
        data_norm: Any = None,
        centered: bool = False,
        bounds: Any = None,
        copy: bool = True,
        whiten: bool = False,
        random_state: Any = None,
        accountant: Any = None,
    ) -> None:
        self.n_components = n_components
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.centered = centered
        self.bounds = bounds
        self.copy = copy
        self.whiten = whiten
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any = None) -> PCA:
        check_privacy_params(self.epsilon)
        Xa = check_array_2d(X)
        n, d = Xa.shape
        k = d if self.n_components is None else int(self.n_components)
        if not 1 <= k <= d:
            raise ConfigError(f"n_components must be between 1 and {d}, got {self.n_components!r}")
        norm = resolve_norm(self.data_norm, Xa)
        rng = resolve_rng(self.random_state)
        eps = float(self.epsilon)
        if not self.centered:
            lo, hi = resolve_bounds(self.bounds, Xa)
        mean_range = _check_pca_plan(self, d, norm, eps, None if self.centered else (lo, hi))
        with Charge(self.accountant, eps):
            if self.centered:
                mean = np.zeros(d)
                eps_cov = 0.95 * eps
                n_noisy = max(1.0, noisy_count(n, 0.05 * eps, rng))
            else:
                # count (COUNT_SHARE), then the split of the rest from the noisy count, kept
                # in the range whose noise _check_pca_plan found drawable
                eps_n = COUNT_SHARE * eps
                n_noisy = max(1.0, noisy_count(n, eps_n, rng))
                scaled, mid, half = unit_scaled(Xa, lo, hi)
                eps_mean = pca_mean_share(d, half, norm, n_noisy, eps - eps_n)
                eps_mean = min(max(eps_mean, mean_range[0]), mean_range[1])
                eps_cov = eps - eps_n - eps_mean
                # each of the d scaled sums has sensitivity 1 and gets eps_mean / d
                sums = add_laplace(scaled.sum(0), d / eps_mean, rng)
                mean = mid + half * np.clip(sums / n_noisy, -1.0, 1.0)
            with np.errstate(over="ignore"):  # a huge value minus the mean: inf, clipped
                Z = clip_rows_to_norm(Xa - mean, norm)
            noisy = noisy_scatter(Z, norm, eps_cov, rng)
            vals, vecs = np.linalg.eigh(noisy)
            order = np.argsort(vals)[::-1]
            vals, vecs = vals[order], vecs[:, order]
            # deterministic sign convention (largest-magnitude loading positive)
            signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(d)])
            vecs = vecs * np.where(signs == 0, 1, signs)
            # each eigenvalue: the posterior mean of a variance >= 0 given its noisy value
            # (post-processing, as GaussianNB's variances): sd of u^T E u for a unit u is at
            # most 2 b (b the per-entry Laplace scale), and the floor keeps a dropped
            # direction's variance, hence noise_variance_ and get_covariance, above 0
            vals = posterior_mean_variance(vals, 2.0 * scatter_noise_scale(d, norm, eps_cov))
            var = vals / max(n_noisy - 1, 1)
            self.components_ = vecs[:, :k].T
            self.explained_variance_ = var[:k]
            total = var.sum()
            self.explained_variance_ratio_ = var[:k] / total if total > 0 else np.zeros(k)
            self.singular_values_ = np.sqrt(vals[:k])
            # scikit-learn's noise estimate: mean variance of the dropped (noisy) components
            self.noise_variance_ = float(var[k:].mean()) if k < d else 0.0
            self.mean_ = mean
            self.n_components_ = k
            self.n_features_in_ = d
            self.n_samples_ = n_noisy
            self.epsilon_spent_ = eps
        return self

    @property
    def _n_features_out(self) -> int:
        return int(self.n_components_)

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "components_")
        Xa = check_n_features(self, X)
        out = (Xa - self.mean_) @ self.components_.T
        if self.whiten:
            out /= np.sqrt(np.maximum(self.explained_variance_, 1e-12))
        return out

    def get_covariance(self) -> np.ndarray:
        """Covariance of the probabilistic PCA model (Tipping & Bishop 1999), from the released
        components, variances and ``noise_variance_`` (post-processing: no budget).

        ``components_.T @ diag(explained_variance_ - noise_variance_) @ components_ +
        noise_variance_ * I``, as scikit-learn's ``PCA.get_covariance`` (without whitening), with a
        tiny ridge so that it stays invertible when every dropped variance was released as 0.
        """
        check_is_fitted(self, "components_")
        d = self.n_features_in_
        nv = float(self.noise_variance_)
        diff = np.maximum(self.explained_variance_ - nv, 0.0)
        cov = (self.components_.T * diff) @ self.components_ + nv * np.eye(d)
        ridge = 1e-10 * max(float(np.trace(cov)) / d, 1e-300)
        return cov + ridge * np.eye(d)

    def score_samples(self, X: Any) -> np.ndarray:
        """Log-likelihood of each row under the probabilistic PCA model (see
        :meth:`get_covariance`)."""
        check_is_fitted(self, "components_")
        Xr = check_n_features(self, X) - self.mean_
        cov = self.get_covariance()
        sign, logdet = np.linalg.slogdet(cov)
        if sign <= 0:  # pragma: no cover - the ridge keeps it positive definite
            raise InputError("the released covariance is not positive definite")
        maha = np.einsum("ij,ij->i", Xr, np.linalg.solve(cov, Xr.T).T)
        return -0.5 * (maha + self.n_features_in_ * np.log(2.0 * np.pi) + logdet)

    def score(self, X: Any, y: Any = None) -> float:
        """Average log-likelihood of the rows (scikit-learn's ``PCA.score``): lets
        ``cross_val_score`` and ``GridSearchCV`` choose ``n_components`` without a scorer."""
        return float(np.mean(self.score_samples(X)))

    def inverse_transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "components_")
        Xa = check_array_2d(X)
        if Xa.shape[1] != self.n_components_:
            raise InputError(
                f"X has {Xa.shape[1]} features, but PCA.inverse_transform is expecting "
                f"{self.n_components_} (n_components_) features as input"
            )
        if self.whiten:
            Xa = Xa * np.sqrt(np.maximum(self.explained_variance_, 1e-12))
        return Xa @ self.components_ + self.mean_
