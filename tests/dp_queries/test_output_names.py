"""Names in and out of a DP query: output columns that would collide, table columns that repeat."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.cli.main import main
from veil.dp.frame import PrivateFrame
from veil.errors import ConfigError, InputError

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def _frame() -> PrivateFrame:
    df = pd.DataFrame({"pid": [1, 1, 2, 3], "g": ["a", "b", "a", "b"], "x": [1.0, 2, 3, 4]})
    return PrivateFrame(df, "pid", accountant=False, bounds={"x": (0, 5)}, random_state=1)


def test_output_named_like_another_outputs_ci_is_refused() -> None:
    """``n_ci`` (a sum) next to ``n`` used to give two columns called ``n_ci`` with
    ``with_ci=True`` -- the CLI then labelled the sum as the count's CI."""
    pf = _frame()
    with pytest.raises(ConfigError, match="n_ci"):
        pf.groupby("g", keys=["a", "b"]).plan(n="count", n_ci=("x", "sum"), epsilon=1.0)
    with pytest.raises(ConfigError, match="n_ci"):
        pf.sql("SELECT g, COUNT(*) AS n, SUM(x) AS n_ci FROM data GROUP BY g", epsilon=1.0,
               keys={"g": ["a", "b"]})  # fmt: skip
    with pytest.raises(ConfigError, match="g_ci"):
        pf.sql("SELECT g AS g_ci, COUNT(*) AS g FROM data GROUP BY g", epsilon=1.0,
               keys={"g": ["a", "b"]})  # fmt: skip


def test_cli_output_names_stay_unique(tmp_path, capsys) -> None:
    path = tmp_path / "t.csv"
    path.write_text("g,x\na,1\nb,2\n")
    rc = main(["query", str(path), "SELECT g, COUNT(*) AS n, SUM(x) AS n_ci FROM data GROUP BY g",
               "--epsilon", "1", "--keys", "g=a,b", "--bounds", "x=0:5"])  # fmt: skip
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == "" and "n_ci" in cap.err


def test_repeated_column_names_are_a_typed_error() -> None:
    """``df["x"]`` is then a DataFrame: AttributeError/TypeError deep in the query before."""
    df = pd.DataFrame([[1, "a", 1.0, 2.0]], columns=["pid", "g", "x", "x"])
    with pytest.raises(InputError, match="'x'"):
        PrivateFrame(df, "pid", accountant=False)


def test_non_text_column_labels_are_a_typed_error() -> None:
    """``pd.read_csv(header=None)`` labels columns 0, 1, ...: the SQL name "1" passed the
    column check and then failed with a KeyError."""
    df = pd.DataFrame({0: [1, 1, 2], 1: ["a", "b", "a"], 2: [1.0, 2.0, 3.0]})
    pf = PrivateFrame(df, accountant=False, random_state=2, bounds={2: (0, 5)})
    for sql in [
        'SELECT "1", COUNT(*) AS n FROM data GROUP BY "1"',
        "SELECT COUNT(*) FROM data WHERE \"1\" = 'a'",
        'SELECT SUM("2") FROM data',
    ]:
        with pytest.raises(ConfigError, match="rename"):
            pf.sql(sql, epsilon=1.0, keys={"1": ["a", "b"]} if "GROUP" in sql else None)


def test_private_selection_sorts_keys_of_mixed_types() -> None:
    """Selected keys are sorted (so the order leaks nothing); keys 1 and "a" in one object
    column made the sort raise TypeError after the budget was charged."""
    df = pd.DataFrame({"pid": range(60), "g": pd.Series([1, "a"] * 30, dtype=object)})
    pf = PrivateFrame(df, "pid", accountant=False, random_state=3)
    out = pf.groupby("g").agg(n="count", epsilon=10.0, delta=0.1)
    assert out["g"].tolist() == [1, "a"]  # by type name, then text: int < str


def test_sql_plan_accuracy_rows_carry_the_sql_output_names() -> None:
    """``SQLPlan.accuracy()`` named its rows ``__agg0``, ``__agg1`` (internal names)."""
    from veil.dp.sql import plan_sql

    sql = "SELECT g, COUNT(*) AS n, AVG(x), SUM(x) AS total FROM data GROUP BY g"
    plan = plan_sql(_frame(), sql, epsilon=1.0, keys={"g": ["a", "b"]})
    acc = plan.accuracy(group_size=10)
    assert acc.index.tolist() == ["n", "avg_x", "total"]
    assert acc.index.name == "output"
    out = plan.execute()
    assert [c for c in out.columns if c != "g"] == acc.index.tolist()
