"""DP scikit-learn-style estimators: Veil vs diffprivlib on Adult, side by side in one run.

Train on adult.data, test on adult.test.  Features: the five numeric columns (age,
education-num, capital-gain, capital-loss, hours-per-week) scaled to [0, 1] with PUBLIC bounds
(17-90, 1-16, 0-100000, 0-4356, 1-99), identical for both libraries.  For every epsilon and
model: mean and sd of test accuracy (or R^2 / k-means test inertia) over ``--runs`` fits, the
difference of the means (Veil - diffprivlib) with its standard error sqrt((sd_v^2 + sd_p^2) /
runs) (the fits are independent), and mean fit time.

Run in the benchmark environment (diffprivlib 0.6.6 needs scikit-learn < 1.8)::

    python benchmarks/ml.py            # 10 runs, eps in {0.1, 0.5, 1, 5}
    python benchmarks/ml.py --quick    # 2 runs, eps in {0.5, 5}
    python benchmarks/ml.py --models LogisticRegression   # only these models (comma list)
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
LO = np.array([17.0, 1.0, 0.0, 0.0, 1.0])
HI = np.array([90.0, 16.0, 100000.0, 4356.0, 99.0])


def load() -> tuple[np.ndarray, ...]:
    def read(name: str, skip: int) -> pd.DataFrame:
        return pd.read_csv(
            ROOT / "datasets" / "adult" / name,
            header=None,
            names=COLS,
            skipinitialspace=True,
            skiprows=skip,
        )

    tr, te = read("adult.data", 0), read("adult.test", 1)
    Xtr = (tr[NUMERIC].to_numpy(float) - LO) / (HI - LO)
    Xte = (te[NUMERIC].to_numpy(float) - LO) / (HI - LO)
    ytr = tr["income"].str.startswith(">50K").to_numpy().astype(int)
    yte = te["income"].str.startswith(">50K").to_numpy().astype(int)
    return Xtr, ytr, Xte, yte


def train_split(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """The fixed 70/30 split of the training file used to tune and diagnose on adult.data only.

    Rows are permuted with ``default_rng(123)``; the first ``int(0.7 * n)`` form the fitting
    part.  Returns ``(Xa, ya, Xb, yb)``: fitting part, then held-out part.
    """
    idx = np.random.default_rng(123).permutation(len(X))
    k = int(0.7 * len(X))
    return X[idx[:k]], y[idx[:k]], X[idx[k:]], y[idx[k:]]


def models(eps: float, d: int) -> dict[str, tuple]:
    import diffprivlib.models as dm

    import veil.ml as vm

    b = (np.zeros(d), np.ones(d))
    norm = float(np.sqrt(d))
    return {
        "GaussianNB": (
            lambda: vm.GaussianNB(epsilon=eps, bounds=b, classes=[0, 1]),
            lambda: dm.GaussianNB(epsilon=eps, bounds=b),
        ),
        "LogisticRegression": (
            lambda: vm.LogisticRegression(epsilon=eps, data_norm=norm, classes=[0, 1]),
            lambda: dm.LogisticRegression(epsilon=eps, data_norm=norm),
        ),
        "DecisionTree": (
            lambda: vm.DecisionTreeClassifier(epsilon=eps, bounds=b, classes=[0, 1]),
            lambda: dm.DecisionTreeClassifier(epsilon=eps, bounds=b, classes=[0, 1]),
        ),
        "RandomForest": (
            lambda: vm.RandomForestClassifier(epsilon=eps, bounds=b, classes=[0, 1]),
            lambda: dm.RandomForestClassifier(epsilon=eps, bounds=b, classes=[0, 1]),
        ),
    }


def run_estimator(make, X, y, Xt, yt, score="acc") -> tuple[float, float]:
    t0 = time.perf_counter()
    m = make().fit(X, y) if y is not None else make().fit(X)
    fit_s = time.perf_counter() - t0
    if score == "acc":
        return float(m.score(Xt, yt)), fit_s
    if score == "r2":
        pred = m.predict(Xt)
        return float(1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum()), fit_s
    centers = m.cluster_centers_
    d2 = ((Xt[:, None, :] - centers[None]) ** 2).sum(axis=2)
    return float(d2.min(axis=1).sum()), fit_s


def small_tables_nb(splits: int) -> None:
    """GaussianNB on scikit-learn's iris and wine with bounds widened by random margins (the
    seed scenario), Veil vs diffprivlib on the same split and bounds; mean accuracy and its se."""
    import diffprivlib.models as dm
    from sklearn.datasets import load_iris, load_wine
    from sklearn.model_selection import train_test_split

    import veil.ml as vm

    warnings.simplefilter("ignore")
    print(f"# GaussianNB, small tables, {splits} random 80/20 splits per cell")
    for name, loader in (("iris", load_iris), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        for eps in (0.5, 1.0, 5.0):
            v, p = [], []
            for r in range(splits):
                rng = np.random.default_rng(r)
                a, b, c, t = train_test_split(X, y, test_size=0.2, random_state=r)
                lo = X.min(0) - rng.uniform(0, 1, X.shape[1])
                hi = X.max(0) + rng.uniform(0, 1, X.shape[1])
                classes = np.unique(y)
                v.append(
                    vm.GaussianNB(epsilon=eps, bounds=(lo, hi), classes=classes)
                    .fit(a, c)
                    .score(b, t)
                )
                p.append(dm.GaussianNB(epsilon=eps, bounds=(lo, hi)).fit(a, c).score(b, t))
            vm_, pm = float(np.mean(v)), float(np.mean(p))
            se = float(np.sqrt(np.var(v, ddof=1) / splits + np.var(p, ddof=1) / splits))
            verdict = "OK" if vm_ >= pm else ("tie" if pm - vm_ <= 2 * se else "WORSE")
            print(
                f"GaussianNB {name:5s} eps={eps:<4} veil {vm_:.3f}  diffprivlib {pm:.3f}  "
                f"(se of the difference {se:.3f})  {verdict}"
            )


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--models", default=None, help="comma-separated model names (default: all)")
    ap.add_argument(
        "--small-nb",
        type=int,
        metavar="SPLITS",
        help="only: GaussianNB on iris and wine (the seed scenario: bounds widened by random "
        "margins), Veil vs diffprivlib over SPLITS random 80/20 splits",
    )
    args = ap.parse_args(argv)
    if args.small_nb:
        small_tables_nb(args.small_nb)
        return []
    wanted = None if args.models is None else {m.strip() for m in args.models.split(",")}
    warnings.simplefilter("ignore")
    runs = args.runs or (2 if args.quick else 10)
    epsilons = [0.5, 5.0] if args.quick else [0.1, 0.5, 1.0, 5.0]
    Xtr, ytr, Xte, yte = load()
    d = Xtr.shape[1]
    # linear regression: predict scaled hours-per-week from the other four features
    Rtr, rtr, Rte, rte = Xtr[:, :4], Xtr[:, 4], Xte[:, :4], Xte[:, 4]
    rows: list[dict] = []
    import diffprivlib.models as dm
    from sklearn.linear_model import LinearRegression as SkLin
    from sklearn.linear_model import LogisticRegression as SkLogit
    from sklearn.naive_bayes import GaussianNB as SkNB

    import veil.ml as vm

    print(f"# non-private GaussianNB accuracy: {SkNB().fit(Xtr, ytr).score(Xte, yte):.4f}")
    print(f"# non-private LinearRegression R^2: {SkLin().fit(Rtr, rtr).score(Rte, rte):.4f}")
    if wanted is None or "LogisticRegression" in wanted:
        sk_lr = SkLogit().fit(Xtr, ytr).score(Xte, yte)
        print(f"# non-private LogisticRegression (scikit-learn, C=1) accuracy: {sk_lr:.4f}")
    if wanted is None or wanted & {"DecisionTree", "RandomForest"}:
        from sklearn.tree import DecisionTreeClassifier as SkTree

        for depth in (6, 8):
            sk_t = SkTree(max_depth=depth, random_state=0).fit(Xtr, ytr).score(Xte, yte)
            print(
                f"# non-private DecisionTree (scikit-learn, max_depth={depth}) accuracy: {sk_t:.4f}"
            )
    for eps in epsilons:
        table = models(eps, d)
        table["LinearRegression"] = (
            lambda e=eps: vm.LinearRegression(epsilon=e, bounds_X=(0, 1), bounds_y=(0, 1)),
            lambda e=eps: dm.LinearRegression(
                epsilon=e, bounds_X=(np.zeros(4), np.ones(4)), bounds_y=(0, 1)
            ),
        )
        table["KMeans(k=4) test inertia"] = (
            lambda e=eps: vm.KMeans(4, epsilon=e, bounds=(0, 1)),
            lambda e=eps: dm.KMeans(4, epsilon=e, bounds=(np.zeros(d), np.ones(d))),
        )
        for name, (veil_make, peer_make) in table.items():
            if wanted is not None and name.split()[0].split("(")[0] not in wanted:
                continue
            kind = "r2" if name == "LinearRegression" else "inertia" if "KMeans" in name else "acc"
            data = (
                (Rtr, rtr, Rte, rte)
                if kind == "r2"
                else (Xtr, None if kind == "inertia" else ytr, Xte, yte)
            )
            if eps == epsilons[0]:  # one untimed fit each: imports and first-call set-up
                run_estimator(veil_make, *data, score=kind)
                run_estimator(peer_make, *data, score=kind)
            v = [run_estimator(veil_make, *data, score=kind) for _ in range(runs)]
            p = [run_estimator(peer_make, *data, score=kind) for _ in range(runs)]
            vs, ps = np.array([s for s, _ in v]), np.array([s for s, _ in p])
            better = vs.mean() <= ps.mean() if kind == "inertia" else vs.mean() >= ps.mean()
            row = {
                "model": name,
                "metric": kind,
                "epsilon": eps,
                "veil_mean": vs.mean(),
                "veil_sd": vs.std(ddof=1) if runs > 1 else 0.0,
                "dpl_mean": ps.mean(),
                "dpl_sd": ps.std(ddof=1) if runs > 1 else 0.0,
                "veil_fit_s": np.mean([t for _, t in v]),
                "dpl_fit_s": np.mean([t for _, t in p]),
                "veil_at_least_as_good": bool(better),
            }
            # Welch standard error of the difference of the two means (independent fits)
            diff = float(vs.mean() - ps.mean())
            se = float(np.sqrt((row["veil_sd"] ** 2 + row["dpl_sd"] ** 2) / runs))
            row["diff"], row["diff_se"] = diff, se
            rows.append(row)
            tie = " (tie: |diff| < 2 se)" if runs > 1 and abs(diff) < 2 * se else ""
            print(
                f"{name:26s} eps={eps:<4} {kind:7s} veil {row['veil_mean']:.4f}±{row['veil_sd']:.4f}"
                f"  diffprivlib {row['dpl_mean']:.4f}±{row['dpl_sd']:.4f}"
                f"  diff {diff:+.4f} se {se:.4f}"
                f"  fit veil {row['veil_fit_s'] * 1e3:.1f} ms / dpl {row['dpl_fit_s'] * 1e3:.1f} ms"
                f"  {'OK' if better else 'WORSE'}{tie}",
                flush=True,
            )
    print(f"# {platform.machine()} {platform.python_version()} runs={runs}")
    return rows


if __name__ == "__main__":
    main()
