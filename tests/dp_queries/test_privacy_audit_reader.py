"""``veil query`` must not let one person's cell change how the *other* rows are read.

The table reader infers a column's type from all its cells.  Anything inferred that the
per-value canonical rule (:mod:`veil.dp._canon`) cannot undo is a privacy leak: one added
person changes every other person's rows, and the release tells the neighbours apart with
certainty.  Each test builds neighbouring files (one person added) and requires the same
release at a huge epsilon (noise ~1e-3, so counts are exact after rounding).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from veil.cli.main import main

EPS = 1e4


def _cli(path: Path, tmp_path: Path, sql: str, *extra: str) -> pd.DataFrame:
    out = tmp_path / "o.csv"
    rc = main(
        ["query", str(path), sql, "--epsilon", str(EPS), "--seed", "3", "--out", str(out), *extra]
    )
    assert rc == 0
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def _neighbours(tmp_path: Path, rows: list[str], extras: list[str]) -> list[Path]:
    paths = []
    for i, extra in enumerate([None, *extras]):
        p = tmp_path / f"d{i}.csv"
        p.write_text("\n".join(["d", *rows, *([extra] if extra is not None else [])]) + "\n")
        paths.append(p)
    return paths


def test_date_cells_are_not_read_by_a_format_inferred_from_other_rows(
    tmp_path: Path, capsys
) -> None:
    # 03/04/2020 is 3 April day-first and 4 March month-first: which format the reader detects
    # depends on the other cells (13/01/2020 forces day-first, 01/13/2020 month-first, a text
    # cell no dates at all)
    rows = ["03/04/2020"] * 100 + ["05/06/2021"] * 100
    paths = _neighbours(tmp_path, rows, ["13/01/2020", "01/13/2020", "unknown"])
    where = "SELECT COUNT(*) AS n FROM data WHERE d >= '2020-04-01' AND d < '2020-05-01'"
    counts = [_cli(p, tmp_path, where)["n"].tolist() for p in paths]
    assert counts[0] == counts[1] == counts[2] == counts[3], counts
    grouped = "SELECT d, COUNT(*) AS n FROM data GROUP BY d"
    outs = [_cli(p, tmp_path, grouped, "--delta", "1e-6") for p in paths]
    kept = [o.loc[o["n"].astype(float) > 50, "d"].tolist() for o in outs]
    assert kept[0] == kept[1] == kept[2] == kept[3], kept


def test_numeric_aggregates_do_not_fail_on_one_text_cell(tmp_path: Path, capsys) -> None:
    # one person's text cell makes the reader keep the whole column as text: SUM/AVG/MEDIAN
    # were refused ('not numeric') on that table and released on its neighbour
    rows = ["30"] * 100 + ["40"] * 100
    paths = _neighbours(tmp_path, rows, ["unknown", "true"])
    sql = "SELECT SUM(d) AS s, AVG(d) AS a, MEDIAN(d) AS m, COUNT(d) AS c FROM data"
    outs = [_cli(p, tmp_path, sql, "--bounds", "d=0:100") for p in paths]
    sums = [round(float(o["s"].iloc[0])) for o in outs]
    counts = [round(float(o["c"].iloc[0])) for o in outs]
    assert sums[0] == sums[1] == 7000 and sums[2] == 7001, sums  # 'true' reads as 1
    # COUNT(d) counts non-missing cells: 'unknown' is no number (missing for the sum) but a
    # cell, counted as it is without the SUM (test_privacy_audit_count_cells.py)
    assert counts == [200, 201, 201], counts


def test_python_frame_values_follow_each_cell() -> None:
    from veil.dp.frame import PrivateFrame

    n = pd.DataFrame({"x": [30, 40] * 50})
    t = pd.DataFrame({"x": ["30", "40"] * 50 + ["unknown"]})
    for df in (n, t):
        pf = PrivateFrame(df, accountant=False, random_state=1, bounds={"x": (0, 100)})
        out = pf.sql("SELECT SUM(x) AS s, COUNT(x) AS c FROM data", epsilon=EPS)
        cells = len(df)  # COUNT(x) counts the 'unknown' cell too
        assert round(float(out["s"].iloc[0])) == 3500 and round(float(out["c"].iloc[0])) == cells


def test_count_of_a_text_column_alone_counts_every_cell() -> None:
    from veil.dp.frame import PrivateFrame

    df = pd.DataFrame({"sex": ["F", "M", None] * 40})
    out = PrivateFrame(df, accountant=False, random_state=1).sql(
        "SELECT COUNT(sex) AS c FROM data", epsilon=EPS
    )
    assert round(float(out["c"].iloc[0])) == 80


def test_whole_numbers_above_2_53_are_not_rounded_by_a_neighbour(tmp_path: Path, capsys) -> None:
    # one person's missing (or fractional) value makes the reader parse the whole column as
    # float64, which rounds every other person's 9007199254740993 to ...992: the two groups
    # merged (150 vs 100 + 50) on the neighbouring file
    rows = ["code,z"] + ["9007199254740993,1"] * 100 + ["9007199254740992,1"] * 50
    paths = []
    for i, extra in enumerate([None, ",1", "0.5,1"]):
        p = tmp_path / f"b{i}.csv"
        p.write_text("\n".join(rows + ([extra] if extra else [])) + "\n")
        paths.append(p)
    sql = "SELECT code, COUNT(*) AS n FROM data GROUP BY code"
    outs = [_cli(p, tmp_path, sql, "--delta", "1e-6") for p in paths]
    kept = [sorted(zip(o["code"], o["n"].astype(float).round().astype(int))) for o in outs]
    for k in kept:
        assert [c for c, n in k if n >= 50] == ["9007199254740992", "9007199254740993"], kept


def test_one_non_utf8_byte_does_not_re_decode_the_other_rows(tmp_path: Path, capsys) -> None:
    # one person's Windows-1252 byte made the reader decode the whole file as Windows-1252:
    # every other person's UTF-8 'Zürich' became 'ZÃ¼rich' (WHERE counted 100 vs 0)
    rows = ("city,z\n" + "Zürich,1\n" * 100 + "Genève,1\n" * 50).encode("utf-8")
    d0, d1 = tmp_path / "e0.csv", tmp_path / "e1.csv"
    d0.write_bytes(rows)
    d1.write_bytes(rows + "Sion\xe9,1\n".encode("cp1252"))
    where = "SELECT COUNT(*) AS n FROM data WHERE city = 'Zürich'"
    assert [_cli(p, tmp_path, where)["n"].tolist() for p in (d0, d1)] == [["100"], ["100"]]
    grouped = "SELECT city, COUNT(*) AS n FROM data GROUP BY city"
    outs = [_cli(p, tmp_path, grouped, "--delta", "1e-6") for p in (d0, d1)]
    kept = [sorted(o.loc[o["n"].astype(float) > 25, "city"]) for o in outs]
    assert kept[0] == kept[1] == ["Genève", "Zürich"], kept


def test_a_huge_numeric_text_cell_is_clamped_not_an_error() -> None:
    # '1' followed by 400 zeros reads as a Python int too large for a float: it must be
    # clamped like any large value, not fail after the budget is charged
    from veil.dp import BudgetAccountant
    from veil.dp.frame import PrivateFrame

    acc = BudgetAccountant()
    df = pd.DataFrame({"x": ["1" + "0" * 400, "-" + "9" * 400] + ["5"] * 98})
    pf = PrivateFrame(df, accountant=acc, random_state=1, bounds={"x": (0, 10)})
    out = pf.sql("SELECT SUM(x) AS s FROM data", epsilon=EPS)
    assert round(float(out["s"].iloc[0])) == 10 + 0 + 5 * 98


def test_the_file_format_is_not_sniffed_from_the_persons_rows(tmp_path: Path, capsys) -> None:
    # ', ' spacing was sniffed from the share of spaced fields in the first 200 lines: one
    # person's unspaced row tipped it below 90%, and the column became ' sex' (the query failed
    # on that table and counted 16 on its neighbour); the header alone decides now
    rows = ["age, sex"] + ["30, Male"] * 16 + ["40,Female"]
    d0, d1 = tmp_path / "s0.csv", tmp_path / "s1.csv"
    d0.write_text("\n".join(rows) + "\n")
    d1.write_text("\n".join([*rows, "50,Female"]) + "\n")
    where = "SELECT COUNT(*) AS n FROM data WHERE sex = 'Male'"
    assert [_cli(p, tmp_path, where)["n"].tolist() for p in (d0, d1)] == [["16"], ["16"]]


def test_the_header_is_not_sniffed_from_the_persons_rows(tmp_path: Path, capsys) -> None:
    # an all-text table's first row was taken for data when a cell below repeated a column
    # name: one person whose city is 'city' turned the header into a data row
    rows = ["city,sex"] + ["Bern,F"] * 50 + ["Genf,M"] * 50
    d0, d1 = tmp_path / "h0.csv", tmp_path / "h1.csv"
    d0.write_text("\n".join(rows) + "\n")
    d1.write_text("\n".join([*rows, "city,F"]) + "\n")
    where = "SELECT COUNT(*) AS n FROM data WHERE city = 'Bern'"
    assert [_cli(p, tmp_path, where)["n"].tolist() for p in (d0, d1)] == [["50"], ["50"]]
