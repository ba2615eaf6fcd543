"""Class sizes without the rows of each class: what :func:`~veil.anonymity.check` needs when no
model reads a sensitive column or a population.

:func:`~veil.anonymity._encode.group_key` sorts each row's key with its row number attached
(an ``int64``), which gives the rows of every class.  Sizes alone only need the keys sorted:
half the width when the key fits an ``int32`` (one sort of 30,000 ``int32`` is about half of
the same sort of ``int64``) and none of the row-number steps.  The report then needs the first
row of only a few classes (the smallest by size, then first row); they are found by reading the
rows in order and looking each row's key up among the classes' sorted keys (an exact binary
search), which stops as soon as those classes are all seen.  When that would mean reading many
rows, :meth:`ClassSizes.grouping` groups the rows as :func:`group_key` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.anonymity._encode import (
    _INT32_SPACE,
    Grouping,
    _runs,
    combined_key,
    encode_columns,
    group_key,
)

__all__ = ["ClassSizes", "class_sizes"]

_FIRST_STEP = 256  # rows looked up in the first step of the scan (then doubling)
_SCAN_SHARE = 4  # give up the scan past 1/_SCAN_SHARE of the rows: grouping costs less then


@dataclass(frozen=True)
class ClassSizes:
    """Sizes of the classes of a table, numbered in key order (as :class:`Grouping` numbers them).

    Attributes
    ----------
    key
        Key of each row (:func:`combined_key`), ``int32`` when the key space allows.
    space
        Bound of the keys (``0 <= key < space``).
    uniq
        The classes' keys, ascending (class ``c`` holds the rows whose key is ``uniq[c]``).
    sizes
        Number of rows of each class (``int64``).
    """

    key: np.ndarray
    space: int
    uniq: np.ndarray
    sizes: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.sizes.shape[0])

    def grouping(self) -> Grouping:
        """The full grouping (rows of each class), same classes and numbering."""
        return group_key(self.key, self.space)

    def smallest(self, show: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The ``show`` smallest classes by (size, first row), in that order, and their first rows.

        Reads the rows in order (steps of doubling length), keeping the classes of size at most
        the ``show``-th smallest size the first time they are seen (so at their first row), until
        every class below that size and enough of that size are seen.  None when that has not
        happened within a quarter of the rows (the caller then groups the rows).

        Examples
        --------
        >>> cs = class_sizes([pd.Series(["a", "b", "a", "c", "b", "d"])])
        >>> order, first = cs.smallest(2)
        >>> cs.sizes[order].tolist(), first.tolist()
        ([1, 1], [3, 5])
        """
        sizes, n, g = self.sizes, self.key.shape[0], self.n_classes
        show = min(show, g)
        if show == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        thr = int(sizes.min())
        below = 0  # classes smaller than thr: all of them are shown
        if int(np.count_nonzero(sizes == thr)) < show:  # the show-th smallest size
            thr = int(np.searchsorted(np.cumsum(np.bincount(sizes)), show))
            below = int(np.count_nonzero(sizes < thr))
        seen = np.zeros(g, dtype=bool)
        found: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        n_below = n_at = 0
        start, step = 0, _FIRST_STEP
        while n_below < below or n_at < show - below:
            if start >= n or start * _SCAN_SHARE > n:
                if start >= n:  # pragma: no cover - every class is seen by the last row
                    break
                return None
            stop = min(n, start + step)
            cls = np.searchsorted(self.uniq, self.key[start:stop])  # keys are all in uniq
            at = np.flatnonzero(sizes[cls] <= thr)
            if at.shape[0]:
                c, i = np.unique(cls[at], return_index=True)  # first row of each in the step
                new = ~seen[c]
                c, i = c[new], i[new]
                seen[c] = True
                by_row = np.argsort(i)
                found.append(c[by_row])
                rows.append(at[i[by_row]] + start)
                s = sizes[c]
                n_below += int(np.count_nonzero(s < thr))
                n_at += int(np.count_nonzero(s == thr))
            start, step = stop, step * 2
        cls, first = np.concatenate(found), np.concatenate(rows)  # in first-row order
        at_thr = sizes[cls] == thr  # keep the first ``show - below`` of size thr
        keep = np.sort(
            np.concatenate([np.flatnonzero(~at_thr), np.flatnonzero(at_thr)[: show - below]])
        )
        cls, first = cls[keep], first[keep]
        order = np.lexsort((first, sizes[cls]))
        return cls[order], first[order]


def class_sizes(columns: Sequence[pd.Series]) -> ClassSizes:
    """:class:`ClassSizes` of the rows over ``columns`` (a non-empty table).

    Examples
    --------
    >>> cs = class_sizes([pd.Series([1, 2, 1]), pd.Series(["x", "y", "x"])])
    >>> cs.sizes.tolist(), cs.grouping().ids().tolist()
    ([2, 1], [0, 1, 0])
    """
    encoded = encode_columns(columns)
    key, space, _ = combined_key([c for c, _ in encoded], [card for _, card in encoded])
    if space <= _INT32_SPACE and key.dtype != np.int32:
        key = key.astype(np.int32)  # half the sort
    srt = np.sort(key)
    starts, sizes = _runs(srt)
    return ClassSizes(key, space, srt[starts], sizes)
