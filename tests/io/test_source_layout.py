"""The release keeps the input's layout: header or not, ", " separator, quoting, line
terminator, encoding/BOM and the missing-value marker (issue #2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from veil.cli.main import main
from veil.io import read, read_table, write

ADULT_LIKE = (
    b"39, State-gov, 77516, Bachelors, ?, <=50K\n"
    b"50, Self-emp-not-inc, 83311, ?, 13.5, <=50K\n"
    b"38, Private, 215646, HS-grad, 9, >50K\n"
    b"53, ?, 234721, 11th, 7, <=50K\n"
    b"28, Private, 338409, Bachelors, 13, <=50K\n"
)


def _roundtrip(tmp_path: Path, raw: bytes, name: str = "in.data", **kw: object) -> bytes:
    src = tmp_path / name
    src.write_bytes(raw)
    df, fmt = read_table(src, **kw)
    out = tmp_path / ("out" + src.suffix)
    write(df, out, like=fmt)
    return out.read_bytes()


def test_headerless_comma_space_question_mark_byte_identical(tmp_path: Path) -> None:
    src = tmp_path / "in.data"
    src.write_bytes(ADULT_LIKE)
    df, fmt = read_table(src)
    assert not fmt.header and fmt.delimiter == "," and fmt.spacing == " "
    assert fmt.missing == "?" and int(df.isna().sum().sum()) == 3
    assert df.attrs["veil_source"]["missing"] == "?"
    assert _roundtrip(tmp_path, ADULT_LIKE) == ADULT_LIKE


def test_categorical_columns_write_back_identically(tmp_path: Path) -> None:
    src = tmp_path / "in.data"
    src.write_bytes(ADULT_LIKE)
    df, fmt = read_table(src)
    cat = df.copy()
    for c in ("col_2", "col_4", "col_6", "col_1"):
        cat[c] = cat[c].astype("category")
    write(cat, tmp_path / "cat.data", like=fmt)
    assert (tmp_path / "cat.data").read_bytes() == ADULT_LIKE


def test_bom_semicolon_crlf_round_trip(tmp_path: Path) -> None:
    raw = "name;amount;note\r\nJosé;1,5;NA\r\nAnn;2;x\r\nBo;3;NA\r\n".encode("utf-8-sig")
    src = tmp_path / "in.csv"
    src.write_bytes(raw)
    df, fmt = read_table(src)
    assert fmt.encoding == "utf-8-sig" and fmt.delimiter == ";"
    assert fmt.lineterminator == "\r\n" and fmt.missing == "NA" and fmt.header
    assert df["note"].isna().sum() == 2
    assert _roundtrip(tmp_path, raw, "in.csv") == raw


def test_cp1252_and_quoted_fields_round_trip(tmp_path: Path) -> None:
    raw = '"id","city"\n"1","Zürich"\n"2","São Paulo"\n'.encode("cp1252")
    src = tmp_path / "in.csv"
    src.write_bytes(raw)
    _, fmt = read_table(src)
    assert fmt.quoting == "all" and fmt.encoding == "cp1252"
    assert _roundtrip(tmp_path, raw, "in.csv") == raw


def test_several_markers_are_written_empty(tmp_path: Path) -> None:
    raw = b"a,b\n1,?\n2,NA\n3,x\n"
    src = tmp_path / "in.csv"
    src.write_bytes(raw)
    df, fmt = read_table(src)
    assert fmt.missing is None and df["b"].isna().sum() == 2
    assert _roundtrip(tmp_path, raw, "in.csv") == b"a,b\n1,\n2,\n3,x\n"


def test_marker_fills_missing_numbers_and_changed_values(tmp_path: Path) -> None:
    src = tmp_path / "in.data"
    src.write_bytes(ADULT_LIKE)
    df, fmt = read_table(src)
    df.loc[0, "col_1"] = None  # an operator blanked a number; it comes back as "?"
    write(df, tmp_path / "o.data", like=fmt)
    first = (tmp_path / "o.data").read_bytes().splitlines()[0]
    assert first == b"?, State-gov, 77516, Bachelors, ?, <=50K"
    back = read(tmp_path / "o.data")
    assert back.isna().sum().sum() == 4


def _policy(tmp_path: Path, columns: dict) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump({"columns": columns}, sort_keys=False))
    return p


ROLES = {f"col_{i}": "insensitive" for i in range(1, 7)}


def test_cli_anonymize_keeps_headerless_layout(tmp_path: Path) -> None:
    src = tmp_path / "small.data"
    src.write_bytes(ADULT_LIKE)
    round_op = {"name": "round", "base": 1000}
    pol = _policy(tmp_path, {**ROLES, "col_3": {"role": "insensitive", "operator": round_op}})
    out = tmp_path / "o"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    got = (out / "small.data").read_bytes()
    want = ADULT_LIKE
    for old, new in (
        (b"77516", b"78000"),
        (b"83311", b"83000"),
        (b"215646", b"216000"),
        (b"234721", b"235000"),
        (b"338409", b"338000"),
    ):
        want = want.replace(old, new)
    assert got == want


def test_cli_headerless_rename_columns_keeps_no_header_writes_mapping(tmp_path: Path) -> None:
    src = tmp_path / "small.data"
    src.write_bytes(ADULT_LIKE)
    pol = _policy(
        tmp_path,
        {
            **ROLES,
            "col_1": {"role": "insensitive", "operator": {"name": "rename_columns", "prefix": "v"}},
        },
    )
    out = tmp_path / "o"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    assert (out / "small.data").read_bytes() == ADULT_LIKE
    mapping = pd.read_csv(out / "column_mapping.csv")
    assert mapping["original"].tolist() == [f"col_{i}" for i in range(1, 7)]


@pytest.mark.parametrize("names", [False, True])
def test_cli_headerless_with_names_stays_headerless(tmp_path: Path, names: bool) -> None:
    src = tmp_path / "small.data"
    src.write_bytes(ADULT_LIKE)
    cols = ["age", "work", "fnlwgt", "edu", "num", "income"] if names else list(ROLES)
    spec: dict = {"columns": {c: "insensitive" for c in cols}}
    if names:
        spec["input"] = {"names": cols}
    pol = tmp_path / "p.yaml"
    pol.write_text(yaml.safe_dump(spec))
    out = tmp_path / "o"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    assert (out / "small.data").read_bytes() == ADULT_LIKE


def test_single_declared_marker_is_used_without_rereading(tmp_path: Path) -> None:
    raw = b"a,b\n1,n/a\n2,x\n3,\n"
    src = tmp_path / "in.csv"
    src.write_bytes(raw)
    df, fmt = read_table(src, missing_values=["n/a"])
    assert fmt.missing == "n/a" and df["b"].isna().sum() == 1
    assert _roundtrip(tmp_path, raw, "in.csv", missing_values=["n/a"]) == raw
