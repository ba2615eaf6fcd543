"""Bad input to the DP estimators: one-line errors that never quote a value of X or y.

scikit-learn's validation messages quote the offending cell ("could not convert string to
float: '...'") or print the whole array (1-D input, complex data); Veil's errors name shapes,
column positions and counts instead, since users log errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import InputError
from veil.ml import PCA, GaussianNB, KMeans, LinearRegression, LogisticRegression

SENTINEL = "SENTINEL-7731"
SECRET_NUMBERS = (0.7731123456, 0.9917654321)
X_OK = np.random.default_rng(3).uniform(0, 1, (40, 2))
Y_OK = (X_OK[:, 0] > 0.5).astype(int)

ESTIMATORS = {
    "nb": (lambda: GaussianNB(bounds=(0, 1), classes=[0, 1], random_state=0), True),
    "lr": (lambda: LogisticRegression(data_norm=2.0, classes=[0, 1], random_state=0), True),
    "linreg": (lambda: LinearRegression(bounds_X=(0, 1), bounds_y=(0, 1), random_state=0), True),
    "kmeans": (lambda: KMeans(2, bounds=(0, 1), random_state=0), False),
}


def _fit(name, X, y=None):
    make, supervised = ESTIMATORS[name]
    est = make()
    if supervised:
        y = np.resize(Y_OK, max(len(np.atleast_1d(X)), 1)) if y is None else y
        return est.fit(X, y)
    return est.fit(X)


def _assert_clean(message: str, *secrets: str) -> None:
    assert "\n" not in message, message
    for secret in secrets:
        assert secret not in message, message


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_text_cell_is_not_quoted(name):
    X = np.array([[SENTINEL, 1.0], ["0.5", 1.0], ["0.1", 0.0]], dtype=object)
    with pytest.raises(InputError, match=r"X must be numeric: column 0") as info:
        _fit(name, X)
    _assert_clean(str(info.value), SENTINEL)


def test_text_cell_in_a_dataframe_names_the_column_not_the_value():
    X = pd.DataFrame({"age": [0.2, 0.4, 0.6], "name": [SENTINEL, "bob", "carol"]})
    with pytest.raises(InputError, match=r"column 'name'.*encode categorical") as info:
        _fit("nb", X)
    _assert_clean(str(info.value), SENTINEL, "bob")


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_1d_input_is_described_by_shape(name):
    X = np.array(SECRET_NUMBERS)
    with pytest.raises(InputError, match=r"2D array.*1-D array of shape \(2,\).*reshape") as info:
        _fit(name, X)
    _assert_clean(str(info.value), "7731", "9917")


def test_scalar_and_complex_input_do_not_print_the_array():
    with pytest.raises(InputError, match="got a scalar") as info:
        _fit("nb", np.array(SECRET_NUMBERS[0]))
    _assert_clean(str(info.value), "7731")
    X = np.array([[SECRET_NUMBERS[0] + 1j, 0.5], [0.1, 0.2]])
    with pytest.raises(InputError, match="Complex data not supported") as info:
        _fit("nb", X)
    _assert_clean(str(info.value), "7731")


def test_predict_with_1d_input_does_not_print_it():
    est = _fit("nb", X_OK)
    with pytest.raises(InputError, match="Reshape your data") as info:
        est.predict(np.array(SECRET_NUMBERS))
    _assert_clean(str(info.value), "7731", "9917")


def test_pca_inverse_transform_checks_its_input():
    est = PCA(1, data_norm=2.0, bounds=(0, 1), random_state=0).fit(X_OK)
    with pytest.raises(InputError, match="column 0") as info:
        est.inverse_transform(np.array([[SENTINEL]], dtype=object))
    _assert_clean(str(info.value), SENTINEL)
    with pytest.raises(InputError, match="expecting 1"):
        est.inverse_transform(X_OK)


def test_labels_outside_classes_are_counted_not_quoted():
    y = np.array(["a", "b"] * 19 + [SENTINEL, SENTINEL], dtype=object)
    est = GaussianNB(bounds=(0, 1), classes=["a", "b"], random_state=0)
    with pytest.raises(InputError, match=r"1 label\(s\) outside classes \(2 row") as info:
        est.fit(X_OK, y)
    _assert_clean(str(info.value), SENTINEL)


def test_regression_target_text_is_not_quoted():
    y = np.array([SENTINEL] + ["0.5"] * (len(X_OK) - 1), dtype=object)
    with pytest.raises(InputError, match="y must be numeric") as info:
        _fit("linreg", X_OK, y)
    _assert_clean(str(info.value), SENTINEL)
