"""Every noise scale is checked before the budget is charged.

The scales depend on public parameters only (bounds, epsilon, the shape); drawing with one the
sampler refuses raised NoiseScaleError -- or, for the variance's ``(U - L) ** 2``, Python's
OverflowError -- *after* the accountant was charged.  Now each configuration either releases
or raises NoiseScaleError with nothing charged.  One case depended on the data: a clipped sum
overflowing float64 (``[1e308, 1e308]`` against ``[1e308, 1.0]``) failed on one neighbour only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import veil.dp as dp
import veil.dp.tools as tools
from veil.errors import NoiseScaleError

DATA = np.array([0.5, 0.25, np.nan, 0.75])
PLAIN = DATA[~np.isnan(DATA)]

MOMENTS: dict[str, Callable[..., Any]] = {
    "sum": lambda **k: tools.sum(PLAIN, **k),
    "int_sum": lambda **k: tools.sum(PLAIN, dtype=np.int64, **k),
    "mean": lambda **k: tools.mean(PLAIN, **k),
    "var": lambda **k: tools.var(PLAIN, **k),
    "std": lambda **k: tools.std(PLAIN, **k),
    "nansum": lambda **k: tools.nansum(DATA, **k),
    "int_nansum": lambda **k: tools.nansum(DATA, dtype=np.int64, **k),
    "nanmean": lambda **k: tools.nanmean(DATA, **k),
    "nanvar": lambda **k: tools.nanvar(DATA, **k),
    "nanstd": lambda **k: tools.nanstd(DATA, **k),
}
BOUNDS = [(0.0, 1.0), (0.0, 2.0**60), (-1e150, 1e150), (-1e200, 1e200), (0.0, 1e300)]
EPSILONS = [1e-300, 1e-17, 1e-10, 1.0, 1e40]


def _charged_only_on_release(call: Callable[[dp.BudgetAccountant], Any]) -> bool:
    """True when ``call`` released; False when it raised NoiseScaleError before any charge."""
    acc = dp.BudgetAccountant()
    try:
        call(acc)
    except NoiseScaleError:
        assert acc.total().epsilon == 0.0, "charged for a release that failed"
        return False
    assert acc.total().epsilon > 0.0
    return True


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_moments_check_their_noise_before_the_charge(name: str) -> None:
    released = [
        _charged_only_on_release(
            lambda acc, b=b, e=e: MOMENTS[name](epsilon=e, bounds=b, random_state=0, accountant=acc)
        )
        for b, e in itertools.product(BOUNDS, EPSILONS)
    ]
    assert any(released) and not all(released)  # both outcomes are exercised


@pytest.mark.parametrize("epsilon", [1e-300, 1e-17, 1.0])
def test_counts_and_histograms_check_their_noise_before_the_charge(epsilon: float) -> None:
    calls: list[Callable[[dp.BudgetAccountant], Any]] = [
        lambda acc: tools.count(PLAIN, epsilon=epsilon, random_state=0, accountant=acc),
        lambda acc: tools.count_nonzero(PLAIN, epsilon=epsilon, random_state=0, accountant=acc),
        lambda acc: tools.histogram(
            PLAIN, epsilon=epsilon, range=(0, 1), random_state=0, accountant=acc
        ),
        lambda acc: tools.histogram(
            PLAIN,
            epsilon=epsilon,
            range=(0, 1),
            weights=[1.0, 2.0, 3.0],
            weight_bound=1e250,
            random_state=0,
            accountant=acc,
        ),
        lambda acc: tools.histogramdd(
            PLAIN[:, None], epsilon=epsilon, range=[(0, 1)], random_state=0, accountant=acc
        ),
    ]
    outcomes = [_charged_only_on_release(call) for call in calls]
    assert all(outcomes) if epsilon == 1.0 else not any(outcomes)


def test_overflowing_sum_fails_alike_on_both_neighbours() -> None:
    def run(last: float) -> str:
        acc = dp.BudgetAccountant()
        try:
            tools.sum([1e308, last], epsilon=1e40, bounds=(0, 1.5e308), accountant=acc)
        except NoiseScaleError:
            assert acc.total().epsilon == 0.0
            return "refused"
        return "released"

    assert run(1.0) == run(1e308) == "refused"
