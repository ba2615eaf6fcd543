"""Atomic writes in the input's format; never over the input."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.errors import InputError
from veil.io import read, read_table, write


def test_same_format_as_input(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes("a;b\n1;é\n".encode("cp1252"))
    df, fmt = read_table(src)
    out = write(df, tmp_path / "out.csv", like=fmt)
    assert out.read_bytes() == "a;b\n1;é\n".encode("cp1252")


def test_tsv_and_parquet(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    write(df, tmp_path / "o.tsv")
    assert (tmp_path / "o.tsv").read_text() == "a\tb\n1\tx\n2\ty\n"
    write(df, tmp_path / "o.parquet")
    pd.testing.assert_frame_equal(read(tmp_path / "o.parquet"), df, check_dtype=False)


def test_like_parquet_path(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": [1]})
    write(df, tmp_path / "release", like=tmp_path / "input.parquet")
    assert (tmp_path / "release").read_bytes().startswith(b"PAR1")


def test_refuses_to_overwrite_input(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    df = read(src)
    before = src.read_bytes()
    with pytest.raises(InputError, match="input"):
        write(df, src)  # like taken from df.attrs
    with pytest.raises(InputError, match="input"):
        write(df, tmp_path / "." / "in.csv", like=src)
    assert src.read_bytes() == before


def test_atomic_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "o.csv"
    target.write_text("old\n")

    class Boom(pd.DataFrame):
        def to_csv(self, *a, **k):  # type: ignore[override]
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write(Boom({"a": [True]}), target)  # booleans take the pandas path
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["o.csv"]


def test_missing_output_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="folder"):
        write(pd.DataFrame({"a": [1]}), tmp_path / "no" / "o.csv")


def test_write_json_numpy(tmp_path: Path) -> None:
    import json

    import numpy as np

    from veil.io import write_json

    write_json(
        {"a": np.int64(3), "b": np.float32(0.5), "c": np.array([1, 2]), "d": np.bool_(True)},
        tmp_path / "x.json",
    )
    assert json.loads((tmp_path / "x.json").read_text()) == {
        "a": 3,
        "b": 0.5,
        "c": [1, 2],
        "d": True,
    }


def test_fast_path_matches_pandas(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {"id": [1, 2, 3], "name": ["Ann", None, "Zoë"], "city": ["Nairobi", "Kisii", "Lamu"]}
    )
    write(df, tmp_path / "a.csv")
    assert (tmp_path / "a.csv").read_bytes() == df.to_csv(index=False, lineterminator="\n").encode()
    quoted = df.assign(city=["Nairobi, KE", 'say "hi"', "Lamu"])
    write(quoted, tmp_path / "b.csv")
    back = read(tmp_path / "b.csv")
    assert back["city"].tolist() == quoted["city"].tolist() and back["name"].isna().tolist() == [
        False,
        True,
        False,
    ]


def test_lone_column_with_holes_keeps_its_rows(tmp_path):
    # an empty field alone on a line is a blank line, which readers skip: it is written ""
    df = pd.DataFrame({"a": ["x", None, "y"]})
    write(df, tmp_path / "one.csv")
    assert (tmp_path / "one.csv").read_text().splitlines()[2] == '""'
    back = read(tmp_path / "one.csv")
    assert len(back) == 3 and back["a"].isna().tolist() == [False, True, False]


def test_output_path_that_is_a_folder_is_named_in_the_error(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.mkdir()
    with pytest.raises(InputError, match="out.csv"):
        write(pd.DataFrame({"a": [1]}), target)
    assert target.is_dir() and not any(target.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary left


def test_atomic_write_to_a_fifo_writes_through_it(tmp_path):
    """A FIFO (like /dev/null or /dev/stdout on a pipe) is written, not renamed over: the old
    code replaced the node by a regular file (as root, /dev/null for every process)."""
    import os
    import stat
    import threading

    from veil.io import atomic_write

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    atomic_write(fifo, lambda fh: fh.write(b"a,b\n1,2\n"))
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert got == [b"a,b\n1,2\n"]


def test_atomic_write_keeps_a_symlink_and_replaces_its_file(tmp_path):
    import os

    from veil.io import atomic_write

    real = tmp_path / "data" / "release.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(real)
    assert atomic_write(link, lambda fh: fh.write(b"new\n")) == link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"
    assert sorted(p.name for p in real.parent.iterdir()) == ["release.csv"]  # no temp left


def test_negative_zero_is_written_as_zero(tmp_path: Path) -> None:
    """check() puts -0.0 and 0.0 in one class (they are equal); the CSV text must then not
    show them apart: read back as text, the k = 5 class of four 0.0 and one -0.0 was a class
    of four and a class of one."""
    from veil.anonymity import check

    df = pd.DataFrame({"x": [0.0, 0.0, -0.0, 0.0, 0.0, 2.5, 2.5, 2.5, 2.5, 2.5]})
    assert check(df, ["x"], k=5).holds
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str)
    assert text.groupby("x").size().min() >= 5
    assert "-0" not in path.read_text()
    assert np.signbit(df["x"].to_numpy()).tolist()[2]  # the caller's frame is not modified
    assert pd.read_csv(path)["x"].tolist() == df["x"].tolist()  # values are equal


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([0.0, 0.0, -0.0, 0.0, 0.0, "n/a", "n/a", "n/a", "n/a", "n/a"], dtype=object),
        pd.Series([0.0, 0.0, np.float32(-0.0), 0.0, 0.0, 7, 7, 7, 7, 7], dtype=object),
        pd.Series([0.0, 0.0, -0.0, 0.0, 0.0, None, 2.5, 2.5, 2.5, 2.5], dtype="Float64"),
        pd.Series(pd.Categorical([-0.0, -0.0, -0.0, -0.0, -0.0] + ["x"] * 5)),
        pd.Series([Decimal("0")] * 2 + [Decimal("-0")] + [Decimal("0")] * 2 + [2.5] * 5),
        pd.Series(
            [Decimal("0.00"), Decimal("0"), Decimal("-0.0"), Decimal("0E+2"), Decimal(0)]
            + [Decimal("2.50")] * 5
        ),
    ],
    ids=["object-text", "object-int", "nullable-float", "categorical", "decimal", "decimal-texts"],
)
def test_negative_zero_in_any_float_holding_column_is_written_as_zero(
    tmp_path: Path, column: pd.Series
) -> None:
    """An object column mixing -0.0 with text or integers (and a nullable float or categorical
    column) wrote '-0.0' next to '0.0', though every grouping in Veil counts them as one value:
    a reader of the text saw a class of four and a class of one where k = 5 was checked."""
    from veil.anonymity import check

    df = pd.DataFrame({"x": column})
    if column.notna().all():
        assert check(df, ["x"], k=5).holds
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)["x"]
    assert not text.str.startswith("-").any(), text.tolist()
    assert text[:5].nunique() == 1  # the class of five zeros reads as one value
    assert float(text[0]) == 0.0 and not text[5:].isin([text[0]]).any()
    assert np.signbit(float(df["x"].astype(object)[2]))  # the caller's frame is not modified


def test_equal_decimals_are_written_alike(tmp_path: Path) -> None:
    """Decimal("1") and Decimal("1.0") are one value to check() (equal, same kind) but were
    written '1' and '1.0': a reader of the text saw the checked class of five as four and one.
    Equal decimals written with different texts now share one; others keep their text."""
    from veil.anonymity import check

    ones = [Decimal("1"), Decimal("1.0"), Decimal("1"), Decimal("1.00"), Decimal("1")]
    tens = [Decimal("1E+1"), Decimal("10"), Decimal("10.0"), Decimal("10"), Decimal("10")]
    keep = [Decimal("2.50")] * 5  # one text: kept, trailing zero and all
    df = pd.DataFrame({"x": pd.Series(ones + tens + keep, dtype=object)})
    assert check(df, ["x"], k=5).holds
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str)["x"]
    assert text.groupby(text).size().min() >= 5, text.tolist()
    assert text.tolist() == ["1"] * 5 + ["10"] * 5 + ["2.50"] * 5
    assert str(df["x"][1]) == "1.0"  # the caller's frame is not modified


def test_negative_zero_is_written_as_zero_in_parquet(tmp_path: Path) -> None:
    """Parquet kept the sign bit of -0.0: a reader of the release saw which zeros came from
    negative values (-300 rounded to -0.0), which check() groups with 0.0 as one value and the
    CSV writes as 0."""
    df = pd.DataFrame(
        {
            "f": [-0.0, 0.0, 0.0, 2.5],
            "n": pd.Series([-0.0, None, 0.0, 2.5], dtype="Float64"),
            "c": pd.Series(pd.Categorical([-0.0, -0.0, 1.0, 1.0])),
        }
    )
    back = pd.read_parquet(write(df, tmp_path / "rel.parquet"))
    for col in ("f", "n", "c"):
        values = back[col].astype(object).to_numpy(dtype=float, na_value=np.nan)
        assert not np.signbit(values[values == 0]).any(), col
    assert np.signbit(df["f"][0])  # the caller's frame is not modified


def test_equal_decimals_written_alike_keep_their_value(tmp_path: Path) -> None:
    """The one text of equal decimals is computed exactly: the default 28-digit context
    rounded 1.00000000000000000000000000001 to 1 (another value, merged with the cells of 1),
    and its exponent range failed the write of 1E+1000000 with decimal.Overflow."""
    long = "1.00000000000000000000000000001"
    cells = [Decimal(long), Decimal(long + "0"), Decimal("1")]
    cells += [Decimal("1E+1000000"), Decimal("10E+999999")]
    df = pd.DataFrame({"x": pd.Series(cells, dtype=object)})
    text = pd.read_csv(write(df, tmp_path / "rel.csv"), dtype=str)["x"].tolist()
    assert [Decimal(t) for t in text] == cells  # every written value equals its cell
    assert text[0] == text[1] != text[2]
    assert text[3] == text[4]


def test_negative_zero_text_is_kept(tmp_path: Path) -> None:
    """Only float cells are rewritten: the text '-0.0' (in a text or a mixed object column,
    where it is a string, not a float) and integers keep what they hold."""
    df = pd.DataFrame(
        {
            "mixed": pd.Series(["-0.0", -0.0, 3, "-0"], dtype=object),
            "text": pd.Series(["-0.0", "0.0", "a", "-0"], dtype=object),
            "ints": pd.Series([0, -0, -1, 2], dtype=np.int64),
        }
    )
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert text["mixed"].tolist() == ["-0.0", "0.0", "3", "-0"]
    assert text["text"].tolist() == ["-0.0", "0.0", "a", "-0"]
    assert text["ints"].tolist() == ["0", "0", "-1", "2"]
