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
  ``n`` is itself private, so it is a Laplace-noised count costing ``COUNT_SHARE * epsilon``
  (:mod:`veil.ml._noise`, shared with k-means).

A tree therefore spends ``eps_count + D * eps_level + eps_leaf = epsilon``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veil.dp._samplers import bernoulli_exp
from veil.ml._noise import add_laplace

__all__ = [
    "LEAF_SHARE",
    "N_THRESHOLDS",
    "GreedyTree",
    "auto_depth",
    "build_tree",
    "leaf_distribution",
    "noisy_leaf_counts",
    "select_splits",
    "split_utilities",
]

N_THRESHOLDS = 16  # candidate thresholds per feature and node
LEAF_SHARE = 0.3  # share of a tree's epsilon spent on the leaf counts (rest: the splits)
MAX_AUTO_DEPTH = 8


def auto_depth(n: float, epsilon: float) -> int:
    """Depth from the (noisy) number of rows and the budget: ``floor(log2(n eps)) - 7``.

    I.e. the deepest tree whose ``2**depth`` leaves still hold ``128 / eps`` rows each on
    average, clipped to ``[1, 8]``.  Chosen on a 70/30 split of Adult's training file
    (``docs/ml.md``, trees section).

    Examples
    --------
    >>> auto_depth(32561, 0.1), auto_depth(3256, 0.1), auto_depth(32561, 1.0), auto_depth(100, 0.1)
    (4, 1, 7, 1)
    """
    m = float(n) * float(epsilon)
    if m < 2.0:
        return 1
    return int(min(MAX_AUTO_DEPTH, max(1, np.floor(np.log2(m)) - 7)))


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
    """``(..., d, k)`` thresholds: ``k`` equally spaced interior points of each ``[lo, hi]``."""
    frac = np.arange(1, k + 1) / (k + 1)
    return lo[..., None] + (hi - lo)[..., None] * frac


def split_utilities(
    X: np.ndarray,
    codes: np.ndarray,
    n_classes: int,
    thresholds: np.ndarray,
    node: np.ndarray | None = None,
) -> np.ndarray:
    """Max-operator utility of every candidate split of every node of one level.

    ``u(f, j) = max_c #{x_f <= t_fj, c} + max_c #{x_f > t_fj, c}`` over the node's rows
    (Friedman & Schuster 2010).

    Parameters
    ----------
    X, codes : the rows and their class codes.
    thresholds : ndarray of shape (d, k) or (m, d, k)
        Candidate thresholds (per node of the level when 3-d).
    node : ndarray of shape (n,), optional
        Node (0 .. m - 1) of each row; all rows in node 0 by default.

    Returns
    -------
    ndarray of shape (d * k,) for 2-d ``thresholds``, else (m, d * k), feature-major.
    """
    single = thresholds.ndim == 2
    th = thresholds[None] if single else thresholds
    m, d, k = th.shape
    a = np.zeros(len(X), dtype=np.int64) if node is None else np.asarray(node, dtype=np.int64)
    # one pass over (row, feature) pairs: "cell" a * d + f holds the thresholds th[a, f]
    cell = (a[:, None] * d + np.arange(d)[None, :]).ravel()
    b = _count_below(X.ravel(), th.reshape(m * d, k), cell)  # x <= t_j  <=>  b <= j
    out = _utilities(_cell_keys(b.reshape(-1, d), codes, k, n_classes), a, m, k, n_classes)
    return out.reshape(d * k) if single else out


def _cell_keys(bins: np.ndarray, codes: np.ndarray, k: int, n_classes: int) -> np.ndarray:
    """``(n, d)`` histogram cell of each (row, feature) within its node: ``(f, bin, class)``
    numbered ``(f (k + 1) + bin) n_classes + class``.

    ``bins[i, f]`` is ``#{j : t_j < x_if}`` against the ``k`` thresholds of row ``i``'s node.
    """
    d = bins.shape[1]
    feat = np.arange(d, dtype=np.int64) * ((k + 1) * n_classes)
    return bins * n_classes + (feat[None, :] + np.asarray(codes, dtype=np.int64)[:, None])


