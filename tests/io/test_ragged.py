"""Rows with too many or too few fields are refused, naming the line, never quoting it.

pandas' C parser raises on a row with too many fields but pads a row with too few with
missing values (the row's values then sit in the wrong columns of a release), and takes a
header shorter than the rows for an index (every value shifted one column left).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from veil.errors import InputError
from veil.io import read, read_table

SENTINEL = "SENTINEL-7731"


def _write(tmp_path: Path, text: str, name: str = "t.csv", encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def _refused(path: Path, **kwargs) -> str:
    with pytest.raises(InputError) as e:
        read(path, **kwargs)
    msg = str(e.value)
    assert SENTINEL not in msg and "\n" not in msg, msg
    assert path.name in msg, msg
    return msg


ROWS = [f"{i},x{i},{i * 2}" for i in range(30)]


@pytest.mark.parametrize("quoted", [False, True])
@pytest.mark.parametrize(
    ("bad", "found"),
    [(f"7,{SENTINEL}", 2), (f"7,{SENTINEL},14,{SENTINEL}", 4), (SENTINEL, 1)],
)
def test_ragged_row_is_refused_with_its_line(tmp_path, bad, found, quoted):
    rows = list(ROWS)
    rows[5] = bad  # data row 6: line 7 of the file (the header is line 1)
    if quoted:  # a quote elsewhere in the file: the field counts come from a CSV parser
        rows[20] = '20,"x, 20",40'
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n")
    msg = _refused(p)
    assert "line 7 (data row 6)" in msg and "expected 3 fields" in msg, msg
    assert f"found {found}" in msg, msg


def test_quoted_newlines_and_delimiters_count_physical_lines(tmp_path):
    rows = list(ROWS)
    rows[2] = f'2,"{SENTINEL}\nsecond line, with a comma",4'  # lines 4-5, 3 fields
    rows[3] = f'3,"a ""quoted"" word, {SENTINEL}",6'
    rows[9] = f"9,{SENTINEL}"  # line 12: header, 9 rows of which one spans two lines
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n")
    msg = _refused(p)
    assert "line 12 (data row 10)" in msg and "found 2" in msg, msg


def test_record_spanning_lines_is_named_by_its_lines(tmp_path):
    rows = list(ROWS)
    rows[4] = f'4,"{SENTINEL}\n{SENTINEL}"'  # a two-line record with 2 fields: lines 6-7
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n")
    msg = _refused(p)
    assert "lines 6-7" in msg and "found 2" in msg, msg


def test_blank_lines_and_crlf_are_counted(tmp_path):
    rows = list(ROWS)
    rows[3] = ""  # a blank line (skipped by the reader, but a line of the file)
    rows[4] = "   "
    rows[8] = f"8,{SENTINEL}"  # line 10
    p = _write(tmp_path, "a,b,c\r\n" + "\r\n".join(rows) + "\r\n")
    msg = _refused(p)
    assert "line 10 (data row 7)" in msg and "found 2" in msg, msg


def test_header_shorter_than_the_rows_is_refused(tmp_path):
    # pandas makes the first column the index: every value one column to the left
    p = _write(tmp_path, "a,b\n" + "\n".join(f"{i},{SENTINEL},{i}" for i in range(5)) + "\n")
    msg = _refused(p)
    assert "line 2" in msg and "expected 2 fields" in msg and "found 3" in msg, msg


def test_trailing_delimiter_on_data_rows_only_is_refused(tmp_path):
    p = _write(tmp_path, "a,b,c\n" + "\n".join(f"{r}," for r in ROWS) + "\n")
    msg = _refused(p)
    assert "line 2" in msg and "found 4" in msg, msg


def test_headerless_file_and_names(tmp_path):
    rows = list(ROWS)
    rows[6] = f"6,{SENTINEL}"
    p = _write(tmp_path, "\n".join(rows) + "\n")
    assert "line 7" in _refused(p, header=False)
    good = _write(tmp_path, "\n".join(ROWS) + "\n", name="good.csv")
    msg = _refused(good, names=["a", "b", "c", "d"])  # a name too many: every row short
    assert "line 1" in msg and "expected 4 fields" in msg and "found 3" in msg, msg
    msg = _refused(good, names=["a", "b"])  # a name too few: pandas took an index
    assert "line 1" in msg and "expected 2 fields" in msg and "found 3" in msg, msg


@pytest.mark.parametrize("missing", [None, ()])
def test_short_row_is_refused_whatever_the_missing_markers(tmp_path, missing):
    rows = list(ROWS)
    rows[10] = f"10,{SENTINEL}"
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n")
    kwargs = {} if missing is None else {"missing_values": missing}
    assert "line 12" in _refused(p, **kwargs)


@pytest.mark.parametrize("encoding", ["utf-16", "cp1252"])
def test_other_encodings(tmp_path, encoding):
    rows = list(ROWS)
    rows[1] = "1,Zürich,2"
    rows[12] = f"12,{SENTINEL}"
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n", encoding=encoding)
    assert "line 14" in _refused(p)


def test_empty_and_missing_last_fields_are_not_ragged(tmp_path):
    rows = list(ROWS)
    rows[3] = "3,x3,"  # an empty last field
    rows[4] = "4,x4,?"
    rows[5] = '5,"x5, quoted",'
    rows[6] = '6,x6,""'
    rows[7] = ""  # blank lines are skipped
    rows[8] = "  "
    p = _write(tmp_path, "a,b,c\n" + "\n".join(rows) + "\n")
    df, _ = read_table(p)
    assert df.shape == (28, 3)
    assert df["c"].isna().sum() == 4 and df["b"].iloc[5] == "x5, quoted"
    p = _write(tmp_path, 'a,b,c\n1,"x\ny",\n2,z,4\n', name="q.csv")
    df = read(p, missing_values=())
    assert df.shape == (2, 3) and df["b"].iloc[0] == "x\ny"


def test_value_in_a_trailing_field_is_not_dropped(tmp_path):
    # pandas takes a first row one field longer than the header, its last field empty, for a
    # trailing delimiter, and then drops that field from every row -- with or without a value
    p = _write(tmp_path, f"a,b,c\n0,x,0,\n1,y,2,{SENTINEL}\n2,z,4,\n")
    msg = _refused(p)
    assert "line 2" in msg and "expected 3 fields" in msg and "found 4" in msg, msg


@pytest.mark.parametrize(
    "row",
    ['1,x"y,z"w,', "1,5'10\",z,", '1,"a, b",z,'],
    ids=["balanced-mid-field", "odd-mid-field", "quoted"],
)
def test_quotes_inside_unquoted_fields_are_text_as_pandas_reads_them(tmp_path, row):
    # a '"' inside an unquoted field is text for pandas: not an opening quote hiding the
    # delimiters and line breaks after it, so no false ragged row is reported
    rows = [f"{i},x{i},y{i},{i}" for i in range(20)]
    rows[4] = row
    p = _write(tmp_path, "a,b,c,d\n" + "\n".join(rows) + "\n")
    df = read(p)
    assert df.shape == (20, 4) and df["d"].isna().sum() == 1
    rows[9] = f"9,{SENTINEL}"  # and a short row after them is still found, by its line
    p = _write(tmp_path, "a,b,c,d\n" + "\n".join(rows) + "\n", name="bad.csv")
    msg = _refused(p)
    assert "line 11 (data row 10)" in msg and "found 2" in msg, msg


def test_byte_count_agrees_with_the_csv_module(tmp_path):
    """Random files (quoted delimiters and line breaks, blank lines, short and long rows):
    whenever the vectorized count decides, it finds what Python's csv module finds."""
    from veil.io._ragged import _UNSURE, _count_bytes, _count_csv
    from veil.io._sniff import TextFormat

    rng = np.random.default_rng(12)
    fmt = TextFormat("utf-8", ",", False, True)
    decided = 0
    for t in range(300):
        lines = ["a,b,c"]
        for i in range(int(rng.integers(1, 12))):
            cells = [f"v{i}{j}" for j in range(3)]
            if rng.random() < 0.2:
                cells[int(rng.integers(3))] = '"x,\ny ""z"""'
            k = int(rng.choice([3, 3, 3, 3, 2, 4, 1])) if rng.random() < 0.3 else 3
            lines.append(",".join((cells + ["w"])[:k]))
            if rng.random() < 0.1:
                lines.append(rng.choice(["", "  "]))
        path = tmp_path / f"r{t}.csv"
        path.write_text("\n".join(lines) + "\n")
        want = _count_csv(path, "utf-8", "strict", fmt, None, True, "the header")
        got = _count_bytes(path.read_bytes(), ",", None, True, "the header", None)
        if got is not _UNSURE:
            decided += 1
            assert got == want, (lines, got, want)
    assert decided > 100


def test_carriage_return_alone_ends_a_line_as_pandas_reads_it(tmp_path):
    """A ``\\r`` without ``\\n`` in a ``\\n`` file (line ends mixed by concatenation) ends a
    record for pandas and the csv module: the byte count, which splits at ``\\n`` only, took
    the two records around it for one ragged row of 5 fields."""
    rows = list(ROWS)
    rows[3] = "3,x3,"  # a missing last value: every record is counted
    text = "a,b,c\n" + "\n".join(rows[:10]) + "\n" + rows[10] + "\r" + "\n".join(rows[11:])
    p = tmp_path / "cr.csv"
    p.write_bytes((text + "\n").encode())
    df = read(p)
    assert df.shape == (30, 3) and df["a"].tolist() == list(range(30))
    assert df["c"].isna().sum() == 1
    rows[20] = f"20,{SENTINEL}"  # a short row after it is still found (the \r ends line 12)
    text = "a,b,c\n" + "\n".join(rows[:10]) + "\n" + rows[10] + "\r" + "\n".join(rows[11:])
    p = _write(tmp_path, text + "\n", name="cr_bad.csv")
    msg = _refused(p)
    assert "line 22 (data row 21)" in msg and "found 2" in msg, msg
