"""Every failure that depends only on public parameters is raised before the budget is spent.

An epsilon too large for the samplers (the noise scale below ``2^-900``), too small (a grid
scale above ``2^52``, beyond float64, or a share of epsilon that underflows to 0), bounds or a
``data_norm`` beyond float64's range: each failed while the noise was drawn, *after* the
accountant was charged (a ``NoiseScaleError``, ``OverflowError``, ``ZeroDivisionError`` or
``LinAlgError``), and some hung there.  Each case below fails on the code before this change:
the accountant was charged, or the fit raised a bare error or hung after the charge.  A
refused fit keeps no fitted attribute.
"""

from __future__ import annotations

import contextlib
import math
import signal
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from veil.dp import BudgetAccountant
from veil.errors import AccuracyWarning, ConfigError, NoiseScaleError
from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    RandomForestClassifier,
    StandardScaler,
)

RNG = np.random.default_rng(11)
X = RNG.uniform(0, 1, (80, 3))
Y = (X[:, 0] > 0.5).astype(int)
YR = X @ [0.3, 0.2, 0.1]

Factory = Callable[[float, BudgetAccountant], Any]

ESTIMATORS: dict[str, tuple[Factory, bool]] = {  # factory(epsilon, accountant), needs y
    "GaussianNB": (
        lambda e, a: GaussianNB(epsilon=e, bounds=(0, 1), classes=[0, 1], accountant=a),
        True,
    ),
    "KMeans": (lambda e, a: KMeans(2, epsilon=e, bounds=(0, 1), accountant=a), False),
    "KMeans-sphere": (
        lambda e, a: KMeans(2, epsilon=e, bounds=(0, 1), init="sphere", n_iter=3, accountant=a),
        False,
    ),
    "LinearRegression": (
        lambda e, a: LinearRegression(epsilon=e, bounds_X=(0, 1), bounds_y=(0, 1), accountant=a),
        True,
    ),
    "PCA": (lambda e, a: PCA(2, epsilon=e, data_norm=2.0, bounds=(0, 1), accountant=a), False),
    "PCA-centered": (
        lambda e, a: PCA(2, epsilon=e, data_norm=2.0, centered=True, accountant=a),
        False,
    ),
    "StandardScaler": (lambda e, a: StandardScaler(epsilon=e, bounds=(0, 1), accountant=a), False),
    "DecisionTree": (
        lambda e, a: DecisionTreeClassifier(epsilon=e, bounds=(0, 1), classes=[0, 1], accountant=a),
        True,
    ),
    "DecisionTree-depth3": (
        lambda e, a: DecisionTreeClassifier(
            3, epsilon=e, bounds=(0, 1), classes=[0, 1], accountant=a
        ),
        True,
    ),
    "RandomForest": (
        lambda e, a: RandomForestClassifier(
            3, epsilon=e, bounds=(0, 1), classes=[0, 1], accountant=a
        ),
        True,
    ),
}


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging (a fit that looped for ever after the charge)."""

    def _stop(*_: Any) -> None:
        raise TimeoutError(f"the fit ran for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, _stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _fit(est: Any, needs_y: bool, X_: np.ndarray = X, y: np.ndarray | None = None) -> Any:
    with _deadline(60), warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        if needs_y:
            return est.fit(X_, YR if isinstance(est, LinearRegression) else Y if y is None else y)
        return est.fit(X_)


def _fitted(est: Any) -> list[str]:
    return [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]


def _assert_refused(est: Any, needs_y: bool, acc: BudgetAccountant, error: type = ConfigError):
    with pytest.raises(error):
        _fit(est, needs_y)
    assert acc.total().epsilon == 0.0, "the refused fit spent budget"
    assert acc.spent_budget == []
    assert _fitted(est) == [], "the refused fit left fitted attributes"


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("epsilon", [1e300, 1e-100, 1e-200, 1e-300, 5e-324], ids=repr)
def test_epsilon_out_of_the_samplers_range_spends_nothing(name, epsilon):
    acc = BudgetAccountant(epsilon=math.inf)
    make, needs_y = ESTIMATORS[name]
    _assert_refused(make(epsilon, acc), needs_y, acc, NoiseScaleError)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("epsilon", [1e250, 1e160], ids=repr)
def test_huge_but_drawable_epsilon_fits(name, epsilon):
    """Just inside the range the fit completes, with a finite model: GaussianNB's variance sd
    squared epsilon (OverflowError), PCA's split raised epsilon to the third power, KMeans'
    grid size was a gigantic integer counted down one by one (a hang)."""
    acc = BudgetAccountant(epsilon=math.inf)
    make, needs_y = ESTIMATORS[name]
    est = _fit(make(epsilon, acc), needs_y)
    assert acc.total().epsilon == epsilon
    for attr in ("theta_", "var_", "cluster_centers_", "coef_", "components_", "scale_"):
        if getattr(est, attr, None) is not None:
            assert np.isfinite(getattr(est, attr)).all(), attr


WIDE = [(-1e308, 1e308), (0, 1e308), (1e308, 1e308), (-1e200, 1e200)]


@pytest.mark.parametrize("bounds", WIDE, ids=repr)
@pytest.mark.parametrize(
    "make",
    [
        lambda b, a: (GaussianNB(bounds=b, classes=[0, 1], accountant=a), True),
        lambda b, a: (KMeans(2, bounds=b, accountant=a), False),
        lambda b, a: (StandardScaler(bounds=b, accountant=a), False),
        lambda b, a: (PCA(2, data_norm=2.0, bounds=b, accountant=a), False),
        lambda b, a: (LinearRegression(bounds_X=b, bounds_y=(0, 1), accountant=a), True),
        lambda b, a: (
            LinearRegression(bounds_X=b, bounds_y=(0, 1), fit_intercept=False, accountant=a),
            True,
        ),
        lambda b, a: (LinearRegression(bounds_X=(0, 1), bounds_y=b, accountant=a), True),
    ],
    ids=["nb", "kmeans", "scaler", "pca", "linreg", "linreg-origin", "linreg-y"],
)
def test_bounds_beyond_float64_are_refused_before_the_charge(make, bounds):
    """Mid-points or squared widths that overflow: an infinite model, an InputError on an
    infinite sum, a ZeroDivisionError, a LinAlgError or a hang, after the charge."""
    acc = BudgetAccountant(epsilon=math.inf)
    est, needs_y = make(bounds, acc)
    _assert_refused(est, needs_y, acc)


@pytest.mark.parametrize("bounds", [(0.5, 0.5), (0, 5e-324), (0, 1e-300)], ids=repr)
def test_kmeans_box_of_width_zero_fits(bounds):
    """The sphere packing measured distances in a box of width 0: it hung after the charge,
    and the inertia's Laplace scale was 0 (NoiseScaleError after the charge)."""
    acc = BudgetAccountant(epsilon=math.inf)
    km = _fit(KMeans(2, bounds=bounds, accountant=acc), False)
    assert acc.total().epsilon == 1.0
    assert np.isfinite(km.cluster_centers_).all() and km.inertia_ == 0.0


