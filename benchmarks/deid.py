"""Benchmark: a 10-column de-identification policy over Adult resampled to 1,000,000 rows.

Measures wall time, rows/s and peak memory (tracemalloc peak, and the growth of the process's
peak RSS, ``ru_maxrss``) against the table's in-memory size
(``df.memory_usage(deep=True).sum()``).  Targets: <= 10 s and peak memory <= 3x the table.

CPU time (``time.process_time``) is reported next to wall time: on a shared, oversubscribed
machine it is the better estimate of the wall time on an idle one.  Each measurement runs in a
fresh subprocess so that ``ru_maxrss`` (a per-process high-water
mark) is not polluted by earlier runs; tracemalloc runs separately because it slows
allocation-heavy code.

Run::

    python benchmarks/deid.py            # 1,000,000 rows (about 2-3 minutes)
    python benchmarks/deid.py --quick    # 100,000 rows smoke run (about 30 s)
    python benchmarks/deid.py --rows 200000 --modes operators

Modes: ``operators`` (the operators through the registry), ``apply`` (``veil.apply`` with its
report), ``naive`` (the same policy as an idiomatic row-wise pandas script: the baseline).

``--scan`` times ``veil.scan`` instead (no target in the issue; recorded in docs/deid.md): the
bundled insurance table and ds004148 (best of 5, after a first call that builds the place and
address vocabularies, which is timed on its own) and the resampled table (best of 3).

``--cli`` times ``veil anonymize`` end to end (read CSV, apply, report, plots, write) as a
child process on docs/deid.md section 7's table (Adult resampled to ``--rows``, CSV) and
policy, with ``--allow-unmet``: wall time, the child's CPU time and peak RSS
(``resource.getrusage(RUSAGE_CHILDREN)``); one run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import secrets
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _timing import best_of  # benchmarks/_timing.py

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "datasets" / "adult"
HIER = ROOT / "datasets" / "adult_hierarchies"
KEY_ENV = "VEIL_BENCH_KEY"


def adult_columns() -> list[str]:
    """Column names from adult.names (the lines ``name: values.`` after the header block)."""
    names = []
    for line in (ADULT / "adult.names").read_text(encoding="latin-1").splitlines():
        if ":" in line and not line.startswith("|") and line.rstrip().endswith("."):
            head = line.split(":", 1)[0].strip()
            if head and " " not in head:
                names.append(head)
    return [*names, "income"]


def read_adult() -> pd.DataFrame:
    """``adult.data`` with its column names (last one ``income``), ``?`` as missing."""
    return pd.read_csv(
        ADULT / "adult.data",
        header=None,
        names=adult_columns(),
        skipinitialspace=True,
        na_values=["?"],
    ).dropna(how="all")


def load_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """Adult resampled (with replacement) to ``rows`` rows, plus synthetic direct identifiers."""
    base = read_adult()
    rng = np.random.default_rng(seed)
    df = base.iloc[rng.integers(0, len(base), rows)].reset_index(drop=True)
    # Adult has no direct identifiers: add a person id, a phone number and a postcode
    df.insert(
        0, "id", np.char.add("P", np.char.zfill(np.arange(rows).astype(str), 8)).astype(object)
    )
    area = rng.integers(200, 999, rows).astype(str)
    mid = np.char.zfill(rng.integers(0, 1000, rows).astype(str), 3)
    end = np.char.zfill(rng.integers(0, 10000, rows).astype(str), 4)
    phone = np.char.add(
        np.char.add(np.char.add("+1 ", area), np.char.add("-", mid)), np.char.add("-", end)
    )
    df.insert(1, "phone", phone.astype(object))
    df.insert(
        2, "zip", np.char.zfill(rng.integers(1000, 99999, rows).astype(str), 5).astype(object)
    )
    return df


POLICY_COLUMNS: dict[str, Any] = {
    "id": {"role": "identifier", "operator": {"name": "pseudonymize", "prefix": "P-"}},
    "phone": {"role": "identifier", "operator": {"name": "mask", "kind": "phone", "keep_last": 2}},
    "zip": {"role": "quasi", "operator": {"name": "generalize", "keep": 3}},
    "age": {"role": "quasi", "operator": {"name": "generalize", "bins": [0, 30, 50, 120]}},
    "education": {
        "role": "quasi",
        "operator": {"name": "generalize", "hierarchy": str(HIER / "education.csv"), "level": 1},
    },
    "hours-per-week": {
        "role": "insensitive",
        "operator": {"name": "top_bottom_code", "top_percentile": 99, "bottom_percentile": 1},
    },
    "capital-gain": {
        "role": "sensitive",
        "operator": {"name": "noise", "scale": 0.1, "relative": True, "clip": [0, 100000]},
    },
    "fnlwgt": {"role": "insensitive", "operator": {"name": "round", "base": 1000}},
    "native-country": {"role": "quasi", "operator": {"name": "fake", "kind": "city", "seed": 1}},
    "relationship": {"role": "insensitive", "operator": {"name": "redact", "value": "[REDACTED]"}},
}


def policy_dict() -> dict[str, Any]:
    return {
        "version": 1,
        "key": {"env": KEY_ENV},
        "seed": 1,
        "default_role": "insensitive",
        "columns": POLICY_COLUMNS,
    }


BREAKDOWN: dict[str, float] = {}


def run_operators(df: pd.DataFrame) -> pd.DataFrame:
    """The policy applied directly through the operator registry (no report)."""
    from veil.deid._keys import key_loader
    from veil.deid.operators import OperatorContext, get_operator

    ctx = OperatorContext(secret_loader=key_loader(env=KEY_ENV), rng=np.random.default_rng(1))
    out = df
    for col, spec in POLICY_COLUMNS.items():
        params = dict(spec["operator"])
        op = get_operator(params.pop("name"), params)
        c0 = time.process_time()
        out = op.apply(out, col, ctx)
        BREAKDOWN[f"{col}: {op.name}"] = time.process_time() - c0
    return out


def run_naive(df: pd.DataFrame) -> pd.DataFrame:
    """Baseline: the same policy written as an idiomatic pandas script (row-wise ``map``)."""
    import hashlib
    import hmac
    import re

    from faker import Faker

    key = bytes.fromhex(os.environ[KEY_ENV])
    out = df.copy()
    out["id"] = out["id"].map(
        lambda v: "P-" + hmac.new(key, v.encode(), hashlib.sha256).hexdigest()[:20]
    )
    digit = re.compile(r"[0-9](?=(?:[^0-9]*[0-9]){2})")
    out["phone"] = out["phone"].map(lambda v: v[:3] + digit.sub("*", v[3:]))
    out["zip"] = out["zip"].str[:3] + "**"
    out["age"] = pd.cut(out["age"], [0, 30, 50, 120], right=False).astype(str)
    hier = pd.read_csv(HIER / "education.csv", header=None)
    out["education"] = out["education"].map(dict(zip(hier[0], hier[1])))
    lo, hi = out["hours-per-week"].quantile([0.01, 0.99])
    out["hours-per-week"] = out["hours-per-week"].clip(lo, hi)
    rng = np.random.default_rng(1)
    cg = out["capital-gain"]
    out["capital-gain"] = (cg + rng.normal(0, 0.1 * cg.std(), len(cg))).clip(0, 100000).round()
    out["fnlwgt"] = (out["fnlwgt"] / 1000).round() * 1000
    fake = Faker()
    fake.seed_instance(1)
    cities = {v: fake.city() for v in out["native-country"].dropna().unique()}
    out["native-country"] = out["native-country"].map(cities)
    out["relationship"] = "[REDACTED]"
    return out


def run_apply(df: pd.DataFrame) -> pd.DataFrame:
    """The policy applied with ``veil.apply`` (operators + risk/utility report)."""
    import veil

    release, _report = veil.apply(df, veil.Policy.from_dict(policy_dict()))
    return release


def _rss_now() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def worker(mode: str, rows: int, trace: bool, table: str | None = None) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, secrets.token_hex(32))  # a fresh benchmark-only key
    df = pd.read_pickle(table) if table else load_table(rows)
    table_bytes = int(df.memory_usage(deep=True).sum())
    fn = {"operators": run_operators, "apply": run_apply, "naive": run_naive}[mode]
    # warm imports (Faker locale, scipy) outside the measurement
    fn(df.head(200))
    gc.collect()
    rss_before = _rss_now()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if trace:
        tracemalloc.start()
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn(df)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    res: dict[str, Any] = {
        "mode": mode,
        "rows": rows,
        "table_bytes": table_bytes,
        "wall_s": wall,
        "cpu_s": cpu,
    }
    if trace:
        _cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        res["tracemalloc_peak_bytes"] = peak
    else:
        maxrss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        res["maxrss_delta_bytes"] = maxrss_after - maxrss_before
        res["maxrss_over_rss_before_bytes"] = maxrss_after - rss_before
    if mode == "operators":
        res["cpu_s_per_operator"] = dict(BREAKDOWN)
    res["rows_out"] = len(out)
    res["columns_out"] = out.shape[1]
    return res


def _spawn(mode: str, rows: int, trace: bool, table: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", mode, "--rows", str(rows), "--table", table]
    if trace:
        cmd.append("--trace")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"mode": mode, "error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_scan(rows: int) -> list[dict[str, Any]]:
    """Wall/CPU time of ``veil.scan`` on the bundled tables and on Adult resampled to ``rows``."""
    import veil

    insurance = veil.read(ROOT / "datasets" / "insurance_ke" / "Insurance_data_ke.csv")
    heights = veil.read(ROOT / "datasets" / "ds004148" / "participants.tsv")
    t0 = time.perf_counter()
    veil.scan(insurance)  # first call: builds the vocabularies once per process
    first = time.perf_counter() - t0
    out = [{"table": "insurance_ke, first call (vocabularies built)", "wall_s": first}]
    for name, df, repeat in (
        ("insurance_ke", insurance, 5),
        ("ds004148 participants", heights, 5),
        ("Adult resampled", load_table(rows), 3),
    ):
        name = f"{name} ({df.shape[0]:,} x {df.shape[1]})"
        wall, cpu, _ = best_of(lambda df=df: veil.scan(df), repeat)
        out.append({"table": name, "wall_s": wall, "cpu_s": cpu})
    for r in out:
        cpu = f" (CPU {r['cpu_s']:.3f} s)" if "cpu_s" in r else ""
        print(f"scan {r['table']:45s} wall {r['wall_s']:.3f} s{cpu}")
    return out


CLI_POLICY = """version: 1
columns:
  age: {role: quasi, operator: {name: generalize, bins: [0, 20, 30, 40, 50, 60, 70, 100]}}
  education-num: {role: quasi, operator: drop}
  fnlwgt: {role: insensitive, operator: {name: round, base: 1000}}
  sex: quasi
  race: quasi
  marital-status: quasi
  income: sensitive
  native-country: {role: quasi, operator: {name: mask, keep_first: 2}}
  workclass: {role: quasi, operator: {name: redact}}
  occupation: quasi
  education: quasi
