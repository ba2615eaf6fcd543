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


def _read_raw(tmp_path: Path, raw: bytes, name: str = "in.data", **kw: object) -> tuple:
    """Write ``raw`` to ``tmp_path / name`` and read it back: ``(df, fmt, path)``."""
    src = tmp_path / name
    src.write_bytes(raw)
    df, fmt = read_table(src, **kw)
    return df, fmt, src


def _roundtrip(tmp_path: Path, raw: bytes, name: str = "in.data", **kw: object) -> bytes:
    df, fmt, src = _read_raw(tmp_path, raw, name, **kw)
    out = tmp_path / ("out" + src.suffix)
    write(df, out, like=fmt)
    return out.read_bytes()


def test_headerless_comma_space_question_mark_byte_identical(tmp_path: Path) -> None:
    df, fmt, _ = _read_raw(tmp_path, ADULT_LIKE)
    assert not fmt.header and fmt.delimiter == "," and fmt.spacing == " "
    assert fmt.missing == "?" and int(df.isna().sum().sum()) == 3
    assert df.attrs["veil_source"]["missing"] == "?"
    assert _roundtrip(tmp_path, ADULT_LIKE) == ADULT_LIKE


def test_categorical_columns_write_back_identically(tmp_path: Path) -> None:
    df, fmt, _ = _read_raw(tmp_path, ADULT_LIKE)
    cat = df.copy()
    for c in ("col_2", "col_4", "col_6", "col_1"):
        cat[c] = cat[c].astype("category")
    write(cat, tmp_path / "cat.data", like=fmt)
    assert (tmp_path / "cat.data").read_bytes() == ADULT_LIKE


def test_bom_semicolon_crlf_round_trip(tmp_path: Path) -> None:
    raw = "name;amount;note\r\nJosé;1,5;NA\r\nAnn;2;x\r\nBo;3;NA\r\n".encode("utf-8-sig")
    df, fmt, _ = _read_raw(tmp_path, raw, "in.csv")
    assert fmt.encoding == "utf-8-sig" and fmt.delimiter == ";"
    assert fmt.lineterminator == "\r\n" and fmt.missing == "NA" and fmt.header
    assert df["note"].isna().sum() == 2
    assert _roundtrip(tmp_path, raw, "in.csv") == raw


def test_cp1252_and_quoted_fields_round_trip(tmp_path: Path) -> None:
    raw = '"id","city"\n"1","Zürich"\n"2","São Paulo"\n'.encode("cp1252")
    _, fmt, _ = _read_raw(tmp_path, raw, "in.csv")
    assert fmt.quoting == "all" and fmt.encoding == "cp1252"
    assert _roundtrip(tmp_path, raw, "in.csv") == raw


def test_several_markers_are_written_empty(tmp_path: Path) -> None:
    raw = b"a,b\n1,?\n2,NA\n3,x\n"
    df, fmt, _ = _read_raw(tmp_path, raw, "in.csv")
    assert fmt.missing is None and df["b"].isna().sum() == 2
    assert _roundtrip(tmp_path, raw, "in.csv") == b"a,b\n1,\n2,\n3,x\n"


def test_marker_fills_missing_numbers_and_changed_values(tmp_path: Path) -> None:
    df, fmt, _ = _read_raw(tmp_path, ADULT_LIKE)
    df.loc[0, "col_1"] = None  # an operator blanked a number; it comes back as "?"
    write(df, tmp_path / "o.data", like=fmt)
    first = (tmp_path / "o.data").read_bytes().splitlines()[0]
    assert first == b"?, State-gov, 77516, Bachelors, ?, <=50K"
    back = read(tmp_path / "o.data")
    assert back.isna().sum().sum() == 4


def _policy(tmp_path: Path, columns: dict, **top: object) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump({**top, "columns": columns}, sort_keys=False))
    return p


ROLES = {f"col_{i}": "insensitive" for i in range(1, 7)}


def _anonymize(tmp_path: Path, pol: Path) -> bytes:
    """``veil anonymize`` of ADULT_LIKE (as small.data) with ``pol``: the release's bytes."""
    src = tmp_path / "small.data"
    src.write_bytes(ADULT_LIKE)
    out = tmp_path / "o"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    return (out / "small.data").read_bytes()


