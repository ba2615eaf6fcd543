"""Differentially private logistic regression by objective perturbation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from veil.errors import ConfigError, InputError
from veil.ml._base import (
    DPEstimatorMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    check_target,
    clip_rows_to_norm,
    resolve_norm,
)
from veil.ml._budget import Charge
from veil.ml._noise import gamma_int, resolve_rng, std_normal

__all__ = ["LogisticRegression"]


class LogisticRegression(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """L2-regularised logistic regression with epsilon-differential privacy.

    Objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2): rows are scaled
    so that their L2 norm is at most 1 (``data_norm`` is the bound on the raw rows; the
    intercept is a constant feature), a random linear term ``b.w / n`` with
    ``||b|| ~ Gamma(d, 2/eps')`` in a uniformly random direction is added to the regularised
    empirical risk, and the perturbed objective is minimised exactly (L-BFGS).  When the
    regulariser is too weak for the privacy proof, extra regularisation ``Delta`` is added as in
    the paper.  Multi-class problems are one-vs-rest with the budget split evenly (each row
    appears in every binary problem: sequential composition).

    Parameters
    ----------
    epsilon : float, default 1.0
    data_norm : float or "data"
        Bound on the L2 norm of every row of ``X`` (rows beyond it are scaled down).  Required.
    C : float, default 1.0
        Inverse regularisation strength, as in scikit-learn: ``lambda = 1 / (n C)``.
    fit_intercept : bool, default True
    max_iter, tol : optimiser settings.
    classes : array-like, optional
        The label domain (public); by default the labels in ``y``.
    random_state, accountant : see :class:`veil.ml.GaussianNB`.

    Attributes
    ----------
    classes_, coef_, intercept_, epsilon_spent_

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
    ) -> None:
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LogisticRegression:
        """Fit the model; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        if not (isinstance(self.C, (int, float)) and self.C > 0):
            raise ConfigError(f"C must be a positive number, got {self.C!r}")
        Xa = check_array_2d(X, min_samples=2)
        ya = check_target(self, y, len(Xa), classification=True)
        norm = resolve_norm(self.data_norm, Xa)
        classes = np.unique(ya) if self.classes is None else np.asarray(self.classes)
        if np.setdiff1d(np.unique(ya), classes).size:
            raise InputError("y has labels outside classes")
        if len(classes) < 2:
            raise InputError("need at least two classes")
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            Z = clip_rows_to_norm(Xa, norm) / norm
            if self.fit_intercept:
                Z = np.hstack([Z, np.ones((len(Z), 1))]) / math.sqrt(2.0)
            # C regularises the raw-scale weights: in the scaled space (x' = x / s) the same
            # penalty is lambda / s^2 (the privacy proof then adds what it needs)
            scale2 = norm**2 * (2.0 if self.fit_intercept else 1.0)
            n_models = 1 if len(classes) == 2 else len(classes)
            eps_each = self.epsilon / n_models
            weights = []
            for j in range(n_models):
                target = classes[1] if n_models == 1 else classes[j]
                s = np.where(ya == target, 1.0, -1.0)
                weights.append(self._fit_binary(Z, s, eps_each, rng, scale2))
            W = np.vstack(weights)
            scale = 1.0 / norm
            if self.fit_intercept:
                self.coef_ = W[:, :-1] * scale / math.sqrt(2.0)
                self.intercept_ = W[:, -1] / math.sqrt(2.0)
            else:
                self.coef_ = W * scale
                self.intercept_ = np.zeros(W.shape[0])
            self.classes_ = classes
            self.n_features_in_ = Xa.shape[1]
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def _fit_binary(
        self, Z: np.ndarray, s: np.ndarray, eps: float, rng: Any, scale2: float
    ) -> np.ndarray:
        n, d = Z.shape
        lam = 1.0 / (n * float(self.C) * scale2)
        c = 0.25  # bound on the second derivative of the logistic loss
        eps_p = eps - math.log(1 + 2 * c / (n * lam) + (c / (n * lam)) ** 2)
        delta_reg = 0.0
        if eps_p <= 0:
            delta_reg = c / (n * (math.expm1(eps / 4))) - lam
            eps_p = eps / 2
        direction = std_normal(rng, d)
        direction /= np.linalg.norm(direction)
        b = gamma_int(rng, d, 2.0 / eps_p) * direction
        reg = lam + delta_reg

        def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
            m = s * (Z @ w)
            loss = -np.mean(log_expit(m)) + (b @ w) / n + 0.5 * reg * (w @ w)
            grad = -(Z.T @ (s * expit(-m))) / n + b / n + reg * w
            return float(loss), grad

        res = minimize(
            objective,
            np.zeros(d),
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": int(self.max_iter) * 10,
                "gtol": float(self.tol) * 1e-2,
                "ftol": 1e-11,
            },
        )
        self.n_iter_ = np.array([int(res.nit)])
        return np.asarray(res.x)

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
