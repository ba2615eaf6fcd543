"""Private machine learning on the bundled insurance table (the seed scenarios of veil.ml).

1. GaussianNB(epsilon=0.5) with bounds from domain knowledge, widened by random margins.
2. DP KMeans(n_clusters=4) and its (private) inertia_, before and after a DP StandardScaler +
   PCA pipeline that shares one budget.
3. RandomForestClassifier(n_jobs=-1, epsilon=0.5, random_state=345, verbose=1) on a one-hot
   table: honest bounds (0, 1) need nothing from the data; reading the domains from the data is
   an explicit opt-in that warns (PrivacyLeakWarning).

Run:  python examples/private_ml.py [--seed N]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import veil.dp as dp
from veil.errors import AccuracyWarning, InsecureRandomWarning, PrivacyLeakWarning
from veil.ml import (
    PCA,
    GaussianNB,
    KMeans,
    RandomForestClassifier,
    StandardScaler,
    make_private_pipeline,
    read_bounds_from_data,
)

DATA = Path(__file__).resolve().parents[1] / "datasets" / "insurance_ke" / "Insurance_data_ke.csv"
CATEGORICAL = [
    "County",
    "Gender",
    "Marital_status",
    "No_of_dependents",
    "Tier",
    "Policy_limit",
    "Illness_category",
    "Updated_subscription",
    "Retention",
]


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=None, help="reproducible noise (NOT secure)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", InsecureRandomWarning)
    rng = np.random.default_rng(args.seed)
    seed = args.seed
    df = pd.read_csv(DATA)
    y = (df["Account_withdrawal"] == "Yes").to_numpy().astype(int)
    out: dict[str, float] = {}

    # 1. GaussianNB: public domain knowledge (age 18-100, 0-10 dependents, limit <= 1M) widened
    X = df[["Age", "No_of_dependents", "Policy_limit"]].to_numpy(float)
    lo = np.array([18.0, 0.0, 0.0]) - rng.uniform(0, 5, 3)
    hi = np.array([100.0, 10.0, 1_000_000.0]) + rng.uniform(0, 5, 3)
    acc = dp.BudgetAccountant(epsilon=2.0)
    nb = GaussianNB(
        epsilon=0.5, bounds=(lo, hi), classes=[0, 1], accountant=acc, random_state=seed
    ).fit(X, y)
    out["nb_accuracy"] = float(nb.score(X, y))

    # 2. KMeans(4) inertia before and after StandardScaler + PCA (one budget for the pipeline).
    #    On raw data the Policy_limit range (1M) makes the DP inertia pure noise (often clipped
    #    to 0, with an AccuracyWarning): its sensitivity is the squared diameter of the bounds.
    #    Scale first, and cap each point's squared distance (inertia_clip) to shrink the noise.
    km = KMeans(n_clusters=4, epsilon=0.5, bounds=(lo, hi), accountant=acc, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)  # expected here: the point made above
        out["kmeans_inertia_raw"] = km.fit(X).inertia_
    out["kmeans_inertia_raw_ci"] = km.inertia_ci_
    pipe = make_private_pipeline(
        StandardScaler(bounds=(lo, hi), random_state=seed),
        PCA(2, data_norm=4.0, centered=True, random_state=seed),
        KMeans(
            n_clusters=4,
            bounds=(-3.0, 3.0),
            inertia_share=0.5,
            inertia_clip=4.0,
            random_state=seed,
        ),  # fmt: skip
        epsilon=1.0,
        weights=[1, 1, 2],
        accountant=acc,
    )
    pipe.fit(X)
    out["kmeans_inertia_scaled_pca"] = pipe[-1].inertia_
    out["kmeans_inertia_scaled_pca_ci"] = pipe[-1].inertia_ci_
    out["budget_spent"] = acc.total().epsilon

    # 3. RandomForest on the one-hot table
    onehot = pd.get_dummies(df[CATEGORICAL].astype(str)).to_numpy(float)
    out["onehot_columns"] = float(onehot.shape[1])
    rf = RandomForestClassifier(
        n_jobs=-1,
        epsilon=0.5,
        random_state=seed if seed is not None else 345,
        verbose=1,
        bounds=(0, 1),
        classes=[0, 1],
    ).fit(onehot, y)
    out["rf_accuracy"] = float(rf.score(onehot, y))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        with read_bounds_from_data():  # the diffprivlib habit, now deliberate
            RandomForestClassifier(n_jobs=-1, epsilon=0.5, random_state=345).fit(onehot, y)
    out["rf_data_bounds_warned"] = float(
        any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    )
    for key, value in out.items():
        print(f"{key:28s} {value:.4f}")
    return out


if __name__ == "__main__":
    main()
