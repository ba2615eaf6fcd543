"""Reading tables: sniffing, missing values, dates, errors."""

from __future__ import annotations

import codecs
from pathlib import Path

import pandas as pd
import pytest

from veil.errors import InputError
from veil.io import read, read_table


def test_insurance_table(insurance_csv: Path) -> None:
    df = read(insurance_csv)
    assert df.shape == (1001, 13)
    assert pd.api.types.is_datetime64_any_dtype(df["Date_of_entry"])
    # '14/11/13 01:12' is day-first, two-digit year
    assert df["Date_of_entry"].iloc[0] == pd.Timestamp("2013-11-14 01:12")
    assert df["Age"].dtype.kind == "i"


def test_adult_comma_space_and_question_marks(adult_data: Path) -> None:
    df, fmt = read_table(adult_data)
    assert fmt.delimiter == "," and not fmt.header
    assert df.shape == (32561, 15)
    # no value keeps the leading space, '?' is missing
    assert not df["col_2"].dropna().str.startswith(" ").any()
    assert df["col_2"].isna().sum() == 1836
    assert df["col_1"].dtype.kind == "i"


def test_names_for_headerless(adult_data: Path) -> None:
    names = [f"c{i}" for i in range(15)]
    df = read(adult_data, names=names, columns=["c0", "c9"])
    assert list(df.columns) == ["c0", "c9"] and df.shape[0] == 32561


def test_tsv_and_missing_markers(datasets_dir: Path) -> None:
    df = read(datasets_dir / "ds004148" / "participants.tsv", missing_values=["n/a"])
    assert df.shape[0] == 60 and df.columns[0] == "participant_id"
    assert df["age"].dtype.kind in "if"


@pytest.mark.parametrize("delim", [",", ";", "\t", "|"])
def test_delimiter_sniffing(tmp_path: Path, delim: str) -> None:
    p = tmp_path / "t.txt"
    p.write_text(
        delim.join(["name", "city", "n"])
        + "\n"
        + delim.join(['"Doe, J"', "Paris", "3"])
        + "\n"
        + delim.join(["Roe", "Lyon", "4"])
        + "\n"
    )
    df = read(p)
    assert list(df.columns) == ["name", "city", "n"]
    assert df["n"].tolist() == [3, 4]


@pytest.mark.parametrize("enc", ["utf-8-sig", "utf-16", "utf-8", "cp1252"])
def test_encoding_sniffing(tmp_path: Path, enc: str) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes("nom,ville\nJosé,Montréal\nZoë,Besançon\n".encode(enc))
    df = read(p)
    assert list(df.columns) == ["nom", "ville"]
    assert df["nom"].tolist() == ["José", "Zoë"]


def test_cp1252_late_in_file(tmp_path: Path) -> None:
    body = "a,b\n" + "x,1\n" * 40000 + "caf\xe9,2\n"
    p = tmp_path / "t.csv"
    p.write_bytes(body.encode("cp1252"))
    assert read(p)["a"].iloc[-1] == "café"


