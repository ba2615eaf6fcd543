"""Recognising date columns: a column is a date when all its values parse with ONE format.

Day-first formats are tried before month-first ones (most of the world writes 14/11/13 for the
14th of November), so an ambiguous column whose values all fit both reads day-first.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from veil.errors import InputError

__all__ = [
    "DATE_FORMATS",
    "dates_as_text",
    "detect_date_format",
    "dominant_date_format",
    "format_dates",
    "parse_date_column",
    "text_format",
]

#: Candidate formats, in order of preference.
DATE_FORMATS: tuple[str, ...] = (
    "%Y-%m-%d",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M",
    "%Y/%m/%d",
    "%d/%m/%Y",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y %H:%M:%S",
    "%d/%m/%y",
    "%d/%m/%y %H:%M",
    "%d/%m/%y %H:%M:%S",
    "%m/%d/%Y",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%y",
    "%m/%d/%y %H:%M",
    "%d.%m.%Y",
    "%d.%m.%y",
    "%d-%m-%Y",
    "%d %b %Y",
    "%d %B %Y",
    "%b %d %Y",
    "%B %d, %Y",
)

_LOOKS_LIKE_DATE = re.compile(
    r"^\s*(\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2} [A-Za-z]{3,9} \d{4}|[A-Za-z]{3,9} \d{1,2},? \d{4})"
)
_MAX_UNIQUE = 5000


def _uniques(s: pd.Series) -> np.ndarray:
    vals = s.dropna().unique()
    if len(vals) > _MAX_UNIQUE:
        vals = np.random.default_rng(0).choice(vals, _MAX_UNIQUE, replace=False)
    return np.asarray(vals, dtype=object)


def detect_date_format(s: pd.Series) -> str | None:
    """Return the one format parsing every non-missing value of ``s``, or None.

    Examples
    --------
    >>> detect_date_format(pd.Series(["14/11/13 01:12", "24/11/00 04:13"]))
    '%d/%m/%y %H:%M'
    >>> detect_date_format(pd.Series(["a", "b"])) is None
    True
    """
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return None
    vals = _uniques(s)
    if len(vals) == 0 or not all(isinstance(v, str) for v in vals):
        return None
    probe = pd.Series(vals[:200])
    if not probe.str.match(_LOOKS_LIKE_DATE).all():
        return None
    return _first_format(pd.Series(vals).str.strip(), np.ones(len(vals)), float(len(vals)))


def _first_format(text: pd.Series, w: np.ndarray, need: float) -> str | None:
    """The first of :data:`DATE_FORMATS` parsing values of total weight ``>= need``."""
    for fmt in DATE_FORMATS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        if w[parsed.notna().to_numpy(bool)].sum() >= need:
            return fmt
    return None


def dominant_date_format(text: pd.Series, weights: np.ndarray, share: float = 0.9) -> str | None:
    """The format of the text values of which at least ``share`` (by weight) are dates, or None.

    ``text`` holds distinct stripped values and ``weights`` their counts (a ``value_counts``),
    so a few stray entries do not hide a date column; only the first 2,000 values are tried.

    Examples
    --------
    >>> dominant_date_format(pd.Series(["2024-01-31", "2023-12-01", "n/a"]), np.array([5, 4, 1]))
    '%Y-%m-%d'
    """
    text, w = text.iloc[:2000], np.asarray(weights[:2000], dtype=float)
    need = share * w.sum()
    if w[text.str.match(_LOOKS_LIKE_DATE).to_numpy(bool)].sum() < need:
        return None
    return _first_format(text, w, need)


def parse_date_column(s: pd.Series, fmt: str | None = None, *, name: str = "") -> pd.Series:
    """Parse ``s`` as dates with ``fmt`` (detected when None); raise InputError if impossible."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return s
    fmt = fmt or detect_date_format(s)
    if fmt is None:  # the values are not quoted: errors end up in logs
        raise InputError(
            f"column {name!r} was declared a date but its values have no single date format; "
            "write them in one format (ISO 8601: 2024-05-17) or drop the column from parse_dates"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pd.to_datetime(s.astype(object).where(s.notna(), None), format=fmt, errors="coerce")
    bad_mask = (out.isna() & s.notna()).to_numpy(dtype=bool)
    if bad_mask.any():
        raise InputError(
            f"column {name!r}: {int(bad_mask.sum())} value(s) not in date format {fmt}, the "
            f"first at row {int(np.argmax(bad_mask))} (0-based, header excluded); fix them or "
            "drop the column from parse_dates"
        )
    return out


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_DIRECTIVE = re.compile(r"%(-?)([YymdHIMSpbBf%])")
_UNPADDABLE = "dmHIMS"


def format_dates(values: pd.DatetimeIndex | pd.Series, fmt: str) -> np.ndarray:
    """Format dates as text with a ``strftime``-like ``fmt``, the same on every platform.

    Supports ``%Y %y %m %d %H %I %M %S %p %b %B %f %%`` and glibc's ``%-d`` style for numbers
    without a leading zero (``%-d/%-m/%Y`` writes ``3/7/2015``).  Month names are English, as
    the reader parses them.  Missing values become None.  Only the distinct values are
    formatted.

    Examples
    --------
    >>> format_dates(pd.to_datetime(["2015-07-03 09:05", None]), "%-m/%-d/%Y %H:%M").tolist()
    ['7/3/2015 09:05', None]
    """
    idx = pd.DatetimeIndex(values)
    codes, uniq = pd.factorize(idx)
    uniq = pd.DatetimeIndex(uniq)
    comp = {
        "Y": uniq.year, "y": uniq.year % 100, "m": uniq.month, "d": uniq.day,
        "H": uniq.hour, "I": (uniq.hour + 11) % 12 + 1, "M": uniq.minute, "S": uniq.second,
    }  # fmt: skip
    pieces: list[np.ndarray] = []
    pos = 0
    n = len(uniq)
    for m in _DIRECTIVE.finditer(fmt):
        if m.start() > pos:
            pieces.append(np.full(n, fmt[pos : m.start()], dtype=object))
        flag, d = m.groups()
        if d == "%":
            pieces.append(np.full(n, "%", dtype=object))
        elif d in comp:
            width = 4 if d == "Y" else 2
            nums = np.asarray(comp[d], dtype=np.int64).astype(str).astype(object)
            pieces.append(nums if flag else np.array([s.zfill(width) for s in nums], dtype=object))
        elif d == "f":
            micro = np.asarray(uniq.microsecond, dtype=np.int64).astype(str)
            pieces.append(np.array([s.zfill(6) for s in micro], dtype=object))
        elif d == "p":
            pieces.append(np.where(np.asarray(uniq.hour) < 12, "AM", "PM").astype(object))
        else:  # b, B
            names = np.array(_MONTHS, dtype=object)[np.asarray(uniq.month, dtype=np.int64) - 1]
            pieces.append(names if d == "B" else np.array([s[:3] for s in names], dtype=object))
        pos = m.end()
    if pos < len(fmt):
        pieces.append(np.full(n, fmt[pos:], dtype=object))
    text = np.full(n, "", dtype=object)
    for p in pieces:
        text = text + p
    out = np.empty(len(codes), dtype=object)
    valid = codes >= 0
    out[valid] = text[codes[valid]]
    out[~valid] = None
    return out


def _variants(fmt: str) -> list[str]:
    """``fmt`` and its spellings without leading zeros on days, months, hours..."""
    out = [fmt]
    for d in _UNPADDABLE:
        if f"%{d}" in fmt:
            out += [v.replace(f"%{d}", f"%-{d}") for v in out]
    return out


def text_format(text: pd.Series, parsed: pd.Series, fmt: str) -> str:
    """The spelling of ``fmt`` (leading zeros or not) that writes ``parsed`` back as ``text``.

    ``text`` holds the original strings and ``parsed`` the dates read from them with ``fmt``;
    the variant reproducing the most of (a sample of) the distinct strings wins, ``fmt`` on a
    tie.  Writing with it makes an untouched date column byte-identical to its source.

    Examples
    --------
    >>> s = pd.Series(["3/7/2015 9:05", "12/11/2016 14:30"])
    >>> text_format(s, pd.to_datetime(s, format="%m/%d/%Y %H:%M"), "%m/%d/%Y %H:%M")
    '%-m/%-d/%Y %-H:%M'
    """
    pairs = pd.DataFrame({"t": text.to_numpy(object), "p": parsed.to_numpy()}).dropna()
    pairs = pairs.drop_duplicates("t")
    if len(pairs) > 2000:
        pairs = pairs.sample(2000, random_state=0)
    if pairs.empty:
        return fmt
    original = pairs["t"].astype(str).str.strip().to_numpy(object)
    dates = pd.DatetimeIndex(pairs["p"])
    best, best_hits = fmt, -1
    for v in _variants(fmt):
        hits = int((format_dates(dates, v) == original).sum())
        if hits > best_hits:
            best, best_hits = v, hits
    return best


def dates_as_text(s: pd.Series, fmt: str) -> pd.Series | None:
    """``s`` (datetimes) formatted with ``fmt`` when that loses nothing, else None.

    Lossless means every distinct value reads back to itself with ``fmt`` (no seconds dropped
    by a format without seconds, no year outside the century a two-digit year can express).
    """
    if not pd.api.types.is_datetime64_any_dtype(s) or getattr(s.dt, "tz", None) is not None:
        return None
    uniq = pd.DatetimeIndex(s.dropna().unique())
    if len(uniq) == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = pd.to_datetime(
            pd.Series(format_dates(uniq, fmt)), format=fmt.replace("%-", "%"), errors="coerce"
        )
    if not (pd.DatetimeIndex(back) == uniq).all():
        return None
    return pd.Series(format_dates(s, fmt), index=s.index, name=s.name, dtype=object)
