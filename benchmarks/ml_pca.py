"""DP PCA: Veil vs diffprivlib 0.6.6 side by side, same epsilon, data_norm, bounds, n_components.

Data sets (all scaled to [0, 1] with bounds that do not look at the rows used for scoring):

* Adult's five numeric features (``benchmarks/ml.py``: public bounds; train adult.data, test
  adult.test);
* scikit-learn's wine (d = 13, 140 train / 38 test rows), min-max scaled by the training rows'
  range (test rows clipped to it), and digits (d = 64, pixel range 0-16 is public; 1400 train /
  397 test), as in ``benchmarks/kmeans_datasets.py``;
* a synthetic spiked Gaussian (d = 10, 50,000 train and 10,000 test rows: mean 0.5, standard
  deviations 0.2, 0.15, 0.1 along three random orthonormal directions plus 0.02 isotropic
  noise, clipped to [0, 1]), the large-n, mid-d case the small scikit-learn sets cannot show.

Both libraries get ``bounds = [0, 1]^d`` and ``data_norm = sqrt(d)`` (the largest L2 norm of a
row of [0, 1]^d minus any mean in [0, 1]^d: no clipping, no look at the data) and the same
``n_components`` k.  Each fit gets its own copy of the training rows (diffprivlib 0.6.6's PCA
centres its input in place).

Metric: the share of the held-out rows' variance captured by the released components relative to
the non-private top-k components of the training rows, ``||Xc V||_F^2 / ||Xc V_true||_F^2`` with
``Xc`` the test rows centred on their own mean (so the released mean does not enter; 1 = as good
as non-private PCA, it can exceed 1 slightly; a uniformly random k-dimensional subspace captures
``k / d`` of ``||Xc||_F^2`` on average, printed as the chance level), after the part of
epsilon Veil's split gives the scatter matrix (:func:`veil.ml._preprocessing.pca_mean_share`
at the true row count, where a fit uses its noisy count).  For every data set and
epsilon: mean ± sd (ddof = 1) over ``--runs`` fits, the difference Veil - diffprivlib with its
standard error, and mean fit time.  Run in the benchmark environment::

    python benchmarks/ml_pca.py --runs 10
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import load_line  # noqa: E402


def minmax_split(X: np.ndarray, n_train: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Permute, split, scale by the training rows' range and clip the test rows to it."""
    perm = np.random.default_rng(seed).permutation(len(X))
    tr, te = X[perm[:n_train]], X[perm[n_train:]]
    lo, hi = tr.min(0), tr.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (tr - lo) / span, np.clip((te - lo) / span, 0, 1)


