"""Differentially private greedy decision trees (building blocks of ``_forest``).

The tree is grown top-down to a fixed depth.  Every internal node chooses its split with the
exponential mechanism over a *public* candidate grid, scored by the max operator (Friedman &
Schuster 2010, "Data mining with differential privacy", KDD): the utility of a split is the
number of rows its two children would classify correctly, ``sum_child max_c n(child, c)``.
The leaves' class counts are released with Laplace noise.

Privacy (unit: one row added or removed).

* Candidates.  A node's candidate thresholds are ``N_THRESHOLDS`` equally spaced points inside
  the node's interval of each feature.  That interval comes from the public bounds and the
  splits already released above the node, so the candidate set is data independent given the
  earlier outputs.
* Splits.  Adding a row raises, for every candidate, exactly one child's count of one class by
  one, so every utility rises by 0 or 1: sensitivity 1 and *monotonic*, and the exponential
  mechanism with ``P(s) ~ exp(eps u(s))`` is ``eps``-DP (McSherry & Talwar 2007).  The nodes
  of one level partition the rows, so one level costs ``eps_level`` in all (parallel
  composition); the levels compose sequentially.
* Leaves.  The leaves partition the rows, so the class counts of all leaves form one histogram
  of L1 sensitivity 1: Laplace(1/eps_leaf) on every count is ``eps_leaf``-DP.
* Depth.  With ``max_depth=None`` the depth follows :func:`auto_depth` from ``n * epsilon``;
  ``n`` is itself private, so it is a Laplace-noised count costing ``COUNT_SHARE * epsilon``.

A tree therefore spends ``eps_count + D * eps_level + eps_leaf = epsilon``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veil.dp.mechanisms import Exponential
from veil.ml._noise import add_laplace

__all__ = [
    "COUNT_SHARE",
    "LEAF_SHARE",
    "N_THRESHOLDS",
    "GreedyTree",
    "auto_depth",
    "build_tree",
    "leaf_distribution",
    "noisy_count",
    "noisy_leaf_counts",
    "select_split",
    "split_utilities",
]

N_THRESHOLDS = 16  # candidate thresholds per feature and node
LEAF_SHARE = 0.3  # share of a tree's epsilon spent on the leaf counts (rest: the splits)
COUNT_SHARE = 0.02  # share of epsilon for the noisy row count behind the automatic depth
MAX_AUTO_DEPTH = 8


def auto_depth(n: float, epsilon: float) -> int:
    """Depth from the (noisy) number of rows and the budget: ``floor(log2(n eps) / 2) + 1``.

    Chosen on Adult (``docs/benchmarks/ml.md``): deeper trees pay off while ``n eps`` grows,
    about one level per factor 4, clipped to ``[1, 8]``.

    Examples
    --------
    >>> auto_depth(32561, 0.1), auto_depth(32561, 1.0), auto_depth(100, 0.1)
    (6, 8, 2)
    """
    m = float(n) * float(epsilon)
    if m < 2.0:
        return 1
    return int(min(MAX_AUTO_DEPTH, max(1, np.floor(np.log2(m) / 2) + 1)))


def noisy_count(n: int, epsilon: float, rng: Any) -> float:
    """``n`` plus Laplace(1/epsilon) (a count has sensitivity 1)."""
    return float(add_laplace(np.array([float(n)]), 1.0 / epsilon, rng)[0])


class GreedyTree:
    """A complete binary tree of depth ``depth`` in heap order.

    Node ``i``'s children are ``2 i + 1`` (value <= threshold) and ``2 i + 2``.
    """

    def __init__(self, depth: int, feature: np.ndarray, threshold: np.ndarray) -> None:
        self.depth = int(depth)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=float)

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """Leaf index (0 .. 2**depth - 1) of every row."""
        node = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        for _ in range(self.depth):
            go_right = X[rows, self.feature[node]] > self.threshold[node]
            node = 2 * node + 1 + go_right
        return node - (2**self.depth - 1)


def candidate_thresholds(lo: np.ndarray, hi: np.ndarray, k: int = N_THRESHOLDS) -> np.ndarray:
    """``(d, k)`` thresholds: ``k`` equally spaced interior points of each ``[lo_f, hi_f]``."""
    frac = np.arange(1, k + 1) / (k + 1)
    return lo[:, None] + (hi - lo)[:, None] * frac[None, :]


def split_utilities(
    X: np.ndarray, codes: np.ndarray, n_classes: int, thresholds: np.ndarray
) -> np.ndarray:
    """Max-operator utility of every candidate split, flattened feature-major ``(d * k,)``.

    ``u(f, j) = max_c #{x_f <= t_fj, c} + max_c #{x_f > t_fj, c}`` (Friedman & Schuster 2010).
    """
    d, k = thresholds.shape
    total = np.bincount(codes, minlength=n_classes)
    out = np.empty((d, k))
    for f in range(d):
        b = np.searchsorted(thresholds[f], X[:, f], side="left")  # x <= t_j  <=>  b <= j
        h = np.bincount(b * n_classes + codes, minlength=(k + 1) * n_classes)
        left = np.cumsum(h.reshape(k + 1, n_classes), axis=0)[:-1]
        out[f] = left.max(axis=1) + (total - left).max(axis=1)
    return out.ravel()


def select_split(utilities: np.ndarray, epsilon: float, rng: Any) -> int:
    """Index drawn by the exponential mechanism for a monotonic utility of sensitivity 1.

    ``P(i) ~ exp(epsilon * u_i)`` (McSherry & Talwar 2007; exact rejection sampling in
    :class:`veil.dp.mechanisms.Exponential`).
    """
    mech = Exponential(
        epsilon=epsilon, sensitivity=1.0, utility=utilities, monotonic=True, random_state=rng
    )
    return int(mech.randomise())


def noisy_leaf_counts(
    tree: GreedyTree, X: np.ndarray, codes: np.ndarray, n_classes: int, eps: float, rng: Any
) -> np.ndarray:
    """Class counts of every leaf plus Laplace(1/eps) (leaves partition the rows)."""
    n_leaves = 2**tree.depth
    leaf = tree.leaves(X) if len(X) else np.zeros(0, dtype=np.int64)
    counts = np.bincount(leaf * n_classes + codes, minlength=n_leaves * n_classes).astype(float)
    return add_laplace(counts, 1.0 / eps, rng).reshape(n_leaves, n_classes)


def leaf_distribution(counts: np.ndarray) -> np.ndarray:
    """Class distribution per leaf from its noisy counts (negative counts clipped to 0)."""
    c = np.maximum(counts, 0.0) + 1e-3
    return c / c.sum(axis=1, keepdims=True)


def build_tree(
    X: np.ndarray,
    codes: np.ndarray,
    n_classes: int,
    lo: np.ndarray,
    hi: np.ndarray,
    depth: int,
    epsilon: float,
    rng: Any,
) -> tuple[GreedyTree, np.ndarray]:
    """Grow a greedy DP tree of fixed ``depth`` spending ``epsilon``; return it and its
    noisy leaf counts.

    ``LEAF_SHARE * epsilon`` goes to the leaf counts and the rest is split evenly over the
    ``depth`` levels of splits (all of it to the leaves when ``depth == 0``).
    """
    d = X.shape[1]
    n_internal = 2**depth - 1
    eps_leaf = epsilon if depth == 0 else LEAF_SHARE * epsilon
    eps_level = (epsilon - eps_leaf) / depth if depth else 0.0
    feature = np.zeros(n_internal, dtype=np.int64)
    threshold = np.zeros(n_internal)
    node_lo = np.empty((n_internal, d))
    node_hi = np.empty((n_internal, d))
    node_rows: list[np.ndarray] = [np.arange(len(X))] + [np.empty(0, np.int64)] * n_internal
    if n_internal:
        node_lo[0], node_hi[0] = lo, hi
    for i in range(n_internal):  # heap order visits the levels top-down
        rows = node_rows[i]
        cand = candidate_thresholds(node_lo[i], node_hi[i])
        u = split_utilities(X[rows], codes[rows], n_classes, cand)
        j = select_split(u, eps_level, rng)
        f, t = divmod(j, cand.shape[1])
        feature[i], threshold[i] = f, cand[f, t]
        left = X[rows, f] <= threshold[i]
        for child, side_rows, is_left in ((2 * i + 1, rows[left], 1), (2 * i + 2, rows[~left], 0)):
            if child < n_internal:
                node_rows[child] = side_rows
                node_lo[child], node_hi[child] = node_lo[i], node_hi[i]
                if is_left:
                    node_hi[child, f] = threshold[i]
                else:
                    node_lo[child, f] = threshold[i]
        node_rows[i] = np.empty(0, np.int64)  # free
    tree = GreedyTree(depth, feature, threshold)
    return tree, noisy_leaf_counts(tree, X, codes, n_classes, eps_leaf, rng)
