"""``veil query``: output, exit codes and errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def test_query_prints_table_and_writes_output(table: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "res.csv"
    sql = (
        "SELECT county, COUNT(*) AS n, AVG(age) FROM data WHERE age > 20 AND sex = 'F' "
        "GROUP BY county"
    )
    rc = main(
        ["query", str(table), sql, "--epsilon", "1e8", "--bounds", "age=18:100",
         "--keys", "county=a,b,c", "--privacy-unit", "pid", "--out", str(out), "--seed", "1"]
    )  # fmt: skip
    assert rc == 0
    printed = capsys.readouterr().out
    assert "avg_age" in printed and "± n" in printed
    res = pd.read_csv(out)
    assert res["county"].tolist() == ["a", "b", "c"]
    assert res["n"].tolist() == [3, 2, 0]  # pid 1's two rows: only one kept (max_rows=1)
    assert {"n_ci", "avg_age_ci"} <= set(res.columns)


def test_dry_run_prints_accuracy(table: Path, capsys) -> None:
    rc = main(
        ["query", str(table), "SELECT SUM(age) FROM data", "--epsilon", "1",
         "--bounds", "age=0:100", "--dry-run"]
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "dry run" in out and "sum_age" in out and "299.6" in out  # 100 * ln(20)


def test_dry_run_mean_note_names_the_cli_option(table: Path, capsys) -> None:
    args = ["query", str(table), "SELECT AVG(age) FROM data", "--epsilon", "1"]
    assert main([*args, "--bounds", "age=0:100", "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table may wrap the note
    assert "--group-size" in out and "group_size" not in out
    assert main([*args, "--bounds", "age=0:100", "--dry-run", "--group-size", "50"]) == 0
    assert "--group-size" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["SELECT county, AVG(age) FROM data GROUP BY county", "--delta", "1e-6"], "--bounds age"),
        (["SELECT county, COUNT(*) FROM data GROUP BY county ORDER BY county"], "ORDER BY"),
        (["SELECT COUNT(*) FROM data JOIN x ON a = b"], "JOIN"),
        (["SELECT COUNT(*) FROM data", "--bounds", "age=1-2"], "COLUMN=LOW:HIGH"),
        (["SELECT COUNT(*) FROM data", "--keys", "county"], "COLUMN=v1,v2"),
        (["SELECT county, COUNT(*) FROM data GROUP BY county"], "delta"),
        (["SELECT COUNT(*) FROM data", "--max-groups", "2"], "--privacy-unit"),
        (["SELECT nope, COUNT(*) FROM data GROUP BY nope", "--delta", "1e-6"], "'nope'"),
        (["SELECT COUNT(*) FROM data WHERE sex = F"], "'F' in WHERE (a text value needs single"),
        (['SELECT COUNT(*) FROM data WHERE NOT age > 3 AND "F" = sex'], "single quotes: 'F')"),
    ],
)
def test_usage_errors_exit_2(table: Path, capsys, args: list[str], fragment: str) -> None:
    rc = main(["query", str(table), args[0], "--epsilon", "1", *args[1:]])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("veil: error:") and fragment in err, err
    assert err.count("\n") == 1
    if "nope" in args[0]:
        assert "quotes" not in err  # only a word compared with a column gets the hint


def test_unknown_column_recalls_the_header_line(tmp_path: Path, capsys) -> None:
    """A headerless file's first row is its column names (documented): the errors say so."""
    path = tmp_path / "raw.data"
    path.write_text("".join(f"{20 + i % 50}, {'FM'[i % 2]}\n" for i in range(200)))
    for args in (
        ["SELECT COUNT(*) FROM data WHERE col_2 = 'F'"],
        ["SELECT AVG(age) FROM data", "--bounds", "age=0:100"],
        ["SELECT COUNT(*) FROM data", "--privacy-unit", "pid"],
    ):
        assert main(["query", str(path), args[0], "--epsilon", "1", *args[1:]]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "read as the column names" in err and "--names" in err
    names = ["query", str(path), "SELECT COUNT(*) FROM data WHERE sx = 'F'", "--epsilon", "1"]
    assert main([*names, "--names", "age,sex"]) == 2
    assert "read as the column names" not in capsys.readouterr().err
    assert main([*names[:2], "SELECT COUNT(*) FROM data WHERE sex = 'F'", "--epsilon", "1",
                 "--names", "age,sex"]) == 0  # fmt: skip


def test_argparse_errors_exit_2(table: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["query", str(table), "SELECT COUNT(*) FROM data"])  # no --epsilon
    assert exc.value.code == 2


def test_missing_file_exit_2(tmp_path: Path, capsys) -> None:
    rc = main(["query", str(tmp_path / "none.csv"), "SELECT COUNT(*) FROM data", "--epsilon", "1"])
    assert rc == 2


def test_headerless_file_with_names_and_integer_median(tmp_path: Path, capsys) -> None:
    path = tmp_path / "raw.csv"
    path.write_text("".join(f"{20 + i % 30},{'ab'[i % 2]}\n" for i in range(400)))
    out = tmp_path / "o.csv"
    rc = main(
        ["query", str(path), "SELECT grp, MEDIAN(age) AS med FROM data GROUP BY grp",
         "--names", "age,grp", "--epsilon", "1e6", "--bounds", "age=0:100", "--integer", "age",
         "--keys", "grp=a,b", "--out", str(out), "--seed", "2"]
    )  # fmt: skip
    assert rc == 0
    res = pd.read_csv(out)
    raw = pd.read_csv(path, names=["age", "grp"])
    for grp, med in zip(res["grp"], res["med"]):
        ages = raw.loc[raw["grp"] == grp, "age"].to_numpy()
        assert (ages < med).sum() <= ages.size / 2 <= (ages <= med).sum()  # a true median


def test_numeric_keys_are_coerced(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    sql = "SELECT pid, COUNT(*) AS n FROM data GROUP BY pid"
    rc = main(
        ["query", str(table), sql, "--epsilon", "1e8", "--keys", "pid=1,2,99",
         "--out", str(out), "--seed", "3"]
    )  # fmt: skip
    assert rc == 0
    res = pd.read_csv(out)
    assert res["pid"].tolist() == [1, 2, 99] and res["n"].tolist() == [2, 1, 0]


def test_private_partition_selection_via_cli(tmp_path: Path, capsys) -> None:
    rows = [(i, "big") for i in range(300)] + [(1000, "rare")]
    path = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=["pid", "city"]).to_csv(path, index=False)
    rc = main(
        ["query", str(path), "SELECT city, COUNT(*) FROM data GROUP BY city", "--epsilon", "2",
         "--delta", "1e-6", "--privacy-unit", "pid", "--out", str(tmp_path / "o.csv"),
         "--seed", "4"]  # unseeded, 'rare' is kept with probability about delta
    )  # fmt: skip
    assert rc == 0
    printed = " ".join(capsys.readouterr().out.split())  # rich wraps the caption
    assert "groups kept if noisy persons >=" in printed
    res = pd.read_csv(tmp_path / "o.csv")
    assert res["city"].tolist() == ["big"]  # 'rare' (one person) is below the threshold


def test_too_large_epsilon_says_so(table: Path, capsys) -> None:
    """A noise scale below 2^-900 comes from a huge epsilon: the advice must be to lower it."""
    rc = main(["query", str(table), "SELECT AVG(age) FROM data", "--epsilon", "1e308",
               "--bounds", "age=0:120"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "too large" in err and "lower --epsilon" in err