def test_cli_anonymize_keeps_headerless_layout(tmp_path: Path) -> None:
    round_op = {"name": "round", "base": 1000}
    pol = _policy(tmp_path, {**ROLES, "col_3": {"role": "insensitive", "operator": round_op}})
    got = _anonymize(tmp_path, pol)
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
    pol = _policy(
        tmp_path,
        {
            **ROLES,
            "col_1": {"role": "insensitive", "operator": {"name": "rename_columns", "prefix": "v"}},
        },
    )
    assert _anonymize(tmp_path, pol) == ADULT_LIKE
    mapping = pd.read_csv(tmp_path / "o" / "column_mapping.csv")
    assert mapping["original"].tolist() == [f"col_{i}" for i in range(1, 7)]


@pytest.mark.parametrize("names", [False, True])
def test_cli_headerless_with_names_stays_headerless(tmp_path: Path, names: bool) -> None:
    cols = ["age", "work", "fnlwgt", "edu", "num", "income"] if names else list(ROLES)
    top = {"input": {"names": cols}} if names else {}
    pol = _policy(tmp_path, {c: "insensitive" for c in cols}, **top)
    assert _anonymize(tmp_path, pol) == ADULT_LIKE


def test_single_declared_marker_is_used_without_rereading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veil.io._read as reader

    raw = b"a,b\n1,n/a\n2,x\n3,\n"
    calls: list[dict] = []
    real = reader._csv
    monkeypatch.setattr(reader, "_csv", lambda *a, **k: calls.append(k) or real(*a, **k))
    df, fmt, _ = _read_raw(tmp_path, raw, "in.csv", missing_values=["n/a"])
    assert fmt.missing == "n/a" and df["b"].isna().sum() == 1
    assert not any(k.get("na_filter") is False for k in calls)  # no raw re-read for the marker
    assert _roundtrip(tmp_path, raw, "in.csv", missing_values=["n/a"]) == raw


def test_comma_space_values_with_delimiters_are_quoted_outside_the_space(tmp_path: Path) -> None:
    """Mondrian publishes sets such as ``{Bachelors,Masters}``: in a ", "-separated release the
    space goes before the quote, so the value reads back without a leading space (with Veil
    and with pandas' skipinitialspace); values that start with a space or hold quotes too."""
    df, fmt, _ = _read_raw(tmp_path, ADULT_LIKE)
    df["col_1"] = "[30, 40)"
    df["col_4"] = ["{Bachelors,Masters}", ' say "hi"', "HS-grad", "a, b", "x"]
    write(df, tmp_path / "o.data", like=fmt)
    raw = (tmp_path / "o.data").read_bytes()
    assert raw.splitlines()[0].startswith(b'"[30, 40)", State-gov, 77516, "{Bachelors,Masters}", ')
    for back in (
        read(tmp_path / "o.data", names=list(df.columns)),
        pd.read_csv(
            tmp_path / "o.data",
            header=None,
            names=list(df.columns),
            skipinitialspace=True,
            na_values="?",
            keep_default_na=False,
        ),
    ):
        assert back["col_4"].tolist() == df["col_4"].tolist()
        assert back["col_1"].tolist() == df["col_1"].tolist()
        assert back["col_2"].tolist() == df["col_2"].tolist()
    _, fmt2 = read_table(tmp_path / "o.data")
    assert fmt2.spacing == " " and fmt2.delimiter == ","
    write(read(tmp_path / "o.data"), tmp_path / "again.data", like=fmt2)
    assert (tmp_path / "again.data").read_bytes() == raw


def test_comma_space_sniffed_through_quoted_fields(tmp_path: Path) -> None:
    """Every line holding a quoted field with commas inside: still the ", " layout."""
    raw = b'1, "a,b", x\n2, "c,d,e", y\n3, f, z\n'
    df, fmt, _ = _read_raw(tmp_path, raw)
    assert fmt.spacing == " " and df.shape == (3, 3)
    assert df["col_2"].tolist() == ["a,b", "c,d,e", "f"]
    assert _roundtrip(tmp_path, raw) == raw
