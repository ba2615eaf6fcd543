"""``veil check INPUT --qi COLS --k K [--l COL:L] [--t COL:T]``: verify privacy models.

Exit status: 0 when every model holds, 1 when one does not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
from typing import Any

from veil.cli._read_options import add_read_options, read_options


def _non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (a usage error, exit 2, otherwise)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="check k-anonymity, l-diversity, t-closeness of a table",
        description="Check privacy models on a table as it is. Prints whether each model holds, "
        "the smallest and the violating equivalence classes and the class-size distribution. "
        "Exit status 0: all hold; 1: some do not; 2: usage error.",
    )
    p.add_argument("input", help="CSV, TSV or Parquet file")
    p.add_argument("--qi", required=True, help="comma-separated quasi-identifier columns")
    p.add_argument("--k", type=int, help="k-anonymity (k-map too with --population)")
    p.add_argument(
        "--l",
        action="append",
        metavar="COL:L",
        help="l-diversity of a sensitive column (repeatable)",
    )
    p.add_argument(
        "--l-variant",
        choices=("distinct", "entropy", "recursive"),
        default="distinct",
        help="l-diversity variant (default distinct)",
    )
    p.add_argument("--c", type=float, help="c of recursive (c,l)-diversity")
    p.add_argument(
        "--t",
        action="append",
        metavar="COL:T",
        help="t-closeness of a sensitive column (repeatable)",
    )
    p.add_argument(
        "--t-distance",
        choices=("equal", "ordered", "hierarchical"),
        default="equal",
        help="ground distance of t-closeness (default equal)",
    )
    p.add_argument(
        "--hierarchy",
        action="append",
        metavar="COL=FILE",
        help="hierarchy of a sensitive column for hierarchical t-closeness (repeatable)",
    )
    p.add_argument("--average-risk", type=float, help="average re-identification risk threshold")
    p.add_argument("--population", help="population table (CSV/TSV/Parquet) for k-map")
    p.add_argument(
        "--suppression-limit",
        type=float,
        default=0.0,
        help="share of records that may be suppressed (default 0)",
    )
    p.add_argument("--show", type=_non_negative_int, default=10, help="classes listed (default 10)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_read_options(p, missing_help="cell text read as missing (repeatable)")
    p.set_defaults(func=run)


def _read(path: str, args: argparse.Namespace, *, names: bool = True) -> Any:
    """Read ``path`` with the command's options; ``--names`` only for the input (``names``):
    the population table is read with its own header."""
    from veil.io import read

    opts = read_options(args)
    if not names:
        opts.pop("names", None)
    return read(path, **opts)


def _hint_headerless(df: Any, qi: list[str], args: argparse.Namespace) -> None:
    """A headerless file's columns are ``col_1..col_n``: say so when --qi names others
    (not when ``--names`` named them: the check's own unknown-column error says it then)."""
    from veil.errors import InputError

    if args.names or df.attrs.get("veil_source", {}).get("header", True):
        return
    missing = [c for c in qi if c not in df.columns]
    if missing:
        raise InputError(
            f"column(s) not in the table: {missing}; {args.input} has no header row, so its "
            f"columns are named col_1..col_{df.shape[1]} (use those, or name them with --names)"
        )


def run(args: argparse.Namespace) -> int:
    from veil.anonymity import check
    from veil.errors import ConfigError
    from veil.schema import Hierarchy

    qi = [c.strip() for c in args.qi.split(",") if c.strip()]
    hierarchies = {}
    for item in args.hierarchy or []:
        col, sep, path = item.partition("=")
        if not sep:
            raise ConfigError(f"--hierarchy must look like COL=FILE, got {item!r}")
        hierarchies[col] = Hierarchy.from_file(path)
    df = _read(args.input, args)
    _hint_headerless(df, qi, args)
    population = _read(args.population, args, names=False) if args.population else None
    result = check(
        df,
        qi,
        k=args.k,
        l=args.l,
        t=args.t,
        l_variant=args.l_variant,
        c=args.c,
        t_distance=args.t_distance,
        hierarchies=hierarchies,
        average_risk=args.average_risk,
        population=population,
        suppression_limit=args.suppression_limit,
        show=args.show,
    )
    if args.json:
        from veil.io import json_text

        print(json_text(result.to_dict()))
    else:
        print(result.report(args.show))
    return 0 if result.holds else 1
