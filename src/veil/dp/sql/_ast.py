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
    """A column reference."""

    name: str


@dataclass(frozen=True)
class Literal:
    """A constant: number, string, boolean or ``None`` for NULL."""

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
    """An aggregate call: ``func`` is a :mod:`veil.dp.frame` name, ``column`` None for COUNT(*)."""

    func: str
    column: str | None
    q: float | None = None
    sql_name: str = ""


@dataclass(frozen=True)
class SelectItem:
    """One item of the SELECT list: a group column or an aggregate, with an optional alias."""

    expr: Column | Aggregate
    alias: str | None = None


@dataclass(frozen=True)
class Query:
    """A parsed ``SELECT ... FROM table [WHERE ...] [GROUP BY ...]`` statement."""

    select: tuple[SelectItem, ...]
    table: str
    where: Expr | None = None
    group_by: tuple[str, ...] = field(default_factory=tuple)
