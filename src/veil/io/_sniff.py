"""Sniffing the encoding, delimiter and header of delimited text files.

The encoding is taken from a byte-order mark when there is one (UTF-8 with BOM, UTF-16,
UTF-32), else UTF-8 is tried, then Windows-1252, then Latin-1 (only when the decoded text has no
control characters, so that binary files are rejected rather than read as garbage).  The
delimiter is chosen among ``,``, ``;``, tab and ``|`` as the candidate splitting the sample lines
into the most consistent number of fields (the idea of Python's :class:`csv.Sniffer`, made
robust to quoted fields); a comma followed by a space everywhere (the UCI Adult files) is read
as ``,`` with leading spaces skipped.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass

from veil.errors import InputError

__all__ = ["TextFormat", "sniff_encoding", "sniff_format"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_CANDIDATES = (",", ";", "\t", "|")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
SAMPLE_BYTES = 1 << 16


@dataclass(frozen=True)
class TextFormat:
    """How a delimited text file is laid out."""

    encoding: str
    delimiter: str
    skipinitialspace: bool
    header: bool
    #: Text after each delimiter in (nearly) every row: ``" "`` for the UCI Adult ``", "``.
    spacing: str = ""
    #: ``"all"`` when every field of the sample is quoted, else ``"minimal"``.
    quoting: str = "minimal"
    #: The line terminator of the first line: ``"\n"``, ``"\r\n"`` or ``"\r"``.
    lineterminator: str = "\n"


def _bom_encoding(head: bytes) -> str | None:
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return None


def _decode_candidates(data: bytes) -> tuple[str, str]:
    """Return (encoding, text) for the first candidate decoding ``data`` cleanly."""
    for enc in ("utf-8", "cp1252"):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError as exc:
            # A multi-byte character cut at the end of the sample is not an error.
            if (
                enc == "utf-8"
                and exc.start >= len(data) - 3
                and exc.reason == "unexpected end of data"
            ):
                return enc, data[: exc.start].decode(enc)
            continue
        if not _CONTROL.search(text):
            return enc, text
    text = data.decode("latin-1")
    if not _CONTROL.search(text):
        return "latin-1", text
    raise InputError(
        "cannot decode the file as text (binary data or an unknown encoding); "
        "give the encoding explicitly"
    )


def sniff_encoding(head: bytes, encoding: str | None = None) -> tuple[str, str]:
    """Return ``(encoding, decoded sample)`` for the first bytes ``head`` of a file.

    With an explicit ``encoding`` the sample is decoded strictly and an undecodable byte raises
    :class:`~veil.errors.InputError` naming its offset.

    Examples
    --------
    >>> sniff_encoding("a,b\\n".encode("utf-8-sig"))[0]
    'utf-8-sig'
    >>> sniff_encoding("é,b\\n".encode("cp1252"))[0]
    'cp1252'
    """
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise InputError(f"unknown encoding {encoding!r}") from None
        try:
            return encoding, head.decode(encoding)
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 3 and exc.reason in (
                "unexpected end of data",
                "truncated data",
            ):
                return encoding, head[: exc.start].decode(encoding, errors="ignore")
            raise InputError(
                f"cannot decode byte 0x{head[exc.start]:02x} at offset {exc.start} as {encoding}"
            ) from None
    bom = _bom_encoding(head)
    if bom is not None:
        return bom, head.decode(bom, errors="ignore")
    if b"\x00" in head:
        raise InputError("the file contains NUL bytes: it is binary, not a text table")
    return _decode_candidates(head)


def _spaces_after_delimiters(text: str, delim: str) -> tuple[int, int, int]:
    """Fields after the first of each row, those starting with a space and with two spaces.

    Quote-aware as :mod:`csv` with ``skipinitialspace``: ``a, "b,c"`` has one field after
    the first, starting with a space (the space before the quote is the layout's, not the
    value's); a delimiter or line break inside quotes does not count.
    """
    n = one = two = 0
    i, end, start = 0, len(text), True
    while i < end:
        ch = text[i]
        if start:
            j = i
            while j < end and text[j] == " ":
                j += 1
            if j < end and text[j] == '"':  # a quoted field: skip to its closing quote
                j += 1
                while j < end:
                    if text[j] == '"':
                        if text[j + 1 : j + 2] == '"':
                            j += 2
                            continue
                        break
                    j += 1
                i, start = j + 1, False
                continue
            start = False
        if ch == delim:
            n += 1
            one += text[i + 1 : i + 2] == " "
            two += text[i + 1 : i + 3] == "  "
            start = True
        elif ch == "\n":
            start = True
        i += 1
    return n, one, two


def _field_counts(lines: list[str], delim: str) -> list[int]:
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delim, skipinitialspace=True)
    try:
        return [len(row) for row in reader if row]
    except csv.Error:
        return []


def _choose_delimiter(lines: list[str], default: str = ",") -> str:
    best, best_score = default, (-1.0, 0)
    for delim in sorted(_CANDIDATES, key=lambda c: c != default):  # the default wins ties
        counts = _field_counts(lines, delim)
        if not counts:
            continue
        mode = max(set(counts), key=counts.count)
        if mode < 2 or counts[0] != mode:  # the first (header) line must agree
            continue
        consistency = counts.count(mode) / len(counts)
        score = (consistency, mode)
        if score > best_score:
            best, best_score = delim, score
    return best


def _is_number(s: str) -> bool:
    try:
        float(s.replace(",", ""))
    except ValueError:
        return False
    return True


_DATEISH = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")


def _has_header(rows: list[list[str]]) -> bool:
    """A first row with no number or date in it and some column typed differently below."""
    if len(rows) < 2:
        return True
    first = [c.strip() for c in rows[0]]
    if any(c == "" or _is_number(c) or _DATEISH.match(c) for c in first):
        return False
    for j, name in enumerate(first):
        below = [r[j].strip() for r in rows[1:] if len(r) > j and r[j].strip()]
        if below and all(_is_number(c) or _DATEISH.match(c) for c in below):
            return True
        if below and name in below:
            return False
    # All-text tables: a header row's values are distinct and do not repeat below.
    return len(set(first)) == len(first)


def sniff_format(
    sample: str, encoding: str, delimiter: str | None = None, default: str = ","
) -> TextFormat:
    """Guess the delimiter, leading-space style and header presence from a decoded sample.

    ``default`` is the delimiter assumed when the sample does not decide (one column), e.g. a
    tab for ``.tsv`` files.
    """
    lines = [ln for ln in sample.splitlines() if ln.strip()]
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]  # the last line of the sample may be cut
    lines = lines[:200]
    if not lines:
        raise InputError("the file is empty")
    delim = delimiter if delimiter is not None else _choose_delimiter(lines, default)
    if len(delim) != 1:
        if delim.strip() and len(delim.strip()) == 1 and delim[0] != " ":
            delim = delim.strip()  # ', ' means ',' with skipped initial spaces
        else:
            raise InputError(f"the delimiter must be one character, got {delimiter!r}")
    text = "\n".join(lines)
    n_fields, n_spaced, n_two = _spaces_after_delimiters(text, delim)
    spaced = n_fields > 0 and n_spaced >= 0.9 * n_fields
    one_space = spaced and n_two == 0
    rows = list(csv.reader(io.StringIO(text), delimiter=delim, skipinitialspace=spaced))
    return TextFormat(
        encoding,
        delim,
        spaced,
        _has_header(rows),
        spacing=" " if one_space else "",
        quoting=_quoting(lines, delim),
        lineterminator=_lineterminator(sample),
    )


def _lineterminator(sample: str) -> str:
    """The terminator of the first line (``\\n`` when the sample has a single line)."""
    i = sample.find("\n")
    j = sample.find("\r")
    if j >= 0 and (i < 0 or j < i):
        return "\r\n" if sample[j : j + 2] == "\r\n" else "\r"
    return "\n"


def _quoting(lines: list[str], delim: str) -> str:
    """``"all"`` when every field of every sample line is enclosed in double quotes."""
    if not lines or any('"' not in ln for ln in lines):
        return "minimal"
    quoted = re.compile(r'^\s*"(?:[^"]|"")*"\s*(?:' + re.escape(delim) + r'\s*"(?:[^"]|"")*"\s*)*$')
    return "all" if all(quoted.match(ln) for ln in lines) else "minimal"
