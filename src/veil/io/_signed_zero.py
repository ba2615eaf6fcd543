"""``-0.0`` written as ``0.0``: the written text must not tell apart values Veil groups as one.

The same holds for decimals: ``Decimal("1")`` and ``Decimal("1.0")`` are one value to every
grouping in Veil (they are equal and hash alike) but print as ``1`` and ``1.0``; equal decimals
written with different texts are written with one (see :func:`positive_zeros`).  And for any
other cells of an ``object`` column that Veil groups as one value
(:func:`~veil.schema._hierarchy.factorize_typed`: equal cells of one kind) but that print
differently: ``numpy.datetime64`` cells of one instant in different units (``1980-01-02``,
``1980-01-02T00:00:00.000000000``), time-zone-aware timestamps of one instant in different
zones, ``numpy.timedelta64`` cells of one duration in different units.
"""

from __future__ import annotations

import math
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["positive_zeros"]

#: ``infer_dtype`` kinds of an ``object`` column that cannot hold a float cell (skipped in C).
_NO_FLOATS = frozenset({"string", "bytes", "empty", "boolean", "integer"})
#: ``infer_dtype`` kinds whose equal cells print alike, or are handled by the float and
#: decimal rules: other kinds (dates, times, durations, mixed) go through
#: :func:`_equal_cell_rewrites`.
_PRINTED_ALIKE = _NO_FLOATS | {"floating", "mixed-integer-float", "decimal"}
#: Cell types whose equal cells print alike, or that the float and decimal rules handle.
_PLAIN_TYPES = (str, bytes, bool, int, float, np.bool_, np.integer, np.floating, Decimal)


def _equal_cell_rewrites(cells: np.ndarray) -> dict[int, Any]:
    """Rows whose cell Veil groups with cells printed differently (equal cells of one kind:
    :func:`~veil.schema._hierarchy.factorize_typed`), mapped to the first cell of that value,
    so that the value is written with one text.  Cells of :data:`_PLAIN_TYPES` are left out
    (written alike, or rewritten by the float and decimal rules)."""
    from veil.schema._hierarchy import factorize_typed

    types = set(map(type, cells))  # the common case (texts and numbers) in one C-level pass
    if all(issubclass(t, _PLAIN_TYPES) and not issubclass(t, np.timedelta64) for t in types):
        return {}
    other = [
        i
        for i, v in enumerate(cells)
        if not isinstance(v, _PLAIN_TYPES) or isinstance(v, np.timedelta64)  # an np.integer
    ]
    if len(other) < 2:
        return {}
    try:
        codes, uniq = factorize_typed(cells)
    except TypeError:  # unhashable cells (dicts, lists: nested JSON) are each written as they are
        return {}
    texts: dict[int, set[str]] = {}
    for i in other:
        if codes[i] >= 0:
            texts.setdefault(int(codes[i]), set()).add(str(cells[i]))
    split = {c for c, seen in texts.items() if len(seen) > 1}
    return {i: uniq[codes[i]] for i in other if codes[i] in split}


def _negative_zero_cells(cells: np.ndarray) -> np.ndarray:
    """Mask of the ``object`` cells that are a float (Python or numpy) equal to ``-0.0``."""
    return np.fromiter(
        (
            isinstance(v, float | np.floating) and v == 0 and math.copysign(1.0, v) < 0
            for v in cells
        ),
        dtype=bool,
        count=len(cells),
    )


def _one_text(v: Decimal) -> Decimal:
    """The decimal equal to ``v`` written for every cell equal to it: no trailing zeros, no
    exponent where the digits allow (``1.50`` -> ``1.5``, ``1E+1`` -> ``10``), ``0`` for zeros.

    Computed exactly, whatever the thread's decimal context: its precision (28 digits by
    default) rounded ``1.00000000000000000000000000001`` to ``1``, another value, and its
    exponent range failed the write on ``1E+1000000`` with ``decimal.Overflow``.
    """
    if v == 0:
        return Decimal(0)
    digits = len(v.as_tuple().digits)
    exact = Context(prec=max(digits, 28), Emax=MAX_EMAX, Emin=MIN_EMIN)
    norm = v.normalize(exact)
    if norm.as_tuple().exponent > 0:  # type: ignore[operator]
        try:
            return norm.quantize(Decimal(1), context=exact)
        except InvalidOperation:  # more digits than the precision: keep the exponent
            return norm
    return norm


