"""``COUNT(col)`` counts non-missing cells whatever else the query asks, with its privacy audit.

A column mixing numbers and text (``'n/a'``: one person's text cell keeps ``read_csv``'s column
as text) was counted two ways: ``COUNT(x)`` alone counted every non-missing cell, next to
``SUM(x)`` (or AVG, a quantile, ...) only the numbers.  Now ``COUNT(x)`` always counts the
non-missing cells (SQL's rule) and the mean divides by its own count of numbers.  Counting text
cells next to a SUM is new, so a neighbouring-input audit checks that a person whose cells are
all text still moves the count by at most ``max_groups * max_rows`` (and that the audit catches
a broken contribution bound).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.dp.frame import Agg, PrivateFrame
from veil.errors import ConfigError

from ._neighbours import releases, unbounded, with_person, worst_over_cuts

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

B = (0.0, 10.0)
HUGE = 1e6  # noise of scale 1e-6: the released counts are the exact ones


def mixed(n_per_group: int = 40) -> pd.DataFrame:
    """Three groups; ``x`` holds numbers, text that is no number and missing cells."""
    cells = [1, "n/a", 2.5, None, "7", "unknown", 4, np.nan]  # '7' reads as the number 7
    x = [cells[i % len(cells)] for i in range(3 * n_per_group)]
    g = np.repeat(list("abc"), n_per_group)
    return pd.DataFrame({"g": g, "x": pd.Series(x, dtype=object)})


def _truth(df: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Non-missing cells and the mean of the cells that read as numbers, per group."""
    cells = df["x"].notna().groupby(df["g"]).sum()
    nums = pd.to_numeric(df["x"], errors="coerce").groupby(df["g"]).mean()
    return cells, nums


@pytest.mark.parametrize(
    "others",
    [
        {},
        {"s": ("x", "sum", B)},
        {"m": ("x", "mean", B)},
        {"v": ("x", "var", B), "q": Agg("median", "x", B)},
    ],
    ids=["alone", "sum", "mean", "var+median"],
)
def test_count_col_does_not_depend_on_the_other_aggregates(others: dict) -> None:
    df = mixed()
    cells, means = _truth(df)
    pf = PrivateFrame(df, accountant=False, random_state=3)
    out = pf.groupby("g", keys=list("abc")).agg(n=("x", "count"), **others, epsilon=HUGE)
    assert out["n"].tolist() == cells.tolist()  # text counts: 30 of 40 cells are not missing
    if "m" in out:  # the mean takes the numbers only, divided by their own count
        np.testing.assert_allclose(out["m"], means.to_numpy(), atol=1e-3)


def test_sql_count_col_is_the_same_next_to_sum_and_avg() -> None:
    df = mixed()
    pf = PrivateFrame(df, accountant=False, random_state=4, bounds={"x": B})
    keys = {"g": list("abc")}
    alone = pf.sql("SELECT g, COUNT(x) AS n FROM data GROUP BY g", epsilon=HUGE, keys=keys)
    both = pf.sql(
        "SELECT g, COUNT(x) AS n, SUM(x) AS s, AVG(x) AS m FROM data GROUP BY g",
        epsilon=HUGE,
        keys=keys,
    )
    assert alone["n"].tolist() == both["n"].tolist() == _truth(df)[0].tolist()
    np.testing.assert_allclose(both["m"], _truth(df)[1].to_numpy(), atol=1e-3)


