"""Parser of the SQL subset: accepted grammar and one clear error per unsupported construct."""

from __future__ import annotations

import pytest

from veil.dp.sql import parse, parse_condition
from veil.dp.sql._ast import Aggregate, And, Between, Column, Comparison, InList, IsNull, Not, Or
from veil.errors import ConfigError


def test_full_query_tree() -> None:
    q = parse(
        "select county, COUNT(*), count(age) AS n_age, Avg(age) a, VAR(age), STDDEV(age), "
        'MEDIAN(age), QUANTILE(age, 0.9), SUM("weird col") FROM data '
        "WHERE age > 20 AND sex = 'F' GROUP BY county;"
    )
    assert q.table == "data"
    assert q.group_by == ("county",)
    assert q.select[0].expr == Column("county")
    aggs = [item.expr for item in q.select[1:]]
    assert all(isinstance(a, Aggregate) for a in aggs)
    assert [(a.func, a.column) for a in aggs] == [
        ("count", None),
        ("count", "age"),
        ("mean", "age"),
        ("var", "age"),
        ("std", "age"),
        ("median", "age"),
        ("quantile", "age"),
        ("sum", "weird col"),
    ]
    assert aggs[6].q == 0.9
    assert q.select[2].alias == "n_age" and q.select[3].alias == "a"
    assert q.where == And(
        (Comparison(Column("age"), ">", _lit(20)), Comparison(Column("sex"), "=", _lit("F")))
    )


def _lit(v):
    from veil.dp.sql import Literal

    return Literal(v)


def test_precedence_not_and_or_and_parentheses() -> None:
    e = parse_condition("NOT a = 1 OR b = 2 AND (c = 3 OR d = 4)")
    assert isinstance(e, Or)
    assert isinstance(e.terms[0], Not)
    assert isinstance(e.terms[1], And)
    assert isinstance(e.terms[1].terms[1], Or)


