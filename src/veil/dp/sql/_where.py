"""Vectorized evaluation of WHERE conditions with SQL's three-valued logic.

Each sub-expression evaluates to two boolean arrays, ``(value, known)``: a comparison involving a
NULL (NaN/None/NA) is *unknown*, ``NOT unknown`` is unknown, ``FALSE AND unknown`` is false,
``TRUE OR unknown`` is true, and a row is kept only when the whole condition is known to be true
(SQL-92 semantics; pandas' ``~(x > 5)`` would wrongly keep NULL rows).

Each row's result depends on that row's cells alone, never on the column's dtype (which a
reader infers from *all* rows, so one person's missing or text cell would change it for
everybody): cells and literals are compared through their per-value canonical form
(:mod:`veil.dp._canon`).  Numbers compare numerically (``30``, ``30.0``, ``'30'``, ``'30.0'``
are equal), booleans are ``1``/``0`` (``flag = 'true'``, ``flag = TRUE``, ``flag = 1`` all
match ``True`` and the text ``'True'``), other text compares as text, and a number against a
non-numeric text is unknown (NULL), never an error; so is a nested cell (a list, dict or array),
which ``IS NULL`` does not call missing.  ``IN`` is a chain of ``=`` joined by
``OR``.  Numeric and boolean columns take a vectorized path; others are factorized, so the
canonical form is computed once per distinct value.

Example
-------
>>> import pandas as pd
>>> from veil.dp.sql import parse_condition
>>> df = pd.DataFrame({"age": [10, None, 30]})
>>> evaluate(parse_condition("NOT age > 20"), df).tolist()
[True, False, False]
>>> flags = pd.DataFrame({"f": [True, False, None], "g": ["30", "x", "30.0"]})
>>> evaluate(parse_condition("f = 'true' OR g = 30"), flags).tolist()
[True, False, True]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.dp._canon import canonical, compare, factorize_cells, missing_cells, real_dtype
from veil.dp.sql._ast import (
    And,
    Between,
    Column,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    Not,
    Operand,
    Or,
)
from veil.errors import ConfigError

__all__ = ["evaluate", "columns_of"]

_Tri = tuple[np.ndarray, np.ndarray]


def columns_of(expr: Expr | Operand | None) -> set[str]:
    """Names of the columns an expression reads.

    Examples
    --------
    >>> from veil.dp.sql import parse_condition
    >>> cond = parse_condition("age BETWEEN 20 AND 40 AND NOT county IN ('a') OR income IS NULL")
    >>> sorted(columns_of(cond))
    ['age', 'county', 'income']
    """
    if expr is None or isinstance(expr, Literal):
        return set()
    if isinstance(expr, Column):
        return {expr.name}
    if isinstance(expr, Comparison):
        return columns_of(expr.left) | columns_of(expr.right)
    if isinstance(expr, (InList, IsNull)):
        return columns_of(expr.operand)
    if isinstance(expr, Between):
        return columns_of(expr.operand) | columns_of(expr.low) | columns_of(expr.high)
    if isinstance(expr, Not):
        return columns_of(expr.operand)
    out: set[str] = set()
    for term in expr.terms:
        out |= columns_of(term)
    return out


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    if name not in df.columns:
        raise ConfigError(f"SQL: unknown column {name!r} in WHERE")
    return df[name]


_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NP_OPS = {
    "=": np.equal,
    "<>": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


def _numeric_values(s: pd.Series) -> np.ndarray | None:
    """The column as numbers when its dtype holds numbers or booleans only (the vectorized path;
    the same canonical values as :func:`canonical` gives cell by cell), else ``None``."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dtype):
        return None
    if not real_dtype(dtype):  # complex numbers too: cell by cell, 1+2j is no number
        return None
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return s.to_numpy()  # exact integers
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


_FLOAT_EXACT = 2**53  # every integer of smaller magnitude is a float64


def _beyond_float(a: np.ndarray) -> np.ndarray | None:
    """Rows whose number may be rounded by a float64 comparison (magnitude ``>= 2^53``);
    ``None`` when there are none (two reductions, no mask: the common case)."""
    if a.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        if -_FLOAT_EXACT < np.fmin.reduce(a) and np.fmax.reduce(a) < _FLOAT_EXACT:
            return None  # also False for a column of NaN alone: the mask then finds no row
        return (a >= _FLOAT_EXACT) | (a <= -_FLOAT_EXACT)


def _exact_vs_literal(a: np.ndarray, exact: bool, lit: int | float) -> bool:
    """Whether numpy's ``a op lit`` is already the exact comparison of every cell's value:
    ``a`` holds the column's own values (``exact``, not a nullable integer column's float64
    reading) and no operand is rounded -- floats against a float or an integer below ``2^53``,
    signed integers against an int64 integer."""
    if not exact:
        return False
    if a.dtype.kind == "f":
        return isinstance(lit, float) or -_FLOAT_EXACT <= lit <= _FLOAT_EXACT
    return a.dtype.kind == "i" and isinstance(lit, int) and -(2**63) <= lit < 2**63


