"""``veil query INPUT SQL --epsilon E``: a differentially private SQL query on a table.

Example
-------
``veil query people.csv "SELECT county, COUNT(*), AVG(age) FROM data WHERE age > 20
GROUP BY county" --epsilon 1 --delta 1e-6 --privacy-unit person_id --bounds age=18:100``
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from veil.cli._read_options import add_read_options, read_options
from veil.errors import ConfigError, NoiseScaleError

__all__ = ["register", "run", "parse_bounds", "parse_candidates", "parse_keys"]


def _float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{what}: {text!r} is not finite")
    return value


def parse_bounds(items: list[str] | None) -> dict[str, tuple[float, float]]:
    """``["age=18:100", ...]`` -> ``{"age": (18.0, 100.0)}``; a column given twice is an error
    (no silent "last one wins")."""
    out: dict[str, tuple[float, float]] = {}
    for item in items or []:
        col, sep, rng = item.rpartition("=")
        lo, sep2, hi = rng.partition(":")
        if not sep or not sep2 or not col:
            raise ConfigError(f"--bounds {item!r}: expected COLUMN=LOW:HIGH, e.g. age=18:100")
        if col in out:
            raise ConfigError(f"--bounds {col}: given twice; give each column's bounds once")
        low, high = _float(lo, f"--bounds {col}"), _float(hi, f"--bounds {col}")
        if low > high:
            raise ConfigError(f"--bounds {col}: LOW must not exceed HIGH ({low} > {high})")
        out[col] = (low, high)
    return out


def parse_candidates(items: list[str] | None) -> dict[str, list[float]] | None:
    """``["age=18:100:1", "bmi=18.5,25,30"]`` -> ``{"age": [18.0, ..., 100.0], "bmi": [...]}``.

    ``LOW:HIGH:STEP`` is the grid ``LOW, LOW + STEP, ...`` up to ``HIGH`` (included when on the
    grid); ``v1,v2,...`` lists the values.  ``None`` when not given.

    Examples
    --------
    >>> parse_candidates(["age=20:30:5", "bmi=18.5,25"])
    {'age': [20.0, 25.0, 30.0], 'bmi': [18.5, 25.0]}
    """
    if not items:
        return None
    from veil.dp.tools._quantile_candidates import MAX_CANDIDATES  # as veil.dp.tools' candidates=

    out: dict[str, list[float]] = {}
    for item in items:
        col, sep, spec = item.partition("=")
        what = f"--candidates {col}"
        if not sep or not col or not spec.strip():
            raise ConfigError(
                f"--candidates {item!r}: expected COLUMN=LOW:HIGH:STEP or COLUMN=v1,v2,... "
                "e.g. age=18:100:1"
            )
        if col in out:
            raise ConfigError(f"{what}: given twice; give each column's candidates once")
        parts = spec.split(":")
        if len(parts) == 3:
            low, high, step = (_float(p, what) for p in parts)
            if step <= 0 or low > high:
                raise ConfigError(f"{what}: expected LOW <= HIGH and STEP > 0")
            if (high - low) / step >= MAX_CANDIDATES:
                raise ConfigError(f"{what}: more than {MAX_CANDIDATES} candidates")
            # decimal arithmetic on the given texts: 0:1:0.1 gives 0.3, not 0.30000000000000004
            d_low, d_high, d_step = (Decimal(p.strip()) for p in parts)
            count = int((d_high - d_low) // d_step) + 1
            out[col] = [float(d_low + i * d_step) for i in range(count)]
        elif len(parts) == 1:
            out[col] = [_float(v, what) for v in spec.split(",")]
        else:
            raise ConfigError(f"{what}: expected LOW:HIGH:STEP or v1,v2,...")
    return out


def parse_keys(items: list[str] | None) -> dict[str, list[str]] | None:
    """``["county=a,b,c"]`` -> ``{"county": ["a", "b", "c"]}`` (``None`` when not given)."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in items:
        col, sep, values = item.partition("=")
        keys = [v.strip() for v in values.split(",")]
        if not sep or not col or not any(keys):
            raise ConfigError(f"--keys {item!r}: expected COLUMN=v1,v2,... e.g. county=a,b,c")
        out.setdefault(col, []).extend(k for k in keys if k != "")
    return out


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "query",
        help="answer a SQL aggregate query with differential privacy",
        description="Run SELECT group columns and COUNT/SUM/AVG/VAR/STDDEV/MEDIAN/QUANTILE "
        "FROM data [WHERE ...] [GROUP BY ...] with differential privacy: contribution "
        "bounding per person, noise calibrated to the whole query, and CI half-widths.",
    )
    p.add_argument("input", help="CSV, TSV or Parquet file (the table is called 'data')")
    p.add_argument(
        "sql", help='the query, e.g. "SELECT county, COUNT(*) FROM data GROUP BY county"'
    )
    p.add_argument("--epsilon", type=float, required=True, help="privacy budget of the query")
    p.add_argument("--delta", type=float, default=0.0, help="delta (needed without --keys)")
    p.add_argument(
        "--privacy-unit",
        metavar="COL",
        help="column identifying a person (default: every row is a different person)",
    )
    p.add_argument(
        "--bounds",
        action="append",
        metavar="COL=LOW:HIGH",
        help="clamping bounds of a column (repeatable; required for SUM/AVG/VAR/...)",
    )
    p.add_argument(
        "--integer",
        action="append",
        metavar="COL",
        help="COL holds whole numbers: its quantiles pick among the integers between the bounds "
        "(values rounded). Without it quantiles are continuous, whatever type the file's values "
        "suggest: a type read from the data would reveal a missing or fractional value",
    )
    p.add_argument(
        "--candidates",
        action="append",
        metavar="COL=LOW:HIGH:STEP|v1,v2,...",
        help="public candidates for the quantiles of COL (repeatable): the release is one of "
        "them, picked by permute-and-flip; e.g. age=18:100:1 (within the column's bounds)",
    )
    p.add_argument("--max-groups", type=int, help="groups per person (with --privacy-unit)")
    p.add_argument("--max-rows", type=int, help="rows per person and group (with --privacy-unit)")
    p.add_argument(
        "--keys",
        action="append",
        metavar="COL=v1,v2,...",
        help="public group keys (repeatable, one per GROUP BY column); otherwise keys are "
        "selected privately with delta",
    )
    p.add_argument("--mechanism", choices=("laplace", "gaussian"), default="laplace")
    p.add_argument("--alpha", type=float, default=0.05, help="CI level 1-alpha (default 0.05)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only print the budget split and CI half-widths; nothing is released (the table "
        "is still read, to check the query against its columns)",
    )
    p.add_argument("--group-size", type=float, help="assumed group size for --dry-run of means")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="also write the noisy table to FILE (its folder is created if needed)",
    )
    p.add_argument(
        "--seed", type=int, help="reproducible noise for tests (NOT secure; prints a warning)"
    )
    add_read_options(p, missing_help="cell text read as missing")
    p.set_defaults(func=run)


