"""Table-reading options shared by the sub-commands that read a CSV, TSV or Parquet file."""

from __future__ import annotations

import argparse
from typing import Any

#: ``--missing`` help of ``veil scan`` and ``veil anonymize``.
MISSING_HELP = "cell text read as missing (repeatable; default: '?', 'NA' and empty)"


def add_read_options(
    p: argparse.ArgumentParser, *, missing_help: str = MISSING_HELP, names: bool = True
) -> None:
    """Add ``--delimiter``, ``--encoding``, ``--missing`` and (optionally) ``--names``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-command's parser.
    missing_help : str, optional
        Help text of ``--missing`` (the commands word it differently).
    names : bool, default True
        Whether to add ``--names`` (column names for a file without header).
    """
    p.add_argument("--delimiter", help="field delimiter (sniffed by default)")
    p.add_argument("--encoding", help="text encoding (sniffed by default)")
    p.add_argument("--missing", action="append", metavar="TEXT", help=missing_help)
    if names:
        p.add_argument("--names", help="comma-separated column names for a file without header")


def read_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`veil.io.read` from the options of :func:`add_read_options`.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments; ``names`` may be absent (a command without ``--names``).

    Returns
    -------
    dict
        ``delimiter`` (backslash escapes such as ``\\t`` decoded), ``encoding``,
        ``missing_values`` and ``names``, each only when given.
    """
    opts: dict[str, Any] = {}
    if args.delimiter:
        opts["delimiter"] = args.delimiter.encode().decode("unicode_escape")
    if args.encoding:
        opts["encoding"] = args.encoding
    if args.missing:
        opts["missing_values"] = list(args.missing)
    names = getattr(args, "names", None)
    if names:
        opts["names"] = [n.strip() for n in names.split(",")]
    return opts
