"""``veil scan INPUT``: find identifiers, quasi-identifiers and sensitive columns."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from veil.cli._read_options import add_read_options, read_options
from veil.schema import Role

_STYLE = {
    Role.IDENTIFIER: "bold red",
    Role.QUASI: "yellow",
    Role.SENSITIVE: "magenta",
    Role.INSENSITIVE: "dim",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scan",
        help="find identifying columns and draft a policy",
        description="Classify every column as identifier, quasi-identifier, sensitive or "
        "insensitive (by content and header), with uniqueness figures.",
    )
    p.add_argument("input", help="CSV, TSV or Parquet file")
    p.add_argument(
        "--policy-out",
        metavar="FILE",
        help="write a draft policy (YAML) to FILE (its folder is created if needed)",
    )
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--k", type=int, default=5, help="k target written into the draft (default 5)")
    add_read_options(p)
    p.set_defaults(func=run)


def _print_table(result: Any, path: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    # column names (the file's header), the reasons quoting them and the path are text, not
    # Rich markup: a header such as "income [/USD]" failed the scan with a MarkupError, and
    # "weight [kg]" lost its "[kg]"
    console = Console() if sys.stdout.isatty() else Console(width=160)
    table = Table(title=escape(f"veil scan: {path} ({result.n_rows} records)"))
    for head in ("column", "role", "kind", "conf.", "distinct", "unique rec.", "missing", "reason"):
        table.add_column(head, overflow="fold")
    for f in result.columns:
        table.add_row(
            escape(f.column),
            f"[{_STYLE[f.role]}]{f.role.value}[/]",
            escape(f.kind),
            f"{f.confidence:.2f}",
            str(f.distinct),
            f"{f.unique_records_share:.1%}",
            f"{f.missing_share:.1%}",
            escape(f.reason),
        )
    console.print(table)
    qis = escape(", ".join(result.quasi_identifiers) or "none")
    console.print(
        f"Quasi-identifiers: {qis}\n"
        f"Records unique on their combination: {result.qi_unique_share:.1%}; "
        f"smallest group: {result.qi_smallest_class}"
    )


def run(args: argparse.Namespace) -> int:
    from veil.deid import scan
    from veil.deid._scan_draft import draft_yaml
    from veil.errors import ConfigError, InputError
    from veil.io import atomic_write, check_folder, json_text, read, same_file

    if args.k < 1:
        raise ConfigError("--k must be at least 1")
    if args.policy_out and same_file(args.policy_out, args.input):
        raise InputError(
            f"refusing to write the draft policy over its input {args.input}: "
            "choose another --policy-out"
        )
    if args.policy_out:  # a missing folder is created when writing, as anonymize's --out
        check_folder(Path(args.policy_out).parent, f"--policy-out {args.policy_out}")
    opts = read_options(args)
    df = read(args.input, **opts)
    if not opts.get("names") and not df.attrs.get("veil_source", {}).get("header", True):
        # Headers are half of the evidence: a headerless Adult's age column is 'other'.
        print(
            f"veil: note: {args.input} has no header row, so its columns are named col_1.."
            f"col_{df.shape[1]} and classified by content alone; --names a,b,... names them",
            file=sys.stderr,
        )
    result = scan(df)
    if args.json:
        sys.stdout.write(json_text(result.to_dict()) + "\n")
    else:
        _print_table(result, args.input)
    if args.policy_out:
        inp = {
            k: v
            for k, v in opts.items()
            if k in ("delimiter", "encoding", "missing_values", "names")
        }
        text = draft_yaml(result, k=args.k, input_options=inp or None).encode("utf-8")
        atomic_write(args.policy_out, lambda fh: fh.write(text), parents=True)
        if not args.json:
            print(f"draft policy written to {args.policy_out}", file=sys.stderr)
    return 0
