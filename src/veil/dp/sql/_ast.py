"""Syntax tree of Veil's SQL subset (immutable dataclasses).

Example
-------
>>> Comparison(Column("age"), ">", Literal(20))
Comparison(left=Column(name='age'), op='>', right=Literal(value=20))
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Column",
    "Literal",
    "Comparison",
    "InList",
    "Between",
    "IsNull",
    "Not",
    "And",
    "Or",
    "Expr",
    "Operand",
    "Aggregate",
    "SelectItem",
    "Query",
    "AGGREGATES",
]

#: SQL aggregate names and the :mod:`veil.dp.frame` aggregation they map to.
AGGREGATES: dict[str, str] = {
    "COUNT": "count",
    "SUM": "sum",
    "AVG": "mean",
    "MEAN": "mean",
    "VAR": "var",
    "VARIANCE": "var",
    "VAR_POP": "var",
    "STDDEV": "std",
    "STD": "std",
    "STDDEV_POP": "std",
    "MEDIAN": "median",
    "QUANTILE": "quantile",
    "PERCENTILE_CONT": "quantile",
}


@dataclass(frozen=True)
class Column:
    """A column reference.

    Examples
    --------
    >>> from veil.dp.sql import parse_condition
    >>> parse_condition("age >= 18").left
    Column(name='age')
    """

    name: str


@dataclass(frozen=True)
class Literal:
    """A constant: number, string, boolean or ``None`` for NULL.

    Examples
    --------
    >>> from veil.dp.sql import parse_condition
    >>> parse_condition("county = 'a'").right, parse_condition("age = NULL").right
    (Literal(value='a'), Literal(value=None))
    """

    value: float | int | str | bool | None


Operand = Column | Literal


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= <> < <= > >=`` (``!=``/``==`` normalised)."""

    left: Operand
    op: str
    right: Operand


@dataclass(frozen=True)
class InList:
    """``operand [NOT] IN (v1, v2, ...)``."""

    operand: Operand
    values: tuple[Literal, ...]
    negated: bool = False


@dataclass(frozen=True)
class Between:
    """``operand [NOT] BETWEEN low AND high`` (inclusive)."""

    operand: Operand
    low: Operand
    high: Operand
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    """``operand IS [NOT] NULL``."""

    operand: Operand
    negated: bool = False


@dataclass(frozen=True)
class Not:
    """Logical negation."""

    operand: Expr


@dataclass(frozen=True)
class And:
    """Logical conjunction of two or more terms."""

    terms: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    """Logical disjunction of two or more terms."""

    terms: tuple[Expr, ...]


Expr = Comparison | InList | Between | IsNull | Not | And | Or | Literal


@dataclass(frozen=True)
class Aggregate:
    """An aggregate call: ``func`` is a :mod:`veil.dp.frame` name, ``column`` None for COUNT(*).

    Examples
    --------
    >>> from veil.dp.sql import parse
    >>> q = parse("SELECT COUNT(*), AVG(age), QUANTILE(age, 0.9) FROM data")
    >>> [item.expr for item in q.select]  # doctest: +NORMALIZE_WHITESPACE
    [Aggregate(func='count', column=None, q=None, sql_name='COUNT'),
     Aggregate(func='mean', column='age', q=None, sql_name='AVG'),
     Aggregate(func='quantile', column='age', q=0.9, sql_name='QUANTILE')]
    """

    func: str
    column: str | None
    q: float | None = None
    sql_name: str = ""


@dataclass(frozen=True)
class SelectItem:
    """One item of the SELECT list: a group column or an aggregate, with an optional alias.

    Examples
    --------
    >>> from veil.dp.sql import parse
    >>> q = parse("SELECT county, AVG(age) AS mean_age FROM data GROUP BY county")
    >>> q.select[0]
    SelectItem(expr=Column(name='county'), alias=None)
    >>> q.select[1].alias
    'mean_age'
    """

    expr: Column | Aggregate
    alias: str | None = None


@dataclass(frozen=True)
class Query:
    """A parsed ``SELECT ... FROM table [WHERE ...] [GROUP BY ...]`` statement.

    Examples
    --------
    >>> from veil.dp.sql import parse
    >>> q = parse("SELECT county, COUNT(*) FROM data WHERE age > 20 GROUP BY county")
    >>> q.table, q.group_by, len(q.select)
    ('data', ('county',), 2)
    >>> q.where
    Comparison(left=Column(name='age'), op='>', right=Literal(value=20))
    """

    select: tuple[SelectItem, ...]
    table: str
    where: Expr | None = None
    group_by: tuple[str, ...] = field(default_factory=tuple)
