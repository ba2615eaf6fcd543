"""Benchmark: ``veil.io.read`` of a 1,000,000-row CSV (8 columns, about 37 MB).

Three files, written once to a temporary folder from a fixed seed:

* ``full``: no missing value (the common case);
* ``nan_last``: 1,000 empty cells in the last column (the reader then checks every record's
  number of fields, since pandas pads a short row with missing values);
* ``quoted``: as ``nan_last``, with 1,000 quoted cells holding the delimiter (the field count
  then comes from a CSV parser instead of counting delimiters per line).

Prints the best-of-N wall time of ``read`` per file, with the UTC time and the load average.
Run: ``.venv-ci/bin/python benchmarks/io_read.py [--rows N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of, load_line  # noqa: E402

from veil.io import read  # noqa: E402


def _files(folder: Path, n: int) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": [f"{z:05d}" for z in rng.integers(1000, 99999, n)],
            "city": rng.choice(["Paris", "Lyon", "Nice", "Brest"], n),
            "income": np.round(rng.normal(3e4, 1e4, n), 2),
            "score": rng.integers(0, 100, n),
            "label": rng.choice(["a", "b", "c"], n),
        }
    )
    out = {"full": folder / "full.csv", "nan_last": folder / "nan_last.csv"}
    df.to_csv(out["full"], index=False)
    df.loc[rng.choice(n, min(n, 1000), replace=False), "label"] = ""
    df.to_csv(out["nan_last"], index=False)
    df.loc[:: max(1, n // 1000), "city"] = "Saint-Denis, Paris"
    out["quoted"] = folder / "quoted.csv"
    df.to_csv(out["quoted"], index=False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = _files(Path(tmp), args.rows)
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        print(f"veil.io.read, {args.rows:,} rows x 8 columns, best of {args.repeat}; {now}")
        for name, path in files.items():
            wall, cpu, df = best_of(lambda p=path: read(p), args.repeat)
            assert df.shape == (args.rows, 8)
            size = path.stat().st_size / 1e6
            print(
                f"  {name:9s} {size:5.1f} MB  wall {wall:6.3f} s  cpu {cpu:6.3f} s  "
                f"load {load_line()}"
            )


if __name__ == "__main__":
    main()
