"""Shared helpers for operators: column checks, unique-value mapping, key derivation.

Operators transform the *unique* values of a column and scatter the results back with the
factorization codes (``pd.factorize`` -> transform ``uniques`` -> ``take``), so the cost grows
with the number of distinct values, not with the number of rows.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from veil.deid._keys import shown
from veil.errors import ConfigError, InputError

__all__ = [
    "check_column",
    "require_unique_columns",
    "replace_column",
    "map_uniques",
    "from_codes",
    "factorize_cells",
    "canonical_str",
    "keyed_text",
    "derive_key",
    "keyed_uint64",
    "hmac_sha256_many",
    "string_dtype_for",
    "resolve_path",
    "require_number",
    "require_int",
    "require_choice",
    "numeric_values",
]


def require_unique_columns(df: pd.DataFrame) -> None:
    """Raise :class:`InputError` when ``df`` has duplicate column names.

    ``df[name]`` of a duplicated name is a DataFrame, not a column: every per-column step
    (operators, the scan, the report) would fail with a bare pandas error.
    """
    if not df.columns.is_unique:
        dups = ", ".join(map(repr, dict.fromkeys(df.columns[df.columns.duplicated()])))
        raise InputError(f"the table has duplicate column names ({dups}); rename them first")


def check_column(df: pd.DataFrame, column: str | None, op: str) -> str:
    """Return ``column`` if it is a column of ``df``; raise :class:`InputError` otherwise."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"operator {op!r} expects a pandas DataFrame, got {type(df).__name__}")
    if column is None:
        raise ConfigError(f"operator {op!r} works on one column: give the column name")
    if column not in df.columns:
        cols = ", ".join(map(str, list(df.columns)[:10]))
        raise InputError(f"operator {op!r}: no column {column!r} in the table (columns: {cols})")
    if not df.columns.is_unique and int((df.columns == column).sum()) > 1:
        raise InputError(
            f"operator {op!r}: the table has several columns named {column!r}; rename them first"
        )
    return column


def replace_column(df: pd.DataFrame, column: str, values: pd.Series | np.ndarray) -> pd.DataFrame:
    """Return a shallow copy of ``df`` with ``column`` replaced; ``df`` itself is untouched."""
    out = df.copy(deep=False)
    if isinstance(values, pd.Series):
        values = values.set_axis(df.index)
    out[column] = values
    return out


def string_dtype_for(series: pd.Series) -> Any:
    """dtype for a string result: the input's string dtype when it has one, else ``object``."""
    if isinstance(series.dtype, pd.StringDtype):
        return series.dtype
    return object


def from_codes(values: Any, codes: np.ndarray, like: pd.Series, dtype: Any = None) -> pd.Series:
    """Series whose row i is ``values[codes[i]]`` (missing where ``codes[i] < 0``).

    With a string extension dtype (pandas 3's default ``str``), only the distinct ``values`` are
    converted and the gather runs inside the extension array, so a 1M-row column of a few
    labels costs one small conversion.
    """
    if dtype is None:
        dtype = string_dtype_for(like)
    table = np.empty(len(values), dtype=object)
    table[:] = values if not isinstance(values, np.ndarray) else values.astype(object, copy=False)
    codes = np.asarray(codes, dtype=np.intp)
    if dtype is not object:
        arr = pd.array(table, dtype=dtype).take(codes, allow_fill=True)
        return pd.Series(arr, index=like.index, name=like.name)
    full = np.empty(len(values) + 1, dtype=object)
    full[:-1] = table
    full[-1] = None
    out = full.take(np.where(codes < 0, len(values), codes))
    return pd.Series(out, index=like.index, name=like.name, dtype=object)


_MIXED = ("mixed", "mixed-integer", "mixed-integer-float")


