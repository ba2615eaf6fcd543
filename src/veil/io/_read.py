"""Reading tables: CSV/TSV (sniffed encoding, delimiter and header) and Parquet."""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import InputError
from veil.io._dates import detect_date_format, parse_date_column, text_format
from veil.io._ragged import find_ragged, ragged_error, suspect
from veil.io._sniff import SAMPLE_BYTES, _bom_encoding, sniff_encoding, sniff_format

__all__ = ["SourceFormat", "read", "read_table"]

PARQUET_SUFFIXES = (".parquet", ".pq")
DEFAULT_MISSING = ("?", "NA", "")
_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


@dataclass(frozen=True)
class SourceFormat:
    """The on-disk format of a table, so that a release can be written the same way.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "adult.csv").write_bytes(b"age;sex;income\\r\\n39;M;?\\r\\n50;F;50K\\r\\n")
    >>> df, source = read_table(folder / "adult.csv")
    >>> source.format, source.delimiter, source.lineterminator, source.missing
    ('csv', ';', '\\r\\n', '?')
    >>> from veil.io import write
    >>> out = write(df.assign(age=df["age"] // 10 * 10), folder / "release.csv", like=source)
    >>> out.read_bytes()  # same delimiter, line ends and missing-value marker
    b'age;sex;income\\r\\n30;M;?\\r\\n50;F;50K\\r\\n'
    """

    path: str
    format: str  # "csv" or "parquet"
    delimiter: str = ","
    encoding: str = "utf-8"
    header: bool = True
    #: Text written after each delimiter: ``" "`` for a ``", "``-separated file (UCI Adult).
    spacing: str = ""
    #: ``"all"`` when every field was quoted, else ``"minimal"`` (quotes only where needed).
    quoting: str = "minimal"
    #: Line terminator of the file: ``"\n"``, ``"\r\n"`` or ``"\r"``.
    lineterminator: str = "\n"
    #: The one missing-value marker seen in the file (``"?"``, ``"NA"``, ``""``), written back
    #: for missing values; None when the file had none or used several (missing is written empty).
    missing: str | None = None
    #: Column -> the text format its dates were read with (``%-d`` style: no leading zero), so
    #: that :func:`veil.io.write` writes an untouched date column back byte-identical.
    date_formats: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def text_source(path: Path, enc: str, fmt: Any, *, missing: str | None = None) -> SourceFormat:
    """The :class:`SourceFormat` of a delimited text file from its sniffed ``TextFormat``."""
    return SourceFormat(
        str(path),
        "csv",
        fmt.delimiter,
        enc,
        fmt.header,
        spacing=fmt.spacing,
        quoting=fmt.quoting,
        lineterminator=fmt.lineterminator,
        missing=missing,
    )


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError(f"input file not found: {path}")
    if path.is_dir():
        raise InputError(f"input is a directory, not a file: {path}")
    if not os.access(path, os.R_OK):
        raise InputError(f"input file is not readable (permission denied): {path}")


