"""WHERE evaluation: SQL three-valued logic, types, and agreement with a row-by-row oracle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp.sql import evaluate, parse_condition
from veil.errors import ConfigError


@pytest.fixture()
def df() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [10.0, None, 30.0, 50.0],
            "sex": ["F", "M", None, "F"],
            "flag": [True, False, True, False],
        },
        index=[7, 3, 9, 1],  # not 0..n-1 on purpose
    )


def mask(cond: str, df: pd.DataFrame) -> list[bool]:
    return evaluate(parse_condition(cond), df).tolist()


def test_null_comparisons_are_unknown_and_dropped(df: pd.DataFrame) -> None:
    assert mask("age > 20", df) == [False, False, True, True]
    assert mask("NOT age > 20", df) == [True, False, False, False]  # NULL stays out
    assert mask("sex <> 'F'", df) == [False, True, False, False]
    assert mask("NOT (sex = 'F')", df) == [False, True, False, False]


def test_kleene_and_or(df: pd.DataFrame) -> None:
    # unknown OR true = true; unknown AND false = false; NOT(unknown AND false) = true, NOT(true AND unknown) = unknown
    assert mask("age > 20 OR sex = 'M'", df) == [False, True, True, True]
    assert mask("NOT (age > 20 AND sex = 'X')", df) == [True, True, False, True]
    assert mask("NOT (age > 20 OR sex = 'X')", df) == [True, False, False, False]


def test_in_between_is_null(df: pd.DataFrame) -> None:
    assert mask("sex IN ('F', 'Q')", df) == [True, False, False, True]
    assert mask("sex NOT IN ('F')", df) == [False, True, False, False]
    # x NOT IN (.., NULL) is never true
    assert mask("sex NOT IN ('F', NULL)", df) == [False, False, False, False]
    assert mask("age BETWEEN 10 AND 30", df) == [True, False, True, False]
    assert mask("age NOT BETWEEN 10 AND 30", df) == [False, False, False, True]
    assert mask("age IS NULL", df) == [False, True, False, False]
    assert mask("sex IS NOT NULL AND flag = TRUE", df) == [True, False, False, False]
    assert mask("age = NULL", df) == [False, False, False, False]


def test_number_against_text_is_unknown_not_an_error(df: pd.DataFrame) -> None:
    # an error would depend on the column's inferred dtype (other rows); unknown is per cell
    assert mask("age > 'abc'", df) == [False, False, False, False]
    assert mask("NOT age > 'abc'", df) == [False, False, False, False]
    assert mask("sex = 3", df) == [False, False, False, False]
    assert mask("sex <> 3", df) == [False, False, False, False]
    with pytest.raises(ConfigError, match="unknown column"):
        mask("nope = 1", df)
    assert mask("age > '20'", df) == [False, False, True, True]  # numeric text is a number
    assert mask("flag = 'TRUE'", df) == mask("flag = TRUE", df) == mask("flag = 1", df)
    assert mask("flag = 'true'", df) == [True, False, True, False]


def test_input_not_mutated(df: pd.DataFrame) -> None:
    before = df.copy()
    mask("age > 20 AND sex IN ('F')", df)
    pd.testing.assert_frame_equal(df, before)


_val = st.one_of(st.none(), st.integers(-3, 3))


@settings(max_examples=60, deadline=None)
@given(
    xs=st.lists(_val, min_size=1, max_size=12),
    ys=st.lists(_val, min_size=12, max_size=12),
    a=st.integers(-3, 3),
    b=st.integers(-3, 3),
)
def test_matches_rowwise_three_valued_oracle(xs, ys, a, b) -> None:
    ys = ys[: len(xs)]
    df = pd.DataFrame({"x": pd.array(xs, dtype="Float64"), "y": pd.array(ys, dtype="Float64")})
    cond = f"NOT (x > {a} AND y <= {b}) OR x = y"

    def tri_cmp(u, v, op):
        if u is None or v is None:
            return None
        return {"<=": u <= v, ">": u > v, "=": u == v}[op]

    def t_and(p, q):
        if p is False or q is False:
            return False
        return None if p is None or q is None else True

    def t_or(p, q):
        if p is True or q is True:
            return True
        return None if p is None or q is None else False

    def t_not(p):
        return None if p is None else not p

    expected = [
        t_or(t_not(t_and(tri_cmp(x, a, ">"), tri_cmp(y, b, "<="))), tri_cmp(x, y, "=")) is True
        for x, y in zip(xs, ys)
    ]
    assert mask(cond, df) == expected
    assert isinstance(evaluate(parse_condition(cond), df), np.ndarray)


@pytest.mark.parametrize("op", ["=", "<>", "<", "<=", ">", ">="])
def test_column_vs_column_of_mixed_cells_matches_each_rows_own_comparison(op: str) -> None:
    # text / mixed cells on one side, numbers (with NaN) on the other: every row's result is
    # compare() of its own two canonical values (the per-pair evaluation must not mix rows up)
    from veil.dp._canon import canonical, compare

    rng = np.random.default_rng(7)
    pool = np.array([1, 2.0, "2", " 2.0 ", "a", True, "false", None, "3.5"], dtype=object)
    x = pool[rng.integers(0, len(pool), 200)]
    y = rng.choice([0.0, 1.0, 2.0, 3.5, np.nan], 200)
    frame = pd.DataFrame({"x": x, "y": y})
    got = evaluate(parse_condition(f"x {op} y"), frame)
    want = [all(compare(canonical(a), op, canonical(b))) for a, b in zip(x, y)]
    assert got.tolist() == want
    assert 0 < got.sum() < len(got)
    back = evaluate(parse_condition(f"y {op} x"), frame)
    want_back = [all(compare(canonical(b), op, canonical(a))) for a, b in zip(x, y)]
    assert back.tolist() == want_back