def _utilities(cells: np.ndarray, node: np.ndarray, m: int, k: int, n_classes: int) -> np.ndarray:
    """``(m, d * k)`` max-operator utilities from the cells of :func:`_cell_keys` and each
    row's node (``0 .. m - 1``): one ``bincount`` gives the class histogram of every (node,
    feature, bin), and cumulative sums over the bins give both children of every threshold.
    """
    d = cells.shape[1]
    per_node = d * (k + 1) * n_classes
    key = cells + (np.asarray(node, dtype=np.int64) * per_node)[:, None]
    h = np.bincount(key.ravel(), minlength=m * per_node).reshape(m, d, k + 1, n_classes)
    left = np.cumsum(h, axis=2)[:, :, :-1]
    right = h.sum(axis=2)[:, :, None, :] - left
    return (left.max(axis=3) + right.max(axis=3)).reshape(m, d * k)


def _count_below(x: np.ndarray, th: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``#{j : th[a_i, j] < x_i}`` for sorted, equally spaced rows ``th`` (exact, O(n)).

    An arithmetic first guess from the spacing, then corrected by comparing ``x`` with the
    actual thresholds on both sides, so the count agrees with the routing test ``x > t``.
    """
    m, k = th.shape
    if m == 0 or k == 0 or len(x) == 0:
        return np.zeros(len(x), dtype=np.int64)
    x = np.asarray(x, dtype=float)
    a = np.asarray(a, dtype=np.int64)
    step = (th[:, -1] - th[:, 0]) / (k - 1) if k > 1 else np.zeros(m)
    # equal (or sub-1e-300 spaced) thresholds: guess 0, counted exactly below (no inf * 0)
    with np.errstate(divide="ignore"):
        inv = np.where(step > 1e-300, 1.0 / step, 0.0)
    start = th[:, 0] - step  # the node's lower bound
    # guess: b = clip(ceil((x - start) / step), 1, k + 1) - 1
    # a value far outside the node (beyond ~1e307 / k for bounds of width 1) overflows to
    # +-inf here, which clips to the end bin: silently, since a RuntimeWarning raised in the
    # private fit shows that one person holds a huge value (an error under -W error after the
    # budget is spent); NaN (inf * 0 on equal thresholds, or infinite bounds) is a guess of 1
    # (np.fmax ignores NaN), which the exact check below corrects
    with np.errstate(over="ignore", invalid="ignore"):
        r = x - np.take(start, a)
        r *= np.take(inv, a)
    np.ceil(r, out=r)
    np.fmax(r, 1, out=r)
    np.fmin(r, k + 1, out=r)
    b = r.astype(np.int64)
    b -= 1
    # check: P[b] < x <= P[b + 1] on the node's thresholds padded as [-inf, t_1..t_k, +inf];
    # the guess is off only within rounding error of a threshold (or for equal thresholds):
    # those few rows are counted exactly
    padded = np.empty((m, k + 2))
    padded[:, 0], padded[:, -1], padded[:, 1:-1] = -np.inf, np.inf, th
    flat = padded.ravel()
    idx = a * (k + 2)
    idx += b
    bad = np.take(flat, idx) >= x
    idx += 1
    bad |= x > np.take(flat, idx)
    if bad.any():
        b[bad] = (x[bad, None] > th[a[bad]]).sum(axis=1)
    return b


def select_splits(utilities: np.ndarray, epsilon: float, rng: Any) -> np.ndarray:
    """Index drawn by the exponential mechanism for every row of ``utilities`` (the nodes of
    one level) at once: ``P(i) ~ exp(epsilon * u_i)`` for a monotonic utility of sensitivity 1
    (McSherry & Talwar 2007).

    The same exact sampler as :class:`veil.dp.mechanisms.Exponential`, vectorized over rows:
    uniform proposals, each accepted with an exact ``Bernoulli(exp(-epsilon (u* - u)))`` coin
    (:func:`veil.dp._samplers.bernoulli_exp`); a row returns its first accepted proposal.
    """
    u = np.atleast_2d(np.asarray(utilities, dtype=float))
    m, k = u.shape
    gamma = epsilon * (u.max(axis=1, keepdims=True) - u)
    out = np.zeros(m, dtype=np.int64)
    pending = np.arange(m)
    batch = int(min(max(64, 2 * k), 1 << 12))
    while pending.size:
        idx = rng.integers(0, k, size=pending.size * batch).reshape(pending.size, batch)
        g = gamma[pending[:, None], idx].ravel()
        coins = bernoulli_exp(g, g.size, rng).reshape(pending.size, batch)
        hit = coins.any(axis=1)
        out[pending[hit]] = idx[hit, coins[hit].argmax(axis=1)]
        pending = pending[~hit]
    return out


def noisy_leaf_counts(
    leaf: np.ndarray, codes: np.ndarray, n_leaves: int, n_classes: int, eps: float, rng: Any
) -> np.ndarray:
    """Class counts of every leaf plus Laplace(1/eps) (leaves partition the rows).

    ``leaf`` is each row's leaf (0 .. n_leaves - 1), e.g. :meth:`GreedyTree.leaves`.
    """
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
    n_internal = 2**depth - 1
    eps_leaf = epsilon if depth == 0 else LEAF_SHARE * epsilon
    eps_level = (epsilon - eps_leaf) / depth if depth else 0.0
    feature = np.zeros(n_internal, dtype=np.int64)
    threshold = np.zeros(n_internal)
    box_lo, box_hi = lo[None, :].copy(), hi[None, :].copy()  # intervals of the level's nodes
    n, d = X.shape
    node = np.zeros(n, dtype=np.int64)  # node of each row, numbered within its level
    row_start = np.arange(n, dtype=np.int64) * d
    x_flat = np.ascontiguousarray(X, dtype=float).ravel()
    codes = np.asarray(codes, dtype=np.int64)
    cand = candidate_thresholds(box_lo, box_hi)  # (nodes, d, k)
    k = cand.shape[2]
    # cells[i, f] holds (f, #{thresholds of row i's node on f below x_if}, class).  A split on
    # f changes its children's interval (hence thresholds) of f only, so after each level only
    # the split feature's entry of each row is recounted, against the child's thresholds: the
    # utilities are those of recounting every feature (tests/ml/test_dptree.py checks it).
    if depth:
        bins = _count_below(x_flat, cand.reshape(d, k), np.tile(np.arange(d), n))
        cells = _cell_keys(bins.reshape(n, d), codes, k, n_classes)
    for level in range(depth):
        first = 2**level - 1  # heap index of the level's first node
        u = _utilities(cells, node, len(box_lo), k, n_classes)
        child_lo = np.repeat(box_lo, 2, axis=0)
        child_hi = np.repeat(box_hi, 2, axis=0)
        picks = select_splits(u, eps_level, rng)  # disjoint nodes: parallel composition
        m = len(box_lo)
        f, t = np.divmod(picks, k)
        at = np.arange(m)
        chosen = cand[at, f, t]
        feature[first : first + m], threshold[first : first + m] = f, chosen
        child_hi[2 * at, f] = chosen
        child_lo[2 * at + 1, f] = chosen
        box_lo, box_hi = child_lo, child_hi
        at_node = node + first
        f_row = np.take(feature, at_node)
        flat = f_row + row_start  # (row, split feature) in the row-major (n, d) arrays
        x_row = np.take(x_flat, flat)
        node *= 2
        node += x_row > np.take(threshold, at_node)
        if level + 1 < depth:
            cand = candidate_thresholds(box_lo, box_hi)
            b = _count_below(x_row, cand.reshape(-1, k), node * d + f_row)
            b += f_row * (k + 1)
            b *= n_classes
            b += codes
            np.put(cells, flat, b)
    # ``node`` now numbers each row's leaf within the last level: no second routing pass
    leaf_counts = noisy_leaf_counts(node, codes, 2**depth, n_classes, eps_leaf, rng)
    return GreedyTree(depth, feature, threshold), leaf_counts
