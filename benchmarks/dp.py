"""Benchmarks of Veil's DP noise, statistics and group-by queries against diffprivlib and OpenDP.

Run in the benchmark environment (``.venv``)::

    .venv/bin/python benchmarks/dp.py            # ~3-4 min on 2 loaded cores
    .venv/bin/python benchmarks/dp.py --quick    # ~30 s smoke run (1M rows, 20 runs)

Sections (all in one run, same data, same machine):

1. Noise throughput: Veil's FP-safe secure Laplace (AES-CTR bits, exact discrete Laplace on a
   power-of-two grid) vs diffprivlib's Laplace (scalar, not FP-safe) vs OpenDP's vector Laplace.
2. DP mean over 10M floats vs ``numpy.mean``.
3. Grouped DP count + sum over 10M rows and 1,000 groups vs pandas ``groupby`` and OpenDP's
   Polars query (``opendp.extras.polars``).  OpenDP 0.16 needs polars 1.36.1; when the
   installed polars differs, the OpenDP query runs in a subprocess with ``--opendp-polars PATH``
   (a folder made with ``pip install --target PATH polars==1.36.1``) on the same data.
4. Error at equal epsilon (sum, mean, median, 10-bin histogram of Adult ``age`` with bounds
   (17, 90), eps in {0.01, 0.1, 1, 10}): mean absolute error over ``--runs`` releases.

Figures are recorded in ``docs/benchmarks/dp.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _timing import best_of  # benchmarks/_timing.py

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "datasets" / "adult" / "adult.data"
BOUNDS = (17.0, 90.0)
EPSILONS = (0.01, 0.1, 1.0, 10.0)
DEFAULT_POLARS = "/tmp/veil-polars136"


def best_time(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls (seconds)."""
    return best_of(fn, repeat)[0]


def _opendp():
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    return dp


# ---------------------------------------------------------------------------------- 1. noise
def bench_noise(n: int, repeat: int) -> list[dict[str, Any]]:
    from veil.dp._rng import SecureRandom
    from veil.dp._samplers import discrete_laplace, laplace_fp

    rng = SecureRandom()
    zeros = np.zeros(n)
    rows = []
    t = best_time(lambda: laplace_fp(zeros, 1.0, rng, sensitivity=1.0), repeat)
    veil_rate = n / t
    rows.append({"sampler": "Veil laplace_fp (FP-safe, AES-CTR)", "samples/s": veil_rate})
    t = best_time(lambda: discrete_laplace(1.0, n, rng), repeat)
    rows.append({"sampler": "Veil discrete_laplace (exact)", "samples/s": n / t})
    try:
        from diffprivlib.mechanisms import Laplace

        mech = Laplace(epsilon=1.0, sensitivity=1.0)
        k = 20_000
        t = best_time(lambda: [mech.randomise(0.0) for _ in range(k)], 1)
        rows.append({"sampler": "diffprivlib Laplace (scalar, not FP-safe)", "samples/s": k / t})
    except ImportError:
        pass
    dp = _opendp()
    if dp is not None:
        k = 100_000
        vec = dp.m.make_laplace(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=1.0
        )
        data = [0.0] * k
        t = best_time(lambda: vec(data), 1)
        rows.append({"sampler": "OpenDP make_laplace (vector, FP-safe)", "samples/s": k / t})
    for r in rows:
        r["Veil FP-safe / this"] = veil_rate / r["samples/s"]
    return rows


# ---------------------------------------------------------------------------------- 2. mean
def bench_mean(n: int, repeat: int) -> list[dict[str, Any]]:
    """DP mean vs numpy's mean: best wall time, and the CPU time of that run (Veil's scans run
    on a small thread pool, numpy's mean on one thread, so both ratios are printed)."""
    from veil.dp.frame import PrivateFrame

    x = np.random.default_rng(1).uniform(0, 100, n)
    df = pd.DataFrame({"x": x})

    cases: list[tuple[str, Callable[[], Any]]] = [("numpy mean (not private)", lambda: x.mean())]
    import veil.dp as vdp

    cases.append(("veil.dp.tools.mean", lambda: vdp.tools.mean(x, epsilon=1.0, bounds=(0, 100))))
    pf = PrivateFrame(df, accountant=False)
    cases.append(
        ("veil PrivateFrame.agg mean", lambda: pf.agg(m=("x", "mean", (0, 100)), epsilon=1.0))
    )
    try:
        from diffprivlib import tools as dpl

        def peer() -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return dpl.mean(x, epsilon=1.0, bounds=(0, 100))

        cases.append(("diffprivlib tools.mean", peer))
    except ImportError:
        pass
    rows = []
    for name, fn in cases:
        wall, cpu, _ = best_of(fn, repeat)
        rows.append({"method": name, "seconds": wall, "cpu s": cpu})
    for r in rows:
        r["x numpy"] = r["seconds"] / rows[0]["seconds"]
        r["cpu x numpy"] = r["cpu s"] / max(rows[0]["cpu s"], 1e-9)
    return rows


