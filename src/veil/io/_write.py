"""Atomic writing of tables and files: a temporary file in the target folder, then os.replace."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from veil.errors import InputError
from veil.io._dates import dates_as_text
from veil.io._folders import output_folder
from veil.io._read import PARQUET_SUFFIXES, SourceFormat, text_source
from veil.io._signed_zero import positive_zeros
from veil.io._sniff import SAMPLE_BYTES, sniff_encoding, sniff_format

__all__ = ["write", "atomic_write", "write_json", "same_file"]


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when ``a`` and ``b`` name the same file (following links).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "data.csv").write_text("a\\n1\\n")
    >>> (folder / "link.csv").symlink_to(folder / "data.csv")
    >>> same_file(folder / "link.csv", folder / "data.csv")
    True
    >>> same_file(folder / "data.csv", folder / "release.csv")
    False
    """
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


def atomic_write(
    path: str | os.PathLike[str],
    writer: Callable[[IO[bytes]], None],
    *,
    parents: bool = False,
) -> Path:
    """Call ``writer(fh)`` on a temporary file next to ``path``, then rename it to ``path``.

    A reader never sees a half-written file, and a failure leaves any previous file intact.
    A symbolic link is kept: the file it points to is replaced.  A target that exists and is
    not a regular file (``/dev/null``, ``/dev/stdout`` on a pipe or terminal, a FIFO) is
    written directly: renaming over it would replace the device node itself (as root,
    ``/dev/null`` for every process), and atomicity means nothing there.  With
    ``parents=True`` a missing folder is created (with its parents, :func:`output_folder`)
    and removed again if the write fails; otherwise it is an error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write(folder / "notes.txt", lambda fh: fh.write(b"first")).read_text()
    'first'
    >>> def failing(fh):
    ...     fh.write(b"half a file")
    ...     raise OSError("disk full")
    >>> atomic_write(folder / "notes.txt", failing)
    Traceback (most recent call last):
    ...
    OSError: disk full
    >>> (folder / "notes.txt").read_text(), [p.name for p in folder.iterdir()]  # no leftovers
    ('first', ['notes.txt'])
    """
    given = target = Path(path)
    if target.is_dir():  # os.replace would fail naming the temporary file, not the target
        raise InputError(f"output path is a folder, not a file: {target}")
    if target.is_symlink():  # replace the file the link points to, keep the link
        target = Path(os.path.realpath(target))
    # a device, FIFO or socket, or a /proc link (/dev/stdout on a deleted file): write through
    if (target.exists() and not target.is_file()) or str(target).startswith("/proc/"):
        with open(given, "wb") as fh:
            writer(fh)
        return given
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir() and not parents:
        raise InputError(f"output folder does not exist: {folder}")
    with output_folder(folder) if parents else contextlib.nullcontext(folder):
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
    return given


def _json_default(o: Any) -> Any:
    """What ``json`` cannot write and :func:`_finite` left: numpy integers and booleans as
    numbers and booleans, anything else as its text."""
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.bool_):
        return bool(o)
    return str(o)


def _finite(o: Any) -> Any:
    """``o`` with every non-finite float (Python or numpy, also inside arrays, lists, tuples,
    sets and dict values) replaced by ``None``; a non-finite float dict key (a value counted
    under its own key) becomes its text (``"nan"``, ``"inf"``), as JSON keys are texts."""
    import numpy as np

    if isinstance(o, float | np.floating):
        return float(o) if math.isfinite(o) else None
    if isinstance(o, dict):
        return {
            str(float(k)) if isinstance(k, float | np.floating) and not math.isfinite(k) else k: (
                _finite(v)
            )
            for k, v in o.items()
        }
    if isinstance(o, list | tuple | set | frozenset):
        return [_finite(v) for v in o]
    if isinstance(o, np.ndarray):
        return _finite(o.tolist())
    return o


