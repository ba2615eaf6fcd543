"""veil.dp.tools bounds: a text is no pair, and an integer beyond float64 is not finite.

``bounds='05'`` was read character by character as ``(0, 5)`` (and ``b'05'`` as the byte
values ``(48, 53)``), releasing a statistic clipped to bounds nobody declared; ``10**400`` raised
a bare ``OverflowError``.  Both are a ConfigError before the budget is charged, as
``veil.dp.frame`` does for its bounds."""

from __future__ import annotations

import numpy as np
import pytest

import veil.dp as dp
from veil.dp import BudgetAccountant
from veil.errors import ConfigError

FUNCS = [dp.tools.mean, dp.tools.sum, dp.tools.var, dp.tools.median]


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize(
    ("bounds", "match"),
    [("05", "pair"), (b"05", "pair"), ((10**400, 1), "finite"), ((0, -(10**400)), "finite")],
)
def test_bad_bounds_are_refused_before_the_charge(func, bounds, match) -> None:
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ConfigError, match=match):
        func(np.array([1.0, 2.0, 3.0]), epsilon=1.0, bounds=bounds, accountant=acc)
    assert acc.spent_budget == []
