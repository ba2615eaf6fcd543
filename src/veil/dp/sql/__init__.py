"""A small SQL subset for differentially private group-by queries.

``SELECT`` group columns and ``COUNT(*)``, ``COUNT(col)``, ``SUM``, ``AVG``, ``VAR``, ``STDDEV``,
``MEDIAN``, ``QUANTILE(col, q)`` ``FROM data`` with ``WHERE`` (comparisons, AND/OR/NOT, IN,
BETWEEN, IS NULL) and ``GROUP BY``.  The tokenizer and recursive-descent parser are hand
written; anything outside the subset raises :class:`veil.errors.ConfigError` naming the construct.

Example
-------
>>> import pandas as pd
>>> from veil.dp.sql import parse
>>> parse("SELECT county, COUNT(*) FROM data GROUP BY county").group_by
('county',)
"""

from veil.dp.sql._ast import Aggregate, Column, Literal, Query, SelectItem
from veil.dp.sql._parser import parse, parse_condition
from veil.dp.sql._planner import SQLPlan, default_name, plan_sql
from veil.dp.sql._where import columns_of, evaluate

__all__ = [
    "parse",
    "parse_condition",
    "plan_sql",
    "SQLPlan",
    "default_name",
    "evaluate",
    "columns_of",
    "Query",
    "SelectItem",
    "Aggregate",
    "Column",
    "Literal",
]
