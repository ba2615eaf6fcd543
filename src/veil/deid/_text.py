"""Distinct cell values as stripped text, shared by the content detectors of one column."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "ARROW_FROM",
    "as_text",
    "digit_matrix",
    "factorize_any",
    "fullmatch",
    "hashable_cells",
    "luhn_valid",
    "text_of",
    "to_text",
]

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
        return to_text(s).str.strip()
    return pd.Series([text_of(v).strip() for v in s], dtype=object)


def text_of(value: object) -> str:
    """``str(value)``, except that bytes are decoded as UTF-8 (undecodable bytes replaced), so
    ``b"a@b.org"`` reads as the address it holds.

    Examples
    --------
    >>> text_of(b"a@b.org"), text_of(7), text_of(b"\\xb4x")
    ('a@b.org', '7', '\\ufffdx')
    """
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def to_text(s: pd.Series) -> pd.Series:
    """``s.astype(str)``, which pandas refuses for bytes that are not UTF-8: those go through
    :func:`text_of`."""
    try:
        return s.astype(str)
    except UnicodeDecodeError:
        return pd.Series([text_of(v) for v in s], index=s.index, dtype=object).astype(str)


def digit_matrix(strings: Sequence[str], width: int) -> np.ndarray:
    """``(len(strings), width)`` integer array of strings of ``width`` decimal digits.

    Digits of other scripts (``"١٢٣"``, fullwidth ``"１２３"``), which ``\\d`` matches, count as
    the digits they are.

    Examples
    --------
    >>> digit_matrix(["12", "٣٤"], 2).tolist()
    [[1, 2], [3, 4]]
    """
    text = "".join(strings)
    if not text.isascii():
        text = "".join(c if c.isascii() else str(unicodedata.decimal(c, 0)) for c in text)
    buf = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return (buf.astype(np.int64) - ord("0")).reshape(len(strings), width)


def fullmatch(s: pd.Series, rx: re.Pattern[str]) -> np.ndarray:
    """Boolean mask of the values of ``s`` (from :func:`as_text`) matching ``rx`` entirely.

    A plain loop over Python strings for a few values (no pandas call overhead), pandas'
    vectorized engine (with the pattern's case flag) for many.
    """
    if s.dtype == object:
        return np.fromiter((rx.fullmatch(v) is not None for v in s), dtype=bool, count=len(s))
    case = not rx.flags & re.IGNORECASE
    return np.array(s.str.fullmatch(rx.pattern, case=case).to_numpy(bool))  # writable


def luhn_valid(digits: np.ndarray) -> np.ndarray:
    """Luhn check of equal-length digit strings given as an ``(n, length)`` integer array.

    Examples
    --------
    >>> luhn_valid(np.array([[4, 5, 3, 9, 1, 4, 8, 8, 0, 3, 4, 3, 6, 4, 6, 7]])).tolist()
    [True]
    """
    d = np.asarray(digits, dtype=np.int64)[:, ::-1].copy()
    doubled = d[:, 1::2] * 2
    d[:, 1::2] = np.where(doubled > 9, doubled - 9, doubled)
    return d.sum(axis=1) % 10 == 0


#: ``pandas.api.types.infer_dtype`` kinds whose cells are all hashable (or missing).
_HASHABLE_KINDS = frozenset({"string", "bytes", "integer", "floating", "boolean", "empty"})


def hashable_cells(s: pd.Series) -> pd.Series:
    """``s``, or its cells as canonical text when some are unhashable (dicts, lists, arrays).

    Nested records (``pandas.read_json`` of nested JSON) cannot be grouped as they are; their
    JSON text (keys sorted, so equal dicts read alike) is grouped and searched instead, so an
    e-mail inside a dict is still found.  Missing cells stay missing.
    """
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _HASHABLE_KINDS:
        return s  # the usual text column: no hashing pass to find out
    try:
        pd.factorize(s)
        return s
    except TypeError:
        return s.map(_hashable)


def factorize_any(s: pd.Series) -> tuple[np.ndarray, Any]:
    """``pd.factorize(s)`` (missing -> -1), also when some cells cannot be hashed.

    Such cells (dicts, lists, arrays) are grouped by their canonical text, as
    :func:`hashable_cells` gives it; the column is factorized once when it can be.
    """
    try:
        return pd.factorize(s, use_na_sentinel=True)
    except TypeError:
        return pd.factorize(s.map(_hashable), use_na_sentinel=True)


def _hashable(v: Any) -> Any:
    """A cell as it is when hashable or missing, else its canonical JSON text (keys sorted)."""
    if isinstance(v, dict | list | tuple | set | frozenset | np.ndarray):
        if isinstance(v, set | frozenset):
            v = sorted(v, key=repr)
        elif isinstance(v, np.ndarray):
            v = v.tolist()
        return json.dumps(v, sort_keys=True, default=str, ensure_ascii=False)
    if v is None or (isinstance(v, float) and v != v):
        return v
    try:
        hash(v)
    except TypeError:
        return str(v)
    return v
