"""Finding a row whose number of fields differs from the header's (a "ragged" row).

pandas' C parser raises on a row with *too many* fields, but pads a row with *too few* with
missing values, so that the row's values sit in the wrong columns; and a header shorter than
the first data row makes the extra leading field an index (every value one column to the
left).  :func:`suspect` says, from the frame pandas read, whether a short row may be there (a
short row leaves its last column missing); :func:`find_ragged` then counts the fields of
every record of the file and :func:`ragged_error` names the first ragged one by its physical
line numbers -- never by its content (error messages end up in logs and tickets).

Counting is vectorized (NumPy over the file's bytes: delimiters per line) when the file has
no quote character and an ASCII-compatible encoding; otherwise Python's :mod:`csv` reads the
records, with pandas' quoting rules (``"`` quotes, ``""`` inside quotes, delimiters and line
breaks allowed in quoted fields).
"""

from __future__ import annotations

import codecs
import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import InputError

__all__ = ["Ragged", "find_ragged", "ragged_error", "suspect"]

#: Encodings in which every byte below 0x80 is that ASCII character (delimiters, quotes and
#: line breaks are found in the raw bytes).
_ASCII_SUPERSETS = frozenset(
    codecs.lookup(e).name
    for e in ("utf-8", "utf-8-sig", "ascii", "cp1252", "latin-1", "iso8859-15", "cp1250")
)


@dataclass(frozen=True)
class Ragged:
    """The first record whose number of fields is not the expected one."""

    first_line: int  # 1-based physical line where the record starts
    last_line: int  # 1-based physical line where it ends (quoted line breaks)
    row: int  # 1-based data row (records after the header, blank lines not counted)
    expected: int
    found: int
    reference: str  # what fixed ``expected``: "the header", "the names given", "line 1"


def suspect(df: pd.DataFrame, na: list[str]) -> bool:
    """Whether the frame read by pandas may hide a short row (padded with missing values).

    A short row leaves its last column missing: NaN, or ``""`` when the empty text is not a
    missing-value marker.  Cheap (one column) so that the common file is not slowed.
    """
    if df.shape[1] == 0:
        return False
    last = df.iloc[:, -1]
    if bool(last.isna().any()):
        return True
    if "" in na or pd.api.types.is_numeric_dtype(last):
        return False
    return bool((last.astype(object) == "").any())


def _count_bytes(
    data: bytes, delimiter: str, expected: int | None, header: bool, ref: str
) -> Ragged | None:
    """Fields per line from the raw bytes (a file without quotes: one record per line)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.append(np.flatnonzero(buf == 10), buf.size)  # the last line may be unterminated
    # delimiters before each line's end, then per line: a search over the line ends, not the
    # file's bytes (a 37 MB file: 1e6 searches)
    delims = np.diff(np.searchsorted(np.flatnonzero(buf == ord(delimiter)), ends), prepend=0)
    starts = np.concatenate(([0], ends[:-1] + 1))

    def blank(i: int) -> bool:  # pandas skips a line of spaces alone, not one with delimiters
        return bool(delims[i] == 0 and not data[starts[i] : ends[i]].strip())

    first = next((i for i in range(ends.size) if not blank(i)), None)
    if first is None:
        return None
    if expected is None:  # no names: the first record (header or first row) fixes it
        expected = int(delims[first]) + 1
    lo = first + 1 if header else first
    for i in lo + np.flatnonzero(delims[lo:] + 1 != expected):
        if not blank(int(i)):
            # the data row: the lines before it that are neither blank nor the header
            # (only lines without a delimiter can be blank)
            empty = sum(blank(int(j)) for j in lo + np.flatnonzero(delims[lo:i] == 0))
            row = int(i) - lo - empty + 1
            return Ragged(int(i) + 1, int(i) + 1, row, expected, int(delims[i]) + 1, ref)
    return None


def _count_csv(
    path: Path,
    enc: str,
    errors: str,
    fmt: Any,
    expected: int | None,
    header: bool,
    ref: str,
    limit: int | None = None,
) -> Ragged | None:
    with path.open("r", encoding=enc, errors=errors, newline="") as fh:
        reader = csv.reader(
            fh,
            delimiter=fmt.delimiter,
            quotechar='"',
            doublequote=True,
            skipinitialspace=fmt.skipinitialspace,
            strict=False,
        )
        done, row = 0, 0  # lines read before the record; data rows seen
        first = True
        try:
            for fields in reader:
                start, done = done + 1, reader.line_num
                if not fields or (len(fields) == 1 and not fields[0].strip()):
                    continue  # a blank line (pandas skips it)
                if first:
                    first = False
                    if expected is None:
                        expected = len(fields)
                    if header:
                        continue
                row += 1
                if len(fields) != expected:
                    return Ragged(start, done, row, expected, len(fields), ref)
                if limit is not None and row >= limit:
                    break
        except csv.Error:  # a NUL byte, a field over the csv module's limit: not decided here
            return None
    return None


def find_ragged(
    path: Path,
    enc: str,
    fmt: Any,
    names: list[str] | None,
    errors: str = "strict",
    limit: int | None = None,
) -> Ragged | None:
    """The first record of a delimited file whose field count differs from the header's.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    enc : str
        Its encoding (the one it was read with).
    fmt : TextFormat
        Its sniffed format (``delimiter``, ``header``, ``skipinitialspace``).
    names : list of str or None
        Column names given for the file: then they fix the expected count (the header line,
        when ``fmt.header``, is skipped unchecked); otherwise the first record does.
    errors : str, default "strict"
        How undecodable bytes are handled (as in the read).
    limit : int, optional
        Check only the first ``limit`` data rows (the start of the file alone is read).

    Returns
    -------
    Ragged or None
        The first ragged record; None when every record has the expected number of fields.
    """
    expected = len(names) if names is not None else None
    ref = "the names given" if names is not None else ("the header" if fmt.header else "line 1")
    if limit is not None:
        return _count_csv(path, enc, errors, fmt, expected, fmt.header, ref, limit)
    if codecs.lookup(enc).name in _ASCII_SUPERSETS and fmt.lineterminator != "\r":
        data = path.read_bytes()
        if b'"' not in data:
            return _count_bytes(data, fmt.delimiter, expected, fmt.header, ref)
    return _count_csv(path, enc, errors, fmt, expected, fmt.header, ref)


def ragged_error(name: str, found: Ragged) -> InputError:
    """The :class:`~veil.errors.InputError` naming a ragged record by position, not content."""
    where = (
        f"line {found.first_line}"
        if found.first_line == found.last_line
        else f"lines {found.first_line}-{found.last_line} (one record with quoted line breaks)"
    )
    return InputError(
        f"ragged row in {name}: {where} (data row {found.row}): expected {found.expected} "
        f"fields as in {found.reference}, found {found.found}; every row needs the same number "
        "of fields (lines are counted from 1 over the whole file, header and blank lines "
        "included)"
    )
