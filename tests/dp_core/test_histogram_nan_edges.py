"""A NaN bin edge is refused before the charge.

numpy accepts one (its monotonicity check compares false) and then counts a value in one bin
and minus it in the next: adding the record ``5.0`` to ``[0.5, 1.5]`` with edges
``[0, nan, 3]`` moves the true counts from ``[2, 0]`` to ``[3, -1]``, an L1 distance of 2
where the noise is calibrated for 1 (a ``2 epsilon`` release billed as ``epsilon``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import veil.dp as dp
import veil.dp.tools as tools
from veil.errors import ConfigError

NAN_EDGES = [0.0, np.nan, 3.0]

CALLS: dict[str, Callable[[Any], Any]] = {
    "histogram": lambda acc: tools.histogram([0.5, 1.5, 5.0], bins=NAN_EDGES, accountant=acc),
    "histogramdd": lambda acc: tools.histogramdd(
        [[0.5], [1.5], [5.0]], bins=[NAN_EDGES], accountant=acc
    ),
    "histogram2d": lambda acc: tools.histogram2d(
        [0.5, 1.5], [1.0, 2.0], bins=[[0.0, 1.0, 3.0], NAN_EDGES], accountant=acc
    ),
    "histogram2d_shared": lambda acc: tools.histogram2d(
        [0.5, 1.5], [1.0, 2.0], bins=NAN_EDGES, accountant=acc
    ),
}


def test_numpy_counts_minus_one_beside_a_nan_edge() -> None:
    # the premise: why a NaN edge breaks the sensitivity of 1
    before = np.histogram([0.5, 1.5], bins=NAN_EDGES)[0]
    after = np.histogram([0.5, 1.5, 5.0], bins=NAN_EDGES)[0]
    assert np.abs(after - before).sum() == 2


@pytest.mark.parametrize("name", sorted(CALLS))
def test_nan_edge_is_refused_before_the_charge(name: str) -> None:
    acc = dp.BudgetAccountant(epsilon=5.0)
    with pytest.raises(ConfigError, match="NaN"):
        CALLS[name](acc)
    assert acc.total().epsilon == 0.0


def test_infinite_edges_still_work() -> None:
    hist, edges = tools.histogram([0.5, 5.0], bins=[-np.inf, 1.0, np.inf], random_state=0)
    assert hist.shape == (2,) and np.isinf(edges[[0, -1]]).all()
