"""Error at equal epsilon of Veil's DP statistics vs diffprivlib and OpenDP.

Same data (n = 10,000 ages ~ N(40, 15) clipped to [0, 100]), same bounds, same privacy unit
(replace one record, n public = OpenDP's sized data at symmetric distance 2), RMSE over
``--reps`` releases per cell.  Run in ``.venv`` (peers installed)::

    .venv/bin/python benchmarks/dp_tools_accuracy.py          # ~2-3 min
    .venv/bin/python benchmarks/dp_tools_accuracy.py --quick  # ~30 s
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Callable

import numpy as np

N = 10_000
LO, HI = 0.0, 100.0
BINS = 10


def _opendp(eps: float) -> dict[str, Callable[[list[float]], float]]:
    import opendp.prelude as odp

    odp.enable_features("contrib")
    space = (
        odp.vector_domain(odp.atom_domain(bounds=(LO, HI), nan=False), size=N),
        odp.symmetric_distance(),
    )
    out: dict[str, Callable[[list[float]], float]] = {}

    def calibrated(make: Callable[[float], object], d_in: int = 2) -> object:
        scale = odp.binary_search_param(make, d_in=d_in, d_out=eps)
        return make(scale)

    out["sum"] = calibrated(lambda s: space >> odp.t.then_sum() >> odp.m.then_laplace(scale=s))
    out["mean"] = calibrated(lambda s: space >> odp.t.then_mean() >> odp.m.then_laplace(scale=s))
    out["var"] = calibrated(
        lambda s: space >> odp.t.then_variance(ddof=0) >> odp.m.then_laplace(scale=s)
    )
    cands = list(np.linspace(LO, HI, 1001))
    med = calibrated(
        lambda s: (
            space
            >> odp.t.then_quantile_score_candidates(cands, 0.5)
            >> odp.m.then_report_noisy_max_gumbel(scale=s, optimize="min")
        )
    )
    out["median"] = lambda x: cands[med(x)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args()
    reps = args.reps or (30 if args.quick else 200)
    epsilons = [0.01, 0.1, 1.0, 10.0]
    warnings.simplefilter("ignore")

    import veil.dp as vdp

    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(40, 15, N), LO, HI)
    xl = x.tolist()
    truth = {
        "sum": x.sum(),
        "mean": x.mean(),
        "var": x.var(),
        "median": float(np.median(x)),
        "histogram": np.histogram(x, BINS, (LO, HI))[0],
    }
    libs: dict[str, object] = {"veil": vdp.tools}
    try:
        import diffprivlib

        libs["diffprivlib"] = diffprivlib.tools
    except ImportError:
        pass
    rows = []
    for eps in epsilons:
        odp_funcs: dict[str, Callable[[list[float]], float]] = {}
        try:
            odp_funcs = _opendp(eps)
        except Exception:  # noqa: BLE001 - OpenDP missing or API drift: skip the peer
            odp_funcs = {}
        for stat in ["sum", "mean", "var", "median", "histogram"]:
            errs: dict[str, float] = {}
            for name, tools in libs.items():
                e = []
                for _ in range(reps):
                    if stat == "histogram":
                        h = tools.histogram(x, epsilon=eps, bins=BINS, range=(LO, HI))[0]
                        e.append(np.mean(np.abs(h - truth["histogram"])))
                    else:
                        e.append(
                            getattr(tools, stat)(x, epsilon=eps, bounds=(LO, HI)) - truth[stat]
                        )
                errs[name] = float(np.sqrt(np.mean(np.square(e))))
            if stat in odp_funcs:
                e = [odp_funcs[stat](xl) - truth[stat] for _ in range(reps)]
                errs["opendp"] = float(np.sqrt(np.mean(np.square(e))))
            rows.append((eps, stat, errs))
    load = os.getloadavg()
    print(f"# DP statistics error at equal epsilon (n={N}, reps={reps})")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    print("| eps | statistic | veil | diffprivlib | opendp | veil / best peer |")
    print("|---:|---|---:|---:|---:|---:|")
    for eps, stat, errs in rows:
        peers = [v for k, v in errs.items() if k != "veil"]
        best = min(peers) if peers else float("nan")
        ratio = errs["veil"] / best if best > 0 else (1.0 if errs["veil"] == 0 else float("inf"))
        cells = [f"{errs[k]:.4g}" if k in errs else "-" for k in ("veil", "diffprivlib", "opendp")]
        print(f"| {eps} | {stat} | {' | '.join(cells)} | {ratio:.2f} |")
    print()
    print("RMSE (histogram: mean absolute error per bin).")


if __name__ == "__main__":
    main()
