"""Differentially private Gaussian naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import erfcx
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from veil.errors import InputError
from veil.ml._base import (
    DPClassifierMixin,
    check_array_2d,
    check_bounds_span,
    check_n_features,
    check_privacy_params,
    check_real,
    check_target,
    clip_rows_to_bounds,
    group_sums,
    resolve_bounds,
    resolve_classes,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._noise import add_laplace, check_laplace, resolve_rng

__all__ = ["GaussianNB"]


def count_share(d: int) -> float:
    """Share of epsilon for the class counts: ``1 / (1 + (2d)^(2/3))``.

    A class mean is ``noisy sum / noisy count``: in the scaled units (values in [-1, 1]) its
    error is about ``theta * e_c / n + e_s / n`` with count noise ``e_c ~ 1 / (s eps)`` and sum
    noise ``e_s ~ 2d / ((1 - s) eps)`` (the other ``1 - s`` is split over the ``2d`` sums and
    sums of squares).  For ``|theta|`` up to 1 the variance ``1/s^2 + (2d)^2/(1-s)^2`` is
    smallest at ``(1 - s)/s = (2d)^(2/3)`` -- the same cube-root balance Su et al. (2016) use
    for DP k-means.  It depends only on the public ``d``: 0.2 for ``d = 4``, 0.033 for
    ``d = 81``.  (Before: a constant 0.05, too little for small tables, where the count then
    sits in every denominator with a large relative error.)

    >>> round(count_share(4), 3), round(count_share(81), 3)
    (0.2, 0.033)
    """
    return 1.0 / (1.0 + (2.0 * d) ** (2.0 / 3.0))


def variance_noise_sd(
    theta: np.ndarray, second: np.ndarray, counts: np.ndarray, eps_each: float, eps_count: float
) -> np.ndarray:
    """Noise standard deviation of ``v = S2/N - (S1/N)^2`` (delta method), in the scaled units.

    ``S1 = s1 + e1`` and ``S2 = s2 + e2`` are the noisy sum and sum of squares of one feature
    (``e1, e2 ~ Laplace(1/eps_each)``, variance ``2/eps_each^2``) and ``N = n + e0`` the noisy
    class count (``e0 ~ Laplace(1/eps_count)``).  With ``theta = S1/N`` and ``second = S2/N``
    the partial derivatives of ``v`` are ``1/N`` (in ``S2``), ``-2 theta/N`` (in ``S1``) and
    ``-(second - 2 theta^2)/N`` (in ``N``), so::

        sd(v)^2 = [2 (1 + 4 theta^2) / eps_each^2 + 2 (second - 2 theta^2)^2 / eps_count^2] / N^2

    The ``4 theta^2`` term is the mean's noise entering through ``theta^2``: for a feature whose
    mean sits near a bound (``|theta|`` near 1, e.g. a mostly-zero column) the variance is
    ``sqrt(5)`` times noisier than the sum of squares alone says.  Every input is a noisy
    release or public, so this is post-processing.

    >>> round(float(variance_noise_sd(np.array(0.0), np.array(0.5), np.array(100.0), 1, 1)), 5)
    0.01581
    """
    theta, second = np.asarray(theta, float), np.asarray(second, float)
    counts = np.asarray(counts, float)
    # float64 squares: an epsilon beyond 1e154 squares to inf (the noise vanishes: sd 0), where
    # Python's float ** raised OverflowError after the budget was charged
    with np.errstate(over="ignore"):
        e_each2, e_count2 = np.float64(eps_each) ** 2, np.float64(eps_count) ** 2
    var = 2.0 * (1.0 + 4.0 * theta**2) / e_each2 + 2.0 * (second - 2.0 * theta**2) ** 2 / e_count2
    return np.sqrt(var) / counts


def posterior_mean_variance(v_hat: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``E[v | v_hat]`` for ``v_hat ~ N(v, sd^2)`` and a flat prior on ``v >= 0``.

    The posterior is the normal ``N(v_hat, sd^2)`` truncated to ``v >= 0``, whose mean is
    ``sd (x + phi(x) / Phi(x))`` with ``x = v_hat / sd`` (the inverse Mills ratio).  It is
    increasing in ``v_hat``, equals ``v_hat`` up to ``O(sd e^{-x^2/2} / x)`` once the estimate
    is several noise sds above zero, and is ``sd sqrt(2/pi) ~ 0.8 sd`` at ``v_hat = 0``: a
    smooth floor at the noise level, with no tuning constant (it replaced a hard floor at
    ``k`` noise sds, ``k`` chosen on benchmark data).  The normal shape approximates the sum of
    Laplace terms in :func:`variance_noise_sd`.

    >>> round(float(posterior_mean_variance(np.array(0.0), np.array(1.0))), 4)
    0.7979
    >>> round(float(posterior_mean_variance(np.array(10.0), np.array(1.0))), 4)
    10.0
    """
    v_hat, sd = np.asarray(v_hat, float), np.asarray(sd, float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = v_hat / sd
        # phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x / sqrt(2)): no exp(-x^2/2) cancellation
        # far below 0
        mills = np.sqrt(2.0 / np.pi) / erfcx(-x / np.sqrt(2.0))
        out = sd * (x + mills)
    # no noise (sd 0, an epsilon so large its noise underflows): the posterior is v_hat, or 0
    return np.where(sd > 0, out, np.maximum(v_hat, 0.0))


class GaussianNB(DPClassifierMixin, ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes with epsilon-differential privacy.

    Per class, the count, the per-feature sum and the per-feature sum of squares (of values
    clipped to ``bounds`` and centred on the middle of the bounds) are released with Laplace
    noise; means and variances are derived from them.  Classes are disjoint, so they compose in
    parallel.  The budget is split: the share :func:`count_share` for the class counts, the
    rest evenly over the ``2 d`` per-feature sums.  Each variance is the posterior mean of the
    true variance given its noisy estimate (:func:`posterior_mean_variance`, with the noise sd
    of :func:`variance_noise_sd`): a smooth floor at the noise level.

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy loss of the fit.
    bounds : (lower, upper) or "data"
        Per-feature bounds (scalars or sequences) from domain knowledge.  Required; ``"data"``
        reads them from the data with a :class:`~veil.errors.PrivacyLeakWarning`.
    priors : array-like, optional
        Fixed class priors (then the counts are still noised for the means).
    var_smoothing : float, default 1e-9
        Added to the variances, as a share of the largest squared bound width.
    classes : array-like, optional
        The label domain (public list of possible labels); by default the labels seen in ``y``,
        with a :class:`~veil.errors.PrivacyLeakWarning` (a rare label's presence leaks).
    random_state : None, int or Generator
        ``None`` uses the secure generator; a seed is for tests only.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` before any noise is drawn (after the input is validated).

    Attributes
    ----------
    classes_, class_count_, class_prior_, theta_, var_, epsilon_spent_

    References
    ----------
    Vaidya, Shafiq, Basu, Hong (2013), "Differentially private naive Bayes classification",
    WI-IAT.  Dwork, McSherry, Nissim, Smith (2006), the Laplace mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [1.2, 1.9], [5.0, 6.0], [5.2, 6.1]] * 50)
    >>> y = np.array([0, 0, 1, 1] * 50)
    >>> clf = GaussianNB(epsilon=1.0, bounds=(0, 8), random_state=0).fit(X, y)  # doctest: +SKIP
    >>> clf.predict([[1.1, 2.0], [5.1, 6.0]])  # doctest: +SKIP
    array([0, 1])
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        priors: Any = None,
        var_smoothing: float = 1e-9,
        classes: Any = None,
        random_state: Any = None,
        accountant: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> GaussianNB:
        """Fit the model; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        # checked before the charge (it is used after it)
        check_real(self.var_smoothing, "var_smoothing", positive=False)
        Xa = check_array_2d(X)
        ya = check_target(self, y, len(Xa), classification=True)
        lo, hi = resolve_bounds(self.bounds, Xa)
        check_bounds_span(lo, hi)  # the variances scale by the squared widths
        classes, code = resolve_classes(self.classes, ya)
        priors = None
        if self.priors is not None:  # checked before any noise is drawn
            priors = np.asarray(self.priors, dtype=float)
            if priors.shape != (len(classes),) or not np.isclose(priors.sum(), 1.0):
                raise InputError("priors must have one probability per class, summing to 1")
        n_classes, d = len(classes), Xa.shape[1]
        share = count_share(d)
        eps_count = share * self.epsilon
        eps_each = (1.0 - share) * self.epsilon / (2 * d)
        # the noise scales 1 / eps_count and 1 / eps_each read public values only: an epsilon
        # too large or too small for the samplers is refused before the charge
        check_laplace((1.0, eps_count), (1.0, eps_each))
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            mid, half = (lo + hi) / 2.0, np.maximum((hi - lo) / 2.0, 1e-12)
            # scaled to [-1, 1]: each record moves each coordinate of a sum by at most 1
            Z = np.clip((clip_rows_to_bounds(Xa, lo, hi) - mid) / half, -1.0, 1.0)
            counts = np.bincount(code, minlength=n_classes).astype(float)
            sums = group_sums(code, Z, n_classes)
            sqs = group_sums(code, Z * Z, n_classes)
            noisy_counts = np.maximum(add_laplace(counts, 1.0 / eps_count, rng), 1.0)
            # each record changes one class's scaled sums by at most 1 per coordinate
            noisy_sums = add_laplace(sums, 1.0 / eps_each, rng)
            noisy_sqs = add_laplace(sqs, 1.0 / eps_each, rng)
            # in the scaled units: mean in [-1, 1], second moment and variance in [0, 1]
            theta = np.clip(noisy_sums / noisy_counts[:, None], -1.0, 1.0)
            second = np.clip(noisy_sqs / noisy_counts[:, None], 0.0, 1.0)
            # An underestimated variance is catastrophic for naive Bayes (one feature then
            # dominates every likelihood), and second - theta^2 is often below its own noise
            # for near-constant features.  Each variance is the posterior mean of the true one
            # given its noisy estimate (flat prior on v >= 0, normal noise of the delta-method
            # sd): a smooth floor at about 0.8 noise sds, post-processing, so free.  A tiny
            # absolute floor and scikit-learn's var_smoothing guard against degenerate cases.
            sd = variance_noise_sd(theta, second, noisy_counts[:, None], eps_each, eps_count)
            var = posterior_mean_variance(second - theta**2, sd)
            var = np.clip(var, 1e-4, 1.0) * half**2
            self.var_ = var + self.var_smoothing * float(np.max((2 * half) ** 2))
            self.theta_ = theta * half + mid
            self.classes_ = classes
            self.class_count_ = noisy_counts
            self.class_prior_ = priors if priors is not None else noisy_counts / noisy_counts.sum()
            self.n_features_in_ = d
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "theta_")
        Xa = check_n_features(self, X)
        jll = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_), axis=1)[None, :]
        diff = Xa[:, None, :] - self.theta_[None, :, :]
        jll = jll - 0.5 * np.sum(diff**2 / self.var_[None, :, :], axis=2)
        return jll + np.log(np.maximum(self.class_prior_, 1e-300))[None, :]

    def predict_log_proba(self, X: Any) -> np.ndarray:
        jll = self._joint_log_likelihood(X)
        m = jll.max(axis=1, keepdims=True)
        out = jll - (m + np.log(np.exp(jll - m).sum(axis=1, keepdims=True)))
        # floored at log(1e-300): consistent with predict_proba, never -inf
        return np.maximum(out, -690.0)

    def predict_proba(self, X: Any) -> np.ndarray:
        # floor at ~1e-300 so that log(predict_proba) stays finite
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        jll = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(jll, axis=1)]