def factorize_cells(series: pd.Series) -> tuple[np.ndarray, Any]:
    """``pd.factorize(series)`` (missing -> -1), also for cells that cannot be hashed.

    Lists, dicts and arrays (nested JSON, Parquet list columns) made every operator fail with
    a bare ``unhashable type`` TypeError; such cells are grouped by their canonical JSON text
    (keys sorted, so equal dicts group together), which is also what text operators then see.
    """
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in _MIXED:
        # True == 1 and False == 0 to Python: pd.factorize gives them one code, so a bool and
        # a number held by two people got one pseudonym (the first one's); a bool is its text
        series = series.map(lambda v: str(bool(v)) if isinstance(v, bool | np.bool_) else v)
    from veil.deid._text import factorize_any  # lazy: veil.deid imports the operators

    return factorize_any(series)


def map_uniques(
    series: pd.Series,
    func: Callable[[np.ndarray], Sequence[Any] | np.ndarray],
    *,
    dtype: Any = None,
) -> pd.Series:
    """Apply ``func`` to the distinct non-missing values of ``series`` and scatter back.

    ``func`` receives an object array of the unique values and returns one output per value.
    Missing values stay missing.  ``dtype`` defaults to :func:`string_dtype_for`.
    """
    codes, uniques = factorize_cells(series)
    uvals = np.asarray(uniques, dtype=object)
    res = func(uvals) if len(uvals) else []
    return from_codes(res, codes, series, dtype)


