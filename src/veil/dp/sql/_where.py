"""Vectorized evaluation of WHERE conditions with SQL's three-valued logic.

Each sub-expression evaluates to two boolean arrays, ``(value, known)``: a comparison involving a
NULL (NaN/None/NA) is *unknown*, ``NOT unknown`` is unknown, ``FALSE AND unknown`` is false,
``TRUE OR unknown`` is true, and a row is kept only when the whole condition is known to be true
(SQL-92 semantics; pandas' ``~(x > 5)`` would wrongly keep NULL rows).

Example
-------
>>> import pandas as pd
>>> from veil.dp.sql import parse_condition
>>> df = pd.DataFrame({"age": [10, None, 30]})
>>> evaluate(parse_condition("NOT age > 20"), df).tolist()
[True, False, False]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    """Names of the columns an expression reads."""
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


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    if name not in df.columns:
        raise ConfigError(f"SQL: unknown column {name!r} in WHERE")
    return df[name]


def _coerce(series: pd.Series, value: object, name: str) -> object:
    """Adapt a literal to the column's type, or raise a readable ConfigError."""
    if value is None:
        return None
    if _is_numeric(series):
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise ConfigError(
                    f"SQL: column {name!r} is numeric; cannot compare it with the text {value!r}"
                ) from None
        return value
    if pd.api.types.is_bool_dtype(series.dtype):
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ConfigError(
            f"SQL: column {name!r} holds text; quote the value to compare it: '{value}'"
        )
    return value


def _operand(df: pd.DataFrame, op: Operand, other: Operand | None) -> tuple[object, np.ndarray]:
    """Return (values, null mask) of an operand; literals adapt to the other side's column."""
    n = len(df)
    if isinstance(op, Column):
        s = _column(df, op.name)
        return s, s.isna().to_numpy()
    value = op.value
    if isinstance(other, Column):
        value = _coerce(_column(df, other.name), value, other.name)
    null = np.full(n, value is None)
    return value, null


def _compare(left: object, op: str, right: object) -> np.ndarray:
    if left is None or right is None:
        return np.zeros(0, dtype=bool)
    if op == "=":
        res = left == right
    elif op == "<>":
        res = left != right
    elif op == "<":
        res = left < right
    elif op == "<=":
        res = left <= right
    elif op == ">":
        res = left > right
    else:
        res = left >= right
    if isinstance(res, pd.Series):
        return res.fillna(False).to_numpy(dtype=bool)
    return np.asarray(res, dtype=bool)


def _tri_compare(df: pd.DataFrame, left: Operand, op: str, right: Operand, what: str) -> _Tri:
    lv, ln = _operand(df, left, right)
    rv, rn = _operand(df, right, left)
    known = ~(ln | rn)
    n = len(df)
    if not known.any():
        return np.zeros(n, dtype=bool), known
    try:
        value = _compare(lv, op, rv)
    except TypeError:
        raise ConfigError(f"SQL: incompatible types in {what}") from None
    if value.shape != (n,):
        value = np.broadcast_to(value, (n,)).copy() if value.size else np.zeros(n, dtype=bool)
    return value & known, known


def _describe(op: Operand) -> str:
    return op.name if isinstance(op, Column) else repr(op.value)


def _eval(expr: Expr, df: pd.DataFrame) -> _Tri:
    n = len(df)
    if isinstance(expr, Literal):
        if not isinstance(expr.value, bool):
            raise ConfigError(f"SQL: the constant {expr.value!r} is not a condition")
        return np.full(n, expr.value), np.ones(n, dtype=bool)
    if isinstance(expr, Comparison):
        what = f"{_describe(expr.left)} {expr.op} {_describe(expr.right)}"
        return _tri_compare(df, expr.left, expr.op, expr.right, what)
    if isinstance(expr, Between):
        what = f"{_describe(expr.operand)} BETWEEN"
        lo_v, lo_k = _tri_compare(df, expr.operand, ">=", expr.low, what)
        hi_v, hi_k = _tri_compare(df, expr.operand, "<=", expr.high, what)
        value, known = _and([(lo_v, lo_k), (hi_v, hi_k)])
        return (~value & known, known) if expr.negated else (value, known)
    if isinstance(expr, InList):
        if not isinstance(expr.operand, Column):
            raise ConfigError("SQL: IN needs a column on its left")
        s = _column(df, expr.operand.name)
        known = ~s.isna().to_numpy()
        values = [_coerce(s, v.value, expr.operand.name) for v in expr.values]
        has_null = any(v is None for v in values)
        try:
            value = s.isin([v for v in values if v is not None]).to_numpy(dtype=bool) & known
        except TypeError:
            raise ConfigError(f"SQL: incompatible types in {expr.operand.name} IN (...)") from None
        if has_null:  # x IN (.., NULL) is true or unknown, never false
            known = known & value
        if expr.negated:
            return ~value & known, known
        return value, known
    if isinstance(expr, IsNull):
        if isinstance(expr.operand, Column):
            null = _column(df, expr.operand.name).isna().to_numpy()
        else:
            null = np.full(n, expr.operand.value is None)
        return (~null if expr.negated else null), np.ones(n, dtype=bool)
    if isinstance(expr, Not):
        value, known = _eval(expr.operand, df)
        return ~value & known, known
    if isinstance(expr, And):
        return _and([_eval(t, df) for t in expr.terms])
    if isinstance(expr, Or):
        parts = [_eval(t, df) for t in expr.terms]
        value = np.logical_or.reduce([v for v, _ in parts])
        all_known_false = np.logical_and.reduce([k & ~v for v, k in parts])
        return value, value | all_known_false
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
    """
    value, known = _eval(expr, df)
    return np.asarray(value & known, dtype=bool)
