"""A parameter that makes the fit fail is refused before the budget is spent.

``C=inf``, ``max_iter=None``, ``tol="x"``, a ``data_norm`` whose regulariser ``1 / (n C
data_norm^2)`` underflows, an ``epsilon`` the objective-perturbation calibration cannot reach
(LogisticRegression), a non-numeric ``var_smoothing`` (GaussianNB): each was read only after
the accountant was charged, so the failed fit spent its epsilon (and, with a default
accountant, a user retrying with a fixed parameter paid twice).
"""

from __future__ import annotations

import numpy as np
import pytest

from veil.dp import BudgetAccountant
from veil.errors import ConfigError
from veil.ml import GaussianNB, LogisticRegression

X = np.random.default_rng(2).uniform(0, 1, (50, 2))
Y = (X[:, 0] > 0.5).astype(int)

BAD = {
    "lr-C-inf": lambda acc: LogisticRegression(
        data_norm=2.0, classes=[0, 1], C=float("inf"), accountant=acc
    ),
    "lr-C-nan": lambda acc: LogisticRegression(
        data_norm=2.0, classes=[0, 1], C=float("nan"), accountant=acc
    ),
    "lr-max_iter-None": lambda acc: LogisticRegression(
        data_norm=2.0, classes=[0, 1], max_iter=None, accountant=acc
    ),
    "lr-tol-text": lambda acc: LogisticRegression(
        data_norm=2.0, classes=[0, 1], tol="x", accountant=acc
    ),
    "lr-data_norm-huge": lambda acc: LogisticRegression(
        data_norm=1e200, classes=[0, 1], accountant=acc
    ),
    "lr-epsilon-huge": lambda acc: LogisticRegression(
        epsilon=1e300, data_norm=2.0, classes=[0, 1], accountant=acc
    ),
    "nb-var_smoothing-None": lambda acc: GaussianNB(
        bounds=(0, 1), classes=[0, 1], var_smoothing=None, accountant=acc
    ),
    "nb-var_smoothing-text": lambda acc: GaussianNB(
        bounds=(0, 1), classes=[0, 1], var_smoothing="x", accountant=acc
    ),
    "nb-var_smoothing-nan": lambda acc: GaussianNB(
        bounds=(0, 1), classes=[0, 1], var_smoothing=float("nan"), accountant=acc
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_parameter_spends_nothing(name):
    acc = BudgetAccountant(epsilon=float("inf"))
    est = BAD[name](acc)
    with pytest.raises(ConfigError):
        est.fit(X, Y)
    assert acc.total().epsilon == 0.0
    assert not hasattr(est, "classes_")


def test_numpy_scalars_and_zero_iterations_are_accepted():
    acc = BudgetAccountant(epsilon=float("inf"))
    LogisticRegression(
        data_norm=2.0, classes=[0, 1], C=np.float32(2.0), max_iter=np.int64(5), accountant=acc
    ).fit(X, Y)
    with pytest.warns(Warning):  # no Newton step: the tolerance is not reached
        LogisticRegression(data_norm=2.0, classes=[0, 1], max_iter=0, accountant=acc).fit(X, Y)
    GaussianNB(bounds=(0, 1), classes=[0, 1], var_smoothing=np.float64(0), accountant=acc).fit(X, Y)
    assert acc.total().epsilon == pytest.approx(3.0)
