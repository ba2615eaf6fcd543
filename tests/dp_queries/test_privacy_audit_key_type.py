"""Audit: a privately selected key's type, dtype and row order must not follow one person's cell.

Python calls ``Decimal('30') == 30`` (and ``datetime(2020, 1, 1) == Timestamp('2020-01-01')``),
so a factorization keeps the two in one group labelled by whichever cell comes first.  The
canonical value kept ``Decimal`` (and ``datetime``) as they were, so one person's
``Decimal('20')`` in the first row released the other persons' group ``20`` as
``Decimal('20')``: an ``object`` key column instead of ``int64``, and, sorted after the numbers,
a different row order -- neighbours told apart with certainty.  At epsilon 1e4 the noise is 0
except with probability about ``2 e^-10000`` (as in ``test_privacy_audit_canonical``), so the
releases are exact and any difference beyond the person's own count is the leak.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from fractions import Fraction

import pandas as pd
import pytest

from veil.dp._canon import canonical
from veil.dp.frame import PrivateFrame
from veil.dp.sql import evaluate, parse_condition

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def _release(keys: list[object]) -> pd.DataFrame:
    df = pd.DataFrame({"pid": range(len(keys)), "g": keys})
    pf = PrivateFrame(df, privacy_unit="pid", accountant=False, random_state=2)
    return pf.groupby("g").agg(n="count", epsilon=1e4, delta=1e-6)


def _check(base: list[object], first: object) -> None:
    d, d2 = _release(base), _release([first, *base])  # the added person's row comes first
    assert d["g"].dtype == d2["g"].dtype, (d["g"].dtype, d2["g"].dtype)
    assert d["g"].tolist() == d2["g"].tolist()
    assert [type(v) for v in d["g"]] == [type(v) for v in d2["g"]]
    assert (d2["n"] - d["n"]).abs().sum() <= 1  # only the added person's own row


@pytest.mark.parametrize("first", [Decimal("20"), Decimal("20.0"), Fraction(40, 2)])
def test_a_decimal_cell_does_not_relabel_the_group(first: object) -> None:
    _check([30] * 40 + [20] * 40, first)


@pytest.mark.parametrize("first", [Decimal("20"), Fraction(20)])
def test_nor_the_row_order_beside_a_missing_key(first: object) -> None:
    _check([None] * 40 + [30] * 40 + [20] * 40, first)  # object keys: sorted by value kind


def test_a_datetime_cell_does_not_relabel_the_group() -> None:
    t1, t2 = pd.Timestamp("2020-01-01"), pd.Timestamp("2021-06-30")
    _check(["x"] * 40 + [t1] * 40 + [t2] * 40, dt.datetime(2021, 6, 30))  # object column


def test_decimal_cells_are_numbers_in_where_and_values() -> None:
    df = pd.DataFrame({"x": [Decimal("30"), Decimal("0.5"), Decimal("NaN")]})
    assert evaluate(parse_condition("x > 10"), df).tolist() == [True, False, False]
    assert [canonical(v) for v in df["x"]] == [30, 0.5, None]
    assert canonical(Decimal("sNaN")) is None
    assert canonical(Fraction(1, 4)) == 0.25 and canonical(Decimal("-Infinity")) == float("-inf")
