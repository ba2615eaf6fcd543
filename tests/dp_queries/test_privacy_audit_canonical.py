"""Audit: a row's WHERE result, key match and released key must not follow the column's dtype.

A reader infers a column's dtype from *all* its cells: ``True``/``False`` is ``bool`` until one
person's value is missing (then ``object``); whole numbers are ``int64`` until one person's cell
is text (then ``object`` of strings, ``'30'``).  WHERE literals and ``--keys`` used to be
coerced by that dtype, so ``WHERE smoker = 'true'`` counted the 200 smokers of ``D`` and none
of ``D' = D + one person with a missing value`` -- neighbours whose released counts differ by
200, an unbounded privacy loss.  Each test builds such neighbours and checks that the released
statistics of the *other* people are the same in both: at epsilon 1e4 the discrete Laplace
noise is 0 except with probability about ``2 e^-10000``, so the release is the exact count and
a count differing by more than the added person's one row is the leak, deterministically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.cli.main import main
from veil.dp.frame import PrivateFrame
from veil.dp.sql import evaluate, parse_condition

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
EPS = 1e4  # noise 0 with probability 1 - 2e^-10000: the releases are the exact counts


def _smokers(extra: object = ...) -> pd.DataFrame:
    """200 smokers and 100 non-smokers; with ``extra`` one more person whose value it is."""
    flags = [True] * 200 + [False] * 100
    if extra is not ...:
        flags.append(extra)
    return pd.DataFrame({"pid": range(len(flags)), "smoker": flags})


def _sql(df: pd.DataFrame, sql: str, **kw: object) -> pd.DataFrame:
    pf = PrivateFrame(df, privacy_unit="pid", accountant=False, random_state=5)
    return pf.sql(sql, epsilon=EPS, **kw)


def test_the_neighbour_changes_the_dtype() -> None:  # the premise of every test below
    assert _smokers()["smoker"].dtype == bool
    assert _smokers(None)["smoker"].dtype == object


@pytest.mark.parametrize(
    "cond", ["smoker = 'true'", "smoker = 'TRUE'", "smoker = TRUE", "smoker = 1", "smoker > 0"]
)
def test_where_on_a_boolean_column_does_not_follow_the_dtype(cond: str) -> None:
    sql = f"SELECT COUNT(*) AS n FROM data WHERE {cond}"
    for extra in (None, "n/a"):  # a missing value, a text cell
        n_d = int(_sql(_smokers(), sql)["n"].iloc[0])
        n_d2 = int(_sql(_smokers(extra), sql)["n"].iloc[0])
        assert n_d == n_d2 == 200, (cond, extra)


def test_keys_on_a_boolean_column_do_not_follow_the_dtype() -> None:
    sql = "SELECT smoker, COUNT(*) AS n FROM data GROUP BY smoker"
    keys = {"smoker": ["true", "false"]}
    r_d = _sql(_smokers(), sql, keys=keys)
    r_d2 = _sql(_smokers(None), sql, keys=keys)
    assert r_d["n"].tolist() == r_d2["n"].tolist() == [200, 100]
    assert r_d["smoker"].tolist() == r_d2["smoker"].tolist() == ["true", "false"]  # as given


def test_where_and_keys_on_numbers_with_one_text_cell() -> None:
    ages = [30] * 200 + [40] * 50
    d = pd.DataFrame({"pid": range(250), "age": ages})
    d2 = pd.DataFrame({"pid": range(251), "age": [str(a) for a in ages] + ["unknown"]})
    for cond, want in (("age = '30'", 200), ("age = 30", 200), ("age > '35'", 50),
                       ("age IN ('40', 30.0)", 250), ("age BETWEEN '29' AND 31", 200)):  # fmt: skip
        sql = f"SELECT COUNT(*) AS n FROM data WHERE {cond}"
        assert int(_sql(d, sql)["n"].iloc[0]) == int(_sql(d2, sql)["n"].iloc[0]) == want, cond
    sql = "SELECT age, COUNT(*) AS n FROM data GROUP BY age"
    for keys in ({"age": ["30", "40"]}, {"age": [30, 40.0]}):
        assert _sql(d, sql, keys=keys)["n"].tolist() == [200, 50]
        assert _sql(d2, sql, keys=keys)["n"].tolist() == [200, 50]


def _cli(path: Path, tmp_path: Path, sql: str, *extra: str) -> pd.DataFrame:
    out = tmp_path / "o.csv"
    rc = main(
        ["query", str(path), sql, "--epsilon", str(EPS), "--privacy-unit", "pid",
         "--seed", "3", "--out", str(out), *extra]
    )  # fmt: skip
    assert rc == 0
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def test_cli_where_and_keys_do_not_follow_the_inferred_dtype(tmp_path: Path, capsys) -> None:
    d, d2, d3 = tmp_path / "d.csv", tmp_path / "d2.csv", tmp_path / "d3.csv"
    _smokers().to_csv(d, index=False)
    d2.write_text(d.read_text() + "999,\n")  # one more person, smoker missing
    d3.write_text(d.read_text() + "999,unsure\n")  # one more person, a text cell
    where = "SELECT COUNT(*) AS n FROM data WHERE smoker = 'true'"
    grouped = "SELECT smoker, COUNT(*) AS n FROM data GROUP BY smoker"
    outs = [_cli(p, tmp_path, where) for p in (d, d2, d3)]
    assert [o["n"].tolist() for o in outs] == [["200"]] * 3
    outs = [_cli(p, tmp_path, grouped, "--keys", "smoker=true,false") for p in (d, d2, d3)]
    for o in outs:  # same counts and the same printed keys (the given text) for every table
        assert o["smoker"].tolist() == ["true", "false"] and o["n"].tolist() == ["200", "100"]


def test_cli_quoted_number_on_a_column_with_one_text_cell(tmp_path: Path, capsys) -> None:
    base = pd.DataFrame({"pid": range(250), "age": [30] * 200 + [40] * 50})
    d, d2 = tmp_path / "d.csv", tmp_path / "d2.csv"
    base.to_csv(d, index=False)
    d2.write_text(d.read_text() + "999,unknown\n")
    sql = "SELECT COUNT(*) AS n FROM data WHERE age = '30'"
    assert _cli(d, tmp_path, sql)["n"].tolist() == _cli(d2, tmp_path, sql)["n"].tolist() == ["200"]
    grouped = "SELECT age, COUNT(*) AS n FROM data GROUP BY age"
    r1 = _cli(d, tmp_path, grouped, "--keys", "age=30,40")
    r2 = _cli(d2, tmp_path, grouped, "--keys", "age=30,40")
    assert r1.equals(r2) and r1["n"].tolist() == ["200", "50"]


def test_selected_key_column_dtype_does_not_follow_a_missing_key() -> None:
    """Private partition selection: the key column was int64, or float64 once one person's
    key is missing (that person's group is not released, the dtype still changed)."""
    groups = [1] * 150 + [2] * 150
    d = pd.DataFrame({"pid": range(300), "g": groups})
    d2 = pd.DataFrame({"pid": range(301), "g": [*groups, None]})
    assert d["g"].dtype != d2["g"].dtype  # the premise
    sql = "SELECT g, COUNT(*) AS n FROM data GROUP BY g"
    r1 = _sql(d, sql, delta=1e-6)
    r2 = _sql(d2, sql, delta=1e-6)
    assert r1["g"].dtype == r2["g"].dtype
    assert r1["g"].tolist() == r2["g"].tolist() == [1, 2]
    assert all(type(v) is int for v in r2["g"].tolist())
    pf = PrivateFrame(d2, privacy_unit="pid", accountant=False, random_state=1)
    r3 = pf.groupby("g").agg(n="count", epsilon=EPS, delta=1e-6)
    assert r3["g"].dtype == r1["g"].dtype


_cell = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5, float("nan"), -0.0]),
    st.sampled_from(["1", "2.0", " 3", "true", "False", "a", "", "nan", "1e0"]),
)
_conds = [
    "x = 1", "x = '1'", "x <> 'true'", "x < 2", "x >= '0'", "x IN (1, 'a', 2.5)",
    "x NOT IN (0, 'false')", "x BETWEEN 0 AND '2'", "x = 'a'", "NOT x > 0", "x > 'a'",
]  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(cells=st.lists(_cell, min_size=1, max_size=10), cond=st.sampled_from(_conds))
def test_each_row_depends_on_its_own_cell_only(cells: list, cond: str) -> None:
    """The mask of a row equals that of the row alone, whatever the rest makes the dtype."""
    expr = parse_condition(cond)
    full = evaluate(expr, pd.DataFrame({"x": cells}))
    obj = evaluate(expr, pd.DataFrame({"x": pd.Series(cells, dtype=object)}))
    alone = [bool(evaluate(expr, pd.DataFrame({"x": [c]}))[0]) for c in cells]
    assert full.tolist() == obj.tolist() == alone


