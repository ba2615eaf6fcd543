"""Factorizing report columns once: integer codes shared by the risk, loss and plot figures.

Every report figure works on :func:`pandas.factorize` codes (``-1`` = missing) and the
column's distinct values instead of the raw values, so each column of the input and of the
release is hashed once per report.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from veil.schema._hierarchy import factorize_typed

__all__ = ["Factorized", "Factors", "factorize"]

Factorized = tuple[np.ndarray, Any]
"""``(codes, uniques)``: codes per record (``-1`` = missing), distinct non-missing values."""


def factorize(s: pd.Series) -> Factorized:
    """Codes (``-1`` for missing: exactly the records ``s.isna()`` flags) and distinct values.

    Codes are stored in the smallest signed integer type that holds them.  Values are grouped
    as :func:`veil.anonymity.check` groups them (:func:`~veil.schema._hierarchy.factorize_typed`:
    ``True``, ``1`` and ``1.0`` are three values), so the report's classes are ``check``'s.
    """
    try:
        codes, uniques = factorize_typed(s)
    except TypeError:  # unhashable cells (nested JSON): grouped by their canonical text
        from veil.deid._text import hashable_cells

        codes, uniques = factorize_typed(hashable_cells(s))
    codes = np.asarray(codes)
    n = len(uniques)
    small = np.int8 if n < 2**7 else np.int16 if n < 2**15 else np.int32 if n < 2**31 else None
    if small is not None and codes.dtype != small:
        codes = codes.astype(small)
    return codes, uniques


class Factors:
    """Factorizations of a frame's columns, computed on demand.

    Those of the columns in ``keep`` are memoized (they are reused by several figures); the
    others are computed each time and not held, to bound memory on wide tables.
    """

    def __init__(self, df: pd.DataFrame, keep: Iterable[Hashable] = ()) -> None:
        self._df = df
        self._keep = set(keep)
        self._memo: dict[Hashable, Factorized] = {}

    def put(self, col: Hashable, f: Factorized) -> None:
        """Record ``f`` as the factorization of ``col`` (when it is one of those kept)."""
        if col in self._keep:
            self._memo[col] = f

    def __call__(self, col: Hashable) -> Factorized:
        hit = self._memo.get(col)
        if hit is not None:
            return hit
        f = factorize(self._df[col])
        if col in self._keep:
            self._memo[col] = f
        return f
