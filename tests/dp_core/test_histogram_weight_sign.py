"""Audit: whether a weighted histogram is projected onto ``>= 0`` must not be read from the data.

The noisy weighted sums used to be projected onto ``>= 0`` whenever every (clipped) weight of
the data was ``>= 0``.  On a table ``D`` of positive weights an empty bin was then released as
``>= 0`` always; on ``D'`` = ``D`` plus one record of weight -1 (in another bin) the same empty
bin was negative about half of the time: the event "some bin is negative" has probability 0
and about 1/2 on neighbours, an unbounded privacy loss.  The projection now follows the public
``weight_bound`` alone: ``B`` never projects, ``(low, high)`` with ``low >= 0`` always does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import veil.dp as dp
from veil.errors import ConfigError

from ..dp_queries._neighbours import certified_excess

EPS, RUNS = 1.0, 300


def _tables() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``D``: 50 records of weight 1 in the first of two bins; ``D'``: plus one of weight -1
    in that bin (the second bin stays empty in both)."""
    x, w = np.full(50, 2.0), np.ones(50)
    return (x, w), (np.append(x, 2.0), np.append(w, -1.0))


def _signs(x: np.ndarray, w: np.ndarray, bound: object, seed: int) -> list[str]:
    """Outcome of the empty bin's release per run: negative, zero or positive."""
    out = []
    for r in range(RUNS):
        h, _ = dp.tools.histogram(
            x, epsilon=EPS, bins=2, range=(0, 10), weights=w, weight_bound=bound,
            random_state=seed + r,
        )  # fmt: skip
        out.append("neg" if h[1] < 0 else "zero" if h[1] == 0 else "pos")
    return out


@pytest.mark.parametrize("bound", [10.0, (-10.0, 10.0), (0.0, 10.0)])
def test_the_projection_does_not_follow_the_weights_signs(bound: object) -> None:
    (x, w), (x2, w2) = _tables()
    a, b = _signs(x, w, bound, 0), _signs(x2, w2, bound, 10_000)
    assert certified_excess(a, b, EPS) <= 0.0 and certified_excess(b, a, EPS) <= 0.0
    projected = isinstance(bound, tuple) and bound[0] >= 0  # the declared sign, not the data's
    assert ("neg" in a + b) != projected


def test_declared_non_negative_weights_are_clipped_and_projected() -> None:
    x = np.full(100, 5.0)
    h = np.array(
        [
            dp.tools.histogram(
                x, epsilon=1.0, bins=1, range=(0, 10), weights=np.full(100, 3.0),
                weight_bound=(0, 10), random_state=s,
            )[0][0]
            for s in range(1000)
        ]
    )  # fmt: skip
    assert h.mean() == pytest.approx(300, abs=3)
    assert h.std() == pytest.approx(math.sqrt(2) * 10, rel=0.2)  # noise scale max|bound| / eps
    neg = dp.tools.histogram(
        x, epsilon=1e6, bins=1, range=(0, 10), weights=np.full(100, -3.0), weight_bound=(0, 10)
    )[0][0]
    assert neg == pytest.approx(0.0, abs=1e-3)  # clipped to 0, then projected


@pytest.mark.parametrize("bound", [(5, 1), (0, 0), (1, 2, 3), (0, math.inf), -1.0])
def test_weight_bound_forms_are_checked(bound: object) -> None:
    with pytest.raises(ConfigError, match="weight_bound"):
        dp.tools.histogram(
            np.ones(3), epsilon=1, range=(0, 2), weights=np.ones(3), weight_bound=bound
        )
