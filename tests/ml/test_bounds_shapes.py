"""Bounds whose width does not match X raise Veil's typed InputError, not numpy's broadcast error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.errors import ConfigError, InputError, PrivacyLeakWarning, VeilError
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

RNG = np.random.default_rng(20261121)
X3 = RNG.uniform(0, 1, size=(40, 3))
Y_CLS = np.arange(40) % 2
Y_REG = RNG.uniform(0, 1, size=40)
LO4, HI4 = [0.0] * 4, [1.0] * 4

CASES = [
    ("GaussianNB", lambda: GaussianNB(epsilon=1.0, bounds=(LO4, HI4)), Y_CLS, "bounds"),
    ("KMeans", lambda: KMeans(n_clusters=2, epsilon=1.0, bounds=(LO4, HI4)), None, "bounds"),
    ("StandardScaler", lambda: StandardScaler(epsilon=1.0, bounds=(LO4, HI4)), None, "bounds"),
    ("PCA", lambda: PCA(epsilon=1.0, data_norm=2.0, bounds=(LO4, HI4)), None, "bounds"),
    (
        "DecisionTreeClassifier",
        lambda: DecisionTreeClassifier(epsilon=1.0, bounds=(LO4, HI4), max_depth=2),
        Y_CLS,
        "bounds",
    ),
    (
        "RandomForestClassifier",
        lambda: RandomForestClassifier(epsilon=1.0, bounds=(LO4, HI4), n_estimators=2, max_depth=2),
        Y_CLS,
        "bounds",
    ),
    (
        "LinearRegression bounds_X",
        lambda: LinearRegression(epsilon=1.0, bounds_X=(LO4, HI4), bounds_y=(0, 1)),
        Y_REG,
        "bounds_X",
    ),
]


@pytest.mark.parametrize(("label", "make", "y", "name"), CASES, ids=[c[0] for c in CASES])
def test_bounds_for_four_features_on_three_columns(label, make, y, name):
    est = make()
    with pytest.raises(InputError, match=rf"{name} give 4 feature.*X has 3") as info:
        est.fit(X3, y)
    assert isinstance(info.value, VeilError)
    assert "broadcast" not in str(info.value)


def test_mismatch_on_upper_side_only_is_named():
    with pytest.raises(InputError, match=r"bounds give 2 feature\(s\) \(upper bound\).*X has 3"):
        GaussianNB(epsilon=1.0, bounds=(0.0, [1.0, 1.0])).fit(X3, Y_CLS)


def test_linear_regression_bounds_y_with_two_values_per_side():
    reg = LinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=([0, 0], [1, 1]))
    with pytest.raises(InputError, match=r"bounds_y give 2 feature.*target has"):
        reg.fit(X3, Y_REG)


def test_non_vector_bounds_are_a_config_error():
    with pytest.raises(ConfigError, match="1-D"):
        GaussianNB(epsilon=1.0, bounds=(np.zeros((3, 1)), 1.0)).fit(X3, Y_CLS)
    with pytest.raises(ConfigError, match="numeric"):
        GaussianNB(epsilon=1.0, bounds=("low", 1.0)).fit(X3, Y_CLS)


@pytest.mark.parametrize("lower", [0.0, [0.0], [0.0, 0.0, 0.0], np.zeros(3)])
def test_scalar_and_matching_bounds_still_fit(lower):
    # every spelling of the same lower bound gives the same model as the scalar 0.0
    nb = GaussianNB(epsilon=1.0, bounds=(lower, 1.0), classes=[0, 1], random_state=0)
    ref = GaussianNB(epsilon=1.0, bounds=(0.0, 1.0), classes=[0, 1], random_state=0)
    nb, ref = nb.fit(X3, Y_CLS), ref.fit(X3, Y_CLS)
    assert nb.theta_.shape == (2, 3)
    np.testing.assert_array_equal(nb.theta_, ref.theta_)
    np.testing.assert_array_equal(nb.var_, ref.var_)


def test_mismatch_spends_no_budget():
    from veil.dp import BudgetAccountant

    acc = BudgetAccountant(epsilon=2.0)
    with pytest.raises(InputError):
        KMeans(n_clusters=2, epsilon=1.0, bounds=(LO4, HI4), accountant=acc).fit(X3)
    assert len(acc) == 0 and acc.total().epsilon == 0.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianNB(epsilon=1.0, bounds=(0, 1)),
        lambda: LogisticRegression(epsilon=1.0, data_norm=2.0),
        lambda: DecisionTreeClassifier(epsilon=1.0, bounds=(0, 1)),
        lambda: RandomForestClassifier(epsilon=1.0, bounds=(0, 1)),
    ],
)
def test_label_set_read_from_y_warns_and_given_classes_do_not(make):
    """classes_ is released: reading it from y (a rare label shows with certainty) warns."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2))
    y = np.zeros(200, dtype=int)
    y[0] = 7  # one record with a rare label
    est = make()
    with pytest.warns(PrivacyLeakWarning, match="classes were not given"):
        est.fit(X, y)
    assert list(est.classes_) == [0, 7]  # the rare label is visible: hence the warning
    est = make().set_params(classes=[0, 7])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est.fit(X, y)
