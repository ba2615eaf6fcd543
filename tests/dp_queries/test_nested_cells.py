"""One person's nested cell (list, dict, array) or ``Decimal('sNaN')`` never fails a query.

Such cells used to make ``pd.factorize`` / ``isna`` raise: a GROUP BY or WHERE column was
refused with a ConfigError, a privacy-unit column or ``COUNT(col)`` failed after the budget was
charged.  Either way the query ran on a table without that person and failed with the person:
error versus release tells whether the person is in the data.  Now the cell is read by itself
(:func:`veil.dp._canon.factorize_cells`): a nested cell forms no group, matches no key,
compares as unknown and is no person's id; an sNaN is missing.  Each test runs a query, with
one seed, on ``D`` (the person with such a cell) and on a neighbour, and asserts the two
releases are the same table and the same charge.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.dp import BudgetAccountant
from veil.dp.frame import PrivateFrame

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

NESTED = [["a"], {"k": 1}, np.array([1, 2]), (1, [2]), {1, 2}]


def _base(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "pid": np.arange(n),
            "g": pd.Series(rng.choice(["a", "b", "1", True], n), dtype=object),
            "h": rng.choice(["u", "v"], n),
            "x": pd.Series(rng.integers(0, 50, n), dtype=object),
        }
    )


def _with(df: pd.DataFrame, **cells: Any) -> pd.DataFrame:
    """``df`` plus person 999 with one row: ``g='a', h='u', x=10`` unless given."""
    row = {"pid": 999, "g": "a", "h": "u", "x": 10, **cells}
    extra = pd.DataFrame({k: pd.Series([None], dtype=object) for k in df.columns})
    for k, v in row.items():
        extra.at[0, k] = v
    out = pd.concat([df.astype(object), extra], ignore_index=True)
    return out


def _release(df: pd.DataFrame, query: Any) -> tuple[pd.DataFrame, tuple]:
    acc = BudgetAccountant(epsilon=100.0, delta=1e-3)
    pf = PrivateFrame(df, "pid", accountant=acc, bounds={"x": (0, 50)}, random_state=7)
    out = query(pf)
    return out, tuple(acc.total())


QUERIES = {
    "public keys": lambda pf: pf.groupby("g", keys=["a", "b", 1]).agg(
        n="count", s=("x", "sum"), epsilon=2.0
    ),
    "selected keys": lambda pf: pf.groupby("g").agg(n="count", epsilon=20.0, delta=1e-4),
    "two columns": lambda pf: pf.groupby(["g", "h"]).agg(n="count", epsilon=20.0, delta=1e-4),
    "two columns, keys": lambda pf: pf.groupby(["h", "g"], keys={"h": ["u"], "g": ["a"]}).agg(
        n="count", epsilon=2.0
    ),
    "where": lambda pf: pf.where("g = 'a' OR NOT g IN ('b')").agg(n="count", epsilon=2.0),
    "where is null": lambda pf: pf.where("g IS NULL").agg(n="count", epsilon=2.0),
    "where columns": lambda pf: pf.where("g <> h").agg(n="count", epsilon=2.0),
    "sql": lambda pf: pf.sql(
        "SELECT g, COUNT(*) AS n FROM data WHERE g >= 'a' GROUP BY g",
        epsilon=2.0,
        keys={"g": ["a", "b"]},
    ),
}


@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.parametrize("cell", NESTED, ids=lambda c: type(c).__name__)
def test_a_nested_group_or_where_cell_is_in_no_group_and_matches_nothing(name, cell) -> None:
    """With or without the person whose ``g`` is nested: the same release, the same charge
    (the row is in no group and satisfies no comparison; before, the query was refused)."""
    base = _base().astype(object)
    without, charged = _release(base, QUERIES[name])
    with_cell, charged_too = _release(_with(base, g=cell), QUERIES[name])
    pd.testing.assert_frame_equal(with_cell, without)
    assert charged_too == charged


@pytest.mark.parametrize("cell", NESTED, ids=lambda c: type(c).__name__)
def test_a_nested_privacy_unit_is_no_person(cell) -> None:
    """A row whose id is a list or dict failed with a bare TypeError *after* the charge; it is
    now ignored, as a row with a missing id."""
    base = _base().astype(object)
    for query in (QUERIES["public keys"], QUERIES["selected keys"]):
        without, charged = _release(base, query)
        with_cell, charged_too = _release(_with(base, pid=cell), query)
        pd.testing.assert_frame_equal(with_cell, without)
        assert charged_too == charged


SNAN_QUERIES = {
    **QUERIES,
    "count column": lambda pf: pf.groupby("h", keys=["u", "v"]).agg(
        c=("x", "count"), s=("x", "sum"), epsilon=2.0
    ),
    "x is null": lambda pf: pf.where("x IS NULL").agg(n="count", epsilon=2.0),
    "x compared": lambda pf: pf.where("x > 5").agg(n="count", epsilon=2.0),
}


@pytest.mark.parametrize("name", list(SNAN_QUERIES))
@pytest.mark.parametrize("column", ["g", "x", "pid"])
def test_a_signalling_nan_cell_is_missing(name, column) -> None:
    """``Decimal('sNaN')`` made pandas' missing test raise (InvalidOperation, some after the
    charge); it is a missing value, as ``canonical`` reads it: the release equals the one with
    ``None`` in that cell."""
    base = _base().astype(object)
    with_none, charged = _release(_with(base, **{column: None}), SNAN_QUERIES[name])
    with_snan, charged_too = _release(_with(base, **{column: Decimal("sNaN")}), SNAN_QUERIES[name])
    pd.testing.assert_frame_equal(with_snan, with_none)
    assert charged_too == charged


def test_a_column_of_nested_cells_releases_only_noise() -> None:
    """All cells nested: every row is in no group, so public keys carry noise around 0 and
    the query still runs (no refusal that one flat cell would turn into a release)."""
    df = pd.DataFrame({"pid": range(200), "g": [["a"]] * 200})
    pf = PrivateFrame(df, "pid", accountant=False, random_state=1)
    out = pf.groupby("g", keys=["a"]).agg(n="count", epsilon=5.0)
    assert abs(int(out["n"].iloc[0])) < 20  # 200 rows would be counted if they matched


@pytest.mark.parametrize("name", ["public keys", "selected keys", "where", "sql"])
def test_an_arrow_list_column_reads_as_nested_cells(name) -> None:
    """A Parquet list column (``list<int64>[pyarrow]``) failed the group encoding with
    ``ArrowNotImplementedError`` after the charge; its cells are nested cells like the
    object column's lists: the same release."""
    pa = pytest.importorskip("pyarrow")
    base = _base()
    cells = [None if i % 5 == 0 else [i % 3] for i in range(len(base))]
    arrow = base.assign(g=pd.Series(cells, dtype=pd.ArrowDtype(pa.list_(pa.int64()))))
    plain = base.assign(g=pd.Series(cells, dtype=object))
    out_arrow, charged = _release(arrow, QUERIES[name])
    out_plain, charged_too = _release(plain, QUERIES[name])
    pd.testing.assert_frame_equal(out_arrow, out_plain)
    assert charged == charged_too


@pytest.mark.parametrize("ids", [[None, None], [None, np.nan], [["x"], None]])
@pytest.mark.parametrize("name", ["public keys", "selected keys", "where"])
def test_a_table_without_any_person_id_releases_like_an_empty_one(ids, name) -> None:
    """Every id missing (or nested) in an object column: indexing the empty id table raised
    IndexError after the charge, where one more person with an id released."""
    rows = pd.DataFrame({"pid": pd.Series(ids, dtype=object), "g": "a", "h": "u", "x": 1})
    empty = rows.iloc[:0].astype(object)
    out, charged = _release(rows.astype(object), QUERIES[name])
    out_empty, charged_too = _release(empty, QUERIES[name])
    pd.testing.assert_frame_equal(out, out_empty)
    assert charged == charged_too
    _release(_with(rows.astype(object)), QUERIES[name])  # the neighbour with a person
