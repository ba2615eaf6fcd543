"""MDAV microaggregation for numeric quasi-identifiers.

J. Domingo-Ferrer and J. M. Mateo-Sanz, "Practical data-oriented microaggregation for
statistical disclosure control", IEEE TKDE 14(1), 2002; the fixed-size MDAV heuristic as
described in J. Domingo-Ferrer and V. Torra, "Ordinal, continuous and heterogeneous
k-anonymity through microaggregation", DMKD 11(2), 2005.

While at least ``3k`` records remain: take the record ``r`` farthest from the centroid of the
remaining records and the record ``s`` farthest from ``r``; group ``r`` with its ``k - 1``
nearest remaining records, then ``s`` with its ``k - 1`` nearest.  With ``2k .. 3k - 1`` left,
group the record farthest from the centroid with its ``k - 1`` nearest and the rest together;
with fewer than ``2k`` left, they form the last group.  Every value is then replaced by its
group's mean, so each group is a k-anonymous class on the microaggregated columns and the
column means are preserved exactly.

Distances are Euclidean on columns standardized to unit variance.  Each step is one vectorized
pass over the remaining records (``O(n^2 / k)`` in all).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._anonymize import original_risk
from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._models import KAnonymity
from veil.anonymity._objectives import size_utilities
from veil.anonymity._result import AnonymizationResult
from veil.anonymity._risk import risk_summary
from veil.errors import ConfigError, InputError

__all__ = ["mdav", "mdav_anonymize", "mdav_groups"]


def _k_smallest(d2: np.ndarray, m: int) -> np.ndarray:
    """Positions of the ``m`` smallest entries of ``d2``; ties broken by position."""
    part = np.argpartition(d2, m - 1)[:m]
    cut = d2[part].max()
    inside = np.flatnonzero(d2 < cut)
    if inside.size == m:
        return inside
    at = np.flatnonzero(d2 == cut)[: m - inside.size]
    return np.concatenate([inside, at])


class _Pool:
    """The records not yet grouped, compacted lazily; squared distances via dot products."""

    def __init__(self, Z: np.ndarray) -> None:
        self.Z = Z
        self.ids = np.arange(Z.shape[0])
        self.sq = np.einsum("ij,ij->i", Z, Z)
        self.alive = np.ones(Z.shape[0], dtype=bool)
        self.count = Z.shape[0]
        self.total = Z.sum(axis=0)

    def sqdist(self, p: np.ndarray) -> np.ndarray:
        """Squared distances to ``p``; ``inf`` for records already grouped."""
        d2 = self.sq - 2.0 * (self.Z @ p) + float(p @ p)
        d2[~self.alive] = np.inf
        return d2

    def farthest(self, p: np.ndarray) -> int:
        d2 = self.sqdist(p)
        d2[~self.alive] = -np.inf
        return int(np.argmax(d2))

    def remove(self, pos: np.ndarray) -> np.ndarray:
        """Mark ``pos`` grouped; return their original row ids."""
        self.alive[pos] = False
        self.count -= pos.size
        self.total -= self.Z[pos].sum(axis=0)
        out = self.ids[pos]
        if self.count and self.count * 4 < self.alive.size * 3:
            keep = self.alive
            self.Z, self.ids, self.sq = self.Z[keep], self.ids[keep], self.sq[keep]
            self.alive = np.ones(self.count, dtype=bool)
            self.total = self.Z.sum(axis=0)
        return out


def mdav_groups(Z: np.ndarray, k: int) -> np.ndarray:
    """Group ids of the MDAV partition of the rows of ``Z`` (already scaled), groups >= k.

    Examples
    --------
    >>> import numpy as np
    >>> g = mdav_groups(np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.2]]), 2)
    >>> np.bincount(g).tolist()
    [2, 2, 2]
    """
    n = Z.shape[0]
    groups = np.full(n, -1, dtype=np.int64)
    pool = _Pool(np.ascontiguousarray(Z, dtype=np.float64))
    gid = 0

    def group_around(point: np.ndarray) -> None:
        nonlocal gid
        pos = _k_smallest(pool.sqdist(point), k)
        groups[pool.remove(pos)] = gid
        gid += 1

    while pool.count >= 3 * k:
        r = pool.farthest(pool.total / pool.count)
        r_point = pool.Z[r].copy()
        s_point = pool.Z[pool.farthest(r_point)].copy()
        group_around(r_point)
        group_around(s_point)
    if pool.count >= 2 * k:
        group_around(pool.Z[pool.farthest(pool.total / pool.count)].copy())
    if pool.count:
        groups[pool.ids[pool.alive]] = gid
    return groups


def _validate(df: pd.DataFrame, cols: list[str], k: Any) -> None:
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"mdav expects a pandas DataFrame, not {type(df).__name__}")
    if not cols:
        raise ConfigError("mdav needs at least one column")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ConfigError(f"columns not in the table: {missing}")
    if len(set(cols)) != len(cols):
        raise ConfigError("mdav columns are listed twice")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k must be an integer >= 1, got {k!r}")
    n = len(df)
    if n == 0:
        raise InputError("mdav got an empty table")
    if k > n:
        raise ConfigError(f"k={k} is larger than the table ({n} rows)")
    for c in cols:
        s = df[c]
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            raise InputError(f"mdav column {c!r} is not numeric (dtype {s.dtype})")


def mdav_anonymize(df: pd.DataFrame, config: AnonymizationConfig) -> AnonymizationResult:
    """Dispatch entry point (``algorithm="mdav"``): microaggregate the config's QIs.

    Every quasi-identifier must be numeric (hierarchies are not used); the only model MDAV
    enforces is k-anonymity.  The release replaces each QI value by its group's mean.

    Returns
    -------
    AnonymizationResult
        ``partitions``: group of every row; ``utility``: ``sse``, ``sst`` and ``info_loss``
        (``SSE / SST`` on standardized columns), ``dm``, ``aecs``.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import AnonymizationConfig
    >>> df = pd.DataFrame({"age": [20, 22, 40, 44], "pay": [1.0, 3.0, 5.0, 7.0]})
    >>> res = mdav_anonymize(df, AnonymizationConfig(["age", "pay"], k=2, algorithm="mdav"))
    >>> res.data.values.tolist()
    [[21.0, 2.0], [21.0, 2.0], [42.0, 6.0], [42.0, 6.0]]
    """
    t0 = time.perf_counter()
    if not isinstance(config, AnonymizationConfig):
        raise ConfigError(f"expected an AnonymizationConfig, not {type(config).__name__}")
    others = [m.describe() for m in config.all_models() if not isinstance(m, KAnonymity)]
    if others:
        raise ConfigError(f"MDAV enforces k-anonymity only; cannot enforce: {others}")
    cols = config.qi_names
    k = config.min_class_size()
    _validate(df, cols, k)
    X = df[cols].to_numpy(dtype=np.float64)
    if not np.isfinite(X).all():
        bad = [c for c, ok in zip(cols, np.isfinite(X).all(axis=0)) if not ok]
        raise InputError(f"mdav columns with missing or infinite values: {bad}")
    # Work on X / 2^(e-1) with 2^e > max|x| per column: exact (a power of two, itself finite),
    # so |values| <= 2 and sums, means and variances cannot overflow however large the data
    # (|x| near 1.8e308 made the mean inf, Z NaN and the grouping loop never end).
    scale = np.ldexp(1.0, np.frexp(np.abs(X).max(axis=0))[1] - 1)
    Xs = X / scale
    mean = Xs.mean(axis=0)
    std = Xs.std(axis=0)
    Z = (Xs - mean) / np.where(std > 0, std, 1.0)
    groups = mdav_groups(Z, int(k))
    elapsed = time.perf_counter() - t0
    ng = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=ng)

    def group_means(A: np.ndarray) -> np.ndarray:
        sums = [np.bincount(groups, weights=A[:, j], minlength=ng) for j in range(A.shape[1])]
        return np.column_stack(sums) / sizes[:, None]

    Xa = group_means(Xs)[groups] * scale
    sse = float(((Z - group_means(Z)[groups]) ** 2).sum())
    sst = float(((Z - Z.mean(axis=0)) ** 2).sum())
    release = df.copy()
    for j, c in enumerate(cols):
        release[c] = pd.Series(Xa[:, j], index=df.index)
    n = len(df)
    _, before = np.unique(X, axis=0, return_counts=True)
    sf = config.sampling_fraction_for(n)
    info_loss = sse / sst if sst > 0 else 0.0

    def size_metrics(class_sizes: np.ndarray) -> dict[str, float]:
        return {m: v for m, v in size_utilities(class_sizes).items() if m != "dm_star"}

    return AnonymizationResult(
        data=release,
        config=config,
        algorithm="mdav",
        risk_before=original_risk(df, config),  # grouped as check() groups the original
        risk_after=risk_summary(sizes, sampling_fraction=sf),
        suppressed=np.zeros(n, dtype=bool),
        partitions=groups,
        objective="info_loss",
        objective_value=info_loss,
        utility={"sse": sse, "sst": sst, "info_loss": info_loss, **size_metrics(sizes)},
        utility_before={"sse": 0.0, "sst": sst, "info_loss": 0.0, **size_metrics(before)},
        elapsed=elapsed,
        extra={
            "class_sizes": {"min": int(sizes.min()), "max": int(sizes.max()), "mean": n / ng},
            "total_s": time.perf_counter() - t0,
        },
    )


def mdav(df: pd.DataFrame, columns: Sequence[str], k: int) -> AnonymizationResult:
    """Microaggregate the numeric ``columns`` of ``df`` with MDAV into groups of at least ``k``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified).  Other columns are kept unchanged and row-aligned.
    columns : sequence of str
        Numeric quasi-identifiers to microaggregate jointly.
    k : int
        Minimum group size, ``1 <= k <= len(df)``.

    Returns
    -------
    AnonymizationResult
        ``.data`` the release, ``.partitions`` the groups, ``.utility["info_loss"]`` SSE/SST.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [20, 22, 40, 41, 60, 64], "name": list("abcdef")})
    >>> res = mdav(df, ["age"], k=2)
    >>> res.data["age"].tolist()
    [21.0, 21.0, 40.5, 40.5, 62.0, 62.0]
    >>> res.data["name"].tolist() == df["name"].tolist()
    True
    """
    cols = [columns] if isinstance(columns, str) else list(columns)
    _validate(df, cols, k)
    config = AnonymizationConfig(cols, k=int(k), algorithm="mdav")
    return mdav_anonymize(df, config)
