"""``-0.0`` written as ``0.0``: the written text must not tell apart values Veil groups as one."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["positive_zeros"]

#: ``infer_dtype`` kinds of an ``object`` column that cannot hold a float cell (skipped in C).
_NO_FLOATS = frozenset({"string", "bytes", "empty", "boolean", "integer"})


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


def _positive_zero_column(col: pd.Series) -> pd.Series | None:
    """``col`` with its ``-0.0`` cells replaced by ``0.0``, or None when it holds none."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = _positive_zero_column(pd.Series(dtype.categories, dtype=dtype.categories.dtype))
        if cats is None:
            return None
        # -0.0 and 0.0 cannot both be categories (they are equal): the renamed ones are unique
        return col.cat.rename_categories(cats.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        x = col.to_numpy()
        neg = np.signbit(x)
        if not neg.any():
            return None
        neg &= x == 0
    elif isinstance(dtype, np.dtype) and dtype.kind == "O":
        if pd.api.types.infer_dtype(col, skipna=True) in _NO_FLOATS:
            return None
        x = col.to_numpy()
        neg = _negative_zero_cells(x)
    elif pd.api.types.is_float_dtype(dtype):  # nullable Float64, float64[pyarrow]
        values = col.to_numpy(dtype="float64", na_value=np.nan)
        neg = np.signbit(values) & (values == 0)
        if neg.any():
            return col.mask(pd.Series(neg, index=col.index), 0.0)
        return None
    else:
        return None
    if not neg.any():
        return None
    fixed = x.copy()
    fixed[neg] = 0.0
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

    Examples
    --------
    >>> df = pd.DataFrame({"x": pd.Series([-0.0, "n/a", 2], dtype=object)})
    >>> positive_zeros(df)["x"].map(repr).tolist()
    ['0.0', "'n/a'", '2']
    """
    out = None
    for i in range(df.shape[1]):
        fixed = _positive_zero_column(df.iloc[:, i])
        if fixed is not None:
            if out is None:
                out = df.copy(deep=False)
            out.isetitem(i, fixed)
    return df if out is None else out
