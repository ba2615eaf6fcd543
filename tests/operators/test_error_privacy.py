"""Operator and hierarchy errors count bad cells instead of quoting them.

Errors end up in logs (CI logs are shared), so a bad value in the user's data must not be echoed
into the message.  Each test plants a distinctive sentinel in the data and checks that the error
still says what is wrong (column, count, position, the user's own edges) without the sentinel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx

import veil.deid
from veil.anonymity._mondrian import mondrian
from veil.deid.operators import get_operator, truncate_dates
from veil.errors import InputError, PolicyError, VeilError
from veil.schema import Hierarchy

SENTINEL = "SENTINEL-7731"
SECRET_NUMBER = 77310.125


def _clean(exc: BaseException, *secrets: str) -> str:
    msg = str(exc)
    assert "\n" not in msg, msg
    for s in secrets:
        assert s not in msg, msg
    return msg


@pytest.mark.parametrize(
    "op, params",
    [("round", {"base": 5}), ("noise", {"scale": 1.0}), ("generalize", {"bins": [0, 50, 100]})],
)
def test_non_numeric_cell_is_counted_with_its_row(op, params):
    df = pd.DataFrame({"age": ["23", "41", SENTINEL, "38", "oops"]})
    with pytest.raises(InputError, match=r"'age' is not numeric: 2 cell\(s\).*first at row 2"):
        try:
            get_operator(op, params).apply(df, "age", ctx())
        except InputError as exc:
            _clean(exc, SENTINEL, "oops")
            raise


def test_out_of_range_counts_below_and_above_the_users_edges():
    df = pd.DataFrame({"x": [10.0, -SECRET_NUMBER, SECRET_NUMBER, SECRET_NUMBER, 40.0]})
    with pytest.raises(InputError) as info:
        get_operator("generalize", {"bins": [0, 20, 60]}).apply(df, "x", ctx())
    msg = _clean(info.value, "7731")
    assert "3 value(s)" in msg and "[0, 60]" in msg and "(1 below, 2 above)" in msg


def test_non_dates_are_counted():
    with pytest.raises(InputError, match=r"2 value\(s\) of column 'dob' are not dates") as info:
        truncate_dates(np.array(["2021-05-17", SENTINEL, "nope"], dtype=object), "year", "dob")
    _clean(info.value, SENTINEL, "nope")


HIER = {"a": ["ab", "*"], "b": ["ab", "*"], "c": ["cd", "*"]}


def test_generalize_hierarchy_gap_is_counted():
    df = pd.DataFrame({"g": ["a", "b", SENTINEL, SENTINEL, "c"]})
    op = get_operator("generalize", {"hierarchy": HIER, "level": 1})
    with pytest.raises(InputError, match=r"1 distinct value\(s\) of column 'g' missing") as info:
        op.apply(df, "g", ctx())
    assert "missing(df['g'])" in _clean(info.value, SENTINEL)


def test_hierarchy_encode_counts_and_names_only_the_empty_cell():
    h = Hierarchy.from_mapping(HIER)
    with pytest.raises(InputError) as info:
        h.encode(pd.Series(["a", SENTINEL, None], dtype=object), column="g")
    msg = _clean(info.value, SENTINEL)
    assert "2 distinct value(s)" in msg and "'nan'" in msg
    assert h.missing(pd.Series([SENTINEL])) == [SENTINEL]  # the explicit way to list them


def test_policy_hierarchy_gap_is_counted():
    df = pd.DataFrame({"g": ["a", SENTINEL, "c", "a"], "v": [1, 2, 3, 4]})
    policy = {"columns": {"g": {"role": "quasi", "hierarchy": HIER}, "v": "insensitive"}}
    with pytest.raises(PolicyError, match="missing from its hierarchy") as info:
        veil.deid.apply(df, policy)
    _clean(info.value, SENTINEL)


def test_mondrian_hierarchy_gap_is_counted():
    df = pd.DataFrame({"g": ["a", "b", "c", SENTINEL] * 3, "v": range(12)})
    with pytest.raises(VeilError, match="missing from its hierarchy") as info:
        mondrian(df, ["g"], 2, hierarchies={"g": Hierarchy.from_mapping(HIER)})
    _clean(info.value, SENTINEL)
