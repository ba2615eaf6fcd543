"""Finding a row whose number of fields differs from the header's (a "ragged" row).

pandas' C parser raises on a row with *too many* fields, but pads a row with *too few* with
missing values, so that the row's values sit in the wrong columns; and a header shorter than
the first data row makes the extra leading field an index (every value one column to the
left).  :func:`suspect` says, from the frame pandas read, whether a short row may be there (a
short row leaves its last column missing); :func:`find_ragged` then counts the fields of
every record of the file and :func:`ragged_error` names the first ragged one by its physical
line numbers -- never by its content (error messages end up in logs and tickets).

Counting is vectorized (NumPy over the file's bytes: delimiters per line, minus those inside
quoted spans, lines joined where a quoted span holds a line break) for an ASCII-compatible
encoding.  Python's :mod:`csv` reads the records instead (pandas' quoting rules: ``"`` quotes
at a field's start, ``""`` inside quotes, delimiters and line breaks allowed in quoted
fields) for other encodings, ``\r`` line ends, a file whose quotes the byte count may read
otherwise than pandas (its record count differs from pandas' rows), and to confirm a ragged
record found in a file with quotes.  The first row alone (``limit=1``) is always read by
:mod:`csv`.
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


_UNSURE = object()  # the byte count cannot decide: the csv module reads the file instead
_MAX_BLANK_CHECKS = 10_000  # one-field lines looked at one by one (blank or not)


def _inside(pos: np.ndarray, opens: np.ndarray, closes: np.ndarray) -> np.ndarray:
    """The members of the sorted ``pos`` strictly inside some span ``(opens[j], closes[j])``
    (disjoint, sorted spans): one pair of searches per span, not per position."""
    lo, hi = np.searchsorted(pos, opens), np.searchsorted(pos, closes)
    n = hi - lo
    total = int(n.sum())
    if total == 0:
        return pos[:0]
    first = np.repeat(lo - (np.cumsum(n) - n), n)  # concatenated ranges lo[j] .. hi[j] - 1
    return pos[first + np.arange(total)]


def _count_bytes(
    data: bytes, delimiter: str, expected: int | None, header: bool, ref: str, rows: int | None
) -> Any:
    """The first ragged record from the raw bytes, vectorized; :data:`_UNSURE` when unsure.

    Records are lines, joined where a line break lies inside quotes; delimiters inside quotes
    are text.  Quoted spans are read as RFC 4180 says: every ``"`` opens or closes one (a
    doubled ``""`` closes and reopens).  pandas takes a ``"`` inside an unquoted field for
    text, which this would read as an opening quote: such a file is caught by its count of
    records (it differs from ``rows``, the rows pandas read) or by the check of a ragged
    record, and is then left to the csv module.  So is a file with a ``\\r`` not followed
    by ``\\n`` (line ends mixed): pandas ends a record there, this count only at ``\\n``.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    if b"\r" in data:  # (a search of a few ms: most files have no \r)
        cr = np.flatnonzero(buf[:-1] == 13)  # (a final \r ends the last line: no split)
        if cr.size and bool((buf[cr + 1] != 10).any()):
            return _UNSURE  # a \r alone ends a line for pandas and the csv module, not here
    ends = np.append(np.flatnonzero(buf == 10), buf.size)  # the last line may be unterminated
    dpos = np.flatnonzero(buf == ord(delimiter))
    # delimiters before each line's end, then per line: a search over the line ends, not the
    # file's bytes (a 37 MB file: 1e6 searches)
    delims = np.diff(np.searchsorted(dpos, ends), prepend=0)
    quotes = np.flatnonzero(buf == 34)
    joined = np.zeros(ends.size, dtype=bool)  # line i's break lies inside quotes
    if quotes.size:
        if quotes.size % 2:
            return _UNSURE
        opens, closes = quotes[0::2], quotes[1::2]
        text = _inside(dpos, opens, closes)
        delims = delims - np.bincount(np.searchsorted(ends, text), minlength=ends.size)
        joined[np.searchsorted(ends, _inside(ends, opens, closes))] = True
    first_line = np.flatnonzero(np.concatenate(([True], ~joined[:-1])))
    last_line = np.append(first_line[1:] - 1, ends.size - 1)
    counts = np.add.reduceat(delims, first_line) + 1
    starts = np.concatenate(([0], ends[:-1] + 1))
    # pandas skips a line of spaces alone, not one with a delimiter or a quote
    one_field = (counts == 1) & (first_line == last_line)

    def blank(r: int) -> bool:
        i = int(first_line[r])
        return bool(one_field[r]) and not data[starts[i] : ends[i]].strip()

    first = next((r for r in range(counts.size) if not blank(r)), None)
    if first is None:
        return None
    if expected is None:  # no names: the first record (header or first row) fixes it
        expected = int(counts[first])
    lo = first + 1 if header else first

    def blanks(stop: int) -> int:  # blank records in lo .. stop - 1
        return sum(blank(int(r)) for r in lo + np.flatnonzero(one_field[lo:stop]))

    if quotes.size and rows is not None:  # the records must be pandas' rows
        if np.count_nonzero(one_field[lo:]) > _MAX_BLANK_CHECKS:
            return _UNSURE
        if counts.size - lo - blanks(counts.size) != rows:
            return _UNSURE  # a quote pandas read as text
    for r in (lo + np.flatnonzero(counts[lo:] != expected)).tolist():
        if blank(r):
            continue
        if quotes.size:
            return _UNSURE  # confirmed by the csv module (quotes read as pandas reads them)
        row = r - lo - blanks(r) + 1
        line, end = int(first_line[r]) + 1, int(last_line[r]) + 1
        return Ragged(line, end, row, expected, int(counts[r]), ref)
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
    rows: int | None = None,
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
    rows : int, optional
        The number of rows pandas read from the file, when known: a byte count of a file with
        quotes that finds another number of records is left to the csv module.

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
        if enc == "utf-8-sig" and data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8) :]  # (not whitespace: line 1 stays a record)
        found = _count_bytes(data, fmt.delimiter, expected, fmt.header, ref, rows)
        if found is not _UNSURE:
            return found  # type: ignore[no-any-return]
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
