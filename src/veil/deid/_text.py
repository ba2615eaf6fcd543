"""Distinct cell values as stripped text, shared by the content detectors of one column."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

__all__ = ["ARROW_FROM", "as_text", "fullmatch"]

#: Below this many distinct values, detectors use Python strings (``object`` dtype): pandas'
#: Arrow strings re-parse each regular expression on every call, which costs more than matching
#: a few hundred values; above it, Arrow's vectorized engine wins.
ARROW_FROM = 2000


def as_text(values: np.ndarray | pd.Series) -> pd.Series:
    """The values as stripped strings (object dtype below :data:`ARROW_FROM`, else Arrow).

    A Series is taken as already prepared by this function and returned as it is, so a scan
    converts a column's distinct values once for all of its detectors.

    Examples
    --------
    >>> s = as_text(np.array([" a ", 1], dtype=object))
    >>> s.tolist(), as_text(s) is s
    (['a', '1'], True)
    """
    if isinstance(values, pd.Series):
        return values
    s = pd.Series(values, dtype=object)
    if len(s) >= ARROW_FROM:
        return s.astype(str).str.strip()
    return pd.Series([str(v).strip() for v in s], dtype=object)


def fullmatch(s: pd.Series, rx: re.Pattern[str]) -> np.ndarray:
    """Boolean mask of the values of ``s`` (from :func:`as_text`) matching ``rx`` entirely.

    A plain loop over Python strings for a few values (no pandas call overhead), pandas'
    vectorized engine (with the pattern's case flag) for many.
    """
    if s.dtype == object:
        return np.fromiter((rx.fullmatch(v) is not None for v in s), dtype=bool, count=len(s))
    case = not rx.flags & re.IGNORECASE
    return np.array(s.str.fullmatch(rx.pattern, case=case).to_numpy(bool))  # writable
