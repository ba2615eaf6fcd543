"""scikit-learn's estimator checks on every DP estimator.

The estimators are built with bounds read from the data (``"data"``, which warns) because the
checks construct and fit estimators on their own synthetic data.  Checks that cannot apply to a
randomized private estimator are declared as expected failures, with the reason (also in
docs/ml.md).  The estimators carry scikit-learn's ``poor_score`` tag: their accuracy on the
checks' 30-200-row toy data is noisy by design, so the training-score checks use the lenient bar.
"""

from __future__ import annotations

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

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

SAMPLE_WEIGHT = "sample_weight is refused: weights change the sensitivity of every statistic"

ESTIMATORS = [
    GaussianNB(bounds="data", random_state=0),
    LogisticRegression(data_norm="data", random_state=0),
    LinearRegression(bounds_X="data", bounds_y="data", random_state=0),
    KMeans(3, bounds="data", random_state=0),
    PCA(2, data_norm="data", bounds="data", random_state=0),
    StandardScaler(bounds="data", random_state=0),
    DecisionTreeClassifier(bounds="data", random_state=0),
    RandomForestClassifier(bounds="data", random_state=0),
]


def expected_failures(estimator) -> dict[str, str]:
    out = {
        name: SAMPLE_WEIGHT
        for name in (
            "check_sample_weights_pandas_series",
            "check_sample_weights_not_an_array",
            "check_sample_weights_list",
            "check_sample_weights_shape",
            "check_sample_weights_not_overwritten",
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weight_equivalence_on_sparse_data",
            "check_all_zero_sample_weights_error",
            "check_classifiers_one_label_sample_weights",
            "check_sample_weights_invariance",
        )
    }
    return out


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
