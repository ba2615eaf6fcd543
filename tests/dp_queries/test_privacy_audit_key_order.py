"""Privately selected rows are released sorted by key: the order must be a function of the
released keys alone, never of the order of the rows in the data.

``True == 1`` in Python, so a plain sort of an object key column holding the group keys
``True`` and ``1`` (a text column of ``'true'`` and ``'1'`` cells) ties them, and a stable sort
then keeps the factorization order -- the order in which the two values first appear in the
data.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from veil.dp.frame import PrivateFrame

SQL = "SELECT k, COUNT(*) AS n FROM data GROUP BY k"


def _release(df: pd.DataFrame) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pf = PrivateFrame(df, accountant=False, random_state=1)
        return pf.sql(SQL, epsilon=1e4, delta=1e-6)["k"].tolist()


@pytest.mark.parametrize(
    "cells",
    [
        [True] * 100 + [1] * 100,
        ["true"] * 100 + ["1"] * 100,
        [False] * 100 + [0] * 100 + [True] * 100 + ["a"] * 100,
        ["0"] * 100 + ["false"] * 100 + [2.5] * 100,
    ],
)
def test_release_order_does_not_follow_row_order(cells: list) -> None:
    df = pd.DataFrame({"k": pd.Series(cells, dtype=object)})
    first = _release(df)
    again = _release(df.iloc[::-1].reset_index(drop=True))
    assert [(type(v), v) for v in first] == [(type(v), v) for v in again], (first, again)
