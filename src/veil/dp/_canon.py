"""Per-value canonical forms of cells: a row's WHERE result and key match depend on its cell alone.

A table read with type inference (``read_csv``) gives a column a dtype chosen from *all* its
cells: ``True``/``False`` is ``bool`` until one person's value is missing (then ``object``),
whole numbers are ``int64`` until one person's cell is text (then ``object`` of *strings*:
``'30'``, not ``30``).  A filter or a key match that followed the dtype changed its result for
every other person when one person was added, an unbounded privacy loss.  Veil therefore
compares each cell through a canonical value computed from that cell alone:

* missing (``None``, ``NaN``, ``NA``, ``NaT``) -> ``None`` (SQL NULL);
* ``bool`` / ``numpy.bool_`` -> ``1`` or ``0``;
* integers and integral floats -> the Python ``int`` (beyond 4,300 digits: +-inf, as the
  text of such a number reads); other floats -> the ``float``; a complex number with no
  imaginary part -> its real part;
* text: stripped ``true`` / ``false`` (any case) -> ``1`` / ``0``; text that reads as a number
  (``int(s)`` or ``float(s)`` without ``_``, not NaN) -> that number as above; any other text
  stays the text (case and spaces kept);
* tuples and frozensets -> of their items' canonical values;
* ``Decimal`` / ``Fraction`` -> numbers as above; ``datetime`` / ``numpy.datetime64`` ->
  ``pandas.Timestamp`` (``timedelta`` -> ``pandas.Timedelta``), a time-zone aware one in UTC:
  values Python calls equal get one canonical value (:func:`_other`);
* anything else stays itself.

So ``True``, ``'True'``, ``'true'``, ``1``, ``1.0`` and ``'1'`` are one value, and ``30``,
``30.0``, ``'30'`` and ``'30.0'`` another: whatever dtype the column was inferred as, the same
cell gives the same canonical value.  Codes with leading zeros are numbers too: ``'01234'``
and ``'1234'`` are one value (as ``read_csv`` parses both in a column of numbers), so ZIP or
ICD codes that must stay apart need a non-numeric part (``'Z01234'``).  Comparisons
(:func:`compare`) are numeric between numbers, by text between texts, between timestamps as
timestamps (text parsed as one), and *unknown* (NULL) between a number and a text -- never an
error that would depend on other rows.

Example
-------
>>> [canonical(v) for v in (True, "TRUE", 1.0, "30.0", " 7 ", "a", None, float("nan"))]
[1, 1, 1, 30, 7, 'a', None, None]
>>> compare(canonical("30"), "=", canonical(30.0)), compare(1, "<", "a")
((True, True), (False, False))
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import operator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "canonical",
    "compare",
    "factorize_cells",
    "group_key",
    "group_tag",
    "missing_cells",
    "real_dtype",
    "real_float",
    "release_key",
    "release_column",
]

_OPS = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError, ArithmeticError):  # Decimal('sNaN'): InvalidOperation
        return False


def _number(value: float) -> int | float | None:
    if math.isnan(value):
        return None
    if math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _text(value: str) -> int | float | str:
    s = value.strip()
    low = s.lower()
    if low in ("true", "false"):
        return int(low == "true")
    if s and "_" not in s:
        try:
            return int(s)
        except ValueError:
            pass
        try:
            num = _number(float(s))
        except ValueError:
            return value
        if num is not None:
            return num
    return value


_NP_TIMES = (np.datetime64, np.timedelta64)


def canonical(value: Any) -> Any:
    """Canonical comparison value of one cell or literal (see the module notes)."""
    # text, booleans, integers and floats first: none of them is missing but a NaN float,
    # which _number maps to None (the missing test costs as much as the rest: ids, keys)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (bool, np.bool_)):
        return int(bool(value))
    if isinstance(value, _NP_TIMES):  # numpy subclasses them from np.integer: int() of a
        return None if np.isnat(value) else _other(value)  # day-unit one raised TypeError
    if isinstance(value, (int, np.integer)):
        return _integer(int(value))
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if isinstance(value, Decimal):  # before the missing test: pd.isna raises on sNaN
        return _other(value)
    if _is_missing(value):
        return None
    return _other(value)


#: Digits of the largest integer read from a ``Decimal`` cell (Python's default limit of
#: ``int(text)``, ``sys.get_int_max_str_digits()``).
_MAX_DIGITS = 4300
_HUGE = 10**_MAX_DIGITS  # integers of more digits read as +-inf, whatever their type


def _integer(value: int) -> int | float:
    """An integer, or +-inf beyond ``_MAX_DIGITS`` digits: as its text (``int(text)`` refuses
    it, ``float`` gives inf) and its ``Decimal`` read.  Python calls ``10**5000`` and
    ``Decimal(10**5000)`` equal, so a group of both was labelled by whichever row came first
    (the exact integer or inf)."""
    if -_HUGE < value < _HUGE:
        return value
    return math.inf if value > 0 else -math.inf


def _other(value: Any) -> Any:
    """Canonical value of a cell that is no text, boolean, integer, float or missing value.

    ``Decimal`` and ``Fraction`` are numbers (integral -> ``int``, else the ``float``);
    ``datetime`` and ``numpy.datetime64`` are ``pandas.Timestamp`` (``timedelta`` likewise
    ``pandas.Timedelta``).  Python calls ``Decimal('30') == 30`` and
    ``datetime(2020, 1, 1) == Timestamp('2020-01-01')``, so a factorization keeps such cells
    in one group labelled by whichever comes *first*: one person's ``Decimal('30')`` ahead of
    the other persons' ``30`` changed the released key's type, the key column's dtype and the
    rows' order.  One canonical value per equal pair makes the label the cell's value alone.
    """
    if isinstance(value, Decimal):
        if value.is_nan():  # NaN and sNaN: missing
            return None
        # infinite, or an integer of more digits than int(text) reads (4,300: a text cell of
        # such digits reads as +-inf through float()): +-inf, never int() of a million digits
        # (Decimal('1e999999') took 26 s, one cell stalling the query)
        if value.is_infinite() or value.adjusted() >= _MAX_DIGITS:
            return float(value)
        # a tiny non-integral Decimal reads as the float 0.0: _number makes it 0, as 0.0 is
        return int(value) if value == value.to_integral_value() else _number(float(value))
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return _integer(int(value))
        return _number(real_float(value))  # +-inf beyond float64, as float(Decimal) gives
    if isinstance(value, pd.Timestamp):  # the common case
        return _utc(value)
    if isinstance(value, (tuple, frozenset)):
        return _container(value, 0)
    if isinstance(value, (complex, np.complexfloating)) and value.imag == 0:  # 1+0j == 1
        return canonical(value.real)
    if isinstance(value, pd.Timedelta):
        return value
    if isinstance(value, (_dt.datetime, np.datetime64)):
        try:
            return _utc(pd.Timestamp(value))
        except (ValueError, OverflowError):  # outside Timestamp's range: as it is
            return value
    if isinstance(value, (_dt.timedelta, np.timedelta64)):
        try:
            return pd.Timedelta(value)
        except (ValueError, OverflowError):
            return value
    return value


def _utc(value: pd.Timestamp) -> pd.Timestamp:
    """A time-zone aware timestamp in UTC: Python calls ``00:00 UTC`` and ``01:00 Paris`` equal,
    so a group of both was labelled by whichever row came first -- one person's cell in
    another zone relabelled every other person's group.  Naive timestamps stay as they are."""
    if value.tzinfo is None:
        return value
    try:
        return value.tz_convert("UTC")
    except (ValueError, OverflowError):  # the instant is outside Timestamp's range in UTC
        return value


