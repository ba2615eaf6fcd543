"""Why diffprivlib's GaussianNB is above the non-private accuracy on Adult at a large epsilon.

Same data and public scaling as ``benchmarks/ml.py``.  Prints, at ``--eps`` (default 5):

1. for Veil and diffprivlib, the mean over ``--runs`` fits of each released variance divided by
   the non-private (scikit-learn) variance, per class and feature, and its spread;
2. diffprivlib's test accuracy as fitted and with the one entry (class <= 50K, capital-gain)
   reset to the non-private variance, same fits (paired difference and its standard error);
3. the non-private model's accuracy with that entry multiplied by 1-10, on adult.test and on a
   70/30 split of adult.data (the split ``benchmarks/ml_lr_share.py`` uses).

    python benchmarks/ml_nb_diagnose.py            # eps 5, 300 fits
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from ml import NUMERIC, load, train_split  # benchmarks/ml.py: the same features and public scaling

GAIN = NUMERIC.index("capital-gain")


def main(argv: list[str] | None = None) -> None:
    import diffprivlib.models as dm
    from sklearn.naive_bayes import GaussianNB as SkNB

    import veil.ml as vm

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eps", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    Xtr, ytr, Xte, yte = load()
    d = Xtr.shape[1]
    b = (np.zeros(d), np.ones(d))
    sk = SkNB().fit(Xtr, ytr)
    np.set_printoptions(precision=3, suppress=False, linewidth=120)
    print(f"# features {NUMERIC}; classes 0 (<=50K), 1 (>50K); eps={args.eps}, {args.runs} fits")
    print("# non-private variances (rows: classes)\n", sk.var_)
    makers = {
        "veil": lambda: vm.GaussianNB(epsilon=args.eps, bounds=b, classes=[0, 1]),
        "diffprivlib": lambda: dm.GaussianNB(epsilon=args.eps, bounds=b),
    }
    for name, make in makers.items():
        ratios, acc, reset = [], [], []
        for _ in range(args.runs):
            m = make().fit(Xtr, ytr)
            ratios.append(m.var_ / sk.var_)
            acc.append(m.score(Xte, yte))
            m.var_[0, GAIN] = sk.var_[0, GAIN]
            reset.append(m.score(Xte, yte))
        r = np.array(ratios)
        print(f"# {name}: mean released / non-private variance\n", r.mean(axis=0))
        print(f"# {name}: sd of that ratio over fits\n", r.std(axis=0, ddof=1))
        diff = np.array(acc) - np.array(reset)
        print(
            f"{name}: accuracy {np.mean(acc):.4f}, with var[<=50K, capital-gain] reset to the "
            f"non-private value {np.mean(reset):.4f}: difference {diff.mean():+.4f} ± "
            f"{diff.std(ddof=1) / np.sqrt(args.runs):.4f} (se, paired)"
        )
    sets = {
        "adult.test": (Xtr, ytr, Xte, yte),
        "70/30 split of adult.data": train_split(Xtr, ytr),
    }
    for name, (Xa, ya, Xb, yb) in sets.items():
        m = SkNB().fit(Xa, ya)
        v0 = m.var_.copy()
        cells = []
        for f in (1, 1.5, 2, 3, 5, 10):
            m.var_ = v0.copy()
            m.var_[0, GAIN] *= f
            cells.append(f"x{f}: {m.score(Xb, yb):.4f}")
        print(f"non-private, var[<=50K, capital-gain] multiplied, {name}: " + "  ".join(cells))


if __name__ == "__main__":
    main()
