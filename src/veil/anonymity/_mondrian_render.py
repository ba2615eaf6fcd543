"""Render Mondrian classes as generalized cells and measure their NCP.

Cells: a numeric class range becomes ``"[lo, hi]"`` (or the single value), a hierarchical
categorical class becomes the label of the lowest common ancestor of its values, and a
categorical column without a hierarchy becomes the set ``"{a,b}"`` of the values it holds (or
the single value).

NCP, the normalized certainty penalty of J. Xu, W. Wang, J. Pei, X. Wang, B. Shi and A. W.-C.
Fu, "Utility-Based Anonymization Using Local Recoding", KDD 2006: per cell ``(hi - lo) / range``
for numeric columns, ``(leaves under the node - 1) / (leaves - 1)`` for hierarchical ones and
``(|set| - 1) / (|domain| - 1)`` for sets; the table's NCP is the mean over all cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.anonymity._mondrian_encode import Dim, numeric_offsets

__all__ = ["ClassStats", "class_stats", "fmt_number", "render"]


def fmt_number(v: float, integral: bool) -> str:
    """Shortest text that reads back as exactly ``v`` (``17``, ``2.5``).

    Floats are printed in double precision (float32 values too), so that parsing an interval's
    bounds as float64 always brackets the original values.  Whole floats print as integers up
    to 2**53 and in exponent form beyond (``1e+308``, not a 309-digit integer); Python ints
    (integer columns) always print exactly.

    Examples
    --------
    >>> fmt_number(17, True), fmt_number(0.1, False), fmt_number(1e308, True)
    ('17', '0.1', '1e+308')
    """
    if integral and (isinstance(v, int) or abs(v) < 2.0**53):
        return str(int(v))
    return repr(float(v))


@dataclass
class ClassStats:
    """Per-class statistics of a partitioning.

    Attributes
    ----------
    sizes : numpy.ndarray
        Number of rows per class.
    lo, hi : numpy.ndarray
        ``(n_classes, d)`` smallest and largest code per class and dimension.
    distinct : numpy.ndarray
        ``(n_classes, d)`` number of distinct codes per class and dimension (set columns only;
        elsewhere 0).
    ncp : numpy.ndarray
        ``(n_classes, d)`` normalized certainty penalty per class and dimension.
    """

    sizes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    distinct: np.ndarray
    ncp: np.ndarray

    def global_ncp(self) -> float:
        """Mean NCP over all cells of the quasi-identifiers (a fraction in ``[0, 1]``)."""
        if self.ncp.size == 0:
            return 0.0
        return float(self.sizes @ self.ncp.mean(axis=1) / self.sizes.sum())

    def column_ncp(self) -> np.ndarray:
        """Mean NCP of each quasi-identifier over all rows."""
        return self.sizes @ self.ncp / self.sizes.sum()


def _set_pairs(labels: np.ndarray, col: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (class, code) pairs, sorted by class then code."""
    pairs = np.unique(labels.astype(np.int64) * size + col)
    return pairs // size, pairs % size


def class_stats(
    X: np.ndarray,
    dims: Sequence[Dim],
    labels: np.ndarray,
    n_classes: int,
    members: Sequence[np.ndarray] | None = None,
) -> ClassStats:
    """Compute per-class ranges and NCP of the partitioning ``labels`` of the codes ``X``.

    ``members`` (the rows of each class, in class order) saves sorting the labels.
    """
    if members is not None and len(members) == n_classes:
        order = np.concatenate(members) if n_classes else np.zeros(0, dtype=np.int64)
        sizes = np.fromiter((m.size for m in members), dtype=np.int64, count=n_classes)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    else:
        order = np.argsort(labels, kind="stable")
        starts = np.searchsorted(labels[order], np.arange(n_classes))
        sizes = np.diff(np.append(starts, labels.size))
    Xs = X[order]
    lo = np.minimum.reduceat(Xs, starts, axis=0) if n_classes else np.empty((0, X.shape[1]))
    hi = np.maximum.reduceat(Xs, starts, axis=0) if n_classes else np.empty((0, X.shape[1]))
    d = len(dims)
    distinct = np.zeros((n_classes, d), dtype=np.int64)
    ncp = np.zeros((n_classes, d), dtype=np.float64)
    for j, dim in enumerate(dims):
        if dim.kind == "numeric":
            offsets = numeric_offsets(dim.values)  # finite even for -1e308 .. 1e308
            span = float(offsets[-1])
            if span > 0:
                ncp[:, j] = (offsets[hi[:, j]] - offsets[lo[:, j]]) / span
        elif dim.kind == "hier":
            tree = dim.tree
            node = tree.lca(lo[:, j], hi[:, j])  # type: ignore[union-attr]
            denom = max(len(tree.leaves) - 1, 1)  # type: ignore[union-attr]
            ncp[:, j] = (tree.nleaves[node] - 1) / denom  # type: ignore[union-attr]
        else:
            cls, _ = _set_pairs(labels, X[:, j], dim.size)
            distinct[:, j] = np.bincount(cls, minlength=n_classes)
            if dim.size > 1:
                ncp[:, j] = (distinct[:, j] - 1) / (dim.size - 1)
    return ClassStats(sizes=sizes, lo=lo, hi=hi, distinct=distinct, ncp=ncp)


def render(
    X: np.ndarray, dims: Sequence[Dim], labels: np.ndarray, stats: ClassStats
) -> dict[str, np.ndarray]:
    """Generalized cell text per quasi-identifier, row-aligned with ``X`` (object arrays)."""
    out: dict[str, np.ndarray] = {}
    for j, dim in enumerate(dims):
        lo = stats.lo[:, j]
        hi = stats.hi[:, j]
        if dim.kind == "numeric":
            text = [fmt_number(v, dim.integral) for v in dim.values.tolist()]
            cache: dict[tuple[int, int], str] = {}
            per_class = []
            for a, b in zip(lo.tolist(), hi.tolist()):
                s = cache.get((a, b))
                if s is None:
                    s = text[a] if a == b else f"[{text[a]}, {text[b]}]"
                    cache[(a, b)] = s
                per_class.append(s)
        elif dim.kind == "hier":
            tree = dim.tree
            node = tree.lca(lo, hi)  # type: ignore[union-attr]
            per_class = [tree.labels[i] for i in node.tolist()]  # type: ignore[union-attr]
        else:
            cls, code = _set_pairs(labels, X[:, j], dim.size)
            bounds = np.flatnonzero(np.diff(cls)) + 1
            names = dim.values
            per_class = []
            for chunk in np.split(code, bounds):
                if chunk.size == 1:
                    per_class.append(str(names[chunk[0]]))
                else:
                    per_class.append("{" + ",".join(str(names[c]) for c in chunk.tolist()) + "}")
        arr = np.empty(len(per_class), dtype=object)
        arr[:] = per_class
        out[dim.name] = arr[labels]
    return out
