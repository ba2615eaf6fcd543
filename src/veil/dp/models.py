"""diffprivlib-compatible home of the DP estimators: ``from veil.dp.models import GaussianNB``.

A port of ``from diffprivlib.models import X`` only changes ``diffprivlib`` to ``veil.dp``.
The estimators live in :mod:`veil.ml` (this module re-exports them; the objects are the same),
so ``veil.dp.models.GaussianNB is veil.ml.GaussianNB``.  See docs/ml.md for the algorithms
and the papers they come from.

Examples
--------
>>> from veil.dp.models import GaussianNB
>>> import veil.ml
>>> GaussianNB is veil.ml.GaussianNB
True
"""

from __future__ import annotations

from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
    make_private_pipeline,
    read_bounds_from_data,
)

__all__ = [
    "GaussianNB",
    "LogisticRegression",
    "LinearRegression",
    "KMeans",
    "PCA",
    "StandardScaler",
    "DecisionTreeClassifier",
    "RandomForestClassifier",
    "make_private_pipeline",
    "read_bounds_from_data",
]
