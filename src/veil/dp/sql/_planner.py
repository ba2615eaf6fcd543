"""Turn a parsed SQL query into a :class:`veil.dp.frame.QueryPlan`.

The WHERE clause becomes a row filter (three-valued logic), GROUP BY the group columns, each
aggregate an :class:`veil.dp.frame.Agg` whose bounds come from the caller (never the data), and
the SELECT list fixes the output names and order.

Example
-------
>>> import pandas as pd, warnings
>>> from veil.dp.frame import PrivateFrame
>>> df = pd.DataFrame({"county": ["a", "b", "a"], "age": [30, 40, 50]})
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     pf = PrivateFrame(df, accountant=False, random_state=0)
>>> p = plan_sql(pf, "SELECT county, COUNT(*) AS n FROM data GROUP BY county",
...              epsilon=1e6, keys={"county": ["a", "b"]})
>>> p.execute()["n"].tolist()
[2, 1]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from veil.dp.sql._ast import Aggregate, And, Column, Comparison, Not, Or, Query
from veil.dp.sql._parser import parse
from veil.dp.sql._where import columns_of, evaluate
from veil.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from veil.dp.frame import PrivateFrame, QueryPlan

__all__ = ["SQLPlan", "plan_sql", "default_name"]


def default_name(agg: Aggregate) -> str:
    """Output name of an aggregate without alias: ``count``, ``avg_age``, ``quantile_age_0.9``.

    Examples
    --------
    >>> q = parse("SELECT COUNT(*), AVG(age), QUANTILE(age, 0.9) FROM data")
    >>> [default_name(item.expr) for item in q.select]
    ['count', 'avg_age', 'quantile_age_0.9']
    """
    base = agg.sql_name.lower() or agg.func
    if agg.column is None:
        return base
    name = f"{base}_{agg.column}"
    return f"{name}_{agg.q:g}" if agg.func == "quantile" else name


@dataclass
class SQLPlan:
    """A planned SQL query: the underlying :class:`QueryPlan` plus output names and order.

    Examples
    --------
    >>> from veil.dp import BudgetAccountant
    >>> from veil.dp.frame import PrivateFrame
    >>> df = pd.DataFrame({"county": ["a", "b", "a", "b"], "age": [30, 41, 52, 63]})
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pf = PrivateFrame(df, accountant=acc, bounds={"age": (18, 100)})
    >>> sql = "SELECT county, COUNT(*) AS n, AVG(age) FROM data WHERE age > 20 GROUP BY county"
    >>> plan = plan_sql(pf, sql, epsilon=0.5, keys={"county": ["a", "b"]})
    >>> plan.epsilon, acc.total()  # planned, nothing spent yet
    (0.5, (epsilon=0.0, delta=0.0))
    >>> out = plan.execute(with_ci=True)  # noisy: values not shown
    >>> out.columns.tolist(), acc.total()
    (['county', 'n', 'n_ci', 'avg_age', 'avg_age_ci'], (epsilon=0.5, delta=0.0))
    """

    plan: QueryPlan
    columns: list[str]
    rename: dict[str, str]

    @property
    def epsilon(self) -> float:
        return self.plan.epsilon

    @property
    def delta(self) -> float:
        return self.plan.delta

    def accuracy(self, alpha: float = 0.05, group_size: float | None = None) -> pd.DataFrame:
        """CI half-widths per output, before release (see :meth:`QueryPlan.accuracy`).

        Rows are indexed by the SQL output names (``n``, ``avg_age``), as :meth:`execute`
        names the released columns.
        """
        acc = self.plan.accuracy(alpha, group_size)
        acc.index = pd.Index([self.rename.get(c, c) for c in acc.index], name=acc.index.name)
        return acc

    def execute(self, *, with_ci: bool = False, alpha: float = 0.05) -> pd.DataFrame:
        """Charge the accountant once and return the noisy table in SELECT order."""
        out = self.plan.execute(with_ci=with_ci, alpha=alpha)
        cols: list[str] = []
        rename = dict(self.rename)
        for c in self.columns:
            cols.append(c)
            if with_ci and f"{c}_ci" in out.columns:
                cols.append(f"{c}_ci")
                rename[f"{c}_ci"] = f"{self.rename.get(c, c)}_ci"
        return out.loc[:, cols].rename(columns=rename)


def _public_keys(by: list[str], keys: Any) -> Any:
    if keys is None:
        return None
    if not isinstance(keys, Mapping):
        return keys  # list / DataFrame: passed through to PrivateFrame.groupby
    unknown = [k for k in keys if k not in by]
    if unknown:
        raise ConfigError(f"keys given for {unknown}, which are not GROUP BY columns")
    missing = [c for c in by if c not in keys]
    if missing:
        raise ConfigError(
            f"keys given for some GROUP BY columns but not for {missing}: list every column's "
            "keys or none (private partition selection)"
        )
    # keys stay as given: they match cells by per-value canonical form (veil.dp._canon), never
    # by the column's inferred dtype, and are released as given
    lists = [list(keys[c]) for c in by]
    if len(by) == 1:
        return lists[0]
    return pd.DataFrame(list(itertools.product(*lists)), columns=by)


def _text_hint(expr: Any, name: str) -> str:
    """A hint when the unknown column ``name`` is compared with another column: in
    ``sex = Male`` (or ``sex = "Male"``, a quoted identifier) the text needs single quotes."""
    if isinstance(expr, Comparison):
        sides = (expr.left, expr.right)
        if all(isinstance(x, Column) for x in sides) and name in (x.name for x in sides):
            return f" (a text value needs single quotes: '{name}')"
        return ""
    if isinstance(expr, Not):
        return _text_hint(expr.operand, name)
    if isinstance(expr, And | Or):
        return next((h for t in expr.terms if (h := _text_hint(t, name))), "")
    return ""


def plan_sql(
    frame: PrivateFrame,
    sql: str,
    *,
    epsilon: float,
    delta: float = 0.0,
    keys: Mapping[str, Sequence[Any]] | Any = None,
    mechanism: str | None = None,
    selection_fraction: float = 0.25,
    candidates: Mapping[str, Sequence[float]] | None = None,
) -> SQLPlan:
    """Plan a SQL query against a :class:`~veil.dp.frame.PrivateFrame`.

    Parameters
    ----------
    frame
        The private table (its privacy unit, default bounds and contribution bounds apply).
    sql
        ``SELECT ... FROM data [WHERE ...] [GROUP BY ...]``; the table is always called
        ``data`` and refers to ``frame`` (another name is refused).
    epsilon, delta
        Total budget of the query.
    keys
        Public keys: ``{column: [values, ...]}`` for every GROUP BY column (the cross product
        is used for several columns), or a list / DataFrame as in
        :meth:`PrivateFrame.groupby`.  ``None``: private partition selection.
    mechanism, selection_fraction
        See :meth:`veil.dp.frame.GroupedFrame.plan`.
    candidates
        ``{column: [c1, c2, ...]}``: public candidates for every ``MEDIAN`` / ``QUANTILE`` /
        ``PERCENTILE`` over that column (permute-and-flip over the list, as ``candidates=`` of
        :class:`veil.dp.frame.Agg`).  A column with no such aggregate is refused.

    Returns
    -------
    SQLPlan

    Raises
    ------
    veil.errors.ConfigError
        SQL outside the subset, unknown columns, a selected column that is not grouped,
        duplicate output names, or candidates for a column no quantile aggregates.

    Examples
    --------
    >>> from veil.dp.frame import PrivateFrame
    >>> df = pd.DataFrame({"county": ["a", "b", "a"], "sex": list("FMF"), "age": [30, 41, 52]})
    >>> pf = PrivateFrame(df, accountant=False, bounds={"age": (18, 100)})
    >>> plan = plan_sql(
    ...     pf,
    ...     "SELECT county, SUM(age) AS total FROM data WHERE sex = 'F' GROUP BY county",
    ...     epsilon=1.0,
    ...     keys={"county": ["a", "b", "c"]},
    ... )
    >>> out = plan.execute()  # listed keys without data ("c") get noise too
    >>> out["county"].tolist(), out.columns.tolist()
    (['a', 'b', 'c'], ['county', 'total'])
    >>> plan_sql(pf, "SELECT sex, COUNT(*) FROM data GROUP BY county", epsilon=1.0)
    Traceback (most recent call last):
    ...
    veil.errors.ConfigError: SQL: column 'sex' must appear in GROUP BY or inside an aggregate
    """
    query = parse(sql)
    df = frame._df
    known = {c for c in df.columns if isinstance(c, str)}  # SQL names columns by text
    labelled = {str(c): c for c in df.columns if not isinstance(c, str)}
    for col in set(query.group_by) | columns_of(query.where) | _named(query):
        if col not in known and col in labelled:
            raise ConfigError(
                f"SQL: column {col!r} of the table is labelled by the "
                f"{type(labelled[col]).__name__} {labelled[col]!r}, not by text; SQL names "
                "columns by text (rename them: df.rename(columns=str))"
            )
    for col in query.group_by:
        if col not in known:
            raise ConfigError(f"SQL: unknown column {col!r} in GROUP BY")
    for col in columns_of(query.where):
        if col not in known:
            hint = _text_hint(query.where, col)
            raise ConfigError(f"SQL: unknown column {col!r} in WHERE{hint}")
    by = list(query.group_by)
    if len(set(by)) != len(by):
        raise ConfigError(f"SQL: GROUP BY repeats a column: {by}")
    cands = dict(candidates or {})
    used: set[str] = set()
    aggs: dict[str, Any] = {}
    columns: list[str] = []
    rename: dict[str, str] = {}
    names: set[str] = set()
    for item in query.select:
        expr = item.expr
        if isinstance(expr, Column):
            if expr.name not in known:
                raise ConfigError(f"SQL: unknown column {expr.name!r} in SELECT")
            if expr.name not in by:
                raise ConfigError(
                    f"SQL: column {expr.name!r} must appear in GROUP BY or inside an aggregate"
                )
            if expr.name in columns:
                raise ConfigError(f"SQL: column {expr.name!r} is selected twice")
            columns.append(expr.name)
            out = item.alias or expr.name
            if item.alias:
                rename[expr.name] = item.alias
        else:
            if expr.column is not None and expr.column not in known:
                raise ConfigError(f"SQL: unknown column {expr.column!r} in {expr.sql_name}()")
            out = item.alias or default_name(expr)
            internal = f"__agg{len(aggs)}"
            listed = None
            if expr.func in _QUANTILES and expr.column in cands:
                listed = cands[expr.column]
                used.add(expr.column)
            aggs[internal] = (expr.column, expr.func, None, expr.q, listed)
            columns.append(internal)
            rename[internal] = out
        if out in names:
            raise ConfigError(f"SQL: output name {out!r} is used twice; add an alias (AS name)")
        names.add(out)
    if not aggs:
        raise ConfigError("SQL: the query has no aggregate; select COUNT(*), SUM(col), ...")
    unused = [c for c in cands if c not in used]
    if unused:
        raise ConfigError(
            f"candidates given for {unused}, but no MEDIAN or QUANTILE of the query aggregates "
            "that column"
        )
    from veil.dp.frame._frame import _check_ci_names

    outputs = [rename[c] for c in aggs]
    _check_ci_names(outputs, [n for n in names if n not in outputs])
    for col in reversed(by):  # group columns not selected still label the rows, first
        if col not in columns:
            columns.insert(0, col)
    pf = frame.where(evaluate(query.where, df)) if query.where is not None else frame
    public = _public_keys(by, keys)
    if by:
        grouped = pf.groupby(by, keys=public)
        plan = grouped.plan(
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            selection_fraction=selection_fraction,
            **{k: _agg(v) for k, v in aggs.items()},
        )
    else:
        if keys is not None:
            raise ConfigError("keys need a GROUP BY")
        plan = pf.plan(
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            **{k: _agg(v) for k, v in aggs.items()},
        )
    return SQLPlan(plan, columns, rename)


def _named(query: Query) -> set[str]:
    """Columns named in the SELECT list (group columns and aggregated columns)."""
    out: set[str] = set()
    for item in query.select:
        name = item.expr.name if isinstance(item.expr, Column) else item.expr.column
        if name is not None:
            out.add(name)
    return out


_QUANTILES = ("median", "quantile")


def _agg(spec: tuple) -> Any:
    from veil.dp.frame import Agg

    column, func, bounds, q, listed = spec
    return Agg(func, column, bounds, q if func == "quantile" else None, candidates=listed)
