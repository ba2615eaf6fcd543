"""Whether a classifier's fit fails must not follow the type of y's values when classes are given.

scikit-learn's ``check_classification_targets`` reads the target's type from its values:
labels 0 and 1 are "binary", and one person's label 0.5 makes the whole target "continuous".
With ``classes=[0, 0.5, 1]`` declared (public), fitting ``D`` (0s and 1s) succeeded and fitting
``D'`` = ``D`` plus one person labelled 0.5 -- a declared class -- raised: error versus success
on neighbouring tables.  The type check now reads the public ``classes`` when they are given.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.errors import InputError
from veil.ml import GaussianNB, LogisticRegression, RandomForestClassifier

RNG = np.random.default_rng(3)
X = RNG.uniform(0, 1, (40, 2))
Y = np.array([0.0, 1.0] * 20)
X2, Y2 = np.vstack([X, [[0.5, 0.5]]]), np.append(Y, 0.5)  # one more person, a declared label


def _make(kind: str, classes: list[float]):
    if kind == "nb":
        return GaussianNB(epsilon=1.0, bounds=(0, 1), classes=classes, random_state=0)
    if kind == "lr":
        return LogisticRegression(epsilon=1.0, data_norm=1.5, classes=classes, random_state=0)
    return RandomForestClassifier(
        epsilon=1.0, bounds=(0, 1), classes=classes, max_depth=2, n_estimators=2, random_state=0
    )


def _outcome(est, X, y) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y)
        except InputError as exc:
            return f"error: {exc}"
    return "fitted"


@pytest.mark.parametrize("kind", ["nb", "lr", "rf"])
@pytest.mark.parametrize("classes", [[0, 0.5, 1], [0, 1, 2]])
def test_fit_outcome_does_not_follow_y_type(kind: str, classes: list[float]) -> None:
    y2 = Y2 if 0.5 in classes else np.append(Y, 2.0)
    outcome = _outcome(_make(kind, classes), X, Y)
    assert outcome == _outcome(_make(kind, classes), X2, y2)
    if classes == [0, 1, 2]:  # integer labels: both tables fit (not two equal errors)
        assert outcome == "fitted"


def test_labels_outside_the_classes_are_still_refused() -> None:
    with pytest.raises(InputError, match="outside classes"):
        GaussianNB(epsilon=1.0, bounds=(0, 1), classes=[0, 1]).fit(X2, np.append(Y, 2.0))
