"""``veil reidentify RELEASE --columns C1,C2 --out FILE``: decrypt tokenized columns.

For the key holder only: reverses ``tokenize`` (AES-SIV) with the same key.  Writes atomically
(temporary file + rename), refuses to overwrite the release, and fails with one line naming
the column and the number of bad tokens when a token was tampered with or the key is wrong;
nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from veil.errors import ConfigError, InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reidentify",
        help="decrypt tokenized columns of a release (key holder only)",
        description="Reverse reversible tokenization: decrypt the given token columns of a "
        "release with the secret key and write a new file.",
    )
    p.add_argument("release", help="the released table (CSV, TSV or Parquet)")
    p.add_argument("--columns", required=True, help="comma-separated token columns to decrypt")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="where to write the result (its folder is created if needed)",
    )
    key = p.add_mutually_exclusive_group()
    key.add_argument(
        "--key-env", metavar="VAR", help="environment variable with the key (default VEIL_KEY)"
    )
    key.add_argument("--key-file", metavar="FILE", help="file holding the key")
    p.add_argument("--prefix", default="", help="token prefix used when tokenizing (default none)")
    p.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="COL=NAME",
        help="the column name the tokens were made under, when the column was renamed since "
        "(repeatable)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from veil.deid._keys import key_loader
    from veil.deid.operators import detokenize_frame
    from veil.io import check_folder, read, same_file, write

    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    if not columns:
        raise ConfigError("--columns needs at least one column name")
    if same_file(args.release, args.out):
        raise InputError(f"refusing to overwrite the release {args.release}; choose another --out")
    # a missing folder is created when writing
    check_folder(Path(args.out).parent, f"--out {args.out}")
    contexts: dict[str, str] = {}
    for item in args.context:
        col, sep, name = item.partition("=")
        if not sep or not col or not name:
            raise ConfigError(f"--context must look like COL=NAME, got {item!r}")
        contexts[col] = name
    # keep every other cell as written: only the empty cell is missing, no date parsing
    df = read(args.release, missing_values=("",), parse_dates=False)
    unknown = [c for c in columns if c not in df.columns]
    if unknown:
        raise InputError(f"no column(s) {', '.join(map(repr, unknown))} in {args.release}")
    load = key_loader(env=args.key_env, file=args.key_file)
    out = detokenize_frame(df, columns, load(), prefix=args.prefix, contexts=contexts)
    write(out, args.out, like=args.release, parents=True)
    print(
        f"re-identified {len(columns)} column(s) of {len(out)} rows -> {args.out}", file=sys.stderr
    )
    return 0
