"""k-anonymity engine: optimal lattice search and k/l/t checks (Veil vs pycanon), one run.

Data: the 30,162 complete rows of ``datasets/adult/adult.data``; quasi-identifiers age,
education, marital-status, native-country, race, sex, workclass, occupation with the
hierarchies of ``datasets/adult_hierarchies`` (lattice of 9,072 nodes).

Measured, side by side in one process:

* optimal full-domain search (``lattice_search``: encoding + search) and the whole
  ``anonymize`` call (+ rendering the release, risk, utility) for k=5 with 0% and 5% record
  suppression, objective ``loss`` (NCP).  Warm: best of 7 runs after one warm-up.  ARX Flash's
  published figure (27-33 ms, quad-core desktop, warm JVM) is quoted, not measured;
* Adult resampled with replacement to 1,000,000 rows (k=5, and k=166 = 5 x the resampling factor
  so that the search does not stop at the bottom node), run in a child process to measure its
  peak resident memory;
* k-anonymity, distinct l-diversity and t-closeness (equal distance) of the raw Adult table on the
  8 QIs with ``salary`` as the sensitive attribute: ``veil.anonymity.check`` vs pycanon 1.3.6
  on the same DataFrame (same results asserted; best of 20 for Veil after a warm-up, best of 3
  for pycanon): the table as ``pandas.read_csv`` returns it, and (k-anonymity only) the same
  table with the 7 text QIs converted to ``category`` by the caller; Veil on the 1M-row table;
* the Mondrian/MDAV rows of ``benchmarks/_mondrian_bench.py`` when that file exists.

Timings are wall-clock (best of N) with the CPU time of the same run; the machine's load average
is printed with every table.  Run in the benchmark environment::

    .venv/bin/python benchmarks/anonymity.py            # full (about 3 min)
    .venv/bin/python benchmarks/anonymity.py --quick    # smoke run (about 30 s)
    .venv/bin/python benchmarks/anonymity.py --checks-only  # check() vs pycanon only
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pandas as pd
from _timing import best_of, load_line  # benchmarks/_timing.py

ROOT = Path(__file__).resolve().parents[1]
COLS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "salary",
]  # fmt: skip
QI_FILES = {
    "age": "age",
    "education": "education",
    "marital-status": "marital",
    "native-country": "country",
    "race": "race",
    "sex": "sex",
    "workclass": "workclass",
    "occupation": "occupation",
}
QI = list(QI_FILES)
ARX_NOTE = "ARX Flash published: 27-33 ms (quad-core, warm JVM); not measured here"


def load_adult() -> pd.DataFrame:
    df = pd.read_csv(
        ROOT / "datasets" / "adult" / "adult.data",
        header=None,
        names=COLS,
        skipinitialspace=True,
        na_values="?",
    )
    return df.dropna().reset_index(drop=True)


def load_hierarchies() -> dict[str, Any]:
    from veil.schema import Hierarchy

    base = ROOT / "datasets" / "adult_hierarchies"
    return {c: Hierarchy.from_csv(base / f"{f}.csv") for c, f in QI_FILES.items()}


def bench_optimal(adult: pd.DataFrame, hier: dict, quick: bool) -> list[dict[str, Any]]:
    from veil.anonymity import AnonymizationConfig, anonymize
    from veil.anonymity._anonymize import lattice_search

    rows = []
    repeat = 3 if quick else 7
    for sup in (0.0, 0.05):
        cfg = AnonymizationConfig(hier, k=5, suppression_limit=sup, objective="loss")
        lattice_search(adult, cfg)  # warm-up
        s, cpu, (_, out) = best_of(lambda cfg=cfg: lattice_search(adult, cfg), repeat)
        rows.append(
            {
                "name": f"optimal k=5, {sup:.0%} suppression, Adult 30,162 rows: search",
                "veil_s": s,
                "veil_cpu_s": cpu,
                "peer": "ARX Flash (published)",
                "peer_s": 0.030,
                "ratio": 0.030 / s,
                "note": f"node {out.node}, loss {out.value:.4f}, {out.n_checked} of "
                f"{out.n_total} nodes checked",
            }
        )
        s, cpu, res = best_of(lambda cfg=cfg: anonymize(adult, cfg), repeat)
        rows.append(
            {
                "name": f"optimal k=5, {sup:.0%} suppression, Adult: whole anonymize()",
                "veil_s": s,
                "veil_cpu_s": cpu,
                "note": f"{res.n_suppressed} suppressed, {res.n_classes} classes",
            }
        )
    return rows


def child_1m(n: int, k: int, sup: float) -> dict[str, Any]:
    """Run in a child process: anonymize Adult resampled to ``n`` rows; report time and RSS."""
    from veil.anonymity import AnonymizationConfig, anonymize

    adult = load_adult()
    hier = load_hierarchies()
    big = adult.sample(n, replace=True, random_state=0).reset_index(drop=True)
    del adult
    cfg = AnonymizationConfig(hier, k=k, suppression_limit=sup)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c0, t0 = time.process_time(), time.perf_counter()
    res = anonymize(big, cfg)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "wall": wall,
        "cpu": cpu,
        "peak_rss_mb": peak / 1024,
        "input_rss_mb": base_rss / 1024,
        "node": res.node,
        "checked": res.n_nodes_checked,
        "suppressed": res.n_suppressed,
        "search_s": res.elapsed,
    }


def bench_1m(quick: bool) -> list[dict[str, Any]]:
    n = 100_000 if quick else 1_000_000
    factor = n / 30_162
    rows = []
    for k, sup in ((5, 0.0), (int(round(5 * factor)), 0.0), (int(round(5 * factor)), 0.05)):
        cmd = [sys.executable, __file__, "--child-1m", str(n), str(k), str(sup)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(
            {
                "name": f"optimal k={k}, {sup:.0%} suppression, Adult resampled to {n:,} rows",
                "veil_s": r["wall"],
                "veil_cpu_s": r["cpu"],
                "note": f"peak RSS {r['peak_rss_mb']:.0f} MB (process, incl. the input "
                f"{r['input_rss_mb']:.0f} MB); search {r['search_s']:.2f} s; node "
                f"{tuple(r['node'].values())}, {r['checked']} nodes checked",
            }
        )
    return rows


def _peer_row(
    name: str,
    s: float,
    cpu: float,
    peer: str | None,
    peer_s: float | None,
    peer_cpu: float | None,
    note: str,
) -> dict[str, Any]:
    """A row timing Veil against a peer; the ratios are peer time / Veil time (None: no peer)."""
    return {
        "name": name,
        "veil_s": s,
        "veil_cpu_s": cpu,
        "peer": peer,
        "peer_s": peer_s,
        "ratio": None if peer_s is None else peer_s / s,
        "note": note,
        "peer_cpu_s": peer_cpu,
        "cpu_ratio": None if peer_cpu is None else peer_cpu / max(cpu, 1e-9),
    }


def bench_checks(adult: pd.DataFrame, quick: bool) -> list[dict[str, Any]]:
    """``check`` vs pycanon on the same DataFrame, both timed best-of-N in this process.

    ``check`` returns the verdict and per-model counts; its report tables (smallest and
    violating classes, class-size histogram, risk summary) are built on first access, so one
    more row times ``check(...).to_dict()``, which builds all of them.
    """
    from veil.anonymity import check

    rows = []
    try:
        from pycanon import anonymity as pc
    except ImportError:  # pragma: no cover - benchmark environment only
        pc = None
    plain = adult.sample(5000, random_state=0).reset_index(drop=True) if quick else adult
    text = [c for c in QI if c != "age"]
    variants = [
        ("", plain),  # as pandas.read_csv returns it (object columns on pandas 2, str on 3)
        (" [text QIs as category]", plain.astype({c: "category" for c in text})),
    ]
    repeat, peer_repeat = 20, 3
    for tag, data in variants:
        label = f"Adult {len(data):,} rows x 8 QIs{tag}"
        cases = [
            ("k-anonymity", dict(k=5), lambda data=data: pc.k_anonymity(data, QI)),
            ("distinct l-diversity (salary)", dict(l={"salary": 2}), lambda data=data: pc.l_diversity(data, QI, ["salary"])),
            ("t-closeness (salary)", dict(t={"salary": 0.2}), lambda data=data: pc.t_closeness(data, QI, ["salary"])),
        ]  # fmt: skip
        if tag:
            cases = cases[:1]
        for name, kw, peer in cases:
            check(data, QI, **kw)  # warm-up
            s, cpu, r = best_of(lambda kw=kw, data=data: check(data, QI, **kw), repeat)
            ours = r.models[0]["achieved"]
            peer_s, peer_cpu, theirs = None, None, None
            if pc is not None:
                with warnings.catch_warnings():  # pandas' observed= deprecation (categoricals)
                    warnings.simplefilter("ignore", FutureWarning)
                    peer_s, peer_cpu, theirs = best_of(peer, peer_repeat)
                if abs(float(theirs) - float(ours)) > 1e-9:
                    raise AssertionError(f"{name}: pycanon says {theirs}, veil says {ours}")
            peer_name = f"pycanon {version('pycanon')}" if pc is not None else None
            note = (
                f"achieved {ours:.4g} (both tools, same DataFrame); text QIs "
                f"{data['race'].dtype}; best of {repeat} (Veil) / {peer_repeat} (pycanon)"
            )
            rows.append(
                _peer_row(f"check {name}, {label}", s, cpu, peer_name, peer_s, peer_cpu, note)
            )
            if name == "k-anonymity" and not tag:
                s2, cpu2, _ = best_of(
                    lambda kw=kw, data=data: check(data, QI, **kw).to_dict(), repeat
                )
                rows.append(
                    _peer_row(
                        f"check {name} + every report table (.to_dict()), {label}",
                        s2,
                        cpu2,
                        peer_name,
                        peer_s,
                        peer_cpu,
                        "smallest/violating tables, class-size histogram, risk summary",
                    )
                )
    n = 100_000 if quick else 1_000_000
    big = adult.sample(n, replace=True, random_state=0).reset_index(drop=True)
    for name, kw in (
        ("k-anonymity", dict(k=5)),
        ("k + l + t (salary)", dict(k=5, l={"salary": 2}, t={"salary": 0.2})),
    ):
        s, cpu, r = best_of(lambda kw=kw: check(big, QI, **kw), 3)
        rows.append(
            {
                "name": f"check {name}, {n:,} rows x 8 QIs",
                "veil_s": s,
                "veil_cpu_s": cpu,
                "note": f"{r.n_classes} classes",
            }
        )
    return rows


def bench_mondrian(quick: bool) -> list[dict[str, Any]]:
    path = ROOT / "benchmarks" / "_mondrian_bench.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location("_mondrian_bench", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_mondrian_bench"] = mod
    spec.loader.exec_module(mod)
    return list(mod.run(quick))


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: list[dict[str, Any]]) -> None:
    head = f"{'case':<72} {'veil s':>8} {'cpu s':>7} {'peer':<24} {'peer s':>8} {'ratio':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['name'][:72]:<72} {_fmt(r.get('veil_s'), '8.4f')} "
            f"{_fmt(r.get('veil_cpu_s'), '7.3f')} {str(r.get('peer') or '-')[:24]:<24} "
            f"{_fmt(r.get('peer_s'), '8.3f')} {_fmt(r.get('ratio'), '8.1f')}"
        )
        extra = {
            k: v
            for k, v in r.items()
            if k not in {"name", "veil_s", "veil_cpu_s", "peer", "peer_s", "ratio", "load_avg"}
        }
        if extra:
            print(
                "    "
                + "; ".join(
                    f"{k}: {v if isinstance(v, str) else _fmt(v, '.4g')}" for k, v in extra.items()
                )
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smoke run (~30 s)")
    p.add_argument("--json", help="also write the rows to this JSON file")
    p.add_argument("--skip-mondrian", action="store_true", help="skip the Mondrian/MDAV rows")
    p.add_argument("--checks-only", action="store_true", help="only the check() vs pycanon rows")
    p.add_argument("--child-1m", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child_1m:
        n, k, sup = args.child_1m
        print(json.dumps(child_1m(int(n), int(k), float(sup)), default=str))
        return
    print(
        f"# {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"pandas {pd.__version__}; load average {load_line()}"
    )
    adult = load_adult()
    hier = load_hierarchies()
    rows: list[dict[str, Any]] = []
    if not args.checks_only:
        rows += bench_optimal(adult, hier, args.quick)
    rows += bench_checks(adult, args.quick)
    if not args.checks_only:
        rows += bench_1m(args.quick)
        if not args.skip_mondrian:
            rows += bench_mondrian(args.quick)
    print(f"# load average at the end: {load_line()}; {ARX_NOTE}")
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))


if __name__ == "__main__":
    main()
