"""Keyed operators on dates: one pseudonym (one fake) per date, however the reader typed it.

``veil.io.read`` parses a column into dates only when every cell parses with one format; the
same file text ``1980-01-02`` is a ``Timestamp`` in one file and text in another (one cell
``unknown``).  Pseudonyms are documented to agree across files and runs (``17``, ``17.0`` and
``"17"`` agree), so the two releases must still join on it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from _helpers import ctx

from veil.deid.operators import get_operator
from veil.io import read


def _read_two(tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    a = tmp_path / "a.csv"
    a.write_text("dob,x\n1980-01-02,1\n1975-03-04,2\n")
    b = tmp_path / "b.csv"
    b.write_text("dob,x\n1980-01-02,1\nunknown,2\n")
    da, db = read(a), read(b)
    # the attack's premise: the same text is a date in one file and text in the other
    assert pd.api.types.is_datetime64_any_dtype(da["dob"])
    assert not pd.api.types.is_datetime64_any_dtype(db["dob"])
    return da, db


def test_same_date_text_same_pseudonym_in_two_files(tmp_path: Path) -> None:
    da, db = _read_two(tmp_path)
    op = get_operator("pseudonymize", {})
    pa = op.apply(da, "dob", ctx())["dob"]
    pb = op.apply(db, "dob", ctx())["dob"]
    assert pa.iloc[0] == pb.iloc[0]
    assert pa.iloc[1] != pa.iloc[0] and pb.iloc[1] != pb.iloc[0]


def test_same_date_text_same_fake_in_two_files(tmp_path: Path) -> None:
    da, db = _read_two(tmp_path)
    op = get_operator("fake", {"kind": "name"})
    assert op.apply(da, "dob", ctx())["dob"].iloc[0] == op.apply(db, "dob", ctx())["dob"].iloc[0]


def test_dates_with_a_time_keep_their_time() -> None:
    s = pd.Series(
        pd.to_datetime(["2020-01-01 10:00:00", "2020-01-01 00:00:00", "2020-01-01"], format="mixed")
    )
    out = get_operator("pseudonymize", {}).apply(s.to_frame("t"), "t", ctx())["t"]
    assert out.iloc[0] != out.iloc[1] and out.iloc[1] == out.iloc[2]
    text = get_operator("pseudonymize", {}).apply(pd.DataFrame({"t": ["2020-01-01"]}), "t", ctx())[
        "t"
    ]
    assert out.iloc[1] == text.iloc[0]


def test_numbers_are_hashed_as_read_documented(tmp_path: Path) -> None:
    """docs/operators.md: a column read as numbers hashes ``1.5``, one read as text ``1.50``."""
    a = tmp_path / "a.csv"
    a.write_text("id\n1.50\n2\n")
    b = tmp_path / "b.csv"
    b.write_text("id\n1.50\nx7\n")
    op = get_operator("pseudonymize", {})
    pa = op.apply(read(a), "id", ctx())["id"]
    pb = op.apply(read(b), "id", ctx())["id"]
    assert pa.iloc[0] != pb.iloc[0]
    assert pa.iloc[0] == op.apply(pd.DataFrame({"id": ["1.5"]}), "id", ctx())["id"].iloc[0]
