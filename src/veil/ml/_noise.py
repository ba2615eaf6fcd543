"""Noise primitives used by the DP estimators, delegating to :mod:`veil.dp`'s samplers.

All randomness comes from :func:`veil.dp._rng.resolve_rng` (cryptographically secure unless
the caller passes an explicit ``random_state`` for tests).  Values released directly (means,
counts, sums) get floating-point-safe noise from :mod:`veil.dp`; auxiliary random vectors
(objective-perturbation directions, the rows-to-trees partition of forests) use plain uniform draws from the same
secure generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veil.dp._rng import BitSource, resolve_rng

__all__ = [
    "resolve_rng",
    "add_laplace",
    "std_normal",
    "gamma_int",
    "BitSource",
    "COUNT_SHARE",
    "noisy_count",
]

#: Share of an estimator's epsilon for the noisy row count behind a data-size-dependent plan
#: (the trees' automatic depth, k-means' grid size and iteration count): ``n`` is private
#: under add/remove neighbours, so the plan reads :func:`noisy_count`, never ``len(X)``.
COUNT_SHARE = 0.02


def add_laplace(
    values: Any, scale: float, rng: BitSource, *, sensitivity: float = 1.0, coords: int = 1
) -> np.ndarray:
    """``values`` plus Laplace(``scale``) noise, floating-point safe (output on a grid).

    ``scale`` is calibrated for L1 ``sensitivity`` shared by ``coords`` coordinates
    (see :func:`veil.dp._samplers.laplace_fp`).
    """
    from veil.dp import _samplers

    arr = np.asarray(values, dtype=float)
    out = _samplers.laplace_fp(
        arr, float(scale), rng, sensitivity=float(sensitivity), coords=int(coords)
    )
    return np.asarray(out, dtype=float).reshape(arr.shape)


def noisy_count(n: int, epsilon: float, rng: BitSource) -> float:
    """``n`` plus Laplace(1/epsilon) (a count has sensitivity 1)."""
    return float(add_laplace(np.array([float(n)]), 1.0 / epsilon, rng)[0])


def std_normal(rng: BitSource, size: int | tuple[int, ...]) -> np.ndarray:
    """Standard normal draws (Box-Muller on secure uniforms), for random directions."""
    n = int(np.prod(size))
    m = (n + 1) // 2
    u1 = 1.0 - rng.random(m)  # (0, 1]
    u2 = rng.random(m)
    r = np.sqrt(-2.0 * np.log(u1))
    z = np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)])[:n]
    return z.reshape(size)


def gamma_int(rng: BitSource, k: int, scale: float) -> float:
    """Gamma(k, scale) for integer shape ``k`` (sum of ``k`` exponentials)."""
    u = 1.0 - rng.random(int(k))
    return float(-scale * np.log(u).sum())