def _read(args: argparse.Namespace) -> Any:
    from veil.io import read

    opts = read_options(args)
    # parse_dates=False: the reader's date detection picks one format (day- or month-first, or
    # none) from *all* the column's cells, so one person's cell (13/01/2020, 01/13/2020 or
    # 'unknown') changed every other person's date (WHERE counts 100 vs 0, released keys);
    # dates stay text, compared cell by cell (veil.dp._canon)
    # float_text: a column of whole numbers turns float64 (rounding those above 2^53) when one
    # person's value is missing or fractional; as text each cell is read by itself
    # utf8_replace: without --encoding, one person's non-UTF-8 byte made the reader decode the
    # whole file as Windows-1252, re-decoding every other person's text (Zürich -> ZÃ¼rich)
    # header_format: delimiter, spacing and header from the header line, not the persons' rows
    return read(
        args.input,
        parse_dates=False,
        float_text=True,
        utf8_replace=True,
        header_format=True,
        empty_ok=True,  # a header alone is a table of nobody: noise, as for one person
        **opts,
    )


def _check_limits(args: argparse.Namespace) -> None:
    """``--max-groups`` / ``--max-rows`` checked before the file is read, with PrivateFrame's
    rule and the option's name: positive integers (0 is never read as 1); without
    ``--privacy-unit`` a row is the person (1 group, 1 row), so more needs a privacy unit."""
    from veil._checks import positive_int

    for opt, value in (("--max-groups", args.max_groups), ("--max-rows", args.max_rows)):
        if value is not None and positive_int(value, opt) > 1 and args.privacy_unit is None:
            raise ConfigError(
                f"{opt} {value} needs --privacy-unit (without one every row is a different "
                "person, in 1 group with 1 row)"
            )


