"""Integer mechanisms keep every integer's value, beyond int64 too.

Casting to int64 wrapped ``2**63`` (numpy reads it as uint64) to ``-2**63``: with sensitivity
1, ``GeometricTruncated(lower=0, upper=10)`` released about 10 on ``2**63 - 1`` and about 0 on
its neighbour ``2**63`` (an unbounded privacy loss).  ``2**64 - 1`` released while ``2**64``
raised, and an integral float such as ``1e300`` became ``-2**63``.
"""

from __future__ import annotations

import numpy as np
import pytest

from veil.dp import mechanisms as M


def _draws(mech: M.Geometric, value: object, n: int = 400) -> np.ndarray:
    return np.array([mech.randomise(value) for _ in range(n)], dtype=float)


@pytest.mark.parametrize("cls", [M.GeometricTruncated, M.GeometricFolded])
@pytest.mark.parametrize("pair", [(2**63 - 1, 2**63), (2**64 - 1, 2**64), (10**20, 1e300)])
def test_bounded_neighbours_beyond_int64_clip_alike(cls: type, pair: tuple[object, object]) -> None:
    mech = cls(epsilon=1.0, lower=0, upper=10, random_state=7)
    a, b = (_draws(mech, v) for v in pair)
    # both lie far above the upper bound: clipped to 10 before the noise
    assert a.mean() > 8 and b.mean() > 8


def test_unbounded_geometric_is_exact_beyond_int64() -> None:
    mech = M.Geometric(epsilon=1.0, random_state=8)
    for v in (2**63, 2**64, 2**70, -(2**70)):
        noise = np.array([mech.randomise(v) - v for _ in range(300)], dtype=float)
        assert np.abs(noise).max() < 60 and abs(noise.mean()) < 1
    out = mech.randomise([1, 2**70])
    assert out[1] - 2**70 == pytest.approx(0, abs=60)


def test_discrete_gaussian_is_exact_beyond_int64() -> None:
    mech = M.GaussianDiscrete(epsilon=1.0, delta=1e-5, random_state=9)
    noise = np.array([mech.randomise(2**64) - 2**64 for _ in range(300)], dtype=float)
    assert np.abs(noise).max() < 60


def test_non_integers_are_still_refused() -> None:
    from veil.errors import InputError

    mech = M.Geometric(epsilon=1.0)
    for bad in (2.5, float("nan"), True, [1.5, 2**70], "3"):
        with pytest.raises(InputError):
            mech.randomise(bad)


@pytest.mark.parametrize(
    "mech",
    [
        M.Geometric(epsilon=1.0, random_state=10),
        M.GaussianDiscrete(epsilon=1.0, delta=1e-5, random_state=11),
    ],
)
def test_the_smallest_int64_keeps_its_value(mech: M.Geometric) -> None:
    # abs(-2**63) wraps to -2**63 in int64, which passed the "cannot wrap" test: about half
    # the draws (negative noise) wrapped to near +2**63
    v = np.int64(-(2**63))
    noise = np.array([int(mech.randomise(v)) - int(v) for _ in range(300)], dtype=float)
    assert np.abs(noise).max() < 60 and (noise < 0).any()


@pytest.mark.parametrize("cls", [M.GeometricTruncated, M.GeometricFolded])
@pytest.mark.parametrize("bounds", [(-(2**63), 2**63), (0, 2**70), (2**70, 2**70 + 2**20)])
def test_bounds_beyond_int64_release_within_them(cls: type, bounds: tuple[int, int]) -> None:
    # a 0-d Python-int result (AttributeError) or int64 arithmetic on the bounds
    # (OverflowError) failed these releases, for some values (and noise) only
    mech = cls(epsilon=1.0, lower=bounds[0], upper=bounds[1], random_state=12)
    lo, hi = mech.lower, mech.upper  # the bounds as read (through float64)
    for v in (lo, hi, lo + 2, hi - 2, 5):
        out = [mech.randomise(v) for _ in range(100)]
        assert all(lo <= o <= hi for o in out)
        assert abs(np.mean([int(o) - min(max(v, lo), hi) for o in out])) < 2  # exact ints
    arr = mech.randomise(np.array([lo, hi], dtype=object))
    assert lo <= arr[0] <= hi and lo <= arr[1] <= hi