def test_count_and_mean_are_separate_components_with_count_sensitivity() -> None:
    df = mixed().assign(pid=np.arange(120) // 3)
    pf = PrivateFrame(df, privacy_unit="pid", accountant=False, max_rows=3, random_state=5)
    plan = pf.groupby("g", keys=list("abc")).plan(n=("x", "count"), m=("x", "mean", B), epsilon=1.0)
    kinds = {c.kind: c for c in plan.components}
    assert set(kinds) == {"count", "ncount", "csum"}
    assert kinds["count"].sensitivity == kinds["ncount"].sensitivity == 3.0
    assert sum(c.epsilon for c in plan.components) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "x",
    [
        pd.Series([1.0, np.nan, 2.5, 4.0] * 30),
        pd.Series([1, None, 3, 4] * 30, dtype="Int64"),
        pd.Series([True, False, False, True] * 30),
    ],
    ids=["float", "nullable-int", "bool"],
)
def test_count_and_mean_on_a_numeric_column(x: pd.Series) -> None:
    """On a numeric (or boolean) dtype every non-missing cell is a number: the two counts are
    equal, but they stay two components (the plan never depends on the dtype, see
    :func:`test_the_plan_does_not_tell_a_text_cell_by_the_dtype`)."""
    df = pd.DataFrame({"g": np.repeat(list("abc"), 40), "x": x})
    pf = PrivateFrame(df, accountant=False, random_state=7)
    grouped = pf.groupby("g", keys=list("abc"))
    plan = grouped.plan(n=("x", "count"), m=("x", "mean", B), epsilon=1.0)
    assert sorted(c.kind for c in plan.components) == ["count", "csum", "ncount"]
    out = grouped.agg(n=("x", "count"), m=("x", "mean", B), epsilon=HUGE)
    num = df["x"].astype("float64")
    assert out["n"].tolist() == num.notna().groupby(df["g"]).sum().tolist()
    np.testing.assert_allclose(out["m"], num.groupby(df["g"]).mean().to_numpy(), atol=1e-3)


def _plan_shape(x: pd.Series, **query: Any) -> list[tuple]:
    df = pd.DataFrame({"pid": np.arange(len(x)), "g": ["a", "b"] * (len(x) // 2), "x": x})
    pf = PrivateFrame(df, privacy_unit="pid", accountant=False, bounds={"x": B})
    plan = pf.groupby("g", keys=["a", "b"]).plan(epsilon=1.0, **query)
    acc = plan.accuracy(0.05, group_size=50)
    return [(c.kind, c.epsilon, c.scale) for c in plan.components] + acc.astype(
        str
    ).to_numpy().tolist()


@pytest.mark.parametrize(
    "query",
    [
        {"n": ("x", "count"), "m": ("x", "mean")},
        {"n": ("x", "count"), "v": ("x", "var")},
        {"n": ("x", "count"), "s": ("x", "sum")},
    ],
    ids=["count+mean", "count+var", "count+sum"],
)
def test_the_plan_does_not_tell_a_text_cell_by_the_dtype(query: dict) -> None:
    """``D``: 100 persons with whole numbers (``read_csv``: int64); ``D'`` adds one person whose
    cell is the text 'n/a' (the column is text).  Sharing COUNT(x) and the mean's count on
    numeric dtypes only gave ``D`` two components and ``D'`` three: the CI half-widths (and
    noise scales, printed by ``veil query`` and its dry run) told with certainty whether some
    person's cell is text.  The plan must be the same for both."""
    ints = pd.Series(np.arange(100) % 9, dtype=np.int64)
    text = pd.Series([*ints.tolist(), "n/a", "n/a"], dtype=object)  # two rows: even groups
    assert _plan_shape(ints, **query) == _plan_shape(text, **query)
    for other in (ints.astype(float), ints.astype("Int64"), ints.astype(object)):
        assert _plan_shape(other, **query) == _plan_shape(ints, **query)


def test_cli_dry_run_does_not_tell_a_text_cell(tmp_path: Path) -> None:
    """The same through ``veil query --dry-run`` (no budget spent): one person's 'unknown'
    age turns the column to text, and used to change the printed noise scale of COUNT(age)."""
    from veil.cli.main import main

    ages = [str(20 + i % 50) for i in range(200)]
    printed = []
    for extra in ([], ["unknown"]):
        path = tmp_path / f"t{len(extra)}.csv"
        path.write_text("age\n" + "\n".join(ages + extra) + "\n")
        sql = "SELECT COUNT(age) AS n, AVG(age) AS m FROM data"
        argv = ["query", str(path), sql, "--epsilon", "1", "--bounds", "age=0:100"]
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            assert main([*argv, "--dry-run", "--group-size", "100"]) == 0
        printed.append(buf.getvalue())
    assert printed[0] == printed[1]


@pytest.mark.parametrize("func", ["count", "mean"])
def test_replace_neighbours_refuse_a_nan_that_is_not_missing(func: str) -> None:
    """``double[pyarrow]`` keeps NaN apart from null (``isna`` is False), yet the numbers read
    it as missing: under replacement neighbours COUNT(x) was released exactly as ``n - 1``
    (no noise), telling that some row holds NaN.  Refused like a missing value."""
    pa = pytest.importorskip("pyarrow")
    x = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([1.0, float("nan"), 3.0, 4.0])))
    assert not x.isna().any()  # the case: pandas does not call it missing
    pf = PrivateFrame(pd.DataFrame({"x": x}), accountant=False, random_state=8)
    spec = ("x", func) if func == "count" else ("x", func, B)
    with pytest.raises(ConfigError, match="without missing values"):
        pf.plan(n=spec, epsilon=1.0, neighbouring="replace")
    x_full = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([1.0, 2.0, 3.0, 4.0])))
    full = PrivateFrame(pd.DataFrame({"x": x_full}), accountant=False, random_state=8)
    assert full.agg(n=("x", "count"), epsilon=1.0, neighbouring="replace")["n"].tolist() == [4]