# ------------------------------------------------------------------------------- 3. grouped
def grouped_data(n: int, groups: int, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, groups, n), rng.uniform(0, 100, n)


def opendp_polars_time(n: int, groups: int, repeat: int) -> float:
    """Seconds for OpenDP's Polars group-by count+sum (plan + release), in this process."""
    import polars as pl

    dp = _opendp()
    g, x = grouped_data(n, groups)
    lf = pl.LazyFrame({"g": g, "x": x})

    def run() -> None:
        ctx = dp.Context.compositor(
            data=lf,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
            margins=[dp.polars.Margin(by=["g"], invariant="keys", max_length=n, max_groups=groups)],
        )
        query = (
            ctx.query().group_by("g").agg(dp.len(), pl.col("x").fill_null(0.0).dp.sum((0.0, 100.0)))
        )
        query.release().collect()

    return best_time(run, repeat)


def _opendp_polars(n: int, groups: int, repeat: int, polars_path: str | None) -> float | str:
    try:
        return opendp_polars_time(n, groups, repeat)
    except Exception as exc:  # version mismatch: retry in a subprocess with a compatible polars
        if not polars_path or not Path(polars_path).is_dir():
            return f"skipped ({type(exc).__name__}; pass --opendp-polars PATH)"
    env = dict(os.environ, PYTHONPATH=polars_path)
    here = str(Path(__file__).parent)
    code = (
        f"import sys, json; sys.path.insert(0, {here!r}); import dp as b; "
        f"print(json.dumps(b.opendp_polars_time({n}, {groups}, {repeat})))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode != 0:
        return "failed: " + res.stderr.strip().splitlines()[-1][:120]
    return float(json.loads(res.stdout.strip().splitlines()[-1]))


def bench_grouped(n: int, groups: int, repeat: int, polars_path: str | None) -> list[dict]:
    from veil.dp.frame import PrivateFrame

    g, x = grouped_data(n, groups)
    df = pd.DataFrame({"g": g, "x": x})
    keys = list(range(groups))
    t_pd = best_time(lambda: df.groupby("g")["x"].agg(["count", "sum"]), repeat)
    rows = [{"method": "pandas groupby count+sum (not private)", "seconds": t_pd}]
    pf = PrivateFrame(df, accountant=False)
    spec = {"n": "count", "s": ("x", "sum", (0.0, 100.0))}
    t = best_time(lambda: pf.groupby("g", keys=keys).agg(epsilon=1.0, **spec), repeat)
    rows.append({"method": "Veil PrivateFrame, public keys", "seconds": t})
    t = best_time(lambda: pf.groupby("g").agg(epsilon=1.0, delta=1e-7, **spec), repeat)
    rows.append({"method": "Veil PrivateFrame, private partition selection", "seconds": t})
    persons = np.random.default_rng(3).integers(0, n // 10, n)
    dfp = df.assign(pid=persons)
    pfp = PrivateFrame(dfp, privacy_unit="pid", max_groups=5, max_rows=2, accountant=False)
    t = best_time(lambda: pfp.groupby("g", keys=keys).agg(epsilon=1.0, **spec), repeat)
    rows.append({"method": "Veil, privacy unit (n/10 persons, bounding 5x2)", "seconds": t})
    odp = _opendp_polars(n, groups, 1, polars_path)
    if isinstance(odp, float):
        rows.append({"method": "OpenDP Polars (plan + release)", "seconds": odp})
    else:
        print(f"OpenDP Polars: {odp}")
    for r in rows:
        r["x pandas"] = r["seconds"] / t_pd
    return rows


# --------------------------------------------------------------------------------- 4. error
def adult_age() -> np.ndarray:
    df = pd.read_csv(ADULT, header=None, usecols=[0], names=["age"], skipinitialspace=True)
    return df["age"].to_numpy(dtype=np.float64)


def _veil_frame(age: np.ndarray, neighbouring: str = "add_remove"):
    from veil.dp.frame import PrivateFrame

    bins = np.linspace(*BOUNDS, 11)
    codes = np.clip(np.digitize(age, bins[1:-1]), 0, 9)
    df = pd.DataFrame({"age": age.astype(np.int64), "bin": codes})
    # declared integer (as OpenDP's median gets integer candidates): permute-and-flip
    pf = PrivateFrame(df, accountant=False, integer_columns=["age"])

    def run(stat: str, eps: float) -> Any:
        if stat == "histogram":
            if neighbouring != "add_remove":
                raise NotImplementedError("grouped queries use add/remove neighbours")
            grouped = pf.groupby("bin", keys=list(range(10)))
            return grouped.agg(n="count", epsilon=eps)["n"].to_numpy()
        func = {"sum": "sum", "mean": "mean", "median": "median"}[stat]
        out = pf.agg(v=("age", func, BOUNDS), epsilon=eps, neighbouring=neighbouring)
        return float(out["v"].iloc[0])

    return run


def _veil_tools(age: np.ndarray):
    import veil.dp as vdp

    tools = vdp.tools
    ints = age.astype(np.int64)  # the integer column OpenDP's median also gets

    def run(stat: str, eps: float) -> Any:
        if stat == "histogram":
            return tools.histogram(age, epsilon=eps, bins=10, range=BOUNDS)[0]
        if stat == "median":  # declared integer: OpenDP's median gets integer candidates too
            return float(tools.median(ints, epsilon=eps, bounds=BOUNDS, integer=True))
        fn = getattr(tools, stat)
        return float(fn(age, epsilon=eps, bounds=BOUNDS))

    return run


def _diffprivlib(age: np.ndarray):
    from diffprivlib import tools as dpl

    def run(stat: str, eps: float) -> Any:
        if stat == "histogram":
            return dpl.histogram(age, epsilon=eps, bins=10, range=BOUNDS)[0]
        return float(getattr(dpl, stat)(age, epsilon=eps, bounds=BOUNDS))

    return run


def _opendp_stats(age: np.ndarray, d_in: int = 1):
    """OpenDP releases at symmetric distance ``d_in``: 1 = add/remove one record, 2 = replace one.

    The mean runs on a sized domain, where a change of one record is always a replacement
    (distance 2), whatever ``d_in`` says.
    """
    dp = _opendp()
    ints = age.astype(int).tolist()
    floats = age.tolist()
    n = len(floats)
    bins = np.linspace(*BOUNDS, 11)
    codes = np.clip(np.digitize(age, bins[1:-1]), 0, 9).astype(int).tolist()
    cands = list(range(int(BOUNDS[0]), int(BOUNDS[1]) + 1))
    sp = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    cache: dict[tuple[str, float], Any] = {}

    def build(stat: str, eps: float) -> Any:
        if stat == "sum":
            chain = sp >> dp.t.then_clamp((int(BOUNDS[0]), int(BOUNDS[1]))) >> dp.t.then_sum()
            return dp.binary_search_chain(lambda s: chain >> dp.m.then_laplace(s), d_in, eps)
        if stat == "mean":
            sized = (
                dp.vector_domain(dp.atom_domain(bounds=BOUNDS), size=n),
                dp.symmetric_distance(),
            )
            chain = sized >> dp.t.then_mean()
            return dp.binary_search_chain(lambda s: chain >> dp.m.then_laplace(s), 2, eps)
        if stat == "median":
            chain = sp >> dp.t.then_quantile_score_candidates(cands, alpha=0.5)
            return dp.binary_search_chain(
                lambda s: chain >> dp.m.then_report_noisy_max_gumbel(s, optimize="min"), d_in, eps
            )
        chain = sp >> dp.t.then_count_by_categories(categories=list(range(10)), null_category=False)
        return dp.binary_search_chain(lambda s: chain >> dp.m.then_laplace(s), d_in, eps)

    def run(stat: str, eps: float) -> Any:
        key = (stat, eps)
        if key not in cache:
            cache[key] = build(stat, eps)
        meas = cache[key]
        if stat == "sum":
            return float(meas(ints))
        if stat == "mean":
            return float(meas(floats))
        if stat == "median":
            return float(cands[meas(ints)])
        return np.asarray(meas(codes), dtype=float)

    return run


def bench_error(runs: int) -> pd.DataFrame:
    age = adult_age()
    clipped = np.clip(age, *BOUNDS)
    bins = np.linspace(*BOUNDS, 11)
    truth = {
        "sum": clipped.sum(),
        "mean": clipped.mean(),
        "median": float(np.median(clipped)),
        "histogram": np.histogram(clipped, bins=bins)[0].astype(float),
    }
    libs: dict[str, Callable] = {
        "Veil frame": _veil_frame(age),
        "Veil frame replace": _veil_frame(age, "replace"),
    }
    for name, factory in (
        ("Veil tools", _veil_tools),
        ("diffprivlib", _diffprivlib),
        ("OpenDP", _opendp_stats),
        ("OpenDP replace", lambda a: _opendp_stats(a, d_in=2)),
    ):
        try:
            libs[name] = factory(age)
        except (ImportError, AttributeError) as exc:
            print(f"{name}: skipped ({exc})")
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stat in ("sum", "mean", "median", "histogram"):
            for eps in EPSILONS:
                row: dict[str, Any] = {"stat": stat, "epsilon": eps}
                for name, run in libs.items():
                    try:
                        errs = [np.mean(np.abs(run(stat, eps) - truth[stat])) for _ in range(runs)]
                    except Exception as exc:  # a peer lacking a statistic
                        print(f"{name} {stat}: {type(exc).__name__}: {exc}")
                        continue
                    row[name] = float(np.mean(errs))
                    row[name + " se"] = float(np.std(errs) / np.sqrt(runs))
                rows.append(row)
    table = pd.DataFrame(rows)
    # Each Veil variant is judged against the peers releasing at its own privacy unit.
    # add/remove one record: the frame's default, OpenDP at distance 1, and every histogram
    # (diffprivlib's and Veil's tools histograms protect add/remove too); replace one record
    # with n public: the frame's neighbouring="replace", Veil's tools (sum/mean/median, as
    # diffprivlib's) and OpenDP at distance 2 (its mean runs on a sized domain: replace).
    add_remove = {"sum": ("OpenDP",), "median": ("OpenDP",), "histogram": ("diffprivlib", "OpenDP")}
    replace = {s_: ("diffprivlib", "OpenDP replace") for s_ in ("sum", "mean", "median")}
    units = {
        "Veil frame": add_remove,
        "Veil frame replace": replace,
        "Veil tools": {**replace, "histogram": ("diffprivlib", "OpenDP")},
    }
    for veil in [c for c in units if c in table.columns]:
        verdicts = []
        for _, row in table.iterrows():
            peers = [c for c in units[veil].get(row["stat"], ()) if c in table.columns]
            peers = [c for c in peers if not pd.isna(row[c])]
            if not peers or pd.isna(row[veil]):
                verdicts.append("n/a")
                continue
            best_peer = min(peers, key=lambda c: row[c])
            best, best_se = row[best_peer], row[best_peer + " se"]
            se = np.sqrt(row[veil + " se"] ** 2 + best_se**2)
            gap = (row[veil] - best) / se if se > 0 else np.inf  # the gap in standard errors
            verdict = (
                "yes" if row[veil] <= best else "tie (2 se)" if gap <= 2 else f"NO ({gap:.2f} se)"
            )
            verdicts.append(f"{verdict} vs {best_peer}")
        table[f"{veil} <= best peer at its unit?"] = verdicts
    return table


# ----------------------------------------------------------------------------------- main
def _print(title: str, rows: list[dict] | pd.DataFrame) -> None:
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    print(f"\n## {title}\n")
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description="Veil DP benchmarks vs diffprivlib and OpenDP")
    p.add_argument("--quick", action="store_true", help="~30 s smoke run")
    p.add_argument("--rows", type=int, help="rows for the mean / grouped benchmarks (10M)")
    p.add_argument("--runs", type=int, help="releases per error cell (100)")
    p.add_argument("--opendp-polars", default=DEFAULT_POLARS, help="folder with polars 1.36.1")
    p.add_argument("--json", type=Path, help="also write all tables as JSON")
    p.add_argument("--repeat", type=int, help="timed calls per case, best kept (3)")
    p.add_argument(
        "--sections",
        default="noise,mean,grouped,error",
        help="comma-separated subset of noise,mean,grouped,error",
    )
    args = p.parse_args(argv)
    n = args.rows or (1_000_000 if args.quick else 10_000_000)
    runs = args.runs or (20 if args.quick else 100)
    repeat = args.repeat or (1 if args.quick else 3)
    print(f"load average: {os.getloadavg()}; rows={n:,}; runs={runs}")
    results: dict[str, Any] = {"rows": n, "runs": runs, "load": os.getloadavg()}
    sections = set(args.sections.split(","))
    if "noise" in sections:
        results["noise"] = bench_noise(n, repeat)
        _print("Noise throughput", results["noise"])
    if "mean" in sections:
        results["mean"] = bench_mean(n, repeat)
        _print(f"DP mean over {n:,} floats", results["mean"])
    if "grouped" in sections:
        results["grouped"] = bench_grouped(n, 1000, repeat, args.opendp_polars)
        _print(f"Grouped count+sum, {n:,} rows x 1,000 groups", results["grouped"])
    if "error" in sections:
        err = bench_error(runs)
        results["error"] = err.to_dict("records")
        _print(f"Mean absolute error on Adult age, bounds {BOUNDS}, {runs} runs", err)
    print(f"\nload average at end: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return results


if __name__ == "__main__":
    main()