def canonical_str(value: Any) -> str:
    """Canonical text of a cell value, so that ``17``, ``17.0`` and ``"17"`` agree.

    A date read as ``Timestamp("1980-01-02")`` and the text ``"1980-01-02"`` agree too; a
    time of day is kept (``isoformat``).  A ``datetime.datetime`` and a ``numpy.datetime64``
    are read as the ``Timestamp`` of their instant, so one instant has one text whatever type
    holds it (``datetime(1980, 1, 2)`` wrote ``1980-01-02 00:00:00`` and
    ``datetime64("1980-01-02T00:00:00.000000000")`` its nanoseconds: one date, three
    pseudonyms).

    Examples
    --------
    >>> import datetime as dt
    >>> canonical_str(17.0), canonical_str(dt.datetime(1980, 1, 2))
    ('17', '1980-01-02')
    >>> canonical_str(np.datetime64("1980-01-02T10:30"))
    '1980-01-02T10:30:00'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if f.is_integer() and abs(f) < 2**63:
            return str(int(f))
        return repr(f)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, (np.datetime64, datetime.datetime)) and not isinstance(
        value, pd.Timestamp
    ):
        try:
            stamp = pd.Timestamp(value)
        except (ValueError, OverflowError):  # beyond the range pandas holds: as written
            return str(value)
        if stamp is pd.NaT:
            return str(value)
        value = stamp
    if isinstance(value, pd.Timestamp):
        # a date (midnight, no time zone) is its ISO date text: veil.io reads a column into
        # dates only when every cell parses, so "1980-01-02" is a Timestamp in one file and
        # text in another, and the two must give one pseudonym (one fake, one mask)
        if value.tzinfo is None and value == value.normalize():
            return value.date().isoformat()
        return value.isoformat()
    return str(value)


def keyed_text(value: Any) -> str:
    """:func:`canonical_str` for the input of a keyed hash (pseudonyms, fake seeds).

    Bytes that are not UTF-8 decode losslessly (``surrogateescape``; :func:`keyed_uint64` and
    the pseudonym HMAC encode the escapes with ``surrogatepass``): ``canonical_str``'s
    replacement characters would give distinct binary values one pseudonym or one fake.
    UTF-8 bytes read as their text.
    """
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return canonical_str(value)


def derive_key(master: bytes, purpose: str, length: int = 32) -> bytes:
    """Derive a sub-key for ``purpose`` from the master key with HKDF-SHA-256 (RFC 5869)."""
    return HKDF(
        algorithm=hashes.SHA256(),
        length=length,
        salt=b"veil/deid/operators/v1",
        info=purpose.encode("utf-8"),
    ).derive(master)


def hmac_sha256_many(key: bytes, messages: Iterable[bytes]) -> list[bytes]:
    """HMAC-SHA-256 (RFC 2104) of many messages under one key.

    The inner and outer hash states of the padded key are computed once and copied for each
    message, which halves the cost of ``hmac.digest`` per message.

    Examples
    --------
    >>> import hmac
    >>> hmac_sha256_many(b"key", [b"msg"]) == [hmac.digest(b"key", b"msg", "sha256")]
    True
    """
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    padded = key.ljust(64, b"\x00")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in padded))
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in padded))
    icopy, ocopy = inner.copy, outer.copy
    out = []
    for m in messages:
        i = icopy()
        i.update(m)
        o = ocopy()
        o.update(i.digest())
        out.append(o.digest())
    return out


def keyed_uint64(key: bytes, texts: Sequence[str], tag: str = "") -> np.ndarray:
    """One 64-bit integer per text: the first 8 bytes of HMAC-SHA-256(key, tag || 0 || text).

    Texts are UTF-8 encoded with ``surrogatepass``, so the lone surrogates of bytes decoded
    with ``surrogateescape`` hash losslessly (other text encodes as with strict UTF-8).
    """
    prefix = tag.encode("utf-8") + b"\x00"
    macs = hmac_sha256_many(key, (prefix + t.encode("utf-8", "surrogatepass") for t in texts))
    return np.array([int.from_bytes(d[:8], "big") for d in macs], dtype=np.uint64)


def resolve_path(path: str | os.PathLike[str], base_dir: str) -> Path:
    """Resolve ``path`` relative to ``base_dir`` (the policy's folder)."""
    p = Path(path)
    if not p.is_absolute():
        p = Path(base_dir) / p
    return p


def require_number(op: str, name: str, value: Any, *, positive: bool = False) -> float:
    """Validate a numeric parameter."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"operator {op!r}: {name} must be a number, got {shown(value)}")
    v = float(value)
    if not np.isfinite(v) or (positive and v <= 0):
        raise ConfigError(
            f"operator {op!r}: {name} must be a {'positive ' if positive else ''}finite number, "
            f"got {shown(value)}"
        )
    return v


#: Largest value an integer operator parameter takes by default (bin counts, kept characters,
#: lengths): far above any sensible setting, below what numpy and the C layer overflow on.
MAX_INT_PARAM = 1_000_000


def require_int(
    op: str, name: str, value: Any, *, minimum: int = 0, maximum: int = MAX_INT_PARAM
) -> int:
    """Validate an integer parameter ``>= minimum`` and ``<= maximum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(
            f"operator {op!r}: {name} must be an integer >= {minimum}, got {shown(value)}"
        )
    if value > maximum:  # 10**20 bins or kept characters: OverflowError/ValueError deep in numpy
        raise ConfigError(f"operator {op!r}: {name} must be at most {maximum:,}, got {value!r}")
    return int(value)


def require_choice(op: str, name: str, value: Any, choices: Sequence[str]) -> str:
    """Validate a parameter taking one of ``choices``."""
    if value not in choices:
        raise ConfigError(
            f"operator {op!r}: {name} must be one of {', '.join(choices)}; got {shown(value)}"
        )
    return str(value)


def numeric_values(series: pd.Series, op: str) -> np.ndarray:
    """Float view of a numeric column.

    Raises :class:`InputError` counting the non-numeric cells and giving the position of the
    first; the values themselves are never quoted (errors end up in logs).
    """
    if pd.api.types.is_bool_dtype(series.dtype) or not (
        pd.api.types.is_numeric_dtype(series.dtype)
    ):
        conv = pd.to_numeric(series, errors="coerce")
        bad = (conv.isna() & series.notna()).to_numpy(dtype=bool)
        if bad.any():
            raise InputError(
                f"operator {op!r}: column {series.name!r} is not numeric: {int(bad.sum())} "
                f"cell(s) are not numbers, the first at row {int(np.argmax(bad))} (0-based, "
                "header excluded); clean or convert the column, or use a text operator"
            )
        series = conv
    return series.to_numpy(dtype=np.float64, na_value=np.nan)
