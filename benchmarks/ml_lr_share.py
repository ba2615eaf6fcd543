"""Jacobian budget share of Veil's LogisticRegression: accuracy on a split of Adult's TRAINING file.

The share ``s`` of epsilon given to the Jacobian term of objective perturbation (see
``veil.ml._objpert``) is a free, data-independent choice.  This script measures, for a grid
of shares and of (n, epsilon), the accuracy of the released model on a fixed 70/30 split of
``adult.data`` (the test file ``adult.test`` is not used), with the same features, public
scaling and ``data_norm = sqrt(5)`` as ``benchmarks/ml.py``, and prints the rule's share
(``default_jacobian_share(n, eps)``) next to the best measured one.  Each fit follows
``veil.ml.LogisticRegression`` (rows ``[x, 1] / sqrt(R^2 + 1)``, lambda = 1 / (n C S^2), C = 1)
with the share pinned.

    python benchmarks/ml_lr_share.py               # 200 fits per cell
    python benchmarks/ml_lr_share.py --runs 50
    python benchmarks/ml_lr_share.py --fine 400   # shares 0.5-0.75 near the full-data n*eps

``--fine`` compares shares 0.50, 0.55, ..., 0.75 at n * eps = 11,396 and 15,954 (the 70 % part
at eps 0.5 and 0.7, i.e. about Adult's full training file at eps 0.35-0.5) with common random
numbers (the same noise draws for every share), and prints each share's mean accuracy and its
paired difference to the rule's share (rounded to the grid) with the standard error of that
difference.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from ml import load, train_split  # benchmarks/ml.py: the same features and public scaling
from veil.ml._objpert import (
    calibrate,
    default_jacobian_share,
    minimise_perturbed_logistic,
    sample_perturbation,
)

SHARES = (0.3, 0.4, 0.5, 0.6, 0.7)
# (rows used from the 70 % part, epsilon): n * eps from about 700 to 23,000
CELLS = (
    (22792, 0.03),
    (10000, 0.1),
    (22792, 0.07),
    (10000, 0.2),
    (22792, 0.1),
    (22792, 0.15),
    (10000, 0.5),
    (22792, 0.25),
    (10000, 1.0),
    (22792, 0.5),
    (22792, 0.7),
    (22792, 1.0),
)


def accuracy(Xa, ya, Xb, yb, eps: float, share: float, rng) -> float:
    n = len(Xa)
    S = math.sqrt(Xa.shape[1] + 1.0)  # data_norm sqrt(d), intercept constant 1
    Z = np.hstack([Xa, np.ones((n, 1))]) / S
    s = np.where(ya == 1, 1.0, -1.0)
    cal = calibrate(eps, n, 1.0 / (n * S**2), jacobian_share=share)
    b = sample_perturbation(rng, Z.shape[1], cal.beta)
    w, _ = minimise_perturbed_logistic(Z, s, b, cal.reg, max_iter=100, gtol=1e-10)
    W = w / S
    return float(np.mean(((Xb @ W[:-1] + W[-1]) > 0) == (yb == 1)))


def fine(Xa, ya, Xb, yb, runs: int) -> None:
    """Paired comparison of shares near the rule's at the full-data n * eps."""
    shares = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
    print(f"# fine grid, {runs} fits per share, common random numbers; diff = share - rule's")
    for n, eps in ((len(Xa), 0.5), (len(Xa), 0.7)):
        acc = {}
        for share in shares:
            rng = np.random.default_rng(9)  # the same noise draws for every share
            acc[share] = np.array(
                [accuracy(Xa[:n], ya[:n], Xb, yb, eps, share, rng) for _ in range(runs)]
            )
        rule = default_jacobian_share(n, eps)
        ref = acc[min(shares, key=lambda s: abs(s - rule))]
        cells = [
            f"s={s}: {a.mean():.4f} ({a.mean() - ref.mean():+.4f}±"
            f"{(a - ref).std(ddof=1) / np.sqrt(runs):.4f})"
            for s, a in acc.items()
        ]
        print(f"n={n} eps={eps} n*eps={n * eps:.0f} rule={rule:.3f} | " + " | ".join(cells))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--fine", type=int, metavar="RUNS", help="only the paired fine grid")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    Xtr, ytr, _, _ = load()
    Xa, ya, Xb, yb = train_split(Xtr, ytr)
    k = len(Xa)
    if args.fine:
        fine(Xa, ya, Xb, yb, args.fine)
        return
    print(f"# 70/30 split of adult.data: {k} / {len(Xtr) - k} rows; {args.runs} fits per cell")
    print("| n | eps | n*eps | " + " | ".join(f"s={s}" for s in SHARES) + " | best | rule |")
    print("|---" * (len(SHARES) + 5) + "|")
    for n, eps in CELLS:
        cells = []
        for share in SHARES:
            rng = np.random.default_rng(9)
            acc = np.array(
                [accuracy(Xa[:n], ya[:n], Xb, yb, eps, share, rng) for _ in range(args.runs)]
            )
            cells.append((acc.mean(), acc.std(ddof=1)))
        best = SHARES[int(np.argmax([m for m, _ in cells]))]
        print(
            f"| {n} | {eps} | {n * eps:.0f} | "
            + " | ".join(f"{m:.4f}±{sd:.4f}" for m, sd in cells)
            + f" | {best} | {default_jacobian_share(n, eps):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