def spiked(d: int, n_train: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``0.5 + Q diag(0.2, 0.15, 0.1) g + 0.02 e`` clipped to [0, 1] (Q random orthonormal)."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(d, 3)))[0]

    def draw(n: int) -> np.ndarray:
        X = 0.5 + (rng.normal(size=(n, 3)) * [0.2, 0.15, 0.1]) @ Q.T
        return np.clip(X + rng.normal(0, 0.02, (n, d)), 0, 1)

    return draw(n_train), draw(n_test)


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    from sklearn.datasets import load_digits, load_wine

    from ml import load

    Xtr, _, Xte, _ = load()
    out = {"adult d=5 n=32561": (Xtr, Xte, 2)}
    out["wine d=13 n=140"] = (*minmax_split(load_wine().data, 140, 0), 2)
    out["spiked d=10 n=50000"] = (*spiked(10, 50000, 10000, 0), 3)
    dg = load_digits().data / 16.0
    perm = np.random.default_rng(0).permutation(len(dg))
    out["digits d=64 n=1400"] = (dg[perm[:1400]], dg[perm[1400:]], 5)
    return out


def captured(components: np.ndarray, Xc: np.ndarray, ref: float) -> float:
    """``||Xc components^T||_F^2 / ref`` (components as rows, orthonormal)."""
    return float(np.linalg.norm(Xc @ components.T) ** 2 / ref)


def run_cell(lib: Any, kw: dict, Xtr: np.ndarray, Xc: np.ndarray, ref: float, runs: int):
    """``runs`` fits of ``lib.PCA(**kw)``: captured shares and the mean fit time in seconds."""
    scores, times = [], []
    for _ in range(runs):
        X = Xtr.copy()
        t0 = time.perf_counter()
        m = lib.PCA(**kw).fit(X)
        times.append(time.perf_counter() - t0)
        scores.append(captured(m.components_, Xc, ref))
    return np.array(scores), float(np.mean(times))


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--eps", default="0.1,0.5,1,5", help="comma list of epsilons")
    ap.add_argument("--only", default="", help="data sets whose name starts with this")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import diffprivlib.models as dm

    import veil.ml as vm
    from veil.ml._noise import COUNT_SHARE
    from veil.ml._preprocessing import pca_mean_share

    epsilons = [float(e) for e in args.eps.split(",")]
    rows = []
    print(f"# start {time.strftime('%H:%M', time.gmtime())} UTC, load {load_line()}")
    for name, (Xtr, Xte, k) in datasets().items():
        if not name.startswith(args.only):
            continue
        d = Xtr.shape[1]
        b, norm = (np.zeros(d), np.ones(d)), float(np.sqrt(d))
        vals, vecs = np.linalg.eigh(np.cov(Xtr.T))
        v_true = vecs[:, ::-1][:, :k]
        Xc = Xte - Xte.mean(0)
        ref = float(np.linalg.norm(Xc @ v_true) ** 2)
        chance = k / d * float(np.linalg.norm(Xc) ** 2) / ref  # a uniformly random k-subspace
        print(
            f"== {name}, k={k}, data_norm={norm:.3g} (captured share; 1 = non-private, "
            f"{chance:.3f} = a random subspace on average)"
        )
        # the matrix's part of epsilon in Veil's split (pca_mean_share with the true n in place
        # of the noisy count n_hat it is given in a fit; the count takes COUNT_SHARE)
        shares = []
        for eps in epsilons:
            rest = (1 - COUNT_SHARE) * eps
            eps_m = pca_mean_share(d, (b[1] - b[0]) / 2, norm, len(Xtr), rest)
            shares.append(f"eps={eps:g} {(rest - eps_m) / eps:.1%}")
        print(f"   veil's matrix share of eps (at the true n): {', '.join(shares)}")
        for eps in epsilons:
            kw = dict(n_components=k, epsilon=eps, data_norm=norm, bounds=b)
            libs = {"veil": vm, "diffprivlib": dm}
            res = {lab: run_cell(lib, kw, Xtr, Xc, ref, args.runs) for lab, lib in libs.items()}
            (sv, tv), (sp, tp) = res["veil"], res["diffprivlib"]
            diff = sv.mean() - sp.mean()
            se = float(np.sqrt((sv.var(ddof=1) + sp.var(ddof=1)) / args.runs))
            print(
                f"eps={eps:<4} veil {sv.mean():.4f}±{sv.std(ddof=1):.4f} ({tv * 1e3:.1f} ms)  "
                f"diffprivlib {sp.mean():.4f}±{sp.std(ddof=1):.4f} ({tp * 1e3:.1f} ms)  "
                f"diff {diff:+.4f} ± {se:.4f} ({diff / se if se > 0 else float('inf'):+.1f} se)",
                flush=True,
            )
            rows.append(dict(data=name, eps=eps, veil=sv.mean(), dpl=sp.mean(), diff=diff, se=se))
    print(
        f"# end {time.strftime('%H:%M', time.gmtime())} UTC, load {load_line()}; "
        f"{platform.machine()} {platform.python_version()} runs={args.runs}"
    )
    return rows


if __name__ == "__main__":
    main()