def json_text(obj: Any, *, ensure_ascii: bool = True) -> str:
    """``obj`` as indented, strict JSON: numpy scalars and arrays become numbers and lists, and
    a number that is not finite (an undefined metric: NaN, an infinite ratio) becomes ``null``
    -- Python's ``json`` would write ``NaN`` / ``Infinity``, which JSON parsers outside Python
    (JavaScript's ``JSON.parse``, ``jq``, Java) reject.

    Examples
    --------
    >>> import numpy as np
    >>> print(json_text({"risk": np.float64("nan"), "ratio": [1.5, float("inf")]}))
    {
      "risk": null,
      "ratio": [
        1.5,
        null
      ]
    }
    """
    return json.dumps(
        _finite(obj), indent=2, ensure_ascii=ensure_ascii, default=_json_default, allow_nan=False
    )


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Atomically write ``obj`` as indented UTF-8 JSON (numpy scalars become numbers; a
    non-finite number, i.e. an undefined metric, is written ``null``: :func:`json_text`).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import numpy as np
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "report.json"
    >>> _ = write_json({"records": np.int64(3), "epsilon": np.float64(0.5), "qi": ("a",)}, path)
    >>> json.loads(path.read_text())
    {'records': 3, 'epsilon': 0.5, 'qi': ['a']}
    """
    data = json_text(obj, ensure_ascii=False).encode("utf-8")
    return atomic_write(path, lambda fh: fh.write(data))


def _arrow_table(df: pd.DataFrame, na: str) -> Any:
    """``df`` as an Arrow table of integer, float and text columns, or None.

    Categorical columns are decoded to their values; with a non-empty missing marker, columns
    holding missing values become text (Arrow's shortest number format) with the marker in the
    holes, so numbers are written as Arrow writes them elsewhere.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not {df[c].dtype.kind for c in df.columns} <= {"i", "u", "f", "O", "T"}:
        return None
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    ok = (
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_null,
    )
    cols = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if not any(f(col.type) for f in ok):
            return None
        if na and col.null_count:
            col = pc.fill_null(pc.cast(col, pa.string()), na)
        cols.append(col)
    return pa.Table.from_arrays(cols, names=[str(c) for c in df.columns])


def _csv_quoting(lay: SourceFormat) -> int:
    return csv.QUOTE_ALL if lay.quoting == "all" else csv.QUOTE_MINIMAL


def _header_line(df: pd.DataFrame, lay: SourceFormat) -> str:
    buf = io.StringIO()
    csv.writer(
        buf, delimiter=lay.delimiter, quoting=_csv_quoting(lay), lineterminator=lay.lineterminator
    ).writerow([str(c) for c in df.columns])
    line = buf.getvalue()
    if lay.spacing:
        fields = next(csv.reader(io.StringIO(line), delimiter=lay.delimiter))
        if all(lay.delimiter not in f and '"' not in f and "\n" not in f for f in fields):
            line = (lay.delimiter + lay.spacing).join(fields) + lay.lineterminator
    return line


def _lone_missing(df: pd.DataFrame, lay: SourceFormat) -> bool:
    """One column with missing values written empty: an empty field would be a blank line,
    which readers skip; pandas quotes it as ``""`` (QUOTE_NONNUMERIC)."""
    return df.shape[1] == 1 and not lay.missing and bool(df.iloc[:, 0].isna().any())


def _arrow_csv(df: pd.DataFrame, fh: IO[bytes], lay: SourceFormat) -> bool:
    """Write ``df`` as CSV with pyarrow (several times faster than ``DataFrame.to_csv``).

    Only integer, float, text and categorical columns take this path.  The output reads back
    to the same values as pandas' (values are left unquoted unless one of them needs quoting,
    then every text value is quoted; a float such as 78000.0 is written 78000).  Returns
    False, having written nothing, otherwise (booleans, dates, mixed objects, a layout Arrow
    cannot write): the caller then uses pandas.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if _lone_missing(df, lay):
        return False
    table = _arrow_table(df, lay.missing or "")
    if table is None:
        return False
    if (lay.lineterminator != "\n" and not hasattr(pcsv.WriteOptions, "eol")) or (
        lay.missing and not hasattr(pcsv.WriteOptions, "null_string")
    ):
        return False
    styles = ("all_valid",) if lay.quoting == "all" else ("none", "needed")
    data = None
    for style in styles:
        try:
            buf = io.BytesIO()
            opts = pcsv.WriteOptions(
                include_header=False, delimiter=lay.delimiter, quoting_style=style
            )
            if lay.lineterminator != "\n":
                opts.eol = lay.lineterminator
            if lay.missing:
                opts.null_string = lay.missing
            pcsv.write_csv(table, buf, opts)
            data = buf.getvalue()
            break
        except pa.ArrowInvalid:
            continue
    if data is None:  # pragma: no cover - "needed" always succeeds
        return False
    if lay.spacing:
        if style != "none":  # a delimiter may sit inside a quoted value: let pandas do it
            return False
        data = data.replace(lay.delimiter.encode(), (lay.delimiter + lay.spacing).encode())
    head = _header_line(df, lay) if lay.header else ""
    if lay.encoding.lower().replace("_", "-") in ("utf-8", "utf8", "utf-8-sig"):
        bom = b"\xef\xbb\xbf" if lay.encoding.lower().endswith("sig") else b""
        fh.write(bom + head.encode("utf-8") + data)
        return True
    try:
        fh.write((head + data.decode("utf-8")).encode(lay.encoding))
    except UnicodeEncodeError:
        return False
    return True


def _spaced_field(col: pd.Series, lay: SourceFormat) -> np.ndarray:
    """One column as the CSV fields of a ``", "``-separated file, quoted like :mod:`csv`.

    A field is quoted when it holds the delimiter, a quote or a line break (every field with
    ``quoting="all"``), and also when it starts with a space, which a reader skipping the
    space after the delimiter would otherwise drop.  The work is done once per distinct value.
    """
    text = col.astype(str).astype(object).where(col.notna(), lay.missing or "")
    codes, uniques = pd.factorize(text.to_numpy(dtype=object))
    u = pd.Series(uniques, dtype=object)
    if lay.quoting == "all":
        quote = np.ones(len(u), dtype=bool)
    else:
        special = "[" + re.escape(lay.delimiter + '"\r\n') + "]|^ "
        quote = u.str.contains(special, regex=True).to_numpy(dtype=bool)
    quoted = ('"' + u.str.replace('"', '""', regex=False) + '"').to_numpy(dtype=object)
    return np.where(quote, quoted, u.to_numpy(dtype=object))[codes]


def _spaced_csv(df: pd.DataFrame, lay: SourceFormat) -> str:
    """A ``", "``-separated body (UCI Adult's layout): the space after each delimiter goes
    outside the quotes, so ``{a,b}`` is written ``, "{a,b}"`` and reads back as ``{a,b}``
    (a space inside the quotes would be part of the value)."""
    fields = np.column_stack([_spaced_field(df.iloc[:, j], lay) for j in range(df.shape[1])])
    sep = lay.delimiter + lay.spacing
    return "".join(sep.join(row) + lay.lineterminator for row in fields.tolist())


def _pandas_csv(df: pd.DataFrame, lay: SourceFormat) -> str:
    """The slow path: any dtype, through ``DataFrame.to_csv``."""
    head = _header_line(df, lay) if lay.header else ""
    if lay.spacing and df.shape[1] > 1:
        return head + _spaced_csv(df, lay)
    quoting = csv.QUOTE_NONNUMERIC if _lone_missing(df, lay) else _csv_quoting(lay)
    text = df.to_csv(
        sep=lay.delimiter,
        index=False,
        header=False,
        lineterminator=lay.lineterminator,
        quoting=quoting,
        na_rep=lay.missing or "",
    )
    return head + text


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
            return text_source(p, enc, tf)
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


def _to_parquet(out: pd.DataFrame, fh: IO[bytes], name: str) -> None:
    """``out.to_parquet``, with pyarrow's conversion error (which quotes the offending cell:
    "Could not convert '<value>' with type str") replaced by one naming the column only."""
    try:
        out.to_parquet(fh, index=False)
    except (TypeError, ValueError) as exc:  # ArrowInvalid / ArrowTypeError subclass these
        if not type(exc).__module__.startswith("pyarrow"):
            raise
        mixed = [
            str(c)
            for c in out.columns
            if out[c].dtype == object
            and pd.api.types.infer_dtype(out[c], skipna=True).startswith("mixed")
        ]
        what = (
            f"column {mixed[0]!r} holds values of mixed types (such as numbers and text)"
            if mixed
            else f"a column cannot be converted to one Parquet type ({type(exc).__name__})"
        )
        raise InputError(
            f"cannot write {name} as Parquet: {what}; convert it to one type first "
            "(e.g. df[col].astype(str)) or write CSV"
        ) from None


def write(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    like: str | os.PathLike[str] | SourceFormat | Mapping[str, Any] | None = None,
    parents: bool = False,
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
        whose format the output copies: Parquet, or delimited text with its header (or none),
        delimiter and ``", "`` spacing, quoting, line terminator, encoding/BOM and the one
        missing-value marker the input used (``SourceFormat.missing``; empty fields otherwise).  Writing over that input file is refused.  Date columns read from text keep
        their source format (``SourceFormat.date_formats``, else the one in ``df.attrs``), so
        an untouched date column is written back byte-identical; a column whose values that
        format cannot hold (seconds, a time zone) is written ISO 8601, as are dates with no
        recorded format.
    parents
        Create a missing folder of ``path`` (and its parents) when writing; a failed write
        removes it again (:func:`output_folder`).  The command line's file outputs do this,
        as ``veil anonymize --out DIR`` does.

    Raises
    ------
    veil.errors.InputError
        When ``path`` is the input file itself, or its folder does not exist (and ``parents``
        is false) or cannot be created, or a column
        cannot be stored as Parquet (mixed types; named, its values never quoted).

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
        # -0.0 as 0.0 here too: Parquet keeps the sign bit, so a reader saw which released
        # zeros came from negative values (-300 rounded to -0.0), as the text showed '-0'
        out = positive_zeros(df).copy(deep=False)
        out.attrs = {}
        return atomic_write(target, lambda fh: _to_parquet(out, fh, target.name), parents=parents)
    csv_fmt = fmt if fmt and fmt.format == "csv" else None
    sep = "\t" if suffix == ".tsv" else csv_fmt.delimiter if csv_fmt else ","
    # the layout to write: the input's, with the .tsv suffix's tab and its spacing dropped when
    # the delimiter changes, and the missing marker "" (empty field) when the input had none
    lay = (
        SourceFormat(str(target), "csv", sep, missing="")
        if csv_fmt is None
        else replace(
            csv_fmt,
            delimiter=sep,
            spacing=csv_fmt.spacing if sep == csv_fmt.delimiter else "",
            missing=csv_fmt.missing or "",
        )
    )
    source = df.attrs.get("veil_source")
    formats = (fmt.date_formats if fmt else None) or (
        source.get("date_formats") if isinstance(source, Mapping) else None
    )
    if formats:
        df = _dates_in_source_format(df, formats)
    df = positive_zeros(df)  # every float -0.0 as 0.0: see veil.io._signed_zero

    def _write(fh: IO[bytes]) -> None:
        if _arrow_csv(df, fh, lay):
            return
        text = _pandas_csv(df, lay)
        try:
            data = text.encode(lay.encoding)
        except UnicodeEncodeError:
            data = text.encode("utf-8")
        fh.write(data)

    return atomic_write(target, _write, parents=parents)
