"""t-closeness: the earth mover's distance of every class's sensitive values to the table's.

N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
l-diversity", ICDE 2007 (EMD with equal, ordered and hierarchical ground distances).  The
model follows the contract of :class:`~veil.anonymity._models.PrivacyModel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from veil.anonymity._exact import MARGIN, emd_beyond
from veil.anonymity._models import PrivacyModel, own_methods
from veil.anonymity._stats import ClassStats, SensitiveStats, group_keys
from veil.errors import ConfigError

__all__ = ["TCloseness", "emd"]


def emd(ss: SensitiveStats, sizes: np.ndarray, distance: str) -> np.ndarray:
    """Earth mover's distance between each class's distribution and the global one.

    ``distance`` is ``"equal"`` (half the L1 distance), ``"ordered"`` (values in code order,
    Li et al. eq. 2) or ``"hierarchical"`` (ground distance = level of the lowest common
    ancestor / height, Li et al. section 4.2).
    """
    n = sizes.shape[0]
    col = ss.column
    q = col.global_freq
    p = ss.cnt / sizes[ss.cls]
    if distance == "equal":
        d = np.bincount(ss.cls, weights=np.abs(p - q[ss.val]) - q[ss.val], minlength=n)
        return 0.5 * (d + q.sum())
    if distance == "ordered":
        m = col.n_values
        if m <= 1:
            return np.zeros(n)
        qc = np.cumsum(q)
        s = np.concatenate(([0.0], np.cumsum(qc)))  # s[x] = sum_{i<x} qc[i]
        order = np.lexsort((ss.val, ss.cls))
        cls, val, pp = ss.cls[order], ss.val[order], p[order]
        cum = np.cumsum(pp)
        start = np.searchsorted(cls, cls)  # first pair of the same class
        base = np.concatenate(([0.0], cum))[start]
        pk = cum - base  # cumulative class probability after each pair
        last = np.r_[cls[1:] != cls[:-1], True]
        end = np.where(last, m, np.r_[val[1:], m])  # segment [val, end)
        t = np.clip(np.searchsorted(qc, pk, side="right"), val, end)
        seg = pk * (t - val) - (s[t] - s[val]) + (s[end] - s[t]) - pk * (end - t)
        total = np.bincount(cls, weights=seg, minlength=n)
        firstv = np.zeros(n, dtype=np.int64)
        isfirst = np.r_[True, cls[1:] != cls[:-1]]
        firstv[cls[isfirst]] = val[isfirst]
        total += s[firstv]  # positions before the first value of the class
        return total / (m - 1)
    if distance == "hierarchical":
        h = col.hierarchy
        if h is None:
            raise ConfigError("hierarchical-distance t-closeness needs a hierarchy")
        height = h.height - 1
        if height == 0:
            return np.zeros(n)
        cost = np.zeros(n)
        cls, node, pm = ss.cls, ss.val, p
        qlev = q
        for level in range(1, h.height):
            extra = pm - qlev[node]
            parent = h.level_map(level - 1, level)[node].astype(np.int64)
            nl = h.n_labels(level)
            inv, g = group_keys(cls * nl + parent)
            gcls = np.zeros(g, dtype=np.int64)
            gcls[inv] = cls
            gnode = np.zeros(g, dtype=np.int64)
            gnode[inv] = parent
            gp = np.bincount(inv, weights=pm, minlength=g)
            gpos = np.bincount(inv, weights=np.maximum(extra, 0.0), minlength=g)
            qlev = np.bincount(h.codes(level), weights=q, minlength=nl)
            c = gpos - np.maximum(gp - qlev[gnode], 0.0)
            cost += (level / height) * np.bincount(gcls, weights=c, minlength=n)
            cls, node, pm = gcls, gnode, gp
        return cost
    raise ConfigError(f"unknown t-closeness distance {distance!r}: equal, ordered or hierarchical")


@dataclass(repr=False)
class TCloseness(PrivacyModel):
    """The EMD between every class's sensitive distribution and the table's is at most ``t``.

    ``distance``: ``"equal"``, ``"ordered"`` (numeric or ordinal values) or ``"hierarchical"``
    (give ``hierarchy``), after Li, Li and Venkatasubramanian (ICDE 2007).  The ordered distance
    orders numbers, texts of numbers (numerically: :meth:`distances`), the categories of an
    ordered pandas Categorical, and any other text lexicographically (with a warning).

    References
    ----------
    N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
    l-diversity", ICDE, 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import check, encode_sensitive
    >>> df = pd.DataFrame({"zip": list("AAABBB"), "salary": [3, 4, 5, 6, 11, 9]})
    >>> stats = ClassStats.from_codes(
    ...     np.array([0, 0, 0, 1, 1, 1]), sensitive={"salary": encode_sensitive(df["salary"])}
    ... )
    >>> TCloseness("salary", 0.4, distance="ordered").distances(stats).round(3).tolist()
    [0.3, 0.3]
    >>> r = check(df, "zip", t={"salary": 0.25}, t_distance="ordered")
    >>> r.holds, round(r.models[0]["achieved"], 3)
    (False, 0.3)
    """

    column: str
    t: float
    distance: str = "equal"
    hierarchy: Any = None
    name: ClassVar[str] = "t-closeness"
    needs: ClassVar[frozenset[str]] = frozenset({"sizes", "sensitive"})

    def __post_init__(self) -> None:
        if not isinstance(self.t, (int, float, np.number)) or not 0 <= self.t <= 1:
            raise ConfigError(f"t must be a number in [0, 1], got {self.t!r}")
        self.t = float(self.t)
        if self.distance not in ("equal", "ordered", "hierarchical"):
            raise ConfigError(
                f"unknown t-closeness distance {self.distance!r}: equal, ordered or hierarchical"
            )
        if self.distance == "hierarchical" and self.hierarchy is None:
            raise ConfigError(
                f"hierarchical t-closeness on {self.column!r} needs a hierarchy for the column"
            )

    def distances(self, stats: ClassStats) -> np.ndarray:
        """EMD of every class; on a text column whose texts a reader merges (texts of one
        number, of one boolean, read as missing) with the ordered distance, the larger of the
        EMDs over the written texts and over the values a reader reads (``as_read``).

        The texts of such a column are in numeric order (:func:`~veil.anonymity.encode_sensitive`), texts of
        one number (``"1"``, ``"1.0"``) next to each other.  A reader who keeps the texts
        (``dtype=str``) sees them as values at ground distance ``1/(m-1)``; one who reads the
        column as numbers (pandas' default) sees one value among ``m' < m``.  Merging two
        neighbours drops one term of eq. 2's sum but divides by ``m'-1`` instead of ``m-1``,
        so either view may give the larger distance (unlike the equal distance, where merging
        never adds any): the claim ``<= t`` must hold for both readers, so it is made on the
        larger.  The same holds for any merge of neighbours: ``"False"`` and ``"false"``,
        one boolean to pandas' reader (in a class of only those two, 0.17 over the four texts
        but 0.5 over the two booleans).  Likewise a column holding missing cells and the text
        ``""``: the release writes both as ``""``, one value to a reader of its texts
        (``as_written``).
        """
        return self._distances(self._views(stats), stats.sizes)

    def _views(self, stats: ClassStats) -> list[SensitiveStats]:
        """The counts as written, and (ordered distance) as each reader of :meth:`distances`
        sees them: missing cells and ``""`` as one text (``as_written``), texts a reader takes
        for one value merged (``as_read``)."""
        ss = self._sens(stats)
        views = [ss]
        if self.distance == "ordered":
            if ss.column.written_as is not None:
                views.append(ss.as_written())
            if ss.column.read_as is not None:
                views.append(ss.as_read())
        return views

    def _distances(self, views: list[SensitiveStats], sizes: np.ndarray) -> np.ndarray:
        """The largest EMD of every class over ``views`` (:meth:`_views`)."""
        d = emd(views[0], sizes, self.distance)
        for v in views[1:]:
            d = np.maximum(d, emd(v, sizes, self.distance))
        return d

    def violating(self, stats: ClassStats) -> np.ndarray:
        return self._assess(stats)[0]

    def assess(self, stats: ClassStats) -> tuple[np.ndarray, float | None]:
        if own_methods(self, TCloseness, "violating", "achieved"):
            return self._assess(stats)  # the distances computed once for both
        return super().assess(stats)  # a subclass changed one of them: ask each

    def _assess(self, stats: ClassStats) -> tuple[np.ndarray, float | None]:
        views = self._views(stats)
        d = self._distances(views, stats.sizes)
        viol = d > self.t + MARGIN
        border = ~viol & (d > self.t - MARGIN)  # within rounding of t: decided exactly
        if border.any():
            for v in views:
                viol |= emd_beyond(v, stats.sizes, border, self.distance, self.t)
        return viol, float(d.max()) if d.size else None

    def achieved(self, stats: ClassStats) -> float | None:
        d = self.distances(stats)
        return float(d.max()) if d.size else None

    def params(self) -> dict[str, Any]:
        return {"column": self.column, "t": self.t, "distance": self.distance}