_MAX_DEPTH = 32  # tuples nested deeper keep their inner values as they are


def _container(value: tuple | frozenset, depth: int) -> Any:
    """A tuple (frozenset) of its items' canonical values: ``(1, 2) == (1.0, 2.0)`` and they
    hash alike, so a group of both was labelled by whichever row came first (likewise a
    named tuple and the plain tuple it equals)."""
    if depth >= _MAX_DEPTH:
        return value
    items = (
        _container(v, depth + 1) if isinstance(v, (tuple, frozenset)) else canonical(v)
        for v in value
    )
    try:  # a named tuple is a plain tuple (it equals one)
        return tuple(items) if isinstance(value, tuple) else frozenset(items)
    except TypeError:  # an item without a canonical hashable value: as it is
        return value


def _kind(value: Any) -> str:
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (_dt.datetime, _dt.date, np.datetime64)):
        return "time"
    return "other"


#: Longest text read as a timestamp (an ISO timestamp with nanoseconds and a zone name is
#: under 60 characters): the parser's time grows faster than the text's length (20 s for one
#: cell of a million characters), so one person's long cell stalled the query.
_MAX_TIME_TEXT = 100


#: Texts pandas reads as the *current* time: a cell (or literal) 'now' compared with a
#: timestamp would match or not depending on when the query runs, not on what it holds.
_CLOCK_TEXTS = frozenset({"now", "today"})


def _as_time(value: Any) -> Any:
    if isinstance(value, str) and (len(value) > _MAX_TIME_TEXT or value in _CLOCK_TEXTS):
        return None  # no timestamp: unknown, as any text that does not parse
    try:
        return pd.Timestamp(value)
    except (TypeError, ValueError):
        return None


def compare(left: Any, op: str, right: Any) -> tuple[bool, bool]:
    """``(value, known)`` of ``left op right`` for two canonical values.

    NULL on either side, or a number against a text, is unknown; timestamps compare with text
    that parses as a timestamp; other pairs compare as Python does, unknown when they cannot.
    """
    if left is None or right is None:
        return False, False
    kl, kr = _kind(left), _kind(right)
    if kl != kr:
        if {kl, kr} == {"time", "text"}:
            left, right = _as_time(left), _as_time(right)
            if left is None or right is None:
                return False, False
        else:
            return False, False
    try:
        result = _OPS[op](left, right)
    except (TypeError, ValueError):
        return False, False
    if not isinstance(result, (bool, np.bool_)):  # numpy broadcasting a tuple: no answer
        return False, False  # (bool() of that array raised ValueError)
    return bool(result), True