default_role: insensitive
suppress: ["age < 18"]
privacy: {k: 5}
"""


def bench_cli(rows: int) -> dict[str, Any]:
    """Time ``veil anonymize ... --allow-unmet`` end to end in a child process.

    The table and policy are those of docs/deid.md section 7: Adult (header row, last column
    ``income``) resampled with ``sample(rows, replace=True, random_state=0)`` and written as
    CSV; the policy verifies ``k = 5`` without an algorithm, so the run needs
    ``--allow-unmet`` to write its release.  Wall time is ``time.perf_counter`` around the
    child; CPU time and peak RSS come from ``resource.getrusage(RUSAGE_CHILDREN)`` (the
    benchmark starts no other child, so ``ru_maxrss`` is the CLI's own).
    """
    base = read_adult()
    with tempfile.TemporaryDirectory(prefix="veil-cli-bench-") as tmp:
        csv, policy, out = Path(tmp) / "adult1m.csv", Path(tmp) / "p1m.yaml", Path(tmp) / "o1m"
        base.sample(rows, replace=True, random_state=0).to_csv(csv, index=False)
        policy.write_text(CLI_POLICY)
        cmd = [sys.executable, "-m", "veil", "anonymize", str(csv), "--policy", str(policy)]
        cmd += ["--out", str(out), "--allow-unmet"]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = {
            "rows": rows,
            "csv_bytes": csv.stat().st_size,
            "returncode": proc.returncode,
            "wall_s": wall,
            "user_s": r1.ru_utime - r0.ru_utime,
            "sys_s": r1.ru_stime - r0.ru_stime,
            "peak_rss_bytes": r1.ru_maxrss * 1024,
            "outputs": sorted(p.name for p in out.iterdir()) if out.exists() else [],
        }
    if proc.returncode != 0:
        print(proc.stderr.strip()[-2000:])
    print(
        f"veil anonymize {rows:,} rows (CSV {res['csv_bytes'] / 2**20:,.0f} MiB), exit "
        f"{res['returncode']}: wall {wall:.2f} s, CPU {res['user_s'] + res['sys_s']:.2f} s "
        f"({res['user_s']:.2f} user + {res['sys_s']:.2f} sys), peak RSS "
        f"{res['peak_rss_bytes'] / 2**30:.2f} GiB; outputs {', '.join(res['outputs'])}"
    )
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="100,000 rows, operators only")
    ap.add_argument(
        "--modes",
        default="operators,apply,naive",
        help="comma-separated: operators (registry only), apply (veil.apply with report), "
        "naive (the same policy as a row-wise pandas script, the baseline)",
    )
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc runs")
    ap.add_argument("--scan", action="store_true", help="time veil.scan instead (see above)")
    ap.add_argument(
        "--cli",
        action="store_true",
        help="time `veil anonymize` end to end on docs/deid.md section 7's table and policy "
        "(--allow-unmet; wall, children's CPU, peak RSS)",
    )
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--table", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.rows, args.trace, args.table)))
        return 0
    rows = 100_000 if args.quick else args.rows
    if args.scan:
        print(f"veil scan benchmark; load {os.getloadavg()}")
        results_scan = bench_scan(rows)
        print(f"load after: {os.getloadavg()}")
        if args.json:
            Path(args.json).write_text(json.dumps(results_scan, indent=2))
        return 0
    if args.cli:
        print(f"veil anonymize (CLI) benchmark; load {os.getloadavg()}")
        print(
            f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}"
        )
        result = bench_cli(rows)
        print(f"load after: {os.getloadavg()}")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return 0 if result["returncode"] == 0 else 1
    modes = ["operators"] if args.quick else [m.strip() for m in args.modes.split(",") if m.strip()]
    print(f"veil deid benchmark: {rows:,} rows, 10-column policy; load {os.getloadavg()}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}")
    results = []
    tmp = tempfile.TemporaryDirectory(prefix="veil-bench-")
    table = str(Path(tmp.name) / "table.pkl")
    load_table(rows).to_pickle(table)  # built once, read by every worker
    for mode in modes:
        timing = _spawn(mode, rows, trace=False, table=table)
        if "error" in timing:
            print(f"{mode:10s} FAILED: {timing['error']}")
            results.append(timing)
            continue
        traced = (
            {} if args.no_trace or mode == "naive" else _spawn(mode, rows, trace=True, table=table)
        )
        timing["tracemalloc_peak_bytes"] = traced.get("tracemalloc_peak_bytes")
        timing["tracemalloc_wall_s"] = traced.get("wall_s")
        results.append(timing)
        tb = timing["table_bytes"]
        tm = timing["tracemalloc_peak_bytes"]
        print(
            f"{mode:10s} wall {timing['wall_s']:.2f} s (CPU {timing['cpu_s']:.2f} s)  "
            f"{rows / timing['wall_s']:,.0f} rows/s  "
            f"table {tb / 2**20:,.0f} MiB  peak RSS growth {timing['maxrss_delta_bytes'] / 2**20:,.0f} MiB "
            f"({timing['maxrss_delta_bytes'] / tb:.2f}x; <= {timing['maxrss_over_rss_before_bytes'] / tb:.2f}x "
            "over RSS at start)"
            + (f"  tracemalloc peak {tm / 2**20:,.0f} MiB ({tm / tb:.2f}x)" if tm else "")
        )
        for name, sec in (timing.get("cpu_s_per_operator") or {}).items():
            print(f"    {name:32s} CPU {sec:6.3f} s")
    tmp.cleanup()
    print(f"load after: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 1 if any("error" in r for r in results) else 0  # a failed mode fails the run


if __name__ == "__main__":
    sys.exit(main())