def _decimal_rewrites(cells: np.ndarray) -> dict[int, Decimal]:
    """Rows whose finite ``Decimal`` cell shares its value with a cell written differently
    (``Decimal("1")`` next to ``Decimal("1.0")``, ``Decimal("-0")`` next to ``Decimal("0")``),
    mapped to the one text written for that value (:func:`_one_text`)."""
    if not any(issubclass(t, Decimal) for t in set(map(type, cells))):  # in C: half the loop
        return {}
    texts: dict[Decimal, set[str]] = {}
    rows: dict[Decimal, list[int]] = {}
    for i, v in enumerate(cells):
        if isinstance(v, Decimal) and v.is_finite():
            texts.setdefault(v, set()).add(str(v))  # equal decimals are one key
            rows.setdefault(v, []).append(i)
    out: dict[int, Decimal] = {}
    for v, seen in texts.items():
        if len(seen) > 1:
            one = _one_text(v)
            out.update((i, one) for i in rows[v])
    return out


def _positive_zero_column(col: pd.Series) -> pd.Series | None:
    """``col`` with its ``-0.0`` cells replaced by ``0.0`` (and equal decimals written alike),
    or None when it holds none."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = _positive_zero_column(pd.Series(dtype.categories, dtype=dtype.categories.dtype))
        if cats is None:
            return None
        # -0.0 and 0.0 cannot both be categories (they are equal): the renamed ones are unique
        return col.cat.rename_categories(cats.to_numpy())
    rewrites: dict[int, Any] = {}
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        x = col.to_numpy()
        neg = np.signbit(x)
        if not neg.any():
            return None
        neg &= x == 0
    elif isinstance(dtype, np.dtype) and dtype.kind == "O":
        kind = pd.api.types.infer_dtype(col, skipna=True)
        if kind in _NO_FLOATS:
            return None
        x = col.to_numpy()
        neg = _negative_zero_cells(x)
        rewrites = _decimal_rewrites(x) if kind == "decimal" or kind.startswith("mixed") else {}
        if kind not in _PRINTED_ALIKE:
            rewrites.update(_equal_cell_rewrites(x))
    elif pd.api.types.is_float_dtype(dtype):  # nullable Float64, float64[pyarrow]
        values = col.to_numpy(dtype="float64", na_value=np.nan)
        neg = np.signbit(values) & (values == 0)
        if neg.any():
            return col.mask(pd.Series(neg, index=col.index), 0.0)
        return None
    else:
        return None
    if not neg.any() and not rewrites:
        return None
    fixed = x.copy()
    fixed[neg] = 0.0
    for i, v in rewrites.items():
        fixed[i] = v
    return pd.Series(fixed, index=col.index, name=col.name, dtype=dtype)


def positive_zeros(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every float ``-0.0`` cell written as ``0.0`` (a new frame only if one occurs).

    ``-0.0 == 0.0``: every grouping in Veil (``factorize_typed``, pandas) puts
    them in one class, but CSV text shows them apart (``-0`` / ``0``, ``-0.0`` / ``0.0``), so a
    k-anonymous class of four ``0.0`` and one ``-0.0`` would read as a class of four and a class
    of one to anyone grouping the written text.  This holds in every column holding floats:
    float columns (numpy or nullable), ``object`` columns mixing floats with other values
    (text, integers) and categorical columns with float categories.  A ``0.0`` cell then reads
    as its column writes ``0.0``.  Integers, texts, booleans and missing values are kept.
    Equal ``Decimal`` cells of an ``object`` column written with different
    texts (``Decimal("1")`` / ``Decimal("1.0")``, ``Decimal("-0")`` / ``Decimal("0")``) are all
    written as the normalised one (``1``, ``0``); a value written one way only keeps its text.
    Other cells of an ``object`` column that Veil groups as one value but that print
    differently (``numpy.datetime64`` of one instant in two units, timestamps of one instant in
    two time zones, ``numpy.timedelta64`` of one duration in two units) are all written as the
    first of them.

    Examples
    --------
    >>> df = pd.DataFrame({"x": pd.Series([-0.0, "n/a", 2], dtype=object)})
    >>> positive_zeros(df)["x"].map(repr).tolist()
    ['0.0', "'n/a'", '2']
    >>> from decimal import Decimal
    >>> df = pd.DataFrame({"x": [Decimal("1"), Decimal("1.0"), Decimal("2.50")]})
    >>> positive_zeros(df)["x"].map(str).tolist()
    ['1', '1', '2.50']
    """
    out = None
    for i in range(df.shape[1]):
        fixed = _positive_zero_column(df.iloc[:, i])
        if fixed is not None:
            if out is None:
                out = df.copy(deep=False)
            out.isetitem(i, fixed)
    return df if out is None else out
