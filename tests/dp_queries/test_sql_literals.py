"""An integer literal in WHERE is the exact integer the query wrote.

Number tokens were read through float64: ``id = 9007199254740993`` became ``id = 2^53`` and
kept the rows of ``9007199254740992`` (and none of ``...993``), while the quoted
``id = '9007199254740993'`` compares exactly -- one condition, two row sets.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.dp.sql import evaluate, parse_condition

BIG = 2**53 + 1
CELLS = pd.Series([2**53, BIG, -BIG, 7])


@pytest.mark.parametrize("dtype", ["int64", object, "Int64"])
@pytest.mark.parametrize(
    "cond, quoted",
    [
        (f"c = {BIG}", f"c = '{BIG}'"),
        (f"c = -{BIG}", f"c = '-{BIG}'"),
        (f"c IN ({BIG}, 7)", f"c IN ('{BIG}', '7')"),
        (f"c BETWEEN {BIG} AND {BIG + 1}", f"c BETWEEN '{BIG}' AND '{BIG + 1}'"),
        (f"c < {BIG}", f"c < '{BIG}'"),
    ],
)
def test_integer_literals_match_their_quoted_form(dtype, cond, quoted) -> None:
    df = pd.DataFrame({"c": CELLS.astype(dtype)})
    got = evaluate(parse_condition(cond), df).tolist()
    assert got == evaluate(parse_condition(quoted), df).tolist()
    exact = {
        f"c = {BIG}": [False, True, False, False],
        f"c = -{BIG}": [False, False, True, False],
        f"c < {BIG}": [True, False, True, True],
    }
    if cond in exact:
        assert got == exact[cond]


def test_other_number_literals_are_unchanged() -> None:
    for text, value in [
        ("1e3", 1000),
        ("1.5", 1.5),
        ("- 5", -5),
        ("00012", 12),
        ("1e400", float("inf")),
    ]:
        assert parse_condition(f"c = {text}").right.value == value


@pytest.mark.parametrize("literal", ["²", "3²", "٣", "1.²"])
def test_non_ascii_digits_are_a_typed_error(literal: str) -> None:
    """str.isdigit() accepts superscript and other scripts' digits, which int()/float() refuse:
    the lexer read '²' as a number and the parser failed with a bare ValueError."""
    from veil.dp.sql import parse
    from veil.errors import ConfigError

    with pytest.raises(ConfigError, match="SQL"):
        parse(f"SELECT COUNT(*) FROM data WHERE age > {literal}")
