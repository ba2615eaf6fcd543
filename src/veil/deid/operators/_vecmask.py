"""Vectorized partial and phone masks on fixed-width code-point matrices.

Short strings are packed into a numpy ``<U{w}`` array, viewed as an ``(n, w)`` matrix of
uint32 code points, masked with array operations and unpacked.  Results are identical to the
scalar functions in :mod:`veil.deid.operators._mask` (a property test checks this); strings
longer than :data:`MAX_WIDTH` or holding NUL characters take the scalar path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["vectorized", "partial_matrix", "phone_matrix", "MAX_WIDTH"]

MAX_WIDTH = 64
_CHUNK = 1 << 16
_ZERO, _NINE, _PLUS = ord("0"), ord("9"), ord("+")


def partial_matrix(codes: np.ndarray, lens: np.ndarray, a: int, b: int, c: int) -> np.ndarray:
    """Mask every position except the first ``a`` and last ``b`` of each row."""
    pos = np.arange(codes.shape[1])[None, :]
    inside = pos < lens[:, None]
    keep = (pos < a) | (pos >= (lens - b)[:, None])
    keep &= (lens > a + b)[:, None]  # too short: mask everything
    return np.where(inside & ~keep, np.uint32(c), codes)


def _numeric(codes: np.ndarray) -> np.ndarray:
    """Whether each code point has a Unicode numeric value (``str.isnumeric``)."""
    digit = (codes >= _ZERO) & (codes <= _NINE)
    wide = codes > 127
    if wide.any():
        points = np.unique(codes[wide])
        table = np.fromiter((chr(p).isnumeric() for p in points), dtype=bool, count=len(points))
        digit[wide] = table[np.searchsorted(points, codes[wide])]
    return digit


def phone_matrix(
    codes: np.ndarray, lens: np.ndarray, keep_last: int, c: int, keep_country_code: bool
) -> np.ndarray:
    """Mask digits except a leading country code and the last ``keep_last`` digits.

    Digits are the characters with a Unicode numeric value (``str.isnumeric``), as in the
    scalar ``mask_phone``.
    """
    n, w = codes.shape
    pos = np.arange(w)[None, :]
    digit = _numeric(codes)
    start = np.zeros(n, dtype=np.int64)
    if keep_country_code and w > 1:
        plus = codes[:, 0] == _PLUS
        double0 = (codes[:, 0] == _ZERO) & (codes[:, 1] == _ZERO) if w > 2 else np.zeros(n, bool)
        p = np.where(plus, 1, np.where(double0, 2, 0))
        # length of the digit run right after the prefix
        after = pos >= p[:, None]
        nondigit_after = after & ~digit
        first_nd = np.where(nondigit_after.any(axis=1), nondigit_after.argmax(axis=1), w)
        run = first_nd - p
        has_sep = (first_nd < lens) & (first_nd < w)
        ok = (p > 0) & (run >= 1) & (run <= 3) & has_sep
        start = np.where(ok, first_nd, 0)
    counted = digit & (pos >= start[:, None])
    from_end = np.cumsum(counted[:, ::-1], axis=1)[:, ::-1]  # digits at positions >= i
    total = from_end[:, 0]
    mask = counted & ((from_end > keep_last) | (total <= keep_last)[:, None])
    return np.where(mask, np.uint32(c), codes)


def vectorized(
    texts: list[str] | np.ndarray,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    scalar: Callable[[str], str],
) -> np.ndarray:
    """Apply a matrix mask ``fn(codes, lens)`` to ``texts`` (object array of str out).

    Strings longer than :data:`MAX_WIDTH`, or whose NUL characters a numpy string array would
    drop, go through ``scalar`` one by one.
    """
    arr_in = np.asarray(texts, dtype=object)
    n = len(arr_in)
    lens = np.fromiter(map(len, arr_in), dtype=np.int64, count=n)
    out = np.empty(n, dtype=object)
    short = np.flatnonzero(lens <= MAX_WIDTH)
    for i in np.flatnonzero(lens > MAX_WIDTH):
        out[i] = scalar(arr_in[i])
    for lo in range(0, len(short), _CHUNK):
        idx = short[lo : lo + _CHUNK]
        arr = arr_in[idx].astype(str)
        width = max(arr.dtype.itemsize // 4, 1)
        arr = arr.astype(f"<U{width}")
        clens = lens[idx]
        codes = arr.view(np.uint32).reshape(len(idx), width)
        res = fn(codes, clens).astype(np.uint32).view(f"<U{width}").reshape(len(idx))
        out[idx] = res
        for j in np.flatnonzero(np.char.str_len(arr) != clens):  # trailing NUL characters
            out[idx[j]] = scalar(arr_in[idx[j]])
    return out