def _epsilon_error(args: argparse.Namespace, exc: NoiseScaleError) -> ConfigError:
    """The samplers refuse noise scales above 2^52 (epsilon too small) or below 2^-900
    (epsilon too large: ``exc.too_large``): name the option that did it."""
    also = " (and --delta)" if args.mechanism == "gaussian" else ""
    if exc.too_large:
        return ConfigError(
            f"--epsilon {args.epsilon:g}{also} is too large for this query: the noise scale "
            "falls below 2^-900, where floating-point-safe noise is not defined; lower --epsilon"
        )
    return ConfigError(
        f"--epsilon {args.epsilon:g}{also} is too small for this query: the noise it needs "
        "exceeds what the exact samplers can draw (a noise scale above 2^52); raise --epsilon"
    )


def _check_out(args: argparse.Namespace) -> None:
    """Refuse an ``--out`` that cannot be written *before* anything is computed: failing after
    the noisy table was printed would be a release with an error status (and invite a rerun,
    i.e. a second release)."""
    from pathlib import Path

    from veil.io import check_folder, same_file

    target = Path(args.out)
    if not str(args.out).strip():
        raise ConfigError("--out must name a file")
    if same_file(args.input, target):
        raise ConfigError("--out names the input file: refusing to overwrite the input")
    if target.is_dir():
        raise ConfigError(f"--out {args.out}: is a folder, not a file")
    # a missing folder is created when writing
    check_folder(target.parent, f"--out {args.out}", ConfigError)


def _check_bounds(sql: str, bounds: dict[str, tuple[float, float]]) -> None:
    from veil.dp.sql import Aggregate, parse

    for item in parse(sql).select:
        agg = item.expr
        if isinstance(agg, Aggregate) and agg.func != "count" and agg.column not in bounds:
            raise ConfigError(
                f"{agg.sql_name}({agg.column}) needs bounds: add --bounds {agg.column}=LOW:HIGH "
                "(bounds are never read from the data)"
            )


def _key_text(value: Any) -> Any:
    """A released group key as text that depends on the value alone, never on the type the
    reader inferred for its column (int64 turns float64 when one person's value is missing):
    :func:`veil.dp._canon.release_key` (whole numbers without ``.0``), missing keys NaN."""
    from veil.dp._canon import release_key

    key = release_key(value)
    return math.nan if key is None else str(key)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _print(df: Any, title: str, caption: str) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console() if sys.stdout.isatty() else Console(width=160)
    table = Table()
    # column names and group labels are plain Text, never Rich markup: a released group
    # "[/USD]" failed the output with a MarkupError after the budget was spent, and markup's
    # escape() still showed a trailing backslash twice and dropped one before a "["
    for col in df.columns:
        name = str(col)
        table.add_column(
            Text(f"± {name[:-3]}" if name.endswith("_ci") else name),
            justify="right" if df[col].dtype.kind in "iuf" else "left",
            style="dim" if name.endswith("_ci") else None,
        )
    for row in df.itertuples(index=False):
        table.add_row(*(Text(_fmt(v)) for v in row))
    # title and caption on their own lines, not wrapped to the table's width (rich would)
    console.print(title, style="bold", soft_wrap=True, markup=False, highlight=False)
    console.print(table)
    console.print(caption, style="dim", soft_wrap=True, markup=False, highlight=False)


_UNKNOWN_COLUMN = re.compile(r"unknown column|no column|is not in the table")


