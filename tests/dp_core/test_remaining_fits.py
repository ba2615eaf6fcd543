"""``remaining(k)`` answers a budget that ``k`` spends can actually use.

Before, with ``slack > 0`` and spends carrying delta, the answer was often refused by
``spend`` itself: the bisection priced the ``k`` future spends as ``(epsilon, 0)`` while they
spend ``(epsilon, delta)`` -- identical spends are priced by the optimal composition, which
charges more epsilon when delta is spent too -- and the composed delta could land a few ulps
above the budget.  (Refusals are safe; a wrong ``remaining`` misleads the caller's planning.)
"""

from __future__ import annotations

import numpy as np
import pytest

import veil.dp as dp
from veil.errors import BudgetError


def _scenarios() -> list[tuple[float, float, float, list[tuple[float, float]], int]]:
    rng = np.random.default_rng(20261122)
    out = []
    for _ in range(150):
        eps = float(rng.choice([0.5, 1.0, 3.0, 10.0]))
        delta = float(rng.choice([0.0, 1e-6, 1e-3, 0.1]))
        slack = float(rng.choice([0.0, delta / 2, delta]))
        room = (delta - slack) / 8
        spends = [
            (float(rng.uniform(0.01, eps / 4)), float(rng.uniform(0, room)) if room > 0 else 0.0)
            for _ in range(int(rng.integers(0, 4)))
        ]
        out.append((eps, delta, slack, spends, int(rng.integers(1, 12))))
    return out


def test_k_spends_of_remaining_fit() -> None:
    for eps, delta, slack, spends, k in _scenarios():
        acc = dp.BudgetAccountant(epsilon=eps, delta=delta, slack=slack)
        for e, d in spends:
            try:
                acc.spend(e, d)
            except BudgetError:
                pass
        r = acc.remaining(k)
        if r.epsilon == 0 and r.delta == 0:
            continue
        for _ in range(k):
            acc.spend(r.epsilon, r.delta)  # must not raise
        assert acc.total() <= dp.Budget(eps, delta)


def test_pure_budget_is_still_split_evenly() -> None:
    acc = dp.BudgetAccountant(epsilon=1.0)
    acc.spend(0.3, 0)
    assert acc.remaining(2).epsilon == pytest.approx(0.35)


def test_unlimited_epsilon_stays_unlimited() -> None:
    acc = dp.BudgetAccountant(delta=1e-3)
    acc.spend(1.0, 1e-4)
    r = acc.remaining(3)
    assert r.epsilon == float("inf") and 0 < r.delta < 1e-3