def test_replace_neighbours_refuse_text_in_a_summed_column() -> None:
    """Under replacement neighbours a sum is ``n * mid + centred sum`` with ``n`` released
    exactly: a row replaced by 'n/a' moved the sum by a whole value (101) against noise of
    scale (hi - lo) / eps = 2.  Such a column is refused for value aggregates; COUNT(x) counts
    cells, whose number (the row count) is public."""
    df = pd.DataFrame({"x": pd.Series([101] * 99 + ["n/a"], dtype=object)})
    pf = PrivateFrame(df, accountant=False, random_state=6)
    for agg in (("x", "sum", (100, 102)), ("x", "mean", (100, 102)), ("x", "median", (100, 102))):
        with pytest.raises(ConfigError, match="no number"):
            pf.plan(s=agg, epsilon=1.0, neighbouring="replace")
    out = pf.agg(n=("x", "count"), epsilon=1.0, neighbouring="replace")
    assert out["n"].tolist() == [100]  # exact: the public row count


# ---------------------------------------------------------------- neighbouring-input audit
RUNS = 1200
INF = 1e12
BINS = [-INF, -30, -10, 0, 10, 20, 30, 40, 60, INF]
QUERY = {"n": ("x", "count"), "s": ("x", "sum", B)}  # COUNT(x) next to SUM(x): 2 components


def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """``D``: four persons per group with a number, text or missing cell; ``D'`` adds one
    person with 30 / 25 / 20 rows of the text 'n/a' (no number: invisible to the sum)."""
    x = pd.Series([3, "n/a", None, 8.5] * 3, dtype=object)
    base = pd.DataFrame({"pid": np.arange(12), "g": np.repeat(list("abc"), 4), "x": x})
    return base, with_person(base, {"a": 30, "b": 25, "c": 20}, "n/a")


def count_totals(df: pd.DataFrame, seed: int, runs: int) -> np.ndarray:
    out = releases(
        df, seed, runs, keys=list("abc"), max_groups=2, max_rows=2, epsilon=1.0, **QUERY
    )  # fmt: skip
    return np.array([r["n"].sum() for r in out])  # post-processing of the count vector


def worst(a: np.ndarray, b: np.ndarray, min_count: int = 200) -> float:
    return worst_over_cuts(a, b, BINS, min_count)


def _count_epsilon() -> float:
    pf = PrivateFrame(tables()[0], privacy_unit="pid", accountant=False, max_groups=2, max_rows=2)
    plan = pf.groupby("g", keys=list("abc")).plan(epsilon=1.0, **QUERY)
    (count,) = [c for c in plan.components if c.kind == "count"]
    return count.epsilon  # half the query's epsilon: the count alone must stay below it


def test_text_cells_counted_next_to_a_sum_pass_the_audit() -> None:
    d, d2 = tables()
    a, b = count_totals(d, 1, RUNS), count_totals(d2, 2, RUNS)
    assert b.mean() > a.mean() + 1  # the person's text cells are counted (bounded to 4)
    assert worst(a, b) <= _count_epsilon()


@pytest.mark.parametrize("broken", [{}, {"max_rows": 10**6}], ids=["no-bounding", "no-max-rows"])
def test_audit_catches_a_broken_bound_on_counted_text(
    broken: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    d, d2 = tables()
    a = count_totals(d, 3, 1000)
    with unbounded(monkeypatch, **broken):
        b = count_totals(d2, 4, 1000)
    assert worst(a, b, min_count=50) > 1.0  # beyond even the query's whole epsilon