def _read_head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(SAMPLE_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def _read_parquet(path: Path, columns: Sequence[str] | None) -> pd.DataFrame:
    try:
        return pd.read_parquet(path, columns=list(columns) if columns else None)
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read Parquet file {path.name}: {first}") from None
    except Exception as exc:  # pyarrow raises its own error types
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read Parquet file {path.name}: {first}") from None


def _csv(
    path: Path,
    enc: str,
    fmt: Any,
    names: Sequence[str] | None,
    na: list[str],
    errors: str = "strict",
    **extra: Any,
) -> pd.DataFrame:
    header: int | None = 0 if fmt.header else None
    kwargs: dict[str, Any] = dict(extra)
    if names is not None:
        kwargs["names"] = list(names)
    if _PANDAS_MAJOR < 3:  # pandas 3 parses floats exactly by default (and deprecates this)
        kwargs["float_precision"] = "round_trip"
    # index_col=False: a first row longer than the header is not taken for an index column
    # (pandas warns instead, a warning _read_text turns into the ragged-row error)
    return pd.read_csv(
        path,
        index_col=False,
        sep=fmt.delimiter,
        skipinitialspace=fmt.skipinitialspace,
        header=header,
        encoding=enc,
        na_values=na,
        keep_default_na=False,
        skip_blank_lines=True,
        encoding_errors=errors,
        low_memory=False,
        **kwargs,
    )


_LEADING_ZERO = r"^[+-]?0[0-9]"
_ZERO_SAMPLE = 20000  # rows inspected for leading zeros


def _text_fixups(
    df: pd.DataFrame, reread: Callable[..., pd.DataFrame], na: list[str]
) -> tuple[pd.DataFrame, str | None]:
    """Keep leading zeros as text, and find the one missing-value marker, in one re-read.

    Postcodes, phone numbers and ID codes such as ``02139`` must not become ``2139``: the
    numeric-looking columns whose first 20,000 values have a leading zero are put back as text.
    The marker (None: no missing value, or several markers) is the declared one when only one
    is declared; otherwise the cells that came back missing are looked up in the raw text.
    Both need the raw text, so the columns concerned are read again together, once
    (``reread(na, **read_csv_options)``: :func:`_csv` on the same file and format).
    """
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    holes = df.isna().any()
    hole_cols = [c for c in df.columns if holes[c]] if na else []
    marker = na[0] if hole_cols and len(set(na)) == 1 else None
    lookup = hole_cols if marker is None else []
    if not lookup:  # no marker to look up: a 20,000-row sample finds the padded columns
        if not numeric:
            return df, marker
        sample = reread(na, nrows=_ZERO_SAMPLE, dtype=str, usecols=numeric)
        padded = [c for c in numeric if sample[c].dropna().str.match(_LEADING_ZERO).any()]
        if not padded:
            return df, marker
        raw = reread([], dtype=str, usecols=padded, na_filter=False)
    else:
        cols = [c for c in df.columns if c in set(numeric) | set(lookup)]
        raw = reread([], dtype=str, usecols=cols, na_filter=False)
        head, kept = raw.iloc[:_ZERO_SAMPLE], df.iloc[:_ZERO_SAMPLE].notna()
        padded = [c for c in numeric if head[c][kept[c].to_numpy()].str.match(_LEADING_ZERO).any()]
    if len(raw) != len(df):  # not expected: the same file and options; read it all again
        return reread(na, dtype={c: str for c in padded}), None
    if lookup:
        seen: set[str] = set()
        for c in lookup:
            seen.update(raw[c].to_numpy()[df[c].isna().to_numpy()].tolist())
            if len(seen) > 1:
                break
        marker = seen.pop() if len(seen) == 1 else None
    if not padded:
        return df, marker
    out = df.copy(deep=False)
    for c in padded:
        out[c] = raw[c].where(df[c].notna().to_numpy()).array
    return out, marker


def _floats_as_text(
    df: pd.DataFrame, reread: Callable[..., pd.DataFrame], na: list[str], name: str
) -> pd.DataFrame:
    """Float columns put back as their cells' text (missing cells stay missing).

    A column of whole numbers is ``int64`` (exact) until one cell is missing or fractional;
    then *every* cell is parsed as float64, which rounds integers above 2^53
    (``9007199254740993`` becomes ``...992``).  For ``veil query`` that was one person changing
    the other persons' values; as text, each cell is read by itself (``veil.dp._canon``).
    """
    # A cell's text and its float64 parse have the same canonical value unless the text is an
    # integer beyond 2^53, which parses to a float of magnitude >= 2^53: only columns holding
    # such a float need their text (the others stay numbers, the same values cell by cell,
    # without a second read and per-cell parsing).
    cols = [
        c
        for c in df.columns
        if df[c].dtype.kind == "f"
        and bool(np.any(np.abs(df[c].to_numpy(dtype=np.float64, na_value=np.nan)) >= 2.0**53))
    ]
    if not cols:
        return df
    raw = reread(na, dtype=str, usecols=cols)
    if len(raw) != len(df):  # not expected: the same file and options
        raise InputError(f"cannot re-read the number columns of {name}")
    out = df.copy(deep=False)
    for c in cols:
        out[c] = raw[c].array
    return out


_HEADER_LENGTH = "Length of header or names does not match length of data"
_TOO_MANY = re.compile(r"Expected \d+ fields in line \d+, saw \d+")


def _ragged(
    path: Path, enc: str, fmt: Any, names: Sequence[str] | None, errors: str, what: str
) -> InputError:
    """The error for a file pandas found ragged: the first ragged record, by line number."""
    found = find_ragged(path, enc, fmt, list(names) if names is not None else None, errors)
    if found is not None:
        return ragged_error(path.name, found)
    return InputError(f"cannot parse {path.name}: {what}")  # pandas' own words: no cell text


def _read_text(
    path: Path,
    head: bytes,
    *,
    delimiter: str | None,
    encoding: str | None,
    missing_values: Iterable[str],
    names: Sequence[str] | None,
    header: bool | None,
    float_text: bool = False,
    utf8_replace: bool = False,
    header_format: bool = False,
) -> tuple[pd.DataFrame, SourceFormat]:
    errors = "strict"
    if utf8_replace and encoding is None:
        # no guess from the bytes: UTF-8 (or the BOM's encoding), each invalid byte sequence
        # replaced by U+FFFD -- a map of each cell's own bytes (see read's utf8_replace)
        if _bom_encoding(head) is None:
            enc, sample = "utf-8", head.decode("utf-8", errors="replace")
        else:
            enc, sample = sniff_encoding(head)
        errors = "replace"
    else:
        enc, sample = sniff_encoding(head, encoding)
    if header_format:  # the first line only (the header: the schema, not a person's row)
        sample = next((ln for ln in sample.splitlines() if ln.strip()), sample) + "\n"
        if header is None and names is None:
            header = True
    fmt = sniff_format(
        sample, enc, delimiter, "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    )
    if header is not None or names is not None:
        use_header = bool(header) if header is not None else False
        fmt = replace(fmt, header=use_header)
    na = [str(v) for v in missing_values]
    tries = [enc] if encoding is not None or enc != "utf-8" or utf8_replace else ["utf-8", "cp1252"]
    df: pd.DataFrame | None = None
    for i, attempt in enumerate(tries):
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("error", _HEADER_LENGTH, pd.errors.ParserWarning)
                df = _csv(path, attempt, fmt, names, na, errors)
            enc = attempt
            break
        except pd.errors.ParserWarning:  # a row longer than the header (or names)
            raise _ragged(
                path, attempt, fmt, names, errors, "a row longer than the header"
            ) from None
        except UnicodeDecodeError as exc:
            if i + 1 < len(tries):
                continue
            raise InputError(
                f"cannot decode {path.name} as {attempt}: byte 0x{exc.object[exc.start]:02x} "
                f"is not valid ({exc.reason}); give the right encoding"
            ) from None
        except pd.errors.EmptyDataError:
            raise InputError(f"the table {path.name} is empty") from None
        except (pd.errors.ParserError, ValueError) as exc:
            msg = " ".join(str(exc).split())
            if _TOO_MANY.search(msg):
                raise _ragged(path, attempt, fmt, names, errors, msg) from None
            raise InputError(f"cannot parse {path.name}: {msg}") from None
    assert df is not None
    # A first row longer than the header (or names) with its last field empty is taken for
    # a trailing delimiter, and that field is then dropped from every row, empty or not: the
    # first row is checked (cheap: the start of the file).  A short row is padded with
    # missing values: when the last column has one, every row's fields are counted.
    listed = list(names) if names is not None else None
    for limit in (1, None) if suspect(df, na) else (1,):
        found = find_ragged(path, enc, fmt, listed, errors, limit=limit, rows=len(df))
        if found is not None:
            raise ragged_error(path.name, found)
    reread = functools.partial(_csv, path, enc, fmt, names, errors=errors)
    df, marker = _text_fixups(df, reread, na)
    if float_text:
        df = _floats_as_text(df, reread, na, path.name)
    if not fmt.header and names is None:
        df.columns = [f"col_{j + 1}" for j in range(df.shape[1])]
    source = text_source(path, enc, fmt, missing=marker)
    return df, source


def _apply_dates(
    df: pd.DataFrame, parse_dates: bool | Sequence[str] | None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Parse the declared (or obvious) date columns; also return each one's text format."""
    if parse_dates is False:
        return df, {}
    if parse_dates is None or parse_dates is True:
        todo = []
        for col in df.columns:
            s = df[col]
            if s.dtype == object or pd.api.types.is_string_dtype(s):
                fmt = detect_date_format(s)
                if fmt is not None:
                    todo.append((col, fmt))
    else:
        missing = [c for c in parse_dates if c not in df.columns]
        if missing:
            raise InputError(f"date column(s) not in the table: {', '.join(map(str, missing))}")
        todo = [(col, None) for col in parse_dates]
    if not todo:
        return df, {}
    out = df.copy()
    formats: dict[str, str] = {}
    for col, fmt in todo:
        s = df[col]
        if pd.api.types.is_datetime64_any_dtype(s):
            continue
        fmt = fmt or detect_date_format(s)
        out[col] = parse_date_column(s, fmt, name=str(col))
        if fmt is not None:
            formats[str(col)] = text_format(s, out[col], fmt)
    return out, formats


def read_table(
    path: str | os.PathLike[str],
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    missing_values: Iterable[str] = DEFAULT_MISSING,
    parse_dates: bool | Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    header: bool | None = None,
    float_text: bool = False,
    utf8_replace: bool = False,
    header_format: bool = False,
    empty_ok: bool = False,
) -> tuple[pd.DataFrame, SourceFormat]:
    """Like :func:`read` but also return the :class:`SourceFormat` of the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "adult.csv").write_bytes(b"age;sex;income\\r\\n39;M;?\\r\\n50;F;50K\\r\\n")
    >>> df, source = read_table(folder / "adult.csv")  # delimiter and markers sniffed
    >>> df.to_dict("list")
    {'age': [39, 50], 'sex': ['M', 'F'], 'income': [nan, '50K']}
    >>> source.missing, df.attrs["veil_source"]["delimiter"]
    ('?', ';')
    """
    p = Path(path)
    _check_file(p)
    head = _read_head(p)
    if not head:
        raise InputError(f"the table {p.name} is empty (0 bytes)")
    if p.suffix.lower() in PARQUET_SUFFIXES or head.startswith(b"PAR1"):
        df = _read_parquet(p, columns)
        source = SourceFormat(str(p), "parquet")
    else:
        try:
            df, source = _read_text(
                p,
                head,
                delimiter=delimiter,
                encoding=encoding,
                missing_values=missing_values,
                names=names,
                header=header,
                float_text=float_text,
                utf8_replace=utf8_replace,
                header_format=header_format,
            )
        except InputError as exc:
            if p.suffix.lower() not in (".yaml", ".yml"):
                raise
            raise InputError(f"{exc}; {p.name} is YAML (a policy?), not a table") from None
        if columns is not None:
            unknown = [c for c in columns if c not in df.columns]
            if unknown:
                raise InputError(f"column(s) not in {p.name}: {', '.join(map(str, unknown[:5]))}")
            df = df[list(columns)]
    if df.shape[1] == 0 or (df.shape[0] == 0 and not empty_ok):
        raise InputError(f"the table {p.name} is empty (no data rows)")
    if df.columns.duplicated().any():
        dup = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise InputError(f"duplicate column name(s) in {p.name}: {', '.join(dup[:5])}")
    df, date_formats = _apply_dates(df, parse_dates)
    if date_formats:
        source = replace(source, date_formats=date_formats)
    df.attrs["veil_source"] = source.to_dict()
    return df, source


def read(
    path: str | os.PathLike[str],
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    missing_values: Iterable[str] = DEFAULT_MISSING,
    parse_dates: bool | Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    header: bool | None = None,
    float_text: bool = False,
    utf8_replace: bool = False,
    header_format: bool = False,
    empty_ok: bool = False,
) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet table into a DataFrame.

    Parameters
    ----------
    path
        File to read.  ``.parquet``/``.pq`` files (or files starting with the Parquet magic
        bytes) are read as Parquet; anything else as delimited text.
    delimiter
        Field delimiter; sniffed among ``,``, ``;``, tab and ``|`` when None.  ``", "`` means a
        comma followed by spaces to skip (the UCI Adult style), which is also sniffed.
    encoding
        Text encoding.  When None: the byte-order mark decides (UTF-8-SIG, UTF-16, UTF-32), else
        UTF-8, then Windows-1252, then Latin-1.  An explicit encoding is decoded strictly: a byte
        it cannot decode raises :class:`~veil.errors.InputError`.
    missing_values
        Cell contents read as missing (after stripping the delimiter's leading spaces).
    parse_dates
        Column names to parse as dates (an error when they do not parse); None detects
        "obvious" date columns, those whose values all parse with one format (day-first
        preferred); False parses none.
    columns
        Keep only these columns, in this order.
    names
        Column names for a file without a header row.
    header
        Whether the first row is a header; sniffed when None (False when ``names`` is given).
    float_text
        Keep the columns pandas parses as float64 as their cells' text (delimited files only):
        one missing or fractional cell makes pandas parse a whole column of integers as
        float64, rounding those above 2^53.  ``veil query`` reads this way and compares each
        cell by its own value (:mod:`veil.dp._canon`).
    utf8_replace
        Without an explicit ``encoding`` and a byte-order mark: decode as UTF-8 with each
        invalid byte sequence replaced by U+FFFD, instead of guessing Windows-1252 for the
        whole file when one byte is not UTF-8 (a guess that re-decodes every other cell:
        ``Zürich`` became ``ZÃ¼rich`` because of one person's byte).  ``veil query`` reads
        this way; give ``encoding`` for a Windows-1252 file.
    header_format
        Sniff the delimiter and the ``", "`` spacing from the first line alone, and take it
        for a header (unless ``header`` or ``names`` say otherwise), instead of from the first
        200 lines: there one person's rows could tip the spacing vote (the column ``sex``
        became ``' sex'``) or, by repeating a column name in a cell, turn the header into a
        data row.  ``veil query`` reads this way.
    empty_ok
        A header without data rows is an empty table, not an error.  ``veil query`` reads
        this way: a table of nobody answers with noise, as a table of one person does (the
        error told whether anybody is in the table).

    Returns
    -------
    pandas.DataFrame
        The table; ``df.attrs["veil_source"]`` records the file's format.

    Raises
    ------
    veil.errors.InputError
        Missing, unreadable, undecodable or empty file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("age, sex\\n39, Male\\n50, ?\\n")
    >>> df = read(d / "t.csv")
    >>> list(df.columns), int(df["sex"].isna().sum())
    (['age', 'sex'], 1)
    """
    df, _ = read_table(
        path,
        delimiter=delimiter,
        encoding=encoding,
        missing_values=missing_values,
        parse_dates=parse_dates,
        columns=columns,
        names=names,
        header=header,
        float_text=float_text,
        utf8_replace=utf8_replace,
        header_format=header_format,
        empty_ok=empty_ok,
    )
    return df