@pytest.mark.parametrize("value", [True, False, 0, 1, 7, 2.5, 30.0])
def test_a_cell_written_as_text_compares_like_the_value(value: object) -> None:
    """``'True'`` / ``'30'`` (a column read as text because of another cell) match like
    ``True`` / ``30`` (the same column read as bool / int)."""
    text = str(value)
    for cond in ("x = 1", "x = 'true'", "x > 0", "x = 30", "x IN ('2.5', 7)", "x <= '1'"):
        expr = parse_condition(cond)
        a = evaluate(expr, pd.DataFrame({"x": [value]}))
        b = evaluate(expr, pd.DataFrame({"x": np.array([text, "other"], dtype=object)}))
        assert a[0] == b[0], (cond, value)


def _selected(df: pd.DataFrame, column: str) -> pd.DataFrame:
    sql = f"SELECT {column}, COUNT(*) AS n FROM data GROUP BY {column}"
    return _sql(df, sql, delta=1e-6)


def test_selected_groups_do_not_follow_a_text_cell() -> None:
    """Private selection groups and releases by value: the same people form the same groups,
    released under the same keys, whether the column was read as numbers / booleans or -- one
    person's text cell -- as text (as ``read_csv`` then keeps every cell)."""
    flags = [True] * 200 + [False] * 100
    d = pd.DataFrame({"pid": range(300), "smoker": flags})
    text = [("true" if i % 2 else "True") if f else "False" for i, f in enumerate(flags)]
    d2 = pd.DataFrame({"pid": range(301), "smoker": [*text, "unsure"]})
    r1, r2 = _selected(d, "smoker"), _selected(d2, "smoker")
    assert r1["smoker"].tolist() == r2["smoker"].tolist() == [False, True]
    assert r1["n"].tolist() == r2["n"].tolist() == [100, 200]
    assert r1["smoker"].dtype == r2["smoker"].dtype
    ages = [30] * 200 + [40] * 50
    d = pd.DataFrame({"pid": range(250), "age": ages})
    spelled = [("30.0" if i % 2 else "30") if a == 30 else "40" for i, a in enumerate(ages)]
    d2 = pd.DataFrame({"pid": range(251), "age": [*spelled, "unknown"]})
    r1, r2 = _selected(d, "age"), _selected(d2, "age")
    assert r1["age"].tolist() == r2["age"].tolist() == [30, 40]
    assert r1["n"].tolist() == r2["n"].tolist() == [200, 50]
    assert r1["age"].dtype == r2["age"].dtype


