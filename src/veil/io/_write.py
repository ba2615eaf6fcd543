"""Atomic writing of tables and files: a temporary file in the target folder, then os.replace."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import pandas as pd

from veil.errors import InputError
from veil.io._dates import dates_as_text
from veil.io._read import PARQUET_SUFFIXES, SourceFormat
from veil.io._sniff import SAMPLE_BYTES, sniff_encoding, sniff_format

__all__ = ["write", "atomic_write", "write_json", "same_file"]


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when ``a`` and ``b`` name the same file (following links)."""
    pa, pb = Path(a), Path(b)
    try:
        if pa.exists() and pb.exists():
            return os.path.samefile(pa, pb)
    except OSError:
        pass
    return pa.resolve() == pb.resolve()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], writer: Callable[[IO[bytes]], None]) -> Path:
    """Call ``writer(fh)`` on a temporary file next to ``path``, then rename it to ``path``.

    A reader never sees a half-written file, and a failure leaves any previous file intact.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Atomically write ``obj`` as indented UTF-8 JSON (numpy scalars become numbers)."""
    data = json.dumps(obj, indent=2, ensure_ascii=False, default=_json_default).encode("utf-8")
    return atomic_write(path, lambda fh: fh.write(data))


def _arrow_csv(df: pd.DataFrame, fh: IO[bytes], sep: str, header: bool, *, bom: bool) -> bool:
    """Write ``df`` as UTF-8 CSV with pyarrow (several times faster than ``DataFrame.to_csv``).

    Only integer, float and text columns take this path.  The output reads back to the same
    values as pandas' (values are left unquoted unless one of them needs quoting, then every
    text value is quoted; a float such as 78000.0 is written 78000).  Returns False, having
    written nothing, otherwise (booleans, dates, mixed objects...): the caller then uses pandas.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not {df[c].dtype.kind for c in df.columns} <= {"i", "u", "f", "O", "T"}:
        return False
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        return False
    ok = (
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_null,
    )
    if not all(any(f(t) for f in ok) for t in table.schema.types):
        return False
    data = None
    for style in ("none", "needed"):
        try:
            buf = io.BytesIO()
            opts = pcsv.WriteOptions(include_header=False, delimiter=sep, quoting_style=style)
            pcsv.write_csv(table, buf, opts)
            data = buf.getvalue()
            break
        except pa.ArrowInvalid:
            continue
    if data is None:  # pragma: no cover - "needed" always succeeds
        return False
    head = (
        df.head(0).to_csv(sep=sep, index=False, lineterminator="\n").encode("utf-8")
        if header
        else b""
    )
    fh.write((b"\xef\xbb\xbf" if bom else b"") + head + data)
    return True


def _like_format(like: Any) -> SourceFormat | None:
    if like is None:
        return None
    if isinstance(like, SourceFormat):
        return like
    if isinstance(like, Mapping):
        return SourceFormat(**dict(like))
    p = Path(like)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        return SourceFormat(str(p), "parquet")
    if p.is_file():
        with contextlib.suppress(InputError, OSError):
            with p.open("rb") as fh:
                head = fh.read(SAMPLE_BYTES)
            if head.startswith(b"PAR1"):
                return SourceFormat(str(p), "parquet")
            enc, sample = sniff_encoding(head)
            tf = sniff_format(
                sample, enc, None, "\t" if p.suffix.lower() in (".tsv", ".tab") else ","
            )
            return SourceFormat(str(p), "csv", tf.delimiter, enc, tf.header)
    return SourceFormat(str(p), "csv", "\t" if p.suffix.lower() == ".tsv" else ",")


def _dates_in_source_format(df: pd.DataFrame, formats: Mapping[str, str]) -> pd.DataFrame:
    """Date columns written in the text format they were read with, when that is lossless."""
    out = df
    for col in df.columns:
        fmt = formats.get(str(col))
        if fmt is None or not pd.api.types.is_datetime64_any_dtype(df[col]):
            continue
        text = dates_as_text(df[col], fmt)
        if text is not None:
            if out is df:
                out = df.copy(deep=False)
            out[col] = text
    return out


def write(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    like: str | os.PathLike[str] | SourceFormat | Mapping[str, Any] | None = None,
) -> Path:
    """Write ``df`` atomically as CSV/TSV or Parquet.

    Parameters
    ----------
    df
        Table to write (the index is not written).
    path
        Destination.  Its suffix chooses the format (``.parquet``/``.pq``, ``.tsv``, ``.csv``);
        other suffixes follow ``like``.
    like
        The input file (path or :class:`SourceFormat`, by default ``df.attrs["veil_source"]``)
        whose format (Parquet or delimited text with its delimiter and encoding) the output
        copies.  Writing over that input file is refused.  Date columns read from text keep
        their source format (``SourceFormat.date_formats``, else the one in ``df.attrs``), so
        an untouched date column is written back byte-identical; a column whose values that
        format cannot hold (seconds, a time zone) is written ISO 8601, as are dates with no
        recorded format.

    Raises
    ------
    veil.errors.InputError
        When ``path`` is the input file itself, or its folder does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write(pd.DataFrame({"a": [1, 2]}), d / "out.csv")
    >>> (d / "out.csv").read_text().split()
    ['a', '1', '2']
    """
    target = Path(path)
    fmt = _like_format(like if like is not None else df.attrs.get("veil_source"))
    if fmt is not None and fmt.path and same_file(fmt.path, target):
        raise InputError(f"refusing to write over the input file {target}")
    suffix = target.suffix.lower()
    if suffix in PARQUET_SUFFIXES or (
        suffix not in (".csv", ".tsv") and fmt and fmt.format == "parquet"
    ):
        out = df.copy(deep=False)
        out.attrs = {}
        return atomic_write(target, lambda fh: out.to_parquet(fh, index=False))
    if suffix == ".tsv":
        sep = "\t"
    elif suffix == ".csv" and not (fmt and fmt.format == "csv"):
        sep = ","
    else:
        sep = fmt.delimiter if fmt and fmt.format == "csv" else ","
    encoding = fmt.encoding if fmt and fmt.format == "csv" else "utf-8"
    header = fmt.header if fmt and fmt.format == "csv" else True
    source = df.attrs.get("veil_source")
    formats = (fmt.date_formats if fmt else None) or (
        source.get("date_formats") if isinstance(source, Mapping) else None
    )
    if formats:
        df = _dates_in_source_format(df, formats)

    # One column with missing values: an empty field would be a blank line, which readers
    # skip; quoting writes it as "".
    lone_missing = df.shape[1] == 1 and bool(df.iloc[:, 0].isna().any())

    def _write(fh: IO[bytes]) -> None:
        if lone_missing:
            text = df.to_csv(
                sep=sep,
                index=False,
                header=header,
                lineterminator="\n",
                quoting=csv.QUOTE_NONNUMERIC,
            )
            fh.write(text.encode(encoding, errors="strict") if encoding else text.encode())
            return
        if encoding.lower().replace("_", "-") in ("utf-8", "utf8", "utf-8-sig") and _arrow_csv(
            df, fh, sep, header, bom=encoding.lower().endswith("sig")
        ):
            return
        text = df.to_csv(sep=sep, index=False, header=header, lineterminator="\n")
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:
            data = text.encode("utf-8")
        fh.write(data)

    return atomic_write(target, _write)
