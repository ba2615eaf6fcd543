"""suppress and the safe condition language."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx, people

from veil.deid.operators import get_operator, parse_condition
from veil.errors import ConfigError, InputError


def _rows(expr: str, df: pd.DataFrame | None = None) -> list[int]:
    df = people() if df is None else df
    return np.flatnonzero(parse_condition(expr).evaluate(df)).tolist()


def test_seed_example_drops_everyone_younger_than_30() -> None:
    df = people()
    op = get_operator("suppress", {"condition": "age < 30"})
    out = op.apply(df, None, ctx())
    assert (out["age"] >= 30).all() and len(out) == 3
    assert out.index.tolist() == [11, 12, 14]  # labels kept, no label/position mix-up
    assert op.stats() == {"records_removed": 2}
    assert "2 removed" in op.describe()


@pytest.mark.parametrize(
    "expr, rows",
    [
        ("age >= 37 and sex == 'F'", [2]),
        ('age > 60 or sex == "M"', [1, 2, 4]),
        ("not (age < 30)", [1, 2, 4]),
        ("sex in ['M']", [1, 4]),
        ("sex not in ('M',)", [0, 2, 3]),
        ("isna(id)", [4]),
        ("notna(income) & income > 5000", [1, 2]),
        ("~isna(id) and zip == '02139'", [0, 3]),
        ("income != 1200.5", [1, 2]),  # missing compares false, even with !=
        ("50 < age", [2, 4]),
        ("age == income", []),
        ("`zip` in ['10001', '94110'] or age <= 23", [0, 2, 3, 4]),
    ],
)
def test_condition_language(expr: str, rows: list[int]) -> None:
    assert _rows(expr) == rows


def test_numeric_literal_against_text_column_compares_numbers() -> None:
    df = pd.DataFrame({"zip": ["02139", "10001", "n/a"]})
    assert _rows("zip > 5000", df) == [1]


def test_several_conditions_are_ored() -> None:
    out = get_operator("suppress", {"condition": ["age < 30", "sex == 'M'"], "reset_index": True})
    res = out.apply(people(), None, ctx())
    assert res["age"].tolist() == [64] and res.index.tolist() == [0]


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "age <",
        "age < 30 and",
        "__import__('os').system('echo hi')",
        "age + 1 < 3",
        "(age < 3",
        "sex in 'M'",
        "age not 3",
        "1 < 2",
        "age",
    ],
)
def test_bad_conditions_are_config_errors(expr: str) -> None:
    with pytest.raises(ConfigError):
        parse_condition(expr).evaluate(people())


def test_unknown_column_is_input_error() -> None:
    with pytest.raises(InputError, match="nope"):
        get_operator("suppress", {"condition": "nope < 3"}).apply(people(), None, ctx())


def test_single_equals_sign_gets_a_hint() -> None:
    with pytest.raises(ConfigError, match=r"at character 6; compare with ==, not ="):
        parse_condition("name = 'A1'")
    with pytest.raises(ConfigError) as info:
        parse_condition("name ? 'A1'")
    assert "==" not in str(info.value)


def test_boolean_column_truth() -> None:
    df = pd.DataFrame({"flag": [True, False, True]})
    assert _rows("flag", df) == [0, 2] and _rows("not flag", df) == [1]
