"""Differentially private logistic regression by objective perturbation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from veil.errors import ConfigError, InputError
from veil.ml._base import (
    DPClassifierMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    check_real,
    check_target,
    clip_rows_to_norm,
    resolve_classes,
    resolve_norm,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._noise import resolve_rng
from veil.ml._objpert import calibrate, minimise_perturbed_logistic, sample_perturbation

__all__ = ["LogisticRegression"]


class LogisticRegression(DPClassifierMixin, ClassifierMixin, BaseEstimator):
    """L2-regularised logistic regression with epsilon-differential privacy.

    Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2; Kifer, Smith &
    Thakurta 2012): rows are clipped to ``data_norm`` = R, the intercept is a constant feature
    1, and the augmented rows ``[x, 1]`` (norm <= sqrt(R^2 + 1)) are divided by that norm, so
    every row has norm <= 1.  A random linear term ``b.w / n`` (density of ``b`` proportional to
    ``exp(-beta ||b||)``: ``||b|| ~ Gamma(d, 1/beta)``, uniform direction) is added to the
    regularised mean logistic loss and the perturbed objective is minimised to a gradient of
    at most ``tol * 1e-6`` per coordinate (Newton's method; the proof assumes the exact
    minimiser and the float residual is not accounted for).  Privacy (derivation in
    :mod:`veil.ml._objpert`, replace-one neighbours): the generic bound is ``2 beta + log(1 + c / (n Lambda))`` with ``c = 1/4`` (the c.R^2
    curvature term of the paper, at R = 1 after scaling); for the logistic loss the tighter
    ``beta + max_p [beta p + log(1 + p (1 - p) / (n Lambda))]`` is used.  The regulariser is
    ``Lambda = max(lambda, c / (n expm1(s eps)))`` (extra ``Delta`` only when the user's
    ``lambda`` is too weak), with the Jacobian share ``s = clip(0.3 + 0.28 log10(n eps / 1000),
    0.2, 0.65)`` a function of the public ``n eps`` only
    (:func:`veil.ml._objpert.default_jacobian_share`), and ``beta`` is the largest rate whose
    bound is ``eps``: the noise gets the rest.  Multi-class problems are one-vs-rest with the budget split evenly (each row
    appears in every binary problem: sequential composition).

    Parameters
    ----------
    epsilon : float, default 1.0
    data_norm : float or "data"
        Bound on the L2 norm of every row of ``X`` (rows beyond it are scaled down).  Required.
    C : float, default 1.0
        Inverse regularisation strength, as in scikit-learn: ``lambda = 1 / (n C)`` on the
        raw-scale coefficients; unlike scikit-learn the intercept is regularised too (the privacy
        proof needs a strongly convex objective in every direction).
    fit_intercept : bool, default True
    max_iter : int, default 100
        Newton iterations (a handful suffice: the convergence is quadratic).
    tol : float, default 1e-4
        The optimiser stops when every gradient coordinate is below ``tol * 1e-6``: the
        privacy proof is for the exact minimiser (the residual is not accounted for; a
        ``ConvergenceWarning`` says when the tolerance was not reached).
    classes : array-like, optional
        The label domain (public); by default the labels in ``y``.
    random_state, accountant : see :class:`veil.ml.GaussianNB`.
    verbose, warm_start, n_jobs
        Accepted for diffprivlib compatibility; no effect.

    Attributes
    ----------
    classes_, coef_, intercept_, epsilon_spent_
    n_iter_ : numpy.ndarray
        Newton iterations per binary problem: a function of the training rows that the privacy
        proof (which covers the minimiser only) does not cover, as in diffprivlib and
        scikit-learn's own attribute; not private, do not publish it.
    calibration_ : veil.ml._objpert.Calibration
        The regulariser and noise rate used for each binary problem, with the two terms of the
        privacy bound (``eps_jacobian + eps_noise <= epsilon / n_models``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = LogisticRegression(epsilon=1.0, data_norm=5.0, random_state=0).fit(X, y)  # doctest: +SKIP
    >>> clf.score(X, y) > 0.8  # doctest: +SKIP
    True
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        data_norm: Any = None,
        C: float = 1.0,
        fit_intercept: bool = True,
        max_iter: int = 100,
        tol: float = 1e-4,
        classes: Any = None,
        random_state: Any = None,
        accountant: Any = None,
        verbose: int = 0,
        warm_start: bool = False,
        n_jobs: int | None = None,
    ) -> None:
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LogisticRegression:
        """Fit the model; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        C = check_real(self.C, "C", positive=True)
        max_iter, tol = self.max_iter, check_real(self.tol, "tol", positive=False)
        if (
            isinstance(max_iter, bool)
            or not isinstance(max_iter, (int, np.integer))
            or max_iter < 0
        ):
            raise ConfigError(f"max_iter must be a non-negative integer, got {max_iter!r}")
        Xa = check_array_2d(X, min_samples=2)
        ya = check_target(self, y, len(Xa), classification=True)
        norm = resolve_norm(self.data_norm, Xa)
        classes, codes = resolve_classes(self.classes, ya)
        if len(classes) < 2:
            raise InputError("need at least two classes")
        # every row of Z / S has norm <= 1; C regularises the raw-scale weights, which in the
        # scaled space (z = x / S) is the penalty lambda / S^2.  The calibration reads only
        # public values (n is public under replace-one neighbours), so it runs before the
        # charge: a C or data_norm whose regulariser under- or overflows, or an epsilon beyond
        # the calibration's range, is refused without spending the budget
        S = math.sqrt(norm * norm + 1.0) if self.fit_intercept else float(norm)
        n_models = 1 if len(classes) == 2 else len(classes)
        eps_each = self.epsilon / n_models
        lam = 1.0 / (len(Xa) * C * (S * S))
        try:
            if not (math.isfinite(lam) and lam > 0):
                raise ValueError("the regulariser 1 / (n C data_norm^2) is 0 or infinite")
            cal = calibrate(eps_each, len(Xa), lam)
        except (ValueError, OverflowError, ZeroDivisionError) as exc:
            raise ConfigError(
                f"C={self.C!r}, data_norm and epsilon={self.epsilon!r} admit no objective "
                f"perturbation in float64 ({exc})"
            ) from None
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            Z = clip_rows_to_norm(Xa, norm)
            if self.fit_intercept:
                Z = np.hstack([Z, np.ones((len(Z), 1))])
            Z = Z / S
            weights, n_iter = [], []
            for j in range(n_models):
                s = np.where(codes == (1 if n_models == 1 else j), 1.0, -1.0)
                b = sample_perturbation(rng, Z.shape[1], cal.beta)
                w, it = minimise_perturbed_logistic(
                    Z, s, b, cal.reg, max_iter=int(max_iter), gtol=tol * 1e-6
                )
                weights.append(w)
                n_iter.append(it)
            W = np.vstack(weights) / S
            if self.fit_intercept:
                self.coef_ = W[:, :-1]
                self.intercept_ = W[:, -1]
            else:
                self.coef_ = W
                self.intercept_ = np.zeros(W.shape[0])
            self.classes_ = classes
            self.n_features_in_ = Xa.shape[1]
            self.n_iter_ = np.array(n_iter)
            self.calibration_ = cal
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        Xa = check_n_features(self, X)
        scores = Xa @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X: Any) -> np.ndarray:
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1 - p, p])
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
