"""Integer quantiles over a sweep of q: Veil's midrank score vs OpenDP's fraction-q score.

Table 2 of ``dp_tools_accuracy.py`` compares the two at five levels q on Adult ``age``; the
verdict there turns on *where the target rank q n falls inside its block of tied values* (the
fraction ``f`` of the block of 28-year-olds below the target is 0.126 at q = 0.25, close to
OpenDP's point ``f = q``).  This script sweeps q from 0.05 to 0.95 in steps of 0.005 (181
levels; the target moves through every block between) and prints, per epsilon, how often and by
how much each mechanism is closer to the true quantile, from the *exact* output laws (no Monte
Carlo noise):

* Veil: ``veil.dp.tools.quantile(age, q, epsilon=eps, bounds=(17, 90), integer=True)``, i.e.
  permute-and-flip on Veil's own midrank scores (``candidate_counts`` / ``midrank_scores`` of
  ``veil.dp.tools``) at ``eps / 2`` (replace one record, n public);
* OpenDP 0.16: ``then_quantile_score_candidates`` on the candidates 17..90 and
  ``then_report_noisy_max_gumbel`` (permute-and-flip law, see ``dp_tools_accuracy.py``) at the
  scale OpenDP's ``binary_search_param`` calibrates for symmetric distance 2 (= replace one).

A Monte Carlo check draws ``--reps`` Veil releases at a few levels and compares their mean error
with the exact law.  diffprivlib is not in the sweep: its quantile is continuous (mean absolute
error about 0.5 year at every cell of table 2).

Run in ``.venv`` (OpenDP installed)::

    .venv/bin/python benchmarks/dp_quantile_sweep.py     # ~1 min
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dp_tools_accuracy import ABOUNDS, ADULT, _pf_law  # noqa: E402

EPSILONS = (0.01, 0.1, 1.0)
LEVELS = np.round(np.arange(0.05, 0.9501, 0.005), 3)
WIDTHS = (0.0, 0.1, 0.2, 0.3, 0.5)
NEGLIGIBLE = 1e-3  # expected error (years) below which both mechanisms are "0 in practice"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=2000, help="Veil releases per Monte Carlo check")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import opendp.prelude as odp
    import pandas as pd
    from scipy.stats import chisquare

    import veil.dp as vdp
    from veil.dp.tools._quantile_candidates import candidate_counts, midrank_scores

    odp.enable_features("contrib")
    age = pd.read_csv(ADULT, header=None, usecols=[0], names=["age"], skipinitialspace=True)
    ints = np.clip(age["age"].to_numpy(dtype=np.int64), *ABOUNDS)
    n = ints.size
    cands = np.arange(ABOUNDS[0], ABOUNDS[1] + 1)
    lt, cnt = candidate_counts(ints.astype(np.float64), cands.astype(np.float64))
    space = (odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance())
    data = ints.tolist()
    load0 = os.getloadavg()
    t0 = time.time()
    rows = []
    widths: dict[tuple[float, float], list[float]] = {}
    for q in LEVELS:
        truth = float(np.quantile(ints, q, method="inverted_cdf"))
        i = int(truth) - ABOUNDS[0]
        frac = (q * n - lt[i]) / cnt[i]  # where the target rank sits in its block of ties
        dist = np.abs(cands - truth)
        score_t = space >> odp.t.then_quantile_score_candidates(cands.tolist(), alpha=float(q))
        o_score = np.asarray(score_t(data), dtype=np.float64)
        v_score = midrank_scores(lt, cnt, n, float(q))
        for eps in EPSILONS:
            for w in WIDTHS:  # alternative scores (not shipped): zero in the block's middle 2w
                alt = np.maximum(0.0, v_score - w * cnt)
                widths.setdefault((eps, w), []).append(float(_pf_law(alt, eps / 2) @ dist))

            def make(s: float, score_t: object = score_t) -> object:
                return score_t >> odp.m.then_report_noisy_max_gumbel(s, optimize="min")

            scale = odp.binary_search_param(make, d_in=2, d_out=eps)
            veil = float(_pf_law(v_score, eps / 2) @ dist)
            opendp = float(_pf_law(o_score, 1.0 / scale) @ dist)
            rows.append((q, eps, frac, veil, opendp))
    arr = np.array(rows)
    print(f"# Adult age (n={n}, bounds {ABOUNDS}): {LEVELS.size} levels q = 0.05..0.95 step 0.005")
    print(f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; {time.time() - t0:.0f} s")
    print()
    print(
        "| eps | levels | Veil closer | OpenDP closer | both < 1e-3 yr | mean error Veil / OpenDP "
        "| worst level Veil / OpenDP | median ratio Veil / OpenDP (both >= 1e-3) |"
    )
    print("|---:|---:|---:|---:|---:|---|---|---:|")
    for eps in EPSILONS:
        a = arr[arr[:, 1] == eps]
        v, o = a[:, 3], a[:, 4]
        both0 = (v < NEGLIGIBLE) & (o < NEGLIGIBLE)
        live = ~both0
        vw = int(np.sum(live & (v < o)))
        ow = int(np.sum(live & (o < v)))
        ratio = np.median(v[live] / o[live]) if live.any() else float("nan")
        print(
            f"| {eps} | {a.shape[0]} | {vw} | {ow} | {int(both0.sum())} "
            f"| {v.mean():.4g} / {o.mean():.4g} | {v.max():.4g} / {o.max():.4g} | {ratio:.3g} |"
        )
    print()
    print("OpenDP closer at eps 0.01, by where the target sits in its block (f):")
    a = arr[arr[:, 1] == EPSILONS[0]]
    for lo_f, hi_f in ((0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)):
        sel = (a[:, 2] >= lo_f) & (a[:, 2] < hi_f)
        ow = int(np.sum(sel & (a[:, 4] < a[:, 3])))
        print(f"  f in [{lo_f}, {hi_f}): {int(sel.sum())} levels, OpenDP closer at {ow}")
    print()
    print(
        "Alternative scores max(0, |midrank - q n| - w cnt) (w = 0: Veil's midrank; w = 0.5: the "
        "depth score): mean / worst expected error over the levels"
    )
    print("| eps | " + " | ".join(f"w = {w}" for w in WIDTHS) + " |")
    print("|---:|" + "---|" * len(WIDTHS))
    for eps in EPSILONS:
        cells = [f"{np.mean(widths[eps, w]):.4g} / {np.max(widths[eps, w]):.3g}" for w in WIDTHS]
        print(f"| {eps} | " + " | ".join(cells) + " |")
    print()
    print("Monte Carlo check of Veil's exact law (mean absolute error of --reps releases):")
    rng_levels = (0.25, 0.5, 0.75)
    for q in rng_levels:
        truth = float(np.quantile(ints, q, method="inverted_cdf"))
        rel = np.array(
            [
                vdp.tools.quantile(ints, q, epsilon=0.01, bounds=ABOUNDS, integer=True)
                for _ in range(args.reps)
            ]
        )
        ex = arr[(arr[:, 0] == q) & (arr[:, 1] == 0.01)][0, 3]
        mc = np.abs(rel - truth)
        se = mc.std(ddof=1) / np.sqrt(args.reps)
        law = _pf_law(midrank_scores(lt, cnt, n, q), 0.005) * args.reps
        obs = np.array([np.sum(rel == c) for c in cands])
        big = law > 5  # chi-square over the candidates expected 5+ times, the rest pooled
        p = chisquare(np.r_[obs[big], obs[~big].sum()], np.r_[law[big], law[~big].sum()]).pvalue
        print(
            f"  q={q} eps=0.01: exact {ex:.4f}, releases {mc.mean():.4f} +- {se:.4f}; "
            f"chi-square against the law p = {p:.3g}"
        )
    load = os.getloadavg()
    print(f"load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