def group_key(value: Any) -> Any:
    """Value a privately selected group is formed by and released as, from the cell alone.

    Like :func:`canonical`, but booleans stay booleans (``True``, ``'true'``, ``'TRUE'`` are the
    group ``True``; ``1`` and ``'1'`` the group ``1``), so a boolean column still releases
    ``True``/``False``.  ``30``, ``30.0``, ``'30'`` and ``' 30.0'`` are the group ``30``; other
    text is itself; missing is ``None`` (SQL's NULL group).
    """
    if isinstance(value, (bool, np.bool_)):
        return True if value else False
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
    return canonical(value)  # missing -> None


def group_tag(key: Any) -> Any:
    """Hashable form of a :func:`group_key` that keeps ``True`` apart from ``1``."""
    return (type(key) is bool, key)


def release_key(value: Any) -> Any:
    """A released group key written from its value alone: missing -> ``None``, numpy scalars ->
    Python, integral floats -> ``int`` (``30.0`` and ``30`` are one released key)."""
    if _is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, _NP_TIMES):  # np.integer subclasses: their int() is no key
        return _other(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(float(value))  # not NaN: missing was handled above
    if isinstance(value, np.str_):
        return str(value)
    return value


def release_column(values: Any) -> pd.Series:
    """Key column built from :func:`release_key` values: its dtype is what pandas infers from
    the released keys alone (object when a missing key is released), not the data's dtype."""
    keys = [release_key(v) for v in values]
    if any(k is None for k in keys):
        return pd.Series(keys, dtype=object)
    return pd.Series(keys)


def real_float(value: Any) -> float:
    """``float(value)``, but an integer or fraction beyond float64 (``10**400``,
    ``Fraction(10**400)``) is ``+-inf`` (its sign), as ``float`` reads ``Decimal('1e999999')``,
    instead of an ``OverflowError`` that one record's value alone would raise.  Anything else
    ``float`` refuses raises as it does."""
    try:
        return float(value)
    except OverflowError:
        if isinstance(value, numbers.Rational):
            return math.inf if value > 0 else -math.inf
        raise


def real_dtype(dtype: Any) -> bool:
    """Numbers or booleans, read as float64 vectorized: not complex, whose float64 reading
    drops the imaginary part (``1+2j`` as ``1``) where the cell-by-cell reading of an object
    column -- which one person's text cell makes it -- gives no number."""
    numeric = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    return numeric and not pd.api.types.is_complex_dtype(dtype)


def _hashes(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:  # list, dict, set, array, a tuple holding one; Decimal('sNaN')
        return False
    return True


def missing_cells(s: pd.Series) -> np.ndarray:
    """``s.isna()`` as a boolean array, also for a column holding ``Decimal('sNaN')`` (on
    which pandas' test raises ``InvalidOperation``): such a cell is missing, as
    :func:`canonical` reads it.  One person's sNaN cell failed ``IS NULL``, ``COUNT(col)``
    and the whole query, which ran without that person."""
    try:
        return np.asarray(s.isna(), dtype=bool)
    except ArithmeticError:
        return np.fromiter((canonical(v) is None for v in s.array), dtype=bool, count=len(s))


def factorize_cells(s: pd.Series, *, use_na_sentinel: bool = True) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize`` of a column that may hold *nested* cells, each read by itself.

    A nested cell -- a list, dict, set or array (nested JSON, Parquet list columns): anything
    unhashable -- has no value a group, a key or a comparison can use.  ``pd.factorize``
    raised ``TypeError`` on the whole column, so one person's nested cell failed a query that
    ran without that person (error versus release: a leak).  Here such a cell gets the code
    ``-1``: it matches no key, forms no group, compares as unknown and is no person's id --
    a decision on the cell alone.  ``Decimal('sNaN')`` (unhashable too) is a missing value,
    as :func:`canonical` reads it.

    Returns
    -------
    codes, uniques
        As ``pd.factorize`` (``uniques`` from the other cells only; one C pass when no cell
        is nested).
    """
    try:
        codes, uniques = pd.factorize(s, use_na_sentinel=use_na_sentinel)
        return np.asarray(codes, dtype=np.int64), pd.Index(uniques)
    except (TypeError, ArithmeticError, NotImplementedError):  # unhashable; sNaN in isna;
        pass  # an Arrow list column (no dictionary_encode kernel)
    cells = s.to_numpy(dtype=object).copy()
    nested = np.zeros(len(cells), dtype=bool)
    for i, v in enumerate(cells):
        if not _hashes(v):
            if isinstance(v, Decimal):  # sNaN: missing
                cells[i] = None
            else:
                nested[i] = True
    ok = np.flatnonzero(~nested)
    sub, uniques = pd.factorize(pd.Series(cells[ok], dtype=object), use_na_sentinel=use_na_sentinel)
    codes = np.full(len(cells), -1, dtype=np.int64)
    codes[ok] = sub
    return codes, pd.Index(uniques, dtype=object)