def test_predicates() -> None:
    assert parse_condition("x NOT IN (1, 2, -3.5)") == InList(
        Column("x"), (_lit(1), _lit(2), _lit(-3.5)), negated=True
    )
    assert parse_condition("x BETWEEN 1 AND 5") == Between(Column("x"), _lit(1), _lit(5))
    assert parse_condition("x IS NOT NULL") == IsNull(Column("x"), negated=True)
    assert parse_condition("x != 'it''s'") == Comparison(Column("x"), "<>", _lit("it's"))
    assert parse_condition("-- comment\n x >= 1e3 /* block */") == Comparison(
        Column("x"), ">=", _lit(1000.0)
    )


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT a, COUNT(*) FROM data JOIN other ON x = y GROUP BY a", "JOIN"),
        ("SELECT COUNT(*) FROM data LEFT JOIN b ON 1 = 1", "JOIN"),
        ("SELECT COUNT(*) FROM data, other", "JOIN"),
        ("SELECT COUNT(*) FROM (SELECT * FROM data)", "subquery"),
        ("SELECT COUNT(*) FROM data WHERE a IN (SELECT b FROM t)", "subquery"),
        ("SELECT COUNT(*) FROM data WHERE (SELECT 1) = 1", "subquery"),
        ("SELECT a, COUNT(*) FROM data GROUP BY a HAVING COUNT(*) > 5", "HAVING"),
        ("SELECT a, COUNT(*) FROM data GROUP BY a ORDER BY a", "ORDER BY"),
        ("SELECT COUNT(*) FROM data LIMIT 10", "LIMIT"),
        ("SELECT DISTINCT a FROM data", "DISTINCT"),
        ("SELECT COUNT(DISTINCT a) FROM data", "DISTINCT"),
        ("SELECT COUNT(*) FROM data UNION SELECT COUNT(*) FROM data", "UNION"),
        ("WITH t AS (SELECT 1) SELECT COUNT(*) FROM t", "WITH"),
        ("SELECT * FROM data", "SELECT *"),
        ("SELECT SUM(a + b) FROM data", "arithmetic"),
        ("SELECT SUM((a)) FROM data", "expressions inside aggregates"),
        ("SELECT a + 1 FROM data", "arithmetic"),
        ("SELECT COUNT(*) FROM data WHERE a * 2 > 3", "arithmetic"),
        ("SELECT COUNT(*) FROM data WHERE name LIKE 'A%'", "LIKE"),
        ("SELECT CASE WHEN a THEN 1 END FROM data", "CASE"),
        ("SELECT LOWER(a), COUNT(*) FROM data", "function LOWER"),
        ("SELECT COUNT(*) OVER () FROM data", "window functions"),
        ("SELECT COUNT(*) FROM data WHERE SUM(a) > 1", "aggregates in WHERE"),
        ("DELETE FROM data", "DELETE"),
        ("SELECT COUNT(*) FROM data d", "table aliases"),
        ("SELECT data.a, COUNT(*) FROM data", "qualified names"),
        ("SELECT COUNT(*) FROM data; SELECT COUNT(*) FROM data", "several statements"),
    ],
)
def test_unsupported_constructs_are_named(sql: str, construct: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(sql)
    msg = str(err.value)
    assert "not supported" in msg
    assert construct.lower() in msg.lower(), msg


@pytest.mark.parametrize(
    ("sql", "name"),
    [
        ("SELECT COUNT(*) FROM data WHERE native-country = 'Peru'", "native-country"),
        ("SELECT native-country, COUNT(*) FROM data GROUP BY 1", "native-country"),
        ("SELECT SUM(capital-gain) FROM data", "capital-gain"),
    ],
)
def test_hyphenated_column_name_gets_a_quoting_hint(sql: str, name: str) -> None:
    with pytest.raises(ConfigError, match=f'must be quoted: "{name}"'):
        parse(sql)
    quoted = sql.replace(name, f'"{name}"')
    if "GROUP BY 1" not in sql:
        parse(quoted)  # the hint's fix parses


@pytest.mark.parametrize(
    "sql",
    ["SELECT COUNT(*) FROM data WHERE a - b > 1", "SELECT COUNT(*) FROM data WHERE a-1 > 2"],
)
def test_spaced_or_numeric_minus_gets_no_quoting_hint(sql: str) -> None:
    with pytest.raises(ConfigError, match="arithmetic") as err:
        parse(sql)
    assert "quoted" not in str(err.value)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT COUNT(*) FROM data WHERE name = 'open", "unterminated string"),
        ("SELECT COUNT(*) FROM data WHERE a = 1 @", "unexpected character"),
        ("SELECT COUNT(*)", "expected FROM"),
        ("SELECT COUNT(*) FROM data WHERE", "expected a column or a constant"),
        ("SELECT SUM(*) FROM data", "SUM(*)"),
        ("SELECT QUANTILE(a) FROM data", "expected ','"),
        ("SELECT QUANTILE(a, 1.5) FROM data", "[0, 1]"),
        ("SELECT AVG(a, 2) FROM data", "one argument"),
        ("SELECT COUNT(*) FROM data WHERE a", "expected a comparison"),
        ("SELECT COUNT(*) FROM data WHERE 1 < a < 3", "chained comparisons"),
        ("SELECT COUNT(*) FROM data GROUP a", "expected BY"),
        ("SELECT COUNT(*) FROM data WHERE a IN (b)", "constants only"),
    ],
)
def test_syntax_errors_are_readable(sql: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(sql)
    assert fragment in str(err.value), str(err.value)


def test_quoted_identifiers_may_be_keywords() -> None:
    q = parse('SELECT "group", COUNT(*) AS "count" FROM data GROUP BY "group"')
    assert q.group_by == ("group",)
    assert q.select[1].alias == "count"


def test_non_string_query() -> None:
    with pytest.raises(ConfigError):
        parse(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "condition",
    ["(" * 5000 + "age > 1" + ")" * 5000, "NOT " * 5000 + "age > 1", "(NOT " * 3000 + "age > 1"],
)
def test_deep_nesting_is_a_config_error_not_a_recursion_error(condition: str) -> None:
    with pytest.raises(ConfigError, match="nested more than"):
        parse(f"SELECT COUNT(*) FROM data WHERE {condition}")
    with pytest.raises(ConfigError, match="nested more than"):
        parse_condition(condition)


def test_moderate_nesting_still_parses() -> None:
    expr = parse_condition("(" * 50 + "NOT " * 40 + "age > 1" + ")" * 50)
    for _ in range(40):
        assert isinstance(expr, Not)
        expr = expr.operand
    assert isinstance(expr, Comparison)