@pytest.mark.parametrize(
    "params",
    [{"inertia_clip": 1e-300}, {"inertia_clip": 5e-324}, {"inertia_share": 1e-300}],
    ids=repr,
)
def test_kmeans_inertia_noise_is_checked_before_the_charge(params):
    acc = BudgetAccountant(epsilon=math.inf)
    _assert_refused(KMeans(2, bounds=(0, 1), accountant=acc, **params), False, acc)


def test_kmeans_every_branch_of_the_plan_is_checked():
    """The number of Lloyd iterations (2 to 7) is read from the noisy row count after the
    charge; with 20 features and this epsilon, 7 iterations' sums cannot be drawn (grid-unit
    scale above 2^52) while 2 can.  Which one runs depends on the noisy count, so the fit is
    refused up front instead of failing after the charge for some tables (large counts)."""
    X20 = RNG.uniform(0, 1, (80, 20))
    eps = 150 * 2.0**-52
    acc = BudgetAccountant(epsilon=math.inf)
    est = KMeans(2, epsilon=eps, bounds=(0, 1), init="sphere", accountant=acc)
    with pytest.raises(NoiseScaleError):
        _fit(est, False, X20)
    assert acc.total().epsilon == 0.0 and _fitted(est) == []
    # with the number of iterations given, only that plan is checked: 2 iterations fit
    _fit(KMeans(2, epsilon=eps, bounds=(0, 1), init="sphere", n_iter=2, accountant=acc), False, X20)
    assert acc.total().epsilon == eps


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("data_norm", [1e308, 1e200, 1e154, 1e-200, 1e-300, 5e-324], ids=repr)
def test_pca_data_norm_beyond_float64_is_refused_before_the_charge(data_norm, centered):
    acc = BudgetAccountant(epsilon=math.inf)
    est = PCA(2, data_norm=data_norm, bounds=(0, 1), centered=centered, accountant=acc)
    _assert_refused(est, False, acc)


@pytest.mark.parametrize("data_norm", [1e-20, 1e-100], ids=repr)
def test_pca_tiny_data_norm_fits(data_norm):
    """The mean took all of epsilon after rounding: the scatter's share was 0, a
    ZeroDivisionError after the charge."""
    acc = BudgetAccountant(epsilon=math.inf)
    pca = _fit(PCA(2, data_norm=data_norm, bounds=(0, 1), accountant=acc), False)
    assert acc.total().epsilon == 1.0
    assert np.isfinite(pca.components_).all() and np.isfinite(pca.explained_variance_).all()


@pytest.mark.parametrize("epsilon", [1e100, 1e250], ids=repr)
def test_linear_regression_collinear_features_and_huge_epsilon_fit(epsilon):
    """The noise below the rounding of an exactly singular X^T X (a repeated column): the
    solve raised LinAlgError after the charge, for some tables only."""
    Xd = np.column_stack([X[:, 0], X[:, 0], np.zeros(len(X))])
    acc = BudgetAccountant(epsilon=math.inf)
    reg = LinearRegression(epsilon=epsilon, bounds_X=(0, 1), bounds_y=(0, 1), accountant=acc)
    reg.fit(Xd, YR)
    assert acc.total().epsilon == epsilon and np.isfinite(reg.coef_).all()


def test_a_refused_refit_keeps_the_previous_model():
    acc = BudgetAccountant(epsilon=math.inf)
    nb = GaussianNB(bounds=(0, 1), classes=[0, 1], accountant=acc).fit(X, Y)
    theta = nb.theta_.copy()
    nb.set_params(epsilon=1e300)
    with pytest.raises(NoiseScaleError):
        nb.fit(X, Y)
    assert acc.total().epsilon == 1.0
    np.testing.assert_array_equal(nb.theta_, theta)
