"""Error at equal epsilon of Veil's DP statistics vs diffprivlib and OpenDP.

Table 1: same data (n = 10,000 ages ~ N(40, 15) clipped to [0, 100], float64), same bounds,
same privacy unit (replace one record, n public = OpenDP's sized data at symmetric distance 2;
OpenDP's quantiles at symmetric distance 2), RMSE over ``--reps`` releases per cell.

Table 2: quantiles of the integer column Adult ``age`` (32,561 rows, bounds (17, 90), integer
candidates 17..90 for OpenDP; Veil given ``integer=True``, the same public information), mean absolute error over ``--qreps`` releases, plus the *exact*
expected absolute error of Veil's and OpenDP's mechanisms computed from their output laws
(no Monte Carlo noise).  OpenDP is run at two privacy units: symmetric distance 2 (= replace
one record, the unit of ``veil.dp.tools`` and diffprivlib) and symmetric distance 1 (add or
remove one record, a unit half as protective as a replacement; for reference only).

Run in ``.venv`` (peers installed)::

    .venv/bin/python benchmarks/dp_tools_accuracy.py          # ~4-5 min
    .venv/bin/python benchmarks/dp_tools_accuracy.py --quick  # ~1 min
    .venv/bin/python benchmarks/dp_tools_accuracy.py --float-exact  # table 1b only, seconds

Table 1b: exact RMSE of the float median / q90 from the output laws: Veil's default (Smith's
interval mechanism, = diffprivlib), Veil with ``candidates=`` OpenDP's 1,001-point grid
(permute-and-flip), and OpenDP, with a Monte Carlo check of Veil's candidate releases.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

N = 10_000
LO, HI = 0.0, 100.0
BINS = 10


def table1_data() -> np.ndarray:
    """Table 1 data: N draws of Normal(40, 15) with seed 0, clipped to [LO, HI]."""
    return np.clip(np.random.default_rng(0).normal(40, 15, N), LO, HI)


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

    def candidate_quantile(domain: tuple, q: float) -> Callable[[list[float]], float]:
        pick = calibrated(
            lambda s: (
                domain
                >> odp.t.then_quantile_score_candidates(cands, q)
                >> odp.m.then_report_noisy_max_gumbel(scale=s, optimize="min")
            )
        )
        return lambda x: cands[pick(x)]

    out["median"] = candidate_quantile(space, 0.5)
    unsized = (odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.symmetric_distance())
    out["q90"] = candidate_quantile(unsized, 0.9)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--qreps", type=int, default=None, help="releases per Adult quantile cell")
    ap.add_argument(
        "--grid-study",
        action="store_true",
        help="only: RMSE of permute-and-flip on grids of 1,001 / 10,001 / 100,001 candidates "
        "vs Smith's interval mechanism on the table 1 data (why a coarse grid wins at eps 0.1)",
    )
    ap.add_argument(
        "--float-exact",
        action="store_true",
        help="only: table 1b (exact float median / q90 laws: Veil default, Veil with OpenDP's "
        "candidate grid, OpenDP), with a Monte Carlo check of --reps (default 1000) releases",
    )
    args = ap.parse_args()
    if args.grid_study:
        grid_study(table1_data())
        return
    if args.float_exact:
        warnings.simplefilter("ignore")
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        float_quantiles_exact(table1_data(), [0.01, 0.1, 1.0, 10.0], args.reps or 1000)
        load = os.getloadavg()
        print(f"load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        return
    reps = args.reps or (30 if args.quick else 200)
    qreps = args.qreps or (20 if args.quick else 100)
    epsilons = [0.01, 0.1, 1.0, 10.0]
    warnings.simplefilter("ignore")

    import veil.dp as vdp

    x = table1_data()
    xl = x.tolist()
    truth = {
        "sum": x.sum(),
        "mean": x.mean(),
        "var": x.var(),
        "median": float(np.median(x)),
        "q90": float(np.quantile(x, 0.9)),
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
        for stat in ["sum", "mean", "var", "median", "q90", "histogram"]:
            errs: dict[str, float] = {}
            for name, tools in libs.items():
                e = []
                for _ in range(reps if _works(tools, stat, x, eps) else 0):
                    if stat == "histogram":
                        h = tools.histogram(x, epsilon=eps, bins=BINS, range=(LO, HI))[0]
                        e.append(np.mean(np.abs(h - truth["histogram"])))
                    elif stat == "q90":
                        v = tools.quantile(x, 0.9, epsilon=eps, bounds=(LO, HI))
                        e.append(v - truth[stat])
                    else:
                        e.append(
                            getattr(tools, stat)(x, epsilon=eps, bounds=(LO, HI)) - truth[stat]
                        )
                errs[name] = float(np.sqrt(np.mean(np.square(e)))) if e else float("nan")
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
        peers = [v for k, v in errs.items() if k != "veil" and not np.isnan(v)]
        best = min(peers) if peers else float("nan")
        ratio = errs["veil"] / best if best > 0 else (1.0 if errs["veil"] == 0 else float("inf"))
        cells = [f"{errs[k]:.4g}" if k in errs else "-" for k in ("veil", "diffprivlib", "opendp")]
        print(f"| {eps} | {stat} | {' | '.join(cells)} | {ratio:.2f} |")
    print()
    print("RMSE (histogram: mean absolute error per bin; q90: the 0.9-quantile).")
    print()
    float_quantiles_exact(x, epsilons, 200 if args.quick else 1000)
    print()
    adult_quantiles(qreps, epsilons)
    load = os.getloadavg()
    print(f"load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def _works(tools: object, stat: str, x: np.ndarray, eps: float) -> bool:
    """False when a library raises on this cell (diffprivlib's median at large eps)."""
    if stat == "histogram":
        return True
    try:
        if stat == "q90":
            tools.quantile(x, 0.9, epsilon=eps, bounds=(LO, HI))  # type: ignore[attr-defined]
        else:
            getattr(tools, stat)(x, epsilon=eps, bounds=(LO, HI))
    except Exception:  # noqa: BLE001 - a peer failing on a cell: reported as "fails"
        return False
    return True


def _smith_rmse(x: np.ndarray, q: float, t: float, truth: float) -> float:
    """Exact RMSE of Smith's interval mechanism (Veil's and diffprivlib's float quantile):
    interval i with probability ~ length_i exp(-t |i - q n|), uniform point inside."""
    z = np.sort(np.clip(x, LO, HI))
    edges = np.concatenate([[LO], z, [HI]])
    length = np.diff(edges)
    with np.errstate(divide="ignore"):
        logw = np.log(length) - t * np.abs(np.arange(z.size + 1) - q * z.size)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    a, b = edges[:-1] - truth, edges[1:] - truth
    with np.errstate(invalid="ignore", divide="ignore"):
        second = np.where(length > 0, (b**3 - a**3) / (3 * length), a * a)
    return float(np.sqrt(p @ second))


def float_quantiles_exact(x: np.ndarray, epsilons: list[float], mc_reps: int = 1000) -> None:
    """Table 1b: exact RMSE of the float median / q90 (no Monte Carlo noise).

    Columns: Veil's default (Smith's interval mechanism, = diffprivlib's law); Veil with
    ``candidates=`` the same 1,001-point grid OpenDP is given (exact permute-and-flip law from
    the midrank scores Veil computes, ``candidate_counts`` + ``midrank_scores``, at eps / 2);
    OpenDP.  The candidates column is checked against ``mc_reps`` releases of Veil's real
    ``quantile(..., candidates=grid)``: their mean absolute error vs the law's, in standard
    errors of the mean (|z| < 4 expected)."""
    try:
        import opendp.prelude as odp

        odp.enable_features("contrib")
    except ImportError:
        return
    import veil.dp as vdp
    from veil.dp.tools._quantile_candidates import candidate_counts, midrank_scores

    cands = np.linspace(LO, HI, 1001)
    t0 = time.time()
    print("# Float quantiles, exact RMSE from the output laws (table 1 data)")
    print()
    print(
        "| eps | statistic | veil default (Smith; = diffprivlib) | veil, same candidates "
        "| opendp | default <= opendp? | same candidates <= opendp? "
        f"| MC check ({mc_reps} releases): mean abs err, exact, z |"
    )
    print("|---:|---|---:|---:|---:|---|---|---|")
    lt, cnt = candidate_counts(x, cands)  # Veil's counts (values clamped to the grid's range)
    for q, stat in ((0.5, "median"), (0.9, "q90")):
        truth = float(np.quantile(x, q))
        if q == 0.5:  # the sized domain of table 1
            dom = odp.vector_domain(odp.atom_domain(bounds=(LO, HI), nan=False), size=N)
        else:  # OpenDP's sized domain does not calibrate q = 0.9: unsized, same distance 2
            dom = odp.vector_domain(odp.atom_domain(T=float, nan=False))
        score_t = (dom, odp.symmetric_distance()) >> odp.t.then_quantile_score_candidates(
            cands.tolist(), q
        )
        score = np.asarray(score_t(x.tolist()), dtype=np.float64)
        for eps in epsilons:

            def make(s: float, score_t: object = score_t) -> object:
                return score_t >> odp.m.then_report_noisy_max_gumbel(scale=s, optimize="min")

            scale = odp.binary_search_param(make, d_in=2, d_out=eps)
            odp_law = _pf_law(score, 1.0 / scale)  # see _opendp_quantile
            o = float(np.sqrt(odp_law @ (cands - truth) ** 2))
            v = _smith_rmse(x, q, eps / 2, truth)
            law = _pf_law(midrank_scores(lt, cnt, x.size, q), eps / 2)  # Veil's exact law
            c = float(np.sqrt(law @ (cands - truth) ** 2))
            mae = float(law @ np.abs(cands - truth))
            sd = float(np.sqrt(law @ (cands - truth) ** 2 - mae**2))
            rel = [
                vdp.tools.quantile(x, q, epsilon=eps, bounds=(LO, HI), candidates=cands)
                for _ in range(mc_reps)
            ]
            mc = float(np.mean(np.abs(np.asarray(rel) - truth)))
            z = (mc - mae) / max(sd / np.sqrt(mc_reps), 1e-9 * mae, 1e-300)
            same = float(np.max(np.abs(law - odp_law))) < 1e-9  # the same output law
            print(
                f"| {eps} | {stat} | {v:.4g} | {c:.4g} | {o:.4g} | {_verdict(v, o)} | {'tie (same law)' if same else _verdict(c, o)} "
                f"| {mc:.4g}, {mae:.4g}, {z:+.2f} |",
                flush=True,
            )
    print()
    print(
        "RMSE from each output law; 'same candidates' = veil.dp.tools.quantile(..., "
        "candidates=np.linspace(0, 100, 1001)), the grid OpenDP scores; z = (MC mean abs error "
        f"- exact) / its standard error. {time.time() - t0:.0f} s"
    )


def _verdict(a: float, peer: float) -> str:
    """'yes' when ``a`` is no larger than ``peer`` (float slack 1e-9), else the excess."""
    return "yes" if a <= peer * (1 + 1e-9) else f"NO (+{100 * (a / peer - 1):.1f}%)"


def grid_study(x: np.ndarray, draws: int = 3000) -> None:
    """RMSE of the float median / q90 by permute-and-flip (report-noisy-max with exponential
    noise, midrank score, t = eps / 2) over evenly spaced candidate grids, against Smith's
    interval mechanism (exact).  Monte Carlo, ``draws`` releases per cell (se about 1-2 %)."""
    z = np.sort(x)
    rng = np.random.default_rng(7)
    print(
        f"# Grid study: permute-and-flip on K candidates in [{LO}, {HI}] vs Smith ({draws} draws)"
    )
    print()
    print("| q | eps | Smith (Veil, exact) | K = 1,001 | K = 10,001 | K = 100,001 |")
    print("|---:|---:|---:|---:|---:|---:|")
    for q in (0.5, 0.9):
        truth = float(np.quantile(x, q))
        for eps in (0.01, 0.1, 1.0, 10.0):
            t = eps / 2
            cells = [f"{_smith_rmse(x, q, t, truth):.4g}"]
            for k in (1001, 10001, 100001):
                c = np.linspace(LO, HI, k)
                lt, le = np.searchsorted(z, c, "left"), np.searchsorted(z, c, "right")
                score = np.abs((lt + le) / 2 - q * z.size)
                u = -t * (score - score.min())
                live = np.flatnonzero(u > -60)  # exp(-60): never wins against the best
                ul, cl = u[live], c[live]
                out = np.empty(draws)
                step = max(1, int(2e7 // live.size))
                for i in range(0, draws, step):
                    m = min(step, draws - i)
                    g = ul[None, :] + rng.exponential(1.0, (m, live.size))
                    out[i : i + m] = cl[np.argmax(g, axis=1)]
                cells.append(f"{np.sqrt(np.mean((out - truth) ** 2)):.4g}")
            print(f"| {q} | {eps} | " + " | ".join(cells) + " |", flush=True)


# ------------------------------------------------------------- table 2: Adult age quantiles
ADULT = Path(__file__).resolve().parents[1] / "datasets" / "adult" / "adult.data"
ABOUNDS = (17, 90)


def _pf_law(score: np.ndarray, t: float) -> np.ndarray:
    """Exact law of permute-and-flip with coins p = exp(-t (s - min s)): uniform over the
    accepted candidates, P(r) = p_r E[1 / (1 + #other accepted)] = p_r int_0^1 prod_{j != r}
    (1 - p_j (1 - z)) dz, a polynomial of degree K - 1 integrated exactly by Gauss-Legendre."""
    p = np.exp(-t * (score - score.min()))
    live = np.flatnonzero(p > 1e-300)
    pl = p[live]
    z, wq = np.polynomial.legendre.leggauss(live.size // 2 + 2)
    z, wq = (z + 1) / 2, wq / 2  # nodes and weights on [0, 1]
    logf = np.log1p(-np.outer(1 - z, pl))  # (nodes, live): log(1 - p_j (1 - z))
    total = logf.sum(axis=1, keepdims=True)
    out = np.zeros(p.size)
    out[live] = pl * (wq @ np.exp(total - logf))
    return out


def adult_quantiles(reps: int, epsilons: list[float]) -> None:
    import pandas as pd

    import veil.dp as vdp

    age = pd.read_csv(ADULT, header=None, usecols=[0], names=["age"], skipinitialspace=True)
    ints = np.clip(age["age"].to_numpy(dtype=np.int64), *ABOUNDS)
    cands = np.arange(ABOUNDS[0], ABOUNDS[1] + 1)
    n = ints.size
    try:
        import diffprivlib.tools as dpl
    except ImportError:
        dpl = None
    try:
        import opendp.prelude as odp

        odp.enable_features("contrib")
    except ImportError:
        odp = None
    rows = []
    t0 = time.time()
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        truth = float(np.quantile(ints, q, method="inverted_cdf"))
        # Veil's midrank score |lt + cnt / 2 - q n| and exact law (permute-and-flip, eps / 2);
        # the depth score max(lt - q n, q n - le) under the same mechanism for reference (an
        # alternative that ranks the true quantile first on every input; exact law only)
        cnt = np.bincount(ints - ABOUNDS[0], minlength=cands.size)
        lt = np.cumsum(cnt) - cnt
        score = np.abs(lt + 0.5 * cnt - q * n)
        depth = np.maximum(lt - q * n, q * n - (lt + cnt))
        for eps in epsilons:
            row: dict[str, float] = {"q": q, "eps": eps}
            v = [  # declared integer: the same information as OpenDP's integer candidates
                vdp.tools.quantile(ints, q, epsilon=eps, bounds=ABOUNDS, integer=True)
                for _ in range(reps)
            ]
            row["veil"] = float(np.mean(np.abs(np.asarray(v) - truth)))
            law = _pf_law(score, eps / 2)
            row["veil exact"] = float(law @ np.abs(cands - truth))
            row["veil exact var"] = float(law @ (cands - truth) ** 2) - row["veil exact"] ** 2
            row["depth exact"] = float(_pf_law(depth, eps / 2) @ np.abs(cands - truth))
            if dpl is not None:
                try:
                    d = [dpl.quantile(ints, q, epsilon=eps, bounds=ABOUNDS) for _ in range(reps)]
                    row["diffprivlib"] = float(np.mean(np.abs(np.asarray(d) - truth)))
                except Exception:  # noqa: BLE001 - diffprivlib fails at large eps (NaN)
                    row["diffprivlib"] = float("nan")
            if odp is not None:
                for d_in in (2, 1):
                    o, exact = _opendp_quantile(odp, ints, cands, q, eps, d_in, reps)
                    row[f"opendp d{d_in}"] = float(np.mean(np.abs(o - truth)))
                    row[f"opendp d{d_in} exact"] = float(exact @ np.abs(cands - truth))
                    row[f"opendp d{d_in} exact var"] = (
                        float(exact @ (cands - truth) ** 2) - row[f"opendp d{d_in} exact"] ** 2
                    )
            rows.append(row)
    load = os.getloadavg()
    print(f"# Adult age quantiles, integer column (n={n}, bounds {ABOUNDS}, reps={reps})")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {time.time() - t0:.0f} s")
    print()
    print(
        "| q | eps | veil | diffprivlib | opendp d2 | veil exact | opendp d2 exact "
        "| veil <= best same-unit peer? | opendp d1 (add/remove) | opendp d1 exact "
        "| depth score exact (alternative) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in rows:
        best = min(
            r.get("opendp d2 exact", np.inf),
            np.nan_to_num(r.get("diffprivlib", np.inf), nan=np.inf),
        )
        ok = "yes" if r["veil exact"] <= best * (1 + 1e-9) else "NO"
        if ok == "NO" and best == r.get("opendp d2 exact"):
            # the gap in standard errors of a `reps`-release Monte Carlo comparison
            se = np.sqrt((r["veil exact var"] + r["opendp d2 exact var"]) / reps)
            gap = (r["veil exact"] - best) / se if se > 0 else np.inf
            ok = f"tie ({gap:.2f} se)" if gap < 2 else f"NO ({gap:.1f} se)"

        def f(key: str, r: dict[str, float] = r) -> str:
            val = r.get(key, float("nan"))
            return "fails" if np.isnan(val) else f"{val:.4g}"

        print(
            f"| {r['q']} | {r['eps']} | {f('veil')} | {f('diffprivlib')} | {f('opendp d2')} "
            f"| {f('veil exact')} | {f('opendp d2 exact')} | {ok} | {f('opendp d1')} "
            f"| {f('opendp d1 exact')} | {f('depth exact')} |"
        )
    print()
    print(
        "Mean absolute error; 'exact' = expected absolute error from the mechanism's output law; "
        "the verdict compares Veil's exact error with OpenDP d2's exact and diffprivlib's "
        "(where OpenDP's is lower: the gap in standard errors of a reps-release comparison, "
        "from both exact laws; tie below 2). "
        "d2 = symmetric distance 2 (replace one record, the unit of veil.dp.tools and "
        "diffprivlib); d1 = add/remove one record (half the protection; reference only). "
        "depth = the score max(lt - q n, q n - le) under Veil's mechanism (not shipped)."
    )


def _opendp_quantile(
    odp: object, ints: np.ndarray, cands: np.ndarray, q: float, eps: float, d_in: int, reps: int
) -> tuple[np.ndarray, np.ndarray]:
    """OpenDP's candidate quantile (unsized ints) calibrated to (d_in, eps): releases and the
    exact output law.  Despite its name, OpenDP 0.16's ``then_report_noisy_max_gumbel``
    (deprecated since 0.14.0) is ``make_noisy_max`` with ``MaxDivergence``, whose sampler adds
    *exponential* noise, not Gumbel noise: report-noisy-max with exponential noise has the law
    of permute-and-flip (Ding et al., "The permute-and-flip mechanism is identical to
    report-noisy-max with exponential noise", 2021), coins ``exp(-(s - min s) / scale)``, not
    the exponential mechanism's ``softmax(-s / scale)`` (Gumbel noise, which OpenDP uses only
    under ``ZeroConcentratedDivergence``).  The releases agree with the permute-and-flip law.
    Its privacy map is ``2 d / scale`` for scores at L-inf distance ``d`` (non-monotonic: a
    range of ``2 d``), so ``1 / scale`` plays the role of Veil's ``eps / 2`` per unit of
    OpenDP's own score.
    (OpenDP 0.15.1 returned the noisy max for ``optimize="min"``, opendp issue #2912; 0.16
    returns the argmin at ``scale=0``.)"""
    space = (odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance())  # type: ignore[attr-defined]
    score_t = space >> odp.t.then_quantile_score_candidates(cands.tolist(), alpha=q)  # type: ignore[attr-defined]

    def make(s: float) -> object:
        return score_t >> odp.m.then_report_noisy_max_gumbel(s, optimize="min")  # type: ignore[attr-defined]

    scale = odp.binary_search_param(make, d_in=d_in, d_out=eps)  # type: ignore[attr-defined]
    meas = make(scale)
    data = ints.tolist()
    out = np.array([cands[meas(data)] for _ in range(reps)])  # type: ignore[operator]
    score = np.asarray(score_t(data), dtype=np.float64)  # type: ignore[operator]
    return out, _pf_law(score, 1.0 / scale)


if __name__ == "__main__":
    main()