def test_cli_selected_groups_do_not_follow_a_text_cell(tmp_path: Path, capsys) -> None:
    d, d2 = tmp_path / "d.csv", tmp_path / "d2.csv"
    rows = [f"{i},{'true' if i % 2 else 'True'}" for i in range(200)]
    rows += [f"{i},False" for i in range(200, 300)]
    d.write_text("pid,smoker\n" + "\n".join(rows) + "\n")
    d2.write_text(d.read_text() + "999,unsure\n")  # read_csv now keeps every cell as text
    assert pd.read_csv(d)["smoker"].dtype == bool and pd.read_csv(d2)["smoker"].dtype != bool
    sql = "SELECT smoker, COUNT(*) AS n FROM data GROUP BY smoker"
    r1 = _cli(d, tmp_path, sql, "--delta", "1e-6")
    r2 = _cli(d2, tmp_path, sql, "--delta", "1e-6")
    assert r1.equals(r2)
    assert r1["smoker"].tolist() == ["False", "True"] and r1["n"].tolist() == ["100", "200"]


def test_selected_group_of_a_row_does_not_depend_on_row_order() -> None:
    """``True`` and ``1`` are equal to Python (one factorization code); their groups must not
    be labelled by whichever comes first."""
    a = pd.DataFrame({"pid": range(400), "k": [True] * 200 + [1] * 200}, dtype=object)
    b = a.iloc[::-1].reset_index(drop=True)
    for df in (a, b):
        r = _selected(df, "k")
        assert sorted(map(repr, r["k"].tolist())) == ["1", "True"]
        assert r["n"].tolist() == [200, 200]