def _exact_rows(
    value: np.ndarray, rows: np.ndarray | None, op: str, left: pd.Series, right: object
) -> None:
    """Recompute ``value`` on ``rows`` from each cell's canonical value, exactly (in place).

    numpy compares an integer with a float (``int64`` against ``float64`` columns, or a nullable
    ``Int64`` column read as float64) after rounding the integer to float64: ``2^53 + 1`` then
    equals ``2^53``.  The cell-by-cell path (text and object columns) compares the Python
    values exactly, so a row's result beyond ``2^53`` followed the columns' dtypes, which one
    person's text cell in either column changes -- a WHERE that kept or dropped *another*
    person's row.  Only those rows are redone; ``right`` is a column or a canonical literal.
    """
    if rows is None:
        return
    idx = np.flatnonzero(rows)
    if idx.size == 0:
        return
    lv = left.iloc[idx].tolist()
    if isinstance(right, pd.Series):
        rv = [canonical(v) for v in right.iloc[idx].tolist()]
    else:
        rv = [right] * idx.size
    value[idx] = [compare(canonical(a), op, b)[0] for a, b in zip(lv, rv)]


class _Cells:
    """Per-column canonical values, computed once per evaluation: numbers vectorized, other
    columns factorized so that :func:`canonical` runs once per distinct value."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self._cache: dict[str, tuple] = {}
        self._exact: dict[str, bool] = {}  # numeric columns read as their own values
        self._beyond: dict[str, np.ndarray | None] = {}

    def exact(self, name: str) -> bool:
        """Whether numeric column ``name``'s array holds its cells' own values."""
        self.get(name)
        return self._exact[name]

    def beyond(self, name: str) -> np.ndarray | None:
        """:func:`_beyond_float` of numeric column ``name``, once per evaluation."""
        if name not in self._beyond:
            self._beyond[name] = _beyond_float(self.get(name)[1])
        return self._beyond[name]

    def get(self, name: str) -> tuple:
        if name not in self._cache:
            s = _column(self.df, name)
            nums = _numeric_values(s)
            if nums is not None:
                null = np.isnan(nums) if nums.dtype.kind == "f" else np.zeros(len(s), bool)
                self._cache[name] = ("num", nums, null)
                # the float64 reading is the cells' own values (not a nullable integer's)
                exact = nums.dtype.kind in "iu" or pd.api.types.is_float_dtype(s.dtype)
                self._exact[name] = exact or pd.api.types.is_bool_dtype(s.dtype)
            else:
                # a nested cell (list, dict, array: nested JSON, Parquet lists) gets code -1,
                # as a missing one: it compares as unknown, decided by that cell alone (a
                # refusal of the whole column failed the query because of one person's cell)
                codes, uniques = factorize_cells(s, use_na_sentinel=True)
                canon = [canonical(u) for u in np.asarray(uniques, dtype=object)]
                self._cache[name] = ("obj", codes, canon)
        return self._cache[name]

    def distinct(self, name: str) -> tuple[np.ndarray, list]:
        """``(codes, values)``: each row's code into the column's distinct canonical values
        (``-1``: missing), so that a comparison runs once per distinct value, not per row."""
        kind, a, b = self.get(name)
        if kind == "obj":
            return a, b
        # the column's own values, not the float64 reading of a nullable Int64 column (which
        # rounds beyond 2^53, while the same cells in an object column compare exactly)
        codes, uniques = factorize_cells(_column(self.df, name))  # NA -> -1
        return codes, [canonical(v) for v in uniques.tolist()]


def _column_vs_literal(cells: _Cells, name: str, op: str, lit: object, n: int) -> _Tri:
    """``column op literal`` row by row, each row from its own cell's canonical value."""
    kind, a, b = cells.get(name)
    if lit is None:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if kind == "num":
        if not isinstance(lit, (int, float)):  # a number against a text: unknown
            return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        known = ~b
        with np.errstate(invalid="ignore"):
            value = np.asarray(_NP_OPS[op](a, lit), dtype=bool)
        if not _exact_vs_literal(a, cells.exact(name), lit):
            _exact_rows(value, cells.beyond(name), op, cells.df[name], lit)
        return value & known, known
    value_u = np.zeros(len(b) + 1, dtype=bool)  # last slot: missing cells (code -1)
    known_u = np.zeros(len(b) + 1, dtype=bool)
    for i, c in enumerate(b):
        value_u[i], known_u[i] = compare(c, op, lit)
    return value_u[a], known_u[a]