def _with_header_hint(args: argparse.Namespace, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` whose unknown-column errors recall that the first line is always the header.

    The hint depends on the options only, never on the file: a headerless file's first row
    is its column names (documented), so ``age`` is unknown there and ``--names`` is the fix.
    """

    def call(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except ConfigError as exc:
            msg = str(exc)
            if args.names or not _UNKNOWN_COLUMN.search(msg) or "needs single quotes" in msg:
                raise
            raise ConfigError(
                f"{exc} (the first line of {args.input} is read as the column names; "
                "for a file without a header line give --names)"
            ) from None

    return call


def run(args: argparse.Namespace) -> int:
    import warnings

    from veil.dp.frame import PrivateFrame
    from veil.dp.sql import plan_sql
    from veil.errors import InsecureRandomWarning

    if not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        raise ConfigError(f"--epsilon must be a positive number, got {args.epsilon}")
    if not 0 <= args.delta < 1:
        raise ConfigError(f"--delta must lie in [0, 1), got {args.delta}")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must lie in (0, 1), got {args.alpha}")
    if args.group_size is not None and not 0 < args.group_size < math.inf:
        raise ConfigError(f"--group-size must be a positive number, got {args.group_size}")
    bounds = parse_bounds(args.bounds)
    keys = parse_keys(args.keys)
    candidates = parse_candidates(args.candidates)
    _check_bounds(args.sql, bounds)
    _check_limits(args)
    if args.out:
        _check_out(args)
    df = _read(args)
    from veil.dp import BudgetAccountant

    accountant = BudgetAccountant(epsilon=args.epsilon, delta=args.delta)
    with warnings.catch_warnings():
        if args.seed is not None:
            warnings.simplefilter("ignore", InsecureRandomWarning)
            print(
                "veil: warning: --seed makes the noise reproducible and NOT private",
                file=sys.stderr,
            )
        frame = _with_header_hint(args, PrivateFrame)(
            df,
            privacy_unit=args.privacy_unit,
            accountant=accountant,
            bounds=bounds,
            max_groups=1 if args.max_groups is None else args.max_groups,
            max_rows=1 if args.max_rows is None else args.max_rows,
            mechanism=args.mechanism,
            integer_columns=[c.strip() for v in args.integer or [] for c in v.split(",")],
            random_state=args.seed,
        )
    try:
        plan = _with_header_hint(args, plan_sql)(
            frame,
            args.sql,
            epsilon=args.epsilon,
            delta=args.delta,
            keys=keys,
            candidates=candidates,
        )
        if not args.dry_run:
            out = plan.execute(with_ci=True, alpha=args.alpha)
    except NoiseScaleError as exc:
        raise _epsilon_error(args, exc) from None
    unit = (
        f"privacy unit: {args.privacy_unit} (max {plan.plan.max_groups} group(s), "
        f"{plan.plan.max_rows} row(s) per group)"
        if args.privacy_unit
        else "privacy unit: row (each row is treated as a different person)"
    )
    budget = f"epsilon={plan.epsilon:g}, delta={plan.delta:g}"
    if args.dry_run:
        acc = plan.accuracy(args.alpha, args.group_size).reset_index()
        acc["note"] = acc["note"].replace(  # the library's keyword, as the CLI spells it
            "give group_size for means/variances", "give --group-size N for means/variances"
        )
        _print(acc, f"veil query (dry run): {budget}", f"{unit}; nothing released")
        return 0
    caption = f"{unit}; ± = {1 - args.alpha:.0%} CI half-width"
    if plan.plan.selection_threshold is not None:
        caption += f"; groups kept if noisy persons >= {plan.plan.selection_threshold}"
    for col in plan.plan.by:  # the key columns' types were inferred from the data
        name = plan.rename.get(col, col)
        out[name] = out[name].map(_key_text).astype(object)
    if args.out:  # before printing: a failed write then leaves nothing released
        from veil.io import write  # atomic; devices and FIFOs written through

        # a missing folder is created only now, as `veil anonymize --out DIR` does, and
        # removed again if the write fails
        write(out, args.out, parents=True)
    _print(out, f"veil query: {budget} spent", caption)
    if args.out:
        print(f"noisy table written to {args.out}", file=sys.stderr)
    return 0
