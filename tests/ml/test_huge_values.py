"""One person's huge (finite) value: no warning during the private fit, and it is clipped
like any value beyond the bounds.

``np.linalg.norm`` of a row with an entry beyond ~1e154 overflows: the row-norm clipping of
LogisticRegression and PCA emitted "overflow encountered in multiply" (a ``RuntimeWarning``
that only the table holding the huge value produces, raised as an error after the budget was
spent under ``-W error``) and mapped the row to 0 instead of onto the ``data_norm`` sphere;
the trees' bin search overflowed the same way.  Neighbouring tables ``D`` (the value at the
bound) and ``D'`` (the value 1.7e308) must give the same observable fit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.dp import BudgetAccountant
from veil.errors import AccuracyWarning, InsecureRandomWarning
from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
)
from veil.ml._base import clip_rows_to_norm

X = np.random.default_rng(8).uniform(0, 1, (60, 2))
Y = (X[:, 0] > 0.5).astype(int)
R = 2.0

MAKE = {
    "lr": lambda acc: LogisticRegression(data_norm=R, classes=[0, 1], accountant=acc),
    "pca": lambda acc: PCA(2, data_norm=R, bounds=(0, 1), accountant=acc),
    "pca-centered": lambda acc: PCA(2, data_norm=R, centered=True, accountant=acc),
    "dt": lambda acc: DecisionTreeClassifier(4, bounds=(0, 1), classes=[0, 1], accountant=acc),
    "dt-auto": lambda acc: DecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc),
    "rf": lambda acc: RandomForestClassifier(
        3, max_depth=3, bounds=(0, 1), classes=[0, 1], accountant=acc
    ),
    "nb": lambda acc: GaussianNB(bounds=(0, 1), classes=[0, 1], accountant=acc),
    "lin": lambda acc: LinearRegression(bounds_X=(0, 1), bounds_y=(0, 1), accountant=acc),
    "km": lambda acc: KMeans(2, bounds=(0, 1), accountant=acc),
    "ss": lambda acc: StandardScaler(bounds=(0, 1), accountant=acc),
}


def _fit_strict(name: str, Xv: np.ndarray, seed: int = 0):
    acc = BudgetAccountant(epsilon=10.0)
    est = MAKE[name](acc).set_params(random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning would be an observable difference
        warnings.simplefilter("ignore", InsecureRandomWarning)  # the test's seed
        warnings.simplefilter("ignore", AccuracyWarning)  # KMeans' noisy inertia (DP)
        est.fit(Xv, Y)
    assert acc.total().epsilon == pytest.approx(1.0)
    return est


@pytest.mark.parametrize("name", sorted(MAKE))
@pytest.mark.parametrize("value", [1e200, 1.7e308, -1.7e308], ids=["1e200", "max", "-max"])
def test_huge_value_fits_without_a_warning(name, value):
    Xp = X.copy()
    Xp[5, 1] = value
    _fit_strict(name, Xp)


@pytest.mark.parametrize("name", ["dt", "dt-auto", "rf"])
@pytest.mark.parametrize("value", [1.7e308, -1.7e308], ids=["max", "-max"])
def test_tree_reads_a_huge_value_as_the_bound(name, value):
    at_bound, huge = X.copy(), X.copy()
    at_bound[5, 1] = 1.0 if value > 0 else 0.0  # D: the value at the bound
    huge[5, 1] = value  # D': the same person with a huge value
    a, b = _fit_strict(name, at_bound, seed=4), _fit_strict(name, huge, seed=4)
    assert np.array_equal(np.asarray(a.leaf_counts_), np.asarray(b.leaf_counts_))


@pytest.mark.parametrize("name", ["lr", "pca-centered"])
def test_huge_row_is_clipped_onto_the_sphere_not_to_zero(name):
    on_sphere, huge = X.copy(), X.copy()
    on_sphere[5] = [0.0, R]  # D: the row where D' is clipped to (up to 1e-200)
    huge[5] = [X[5, 0], 1e200]
    a, b = _fit_strict(name, on_sphere, seed=9), _fit_strict(name, huge, seed=9)
    attr = "coef_" if name == "lr" else "components_"
    np.testing.assert_allclose(getattr(b, attr), getattr(a, attr), rtol=1e-9, atol=1e-12)


def test_clip_rows_to_norm_keeps_direction_beyond_float_range():
    rows = np.array([[3e200, -4e200], [1.7e308, 1.7e308], [np.inf, 0.0], [0.3, 0.4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = clip_rows_to_norm(rows, 5.0)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.linalg.norm(out[:3], axis=1), 5.0, rtol=1e-12)
    np.testing.assert_allclose(out[0], [3.0, -4.0], rtol=1e-12)
    np.testing.assert_allclose(out[1], [5 / np.sqrt(2)] * 2, rtol=1e-12)
    assert out[3].tolist() == [0.3, 0.4]  # within the norm: unchanged, bit for bit
