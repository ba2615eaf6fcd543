"""A fit that fails on its input spends nothing: every check on the data comes before the charge.

Neighbouring tables: ``D`` fits; ``D'`` differs in one person's cell (a missing value in an
object-dtype target, a number beyond float64) and must fail *before* the accountant is charged,
with the same typed error as the equivalent float input, never after the noise is drawn.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from veil.dp import BudgetAccountant
from veil.errors import InputError
from veil.ml import LinearRegression

X = np.random.default_rng(5).uniform(0, 1, (60, 2))
Y = X @ [0.6, 0.3]


def _linreg(acc: BudgetAccountant) -> LinearRegression:
    return LinearRegression(
        epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), accountant=acc, random_state=0
    )


@pytest.mark.parametrize(
    "cell", [None, float("nan"), float("inf"), Decimal("1e999999"), 10**400], ids=repr
)
def test_linear_regression_object_target_fails_before_the_charge(cell):
    acc = BudgetAccountant(epsilon=10.0)
    _linreg(acc).fit(X, Y.astype(object))  # D: fits, spends 1
    assert acc.total().epsilon == pytest.approx(1.0)
    y_prime = Y.astype(object)
    y_prime[7] = cell  # D': one person's target missing or beyond float64
    with pytest.raises(InputError, match="y contains NaN or infinite values"):
        _linreg(acc).fit(X, y_prime)
    assert acc.total().epsilon == pytest.approx(1.0)  # nothing spent on the failed fit


def test_object_and_float_targets_fail_alike():
    acc = BudgetAccountant(epsilon=10.0)
    y_float = Y.copy()
    y_float[7] = np.inf
    with pytest.raises(InputError) as float_err:
        _linreg(acc).fit(X, y_float)
    y_obj = Y.astype(object)
    y_obj[7] = Decimal("1e999999")  # read as +inf, like the float cell
    with pytest.raises(InputError) as obj_err:
        _linreg(acc).fit(X, y_obj)
    assert str(obj_err.value) == str(float_err.value)
    assert acc.total().epsilon == 0.0
