"""The value ``dp.tools.sum`` / ``mean`` add noise to moves by at most the sensitivity the noise
is calibrated for, also for bounds far from 0.

``sum(clip(x))`` is rounded relative to ``n max(|lo|, |hi|)``: with bounds ``(2^52, 2^52 + 2)``
(``ulp = 1`` there, ``2`` for the pair sums) the neighbours ``[T, T + 1]`` and ``[T + 2, T + 1]``
(one record replaced, exact sums ``2T + 1`` and ``2T + 3``) summed to ``2T`` and ``2T + 4``
(ties to even): the noised value moved by 4 where the noise covers ``hi - lo = 2``
(Casacuberta et al., CCS 2022).  The sums of the shifted terms ``clip(x) - mid`` are exact
here and move by at most ``hi - lo`` in general; ``n mid`` is added after the noise.
"""

from __future__ import annotations

import numpy as np
import pytest

import veil.dp as dp
from veil.dp.tools import _moments

T = 2.0**52


def _noised(monkeypatch: pytest.MonkeyPatch, kind: str, x: np.ndarray, bounds) -> tuple:
    seen = []
    real = _moments._lap

    def spy(value: float, sens: float, eps: float, rng) -> float:
        seen.append((value, sens))
        return real(value, sens, eps, rng)

    monkeypatch.setattr(_moments, "_lap", spy)
    getattr(dp.tools, kind)(x, epsilon=1.0, bounds=bounds, random_state=0)
    monkeypatch.undo()
    assert len(seen) == 1
    return seen[0]


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_ties_to_even_do_not_double_the_sensitivity(monkeypatch, kind) -> None:
    bounds = (T, T + 2)
    (a, sens), (b, _) = (
        _noised(monkeypatch, kind, np.array(v), bounds) for v in ([T, T + 1], [T + 2, T + 1])
    )
    assert abs(a - b) <= sens, (a, b, sens)


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
@pytest.mark.parametrize("bounds", [(T, T + 2), (T, T + 3), (-T - 4, -T), (1e9, 1e9 + 0.5)])
def test_neighbours_move_the_noised_value_by_at_most_the_sensitivity(monkeypatch, bounds) -> None:
    lo, hi = bounds
    rng = np.random.default_rng(0)
    for n in (2, 3, 511, 1023, 4000):
        for _ in range(5):
            x = lo + rng.integers(0, 4, n) * (hi - lo) / 3
            y = x.copy()
            y[rng.integers(n)] = rng.choice([lo, hi, (lo + hi) / 2])
            for kind in ("sum", "mean"):
                (a, sens), (b, _) = (_noised(monkeypatch, kind, v, bounds) for v in (x, y))
                assert abs(a - b) <= sens * (1 + 1e-12), (kind, n, a, b, sens)


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
def test_far_bounds_release_is_still_right() -> None:
    """With almost no noise the shifted path gives the true sum and mean back."""
    x = np.full(1000, 1e9 + 0.25)
    assert dp.tools.mean(x, epsilon=1e9, bounds=(1e9, 1e9 + 0.5), random_state=1) == pytest.approx(
        1e9 + 0.25, abs=1e-6
    )
    s = dp.tools.sum(x, epsilon=1e9, bounds=(1e9, 1e9 + 0.5), random_state=1)
    assert s == pytest.approx(1000 * (1e9 + 0.25), rel=1e-15)


@pytest.mark.parametrize(("kind", "dtype"), [("sum", None), ("mean", None), ("mean", int)])
def test_values_inside_far_bounds_are_read_once(monkeypatch, kind, dtype) -> None:
    """The validating scan sums the shifted terms itself: no second pass over values that
    lie inside the bounds (it made the mean over 10M floats 2.4x slower)."""

    def second_pass(*args, **kwargs):
        raise AssertionError("shifted_clamped_sum ran on values inside the bounds")

    x = np.random.default_rng(4).uniform(1000.0, 1100.0, 5000)
    monkeypatch.setattr(_moments, "shifted_clamped_sum", second_pass)
    out = getattr(dp.tools, kind)(
        x, epsilon=1e6, bounds=(1000.0, 1100.0), dtype=dtype, accountant=dp.BudgetAccountant()
    )
    want = x.sum() if kind == "sum" else x.mean()
    assert out == pytest.approx(want, rel=1e-6)