def test_explicit_encoding_undecodable(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes("a,b\ncaf\xe9,1\n".encode("cp1252"))
    with pytest.raises(InputError, match="decode"):
        read(p, encoding="utf-8")


def test_binary_file_rejected(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b"\x00\x01\x02garbage\x00" * 10)
    with pytest.raises(InputError):
        read(p)


def test_bom_not_in_header(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(codecs.BOM_UTF8 + b"id,x\n1,2\n")
    assert list(read(p).columns) == ["id", "x"]


@pytest.mark.parametrize("content", [b"", b"a,b\n", b"\n\n"])
def test_empty(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    with pytest.raises(InputError, match="empty"):
        read(p)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="directory"):
        read(tmp_path)


def test_declared_dates(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("d,e\n2020-01-31,x\n2021-12-01,y\n")
    df = read(p, parse_dates=["d"])
    assert df["d"].dt.year.tolist() == [2020, 2021]
    with pytest.raises(InputError, match="date"):
        read(p, parse_dates=["e"])
    assert not pd.api.types.is_datetime64_any_dtype(read(p, parse_dates=False)["d"])


def test_inconsistent_dates_not_parsed(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("d\n2020-01-31\n31/01/2020\n")
    assert not pd.api.types.is_datetime64_any_dtype(read(p)["d"])


def test_parquet_roundtrip(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"]})
    df.to_parquet(tmp_path / "t.parquet")
    out = read(tmp_path / "t.parquet")
    assert out["a"].tolist() == [1, 2, 3] and out["b"].isna().sum() == 1


def test_corrupt_parquet(tmp_path: Path) -> None:
    (tmp_path / "t.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="Parquet"):
        read(tmp_path / "t.parquet")


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "t.csv"
    p.write_text("a\n1\n")
    monkeypatch.setattr(
        "veil.io._read.os.access", lambda *a, **k: False
    )  # as root, chmod cannot deny
    with pytest.raises(InputError, match="permission denied"):
        read(p)


def test_leading_zeros_are_kept_as_text(tmp_path):
    path = tmp_path / "zips.csv"
    path.write_text("zip,phone,n\n02139,0123456789,1\n10001,0612345678,2\n")
    from veil.io import read as _read

    df = _read(path)
    assert df["zip"].tolist() == ["02139", "10001"]
    assert df["phone"].tolist() == ["0123456789", "0612345678"]
    assert df["n"].tolist() == [1, 2]  # plain numbers stay numeric
    assert list(df.columns) == ["zip", "phone", "n"]  # only the padded columns are re-read
    path.write_text("n,zip\n1,02139\n2,\n")
    df = _read(path)
    assert df["zip"].iloc[0] == "02139" and df["zip"].isna().iloc[1] and df["n"].tolist() == [1, 2]


def test_leading_zeros_and_missing_marker_from_one_re_read(tmp_path, monkeypatch):
    # holes under the default markers ("?", "NA", ""): the marker is looked up in the raw text,
    # in the same re-read that puts the padded column back as text
    path = tmp_path / "zips.csv"
    path.write_text("zip,n,city\n02139,1,?\n?,2,Boston\n10001,?,?\n")
    import veil.io._read as reader

    calls = []
    real = reader._csv
    monkeypatch.setattr(reader, "_csv", lambda *a, **k: calls.append(k) or real(*a, **k))
    df, fmt = read_table(path)
    assert df["zip"].tolist()[0::2] == ["02139", "10001"] and df["zip"].isna().iloc[1]
    assert df["n"].isna().iloc[2] and df["n"].iloc[:2].tolist() == [1, 2]
    assert df["city"].isna().tolist() == [True, False, True]
    assert fmt.missing == "?"
    assert len(calls) == 2  # the parse and one raw re-read
    path.write_text("zip,n,city\n02139,1,?\n?,2,Boston\n10001,NA,?\n")
    df, fmt = read_table(path)
    assert fmt.missing is None and df["zip"].tolist()[0] == "02139"  # two markers


def test_float_text_keeps_only_columns_a_float_would_round(tmp_path):
    """``read(float_text=True)`` re-reads as text only float columns holding a value of
    magnitude >= 2^53 (where an integer's text and its float64 parse differ); below that every
    cell's text and its parse have one canonical value, so the column stays numeric."""
    import numpy as np

    from veil.dp._canon import canonical

    rng = np.random.default_rng(5)
    texts = (
        [str(int(v)) for v in rng.integers(-(2**53) + 1, 2**53, 300)]  # whole numbers < 2^53
        + [repr(float(v)) for v in rng.normal(0, 1e6, 300)]  # shortest repr decimals
        + [f"{v:.6e}" for v in rng.normal(0, 1e-3, 300)]  # exponent forms
        + ["1e3", "+30", "30.", " 7", "-0", "-0.0", "0.30000000000000004", "9007199254740991"]
    )
    p = tmp_path / "t.csv"
    p.write_text("a,b,big\n" + "".join(f"{t},1.5,{t}\n" for t in texts[:-1]))
    with open(p, "a") as fh:
        fh.write(f"{texts[-1]},,9007199254740993\n")  # a missing b; 2^53 + 1 in big
    df = read(p, float_text=True)
    assert df["a"].dtype.kind == "f" and df["b"].dtype.kind == "f"  # stayed numbers
    assert df["big"].dtype.kind not in "fiu"  # kept as text: 2^53 + 1 would round
    assert canonical(df["big"].iloc[-1]) == 2**53 + 1
    for t, v in zip(texts, df["a"], strict=True):
        assert canonical(t) == canonical(v), t  # the parse and the text agree cell by cell


def test_a_policy_given_as_the_table_is_named(tmp_path: Path) -> None:
    """``veil anonymize policy.yaml --policy policy.yaml``: the ragged-row error says why."""
    pol = tmp_path / "policy.yaml"
    pol.write_text("version: 1\ncolumns:\n  id: {role: identifier, operator: drop}\n")
    with pytest.raises(InputError, match=r"ragged row .*; policy\.yaml is YAML \(a policy\?\)"):
        read(pol)
    raw = tmp_path / "t.csv"
    raw.write_text("a,b\n1,2\n3\n")
    with pytest.raises(InputError) as info:
        read(raw)
    assert "YAML" not in str(info.value)
