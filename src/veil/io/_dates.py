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

__all__ = ["DATE_FORMATS", "detect_date_format", "parse_date_column"]

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
    text = pd.Series(vals).str.strip()
    for fmt in DATE_FORMATS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        if parsed.notna().all():
            return fmt
    return None


def parse_date_column(s: pd.Series, fmt: str | None = None, *, name: str = "") -> pd.Series:
    """Parse ``s`` as dates with ``fmt`` (detected when None); raise InputError if impossible."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return s
    fmt = fmt or detect_date_format(s)
    if fmt is None:
        bad = [str(v) for v in s.dropna().unique()[:3]]
        raise InputError(
            f"column {name!r} was declared a date but its values have no single date format "
            f"(e.g. {', '.join(bad)})"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pd.to_datetime(s.astype(object).where(s.notna(), None), format=fmt, errors="coerce")
    bad_mask = out.isna() & s.notna()
    if bad_mask.any():
        bad = [str(v) for v in s[bad_mask].unique()[:3]]
        raise InputError(f"column {name!r}: values not in date format {fmt}: {', '.join(bad)}")
    return out
