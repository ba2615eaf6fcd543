"""DP k-means beyond Adult: Veil (grid-synopsis init, the default) vs Veil with ``init="sphere"``
(the previous algorithm: DPLloyd from data-independent centres) vs diffprivlib 0.6.6.

Data sets (all scaled to [0, 1] with bounds that do not look at the rows used for scoring):

* three synthetic Gaussian mixtures with centres drawn in [0.2, 0.8]^d (d = 2, 5, 8; the d = 5
  one with cluster weights 1:2:4:8:16:32), train and test drawn independently, clipped to
  [0, 1];
* scikit-learn's wine (d = 13, 178 rows; min-max scaled by the 140 training rows' range, the 38
  test rows clipped to it) and digits
  (d = 64, 1797 rows; pixel range 0-16 is public; 1400 train / 397 test);
* with ``--adult`` only: Adult's five numeric features (the benchmark of ``benchmarks/ml.py``;
  public bounds), k = 4, with every variant (non-private starts, the DP variants, scikit-learn).

For every data set: the test inertia of *non-private* Lloyd from Veil's data-independent
sphere-packing starts (30 seeds; 7 iterations, the most DPLloyd runs, and 100), which shows how
much of DPLloyd's loss is the start rather than the noise.  For every data set and epsilon: mean ± sd (ddof = 1) of the test inertia (lower is better) over
``--runs`` fits, and scikit-learn's non-private k-means (10 restarts) as the reference.
Run in the benchmark environment::

    python benchmarks/kmeans_datasets.py --runs 20
"""

from __future__ import annotations

import argparse
import platform
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def mixture(d: int, k: int, n: int, sd: float, seed: int, weights=None):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, (k, d))
    p = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, float) / sum(weights)

    def draw(g: np.random.Generator) -> np.ndarray:
        lab = g.choice(k, n, p=p)
        return np.clip(centres[lab] + g.normal(0, sd, (n, d)), 0, 1)

    return draw(rng), draw(np.random.default_rng(seed + 1000))


def datasets(adult: bool) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    from sklearn.datasets import load_digits, load_wine

    out = {
        "mixture d=2 k=4 n=5000": (*mixture(2, 4, 5000, 0.05, 1), 4),
        "mixture d=5 k=6 n=20000 (unequal)": (
            *mixture(5, 6, 20000, 0.06, 2, [1, 2, 4, 8, 16, 32]),
            6,
        ),
        "mixture d=8 k=5 n=50000": (*mixture(8, 5, 50000, 0.08, 3), 5),
    }
    rng = np.random.default_rng(0)
    w = load_wine().data
    perm = rng.permutation(len(w))
    w_tr, w_te = w[perm[:140]], w[perm[140:]]
    lo, hi = w_tr.min(0), w_tr.max(0)  # the training rows' range, never the test rows'
    out["wine d=13 k=3 n=140"] = (
        (w_tr - lo) / (hi - lo),
        np.clip((w_te - lo) / (hi - lo), 0, 1),
        3,
    )
    dg = load_digits().data / 16.0
    perm = rng.permutation(len(dg))
    out["digits d=64 k=10 n=1400"] = (dg[perm[:1400]], dg[perm[1400:]], 10)
    if adult:
        from ml import load

        Xtr, _, Xte, _ = load()
        out["adult d=5 k=4 n=32561"] = (Xtr, Xte, 4)
    return out


def inertia(centres: np.ndarray, X: np.ndarray) -> float:
    return float(((X[:, None, :] - centres[None]) ** 2).sum(axis=2).min(axis=1).sum())


def fit_inertia(k, eps, lo, hi, Xtr, Xte, lib, **kw) -> float:
    """Test inertia of one fit of ``lib.KMeans`` (``kw``: Veil's ``init``)."""
    return inertia(lib.KMeans(k, epsilon=eps, bounds=(lo, hi), **kw).fit(Xtr).cluster_centers_, Xte)


def nonprivate_from_sphere(X: np.ndarray, Xt: np.ndarray, k: int, iters: int) -> np.ndarray:
    """Test inertia of exact Lloyd iterations from 30 seeded sphere-packing starts."""
    from veil.ml._kmeans import _assign, _sphere_packing_init

    d = X.shape[1]
    out = []
    for seed in range(30):
        c = _sphere_packing_init(k, np.zeros(d), np.ones(d), np.random.default_rng(seed))
        for _ in range(iters):
            lab = _assign(X, c)
            for j in range(k):
                if (lab == j).any():
                    c[j] = X[lab == j].mean(axis=0)
        out.append(inertia(c, Xt))
    return np.array(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--adult", action="store_true", help="also Adult (k = 4)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import diffprivlib.models as dm
    from sklearn.cluster import KMeans as SkKMeans

    import veil.ml as vm

    for name, (Xtr, Xte, k) in datasets(args.adult).items():
        d = Xtr.shape[1]
        lo, hi = np.zeros(d), np.ones(d)
        sk = SkKMeans(k, n_init=10, random_state=0).fit(Xtr)
        print(
            f"== {name}: non-private (scikit-learn) test inertia {inertia(sk.cluster_centers_, Xte):.1f}"
        )
        for iters in (7, 100):
            r = nonprivate_from_sphere(Xtr, Xte, k, iters)
            print(
                f"   non-private Lloyd, {iters} iterations from sphere-packing starts: "
                f"{r.mean():.1f} (min {r.min():.1f}, max {r.max():.1f}, 30 seeds)"
            )
        for eps in (0.1, 0.5, 1.0, 5.0):
            makers = {
                "veil": dict(lib=vm, init="auto"),
                "veil sphere": dict(lib=vm, init="sphere"),
                "diffprivlib": dict(lib=dm),
            }
            cells = []
            for label, kw in makers.items():
                r = np.array(
                    [fit_inertia(k, eps, lo, hi, Xtr, Xte, **kw) for _ in range(args.runs)]
                )
                cells.append(f"{label} {r.mean():.1f}±{r.std(ddof=1):.1f}")
            init = vm.KMeans(k, epsilon=eps, bounds=(lo, hi)).fit(Xtr)
            print(
                f"eps={eps:<4} "
                + "  ".join(cells)
                + f"  (veil init: {init.init_}, m={init.grid_size_})",
                flush=True,
            )
    print(f"# {platform.machine()} {platform.python_version()} runs={args.runs}")


if __name__ == "__main__":
    main()
