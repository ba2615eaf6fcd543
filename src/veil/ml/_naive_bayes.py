"""Differentially private Gaussian naive Bayes."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from veil.errors import InputError
from veil.ml._base import (
    DPEstimatorMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    check_target,
    clip_rows_to_bounds,
    group_sums,
    resolve_bounds,
    resolve_classes,
)
from veil.ml._budget import Charge
from veil.ml._noise import add_laplace, resolve_rng

__all__ = ["GaussianNB"]


FLOOR_SDS = 2.0  # variance floor, in noise standard deviations of the variance estimate


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


class GaussianNB(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes with epsilon-differential privacy.

    Per class, the count, the per-feature sum and the per-feature sum of squares (of values
    clipped to ``bounds`` and centred on the middle of the bounds) are released with Laplace
    noise; means and variances are derived from them.  Classes are disjoint, so they compose in
    parallel.  The budget is split: 5 % for the class counts, the rest evenly over the ``2 d``
    per-feature sums.

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
        The label domain; by default the labels seen in ``y`` (labels are treated as public).
    random_state : None, int or Generator
        ``None`` uses the secure generator; a seed is for tests only.
    accountant : BudgetAccountant, optional
        Charged ``epsilon`` after a successful fit (checked before).

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

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> GaussianNB:
        """Fit the model; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        Xa = check_array_2d(X)
        ya = check_target(self, y, len(Xa), classification=True)
        lo, hi = resolve_bounds(self.bounds, Xa)
        classes, code = resolve_classes(self.classes, ya)
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            n_classes, d = len(classes), Xa.shape[1]
            mid, half = (lo + hi) / 2.0, np.maximum((hi - lo) / 2.0, 1e-12)
            # scaled to [-1, 1]: each record moves each coordinate of a sum by at most 1
            Z = np.clip((clip_rows_to_bounds(Xa, lo, hi) - mid) / half, -1.0, 1.0)
            share = count_share(d)
            eps_count = share * self.epsilon
            eps_each = (1.0 - share) * self.epsilon / (2 * d)
            counts = np.bincount(code, minlength=n_classes).astype(float)
            sums = group_sums(code, Z, n_classes)
            sqs = group_sums(code, Z * Z, n_classes)
            noisy_counts = np.maximum(add_laplace(counts, 1.0 / eps_count, rng), 1.0)
            # each record changes one class's scaled sums by at most 1 per coordinate
            noisy_sums = add_laplace(sums, 1.0 / eps_each, rng) * half
            noisy_sqs = add_laplace(sqs, 1.0 / eps_each, rng) * half**2
            theta = np.clip(noisy_sums / noisy_counts[:, None], -half, half)
            second = np.clip(noisy_sqs / noisy_counts[:, None], 0.0, half**2)
            var = np.clip(second - theta**2, 0.0, half**2)
            # An underestimated variance is catastrophic for naive Bayes (one feature then
            # dominates every likelihood): a variance below two noise standard deviations of its
            # own estimate (about the one-sided 97.7 % noise level) is floored there
            # (post-processing of the noisy count, so free), plus scikit-learn's var_smoothing.
            # The former 3 sd over-smoothed small tables (wine, eps 5: 0.65 vs 0.76 accuracy)
            # and 1-1.645 sd under-smoothed Adult at eps 5 (docs/benchmarks/ml.md).
            noise_sd = np.sqrt(2.0) / (eps_each * noisy_counts)[:, None] * half**2
            floor = np.maximum(FLOOR_SDS * noise_sd, 1e-4 * half**2)
            floor = floor + self.var_smoothing * float(np.max((2 * half) ** 2))
            self.var_ = np.maximum(var, floor)
            self.theta_ = theta + mid
            self.classes_ = classes
            self.class_count_ = noisy_counts
            if self.priors is not None:
                priors = np.asarray(self.priors, dtype=float)
                if priors.shape != (n_classes,) or not np.isclose(priors.sum(), 1.0):
                    raise InputError("priors must have one probability per class, summing to 1")
                self.class_prior_ = priors
            else:
                self.class_prior_ = noisy_counts / noisy_counts.sum()
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
