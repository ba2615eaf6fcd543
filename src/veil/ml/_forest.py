"""Differentially private decision trees and forests (greedy trees of :mod:`veil.ml._dptree`)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from veil._checks import positive_int
from veil.errors import ConfigError, InputError
from veil.ml._base import (
    DPClassifierMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    check_target,
    resolve_bounds,
    resolve_classes,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._dptree import LEAF_SHARE, auto_depth, build_tree, leaf_distribution
from veil.ml._noise import COUNT_SHARE, check_laplace, noisy_count, resolve_rng

__all__ = ["DecisionTreeClassifier", "RandomForestClassifier"]


class _GreedyTreeClassifier(DPClassifierMixin, ClassifierMixin, BaseEstimator):
    """Fit bookkeeping and prediction shared by the DP tree and forest classifiers.

    Both release noisy leaf class distributions of greedy DP trees (Friedman & Schuster 2010,
    "Data mining with differential privacy", KDD) and predict the class of highest probability.
    """

    classes_: np.ndarray

    def predict_proba(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _record_fit(self, depth: int, classes: np.ndarray, n_features: int, eps: float) -> None:
        """Store the fitted attributes common to trees and forests.

        Parameters
        ----------
        depth : int
            Depth of every tree (``max_depth_``).
        classes : numpy.ndarray
            The label domain (``classes_``).
        n_features : int
            Number of features seen in ``fit`` (``n_features_in_``).
        eps : float
            Epsilon spent by the fit (``epsilon_spent_``).
        """
        self.max_depth_ = depth
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.epsilon_spent_ = eps

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DecisionTreeClassifier(_GreedyTreeClassifier):
    """A differentially private greedy decision tree classifier.

    Grown top-down to a fixed depth; each node picks its split with the exponential mechanism
    over a public grid of candidate thresholds, scored by the max operator (Friedman &
    Schuster 2010, "Data mining with differential privacy", KDD); the leaves' class counts are
    released with Laplace noise and predictions are the noisy class distribution of the leaf.
    See :mod:`veil.ml._dptree` for the budget split and the privacy argument.

    Parameters
    ----------
    max_depth : int or None, default None
        Depth of the tree.  ``None`` picks it from the data size and the budget
        (``floor(log2(n eps)) - 7`` in ``[1, 8]``, with ``n`` a noisy count costing 2 % of
        ``epsilon``).
    epsilon : float, default 1.0
    bounds : (lower, upper) or "data"
        Feature domains (required); ``"data"`` reads them with a PrivacyLeakWarning.  The
        candidate thresholds are equally spaced inside them, so tight public bounds help.
    classes : array-like, optional
        Label domain (public); by default the labels in ``y``.
    random_state, accountant : see :class:`veil.ml.GaussianNB`.
    criterion
        Accepted for diffprivlib compatibility; no effect.

    Attributes
    ----------
    tree_ : the fitted tree (``feature``, ``threshold``, ``depth``).
    leaf_counts_ : ndarray of shape (2**depth, n_classes), the noisy leaf class counts.
    max_depth_ : int, the depth used.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(0, 1, (3000, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> clf = DecisionTreeClassifier(max_depth=6, epsilon=1.0, bounds=(0, 1), random_state=1)
    >>> clf = clf.fit(X, y)  # doctest: +SKIP
    """

    def __init__(
        self,
        max_depth: int | None = None,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        classes: Any = None,
        random_state: Any = None,
        accountant: Any = None,
        criterion: Any = None,
    ) -> None:
        self.criterion = criterion
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> DecisionTreeClassifier:
        """Fit the tree; spends ``epsilon`` from the accountant."""
        Xa, codes, classes, lo, hi = _prepare(self, X, y, sample_weight)
        rng = resolve_rng(self.random_state)
        eps = float(self.epsilon)
        with Charge(self.accountant, eps):
            depth, eps_tree = _depth_and_budget(self.max_depth, len(Xa), eps, 1, rng)
            self.tree_, self.leaf_counts_ = build_tree(
                Xa, codes, len(classes), lo, hi, depth, eps_tree, rng
            )
            self._record_fit(depth, classes, Xa.shape[1], eps)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        Xa = check_n_features(self, X)
        return leaf_distribution(self.leaf_counts_)[self.tree_.leaves(Xa)]


class RandomForestClassifier(_GreedyTreeClassifier):
    """A differentially private forest of greedy decision trees on disjoint parts of the data.

    The rows are split at random into ``n_estimators`` disjoint parts, one per tree, so every
    tree spends the full ``epsilon`` on its own part (parallel composition; Fletcher & Islam
    2019 survey this design).  Each tree is a :class:`DecisionTreeClassifier`-style greedy DP
    tree (Friedman & Schuster 2010); predictions average the trees' noisy leaf distributions
    (soft voting).

    Parameters
    ----------
    n_estimators : int, default 10
    epsilon : float, default 1.0
    bounds : (lower, upper) or "data"
        Feature domains (required; ``"data"`` reads them with a PrivacyLeakWarning).
    classes : array-like, optional
    n_jobs : int, optional
        Accepted for scikit-learn/diffprivlib compatibility; trees are built with vectorized
        numpy, which is faster than process parallelism at these sizes.
    verbose : int, default 0
        Print one line per tree when positive.
    max_depth : int or None, default None
        Depth of every tree; ``None`` applies the rule of :class:`DecisionTreeClassifier` to a
        tree's part (noisy ``n / n_estimators``; the noisy count of all rows costs 2 % of
        ``epsilon`` once).
    random_state, accountant : see :class:`veil.ml.GaussianNB`.
    warm_start, shuffle
        Accepted for diffprivlib compatibility; no effect (rows are always assigned to the
        trees at random).

    References
    ----------
    Friedman & Schuster (2010), "Data mining with differential privacy", KDD; Fletcher & Islam
    (2019), "Decision tree classification with differential privacy: a survey", ACM Computing
    Surveys.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(0, 1, (5000, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> rf = RandomForestClassifier(n_estimators=5, epsilon=1.0, bounds=(0, 1), random_state=3)
    >>> rf = rf.fit(X, y)  # doctest: +SKIP
    """

    def __init__(
        self,
        n_estimators: int = 10,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        classes: Any = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        max_depth: int | None = None,
        random_state: Any = None,
        accountant: Any = None,
        warm_start: bool = False,
        shuffle: bool = False,
    ) -> None:
        self.warm_start = warm_start
        self.shuffle = shuffle
        self.n_estimators = n_estimators
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.max_depth = max_depth
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> RandomForestClassifier:
        """Fit the forest; spends ``epsilon`` from the accountant."""
        n_trees = positive_int(self.n_estimators, "n_estimators")
        Xa, codes, classes, lo, hi = _prepare(self, X, y, sample_weight)
        rng = resolve_rng(self.random_state)
        eps = float(self.epsilon)
        with Charge(self.accountant, eps):
            depth, eps_tree = _depth_and_budget(self.max_depth, len(Xa), eps, n_trees, rng)
            part = rng.integers(0, n_trees, size=len(Xa))
            trees, counts = [], []
            for t in range(n_trees):
                rows = part == t
                tree, leaf_counts = build_tree(
                    Xa[rows], codes[rows], len(classes), lo, hi, depth, eps_tree, rng
                )
                trees.append(tree)
                counts.append(leaf_counts)
                if self.verbose:
                    print(f"[veil] tree {t + 1}/{n_trees} built", file=sys.stderr)
            self.estimators_ = trees
            self.leaf_counts_ = counts
            self._record_fit(depth, classes, Xa.shape[1], eps)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        Xa = check_n_features(self, X)
        total = np.zeros((len(Xa), len(self.classes_)))
        for tree, counts in zip(self.estimators_, self.leaf_counts_):
            total += leaf_distribution(counts)[tree.leaves(Xa)]
        return total / len(self.estimators_)


def _depth_and_budget(
    max_depth: int | None, n: int, eps: float, n_parts: int, rng: Any
) -> tuple[int, float]:
    """Tree depth and the epsilon left for each tree.

    An explicit ``max_depth`` costs nothing; ``None`` releases a noisy row count with
    ``COUNT_SHARE * eps`` and applies :func:`auto_depth` to ``n / n_parts`` with the rest.
    """
    if max_depth is not None:
        return int(max_depth), eps
    eps_count = COUNT_SHARE * eps
    n_hat = max(noisy_count(n, eps_count, rng), 1.0)
    return auto_depth(n_hat / n_parts, eps - eps_count), eps - eps_count


def _prepare(est: Any, X: Any, y: Any, sample_weight: Any) -> tuple[Any, ...]:
    if sample_weight is not None:
        raise InputError("sample_weight is not supported: it would change the sensitivity")
    check_privacy_params(est.epsilon)
    md = est.max_depth
    if md is not None and (
        isinstance(md, bool) or not isinstance(md, (int, np.integer)) or not 0 <= md <= 16
    ):
        raise ConfigError(f"max_depth must be None or an integer in [0, 16], got {md!r}")
    Xa = check_array_2d(X)
    ya = check_target(est, y, len(Xa), classification=True)
    lo, hi = resolve_bounds(est.bounds, Xa)
    classes, codes = resolve_classes(est.classes, ya)
    _check_tree_plan(md, float(est.epsilon))
    return Xa, codes, classes, lo, hi


def _check_tree_plan(max_depth: int | None, eps: float) -> None:
    """Refuse, before the charge, an epsilon whose Laplace noise a tree cannot draw: the
    noisy row count of :func:`_depth_and_budget` (``max_depth=None``) and the leaf counts of
    :func:`~veil.ml._dptree.build_tree` (``LEAF_SHARE`` of the tree's epsilon at any depth
    from 1, all of it at depth 0).  The automatic depth is read from the noisy count, but
    the leaves' share does not depend on it; every tree of a forest gets the same epsilon
    (disjoint rows).  Public values only, so the refusal never depends on the data (it was
    a NoiseScaleError while drawing, after the charge)."""
    if max_depth is None:
        eps_count = COUNT_SHARE * eps
        check_laplace((1.0, eps_count), (1.0, LEAF_SHARE * (eps - eps_count)))
    else:
        check_laplace((1.0, eps if max_depth == 0 else LEAF_SHARE * eps))