def _tri_compare(cells: _Cells, left: Operand, op: str, right: Operand) -> _Tri:
    df = cells.df
    n = len(df)
    if isinstance(left, Literal) and isinstance(right, Column):
        left, op, right = right, _FLIP[op], left
    if isinstance(left, Column) and isinstance(right, Literal):
        return _column_vs_literal(cells, left.name, op, canonical(right.value), n)
    if isinstance(left, Literal):  # two literals
        value, known = compare(canonical(left.value), op, canonical(right.value))
        return np.full(n, value and known), np.full(n, known)
    lk, la, lb = cells.get(left.name)
    rk, ra, rb = cells.get(right.name)
    if lk == "num" and rk == "num":
        known = ~(lb | rb)
        with np.errstate(invalid="ignore"):
            value = np.asarray(_NP_OPS[op](la, ra), dtype=bool)
        # same kind of array, each its cells' own values: numpy compares them exactly
        same = la.dtype.kind == ra.dtype.kind and la.dtype.kind in "if"
        if not (same and cells.exact(left.name) and cells.exact(right.name)):
            bl, br = cells.beyond(left.name), cells.beyond(right.name)
            big = br if bl is None else bl if br is None else bl | br
            _exact_rows(value, big, op, df[left.name], df[right.name])
        return value & known, known
    # a column of text (or other objects) on either side: compare once per distinct pair of
    # canonical values present in the rows (missing is the last slot of each side, None)
    lc, lv = cells.distinct(left.name)
    rc, rv = cells.distinct(right.name)
    radix = len(rv) + 1
    pair = np.where(lc < 0, len(lv), lc) * radix + np.where(rc < 0, len(rv), rc)
    codes, uniques = pd.factorize(pair)
    lv, rv = [*lv, None], [*rv, None]
    pairs = [compare(lv[p // radix], op, rv[p % radix]) for p in uniques.tolist()]
    value = np.fromiter((p[0] for p in pairs), dtype=bool, count=len(pairs))
    known = np.fromiter((p[1] for p in pairs), dtype=bool, count=len(pairs))
    return value[codes], known[codes]


def _or(parts: list[_Tri]) -> _Tri:
    value = np.logical_or.reduce([v for v, _ in parts])
    all_known_false = np.logical_and.reduce([k & ~v for v, k in parts])
    return value, value | all_known_false


def _eval(expr: Expr, cells: _Cells) -> _Tri:
    n = len(cells.df)
    if isinstance(expr, Literal):
        if not isinstance(expr.value, bool):
            raise ConfigError(f"SQL: the constant {expr.value!r} is not a condition")
        return np.full(n, expr.value), np.ones(n, dtype=bool)
    if isinstance(expr, Comparison):
        return _tri_compare(cells, expr.left, expr.op, expr.right)
    if isinstance(expr, Between):
        lo = _tri_compare(cells, expr.operand, ">=", expr.low)
        hi = _tri_compare(cells, expr.operand, "<=", expr.high)
        value, known = _and([lo, hi])
        return (~value & known, known) if expr.negated else (value, known)
    if isinstance(expr, InList):
        if not isinstance(expr.operand, Column):
            raise ConfigError("SQL: IN needs a column on its left")
        _column(cells.df, expr.operand.name)
        # x IN (a, b) is x = a OR x = b (so x IN (.., NULL) is true or unknown, never false)
        value, known = _or([_tri_compare(cells, expr.operand, "=", v) for v in expr.values])
        return (~value & known, known) if expr.negated else (value, known)
    if isinstance(expr, IsNull):
        if isinstance(expr.operand, Column):
            # Decimal('sNaN') is missing (pandas' isna raises on it); a nested cell is not
            null = missing_cells(_column(cells.df, expr.operand.name))
        else:
            null = np.full(n, expr.operand.value is None)
        return (~null if expr.negated else null), np.ones(n, dtype=bool)
    if isinstance(expr, Not):
        value, known = _eval(expr.operand, cells)
        return ~value & known, known
    if isinstance(expr, And):
        return _and([_eval(t, cells) for t in expr.terms])
    if isinstance(expr, Or):
        return _or([_eval(t, cells) for t in expr.terms])
    raise ConfigError(f"SQL: unsupported condition {type(expr).__name__}")  # pragma: no cover


def _and(parts: list[_Tri]) -> _Tri:
    value = np.logical_and.reduce([v for v, _ in parts])
    any_false = np.logical_or.reduce([k & ~v for v, k in parts])
    return value, value | any_false


def evaluate(expr: Expr, df: pd.DataFrame) -> np.ndarray:
    """Boolean row mask of the rows where ``expr`` is known to be true.

    Parameters
    ----------
    expr
        A parsed condition (see :func:`veil.dp.sql.parse_condition`).
    df
        The table; it is not modified.

    Returns
    -------
    numpy.ndarray of bool, shape (len(df),)

    Examples
    --------
    SQL three-valued logic: a comparison with NULL is unknown, and so is its negation.

    >>> from veil.dp.sql import parse_condition
    >>> df = pd.DataFrame({"age": [25, None, 50], "county": ["a", "b", "b"]})
    >>> evaluate(parse_condition("age > 30"), df).tolist()
    [False, False, True]
    >>> evaluate(parse_condition("NOT age > 30"), df).tolist()
    [True, False, False]
    >>> evaluate(parse_condition("age < 30 OR county = 'b'"), df).tolist()
    [True, True, True]
    """
    value, known = _eval(expr, _Cells(df))
    return np.asarray(value & known, dtype=bool)
