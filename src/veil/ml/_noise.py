"""Noise primitives used by the DP estimators, delegating to :mod:`veil.dp`'s samplers.

All randomness comes from :func:`veil.dp._rng.resolve_rng` (cryptographically secure unless
the caller passes an explicit ``random_state`` for tests).  Values released directly (means,
counts, sums) get floating-point-safe noise from :mod:`veil.dp`; auxiliary random vectors
(objective-perturbation directions, the rows-to-trees partition of forests) use plain uniform draws from the same
secure generator.
"""

from __future__ import annotations

import math
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
    "check_laplace",
    "check_laplace_scale",
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


def check_laplace(*releases: tuple[float, float] | tuple[float, float, int]) -> None:
    """:class:`~veil.errors.NoiseScaleError`, *before* the budget is charged, for a Laplace
    release that :func:`add_laplace` could not draw.

    Each release is ``(sensitivity, epsilon)`` or ``(sensitivity, epsilon, coords)``: the fit
    will call ``add_laplace(values, sensitivity / epsilon, rng, sensitivity=..., coords=...)``
    (``sensitivity=1`` releases pass ``1 / epsilon`` with the default sensitivity, the same
    grid).  The scale depends on public values only (epsilon, its split, bounds, norms, the
    number of features), so refusing it here never depends on the data; found only while
    drawing, a too-large epsilon (scale below ``2^-900``), a too-small one (a grid scale above
    the exact sampler's ``2^52``, or beyond float64) or a share of epsilon that underflowed
    to 0 failed *after* the accountant was charged.  A zero sensitivity draws no noise and
    passes.  The same checks as :func:`veil.dp.tools._common.check_noise`, with ``coords``.

    Examples
    --------
    >>> check_laplace((1.0, 1.0), (3.0, 0.5, 3))
    >>> check_laplace((1.0, 1e300))
    Traceback (most recent call last):
    ...
    veil.errors.NoiseScaleError: noise scale must be a positive finite number ... too large ...
    """
    from veil.errors import NoiseScaleError

    for release in releases:
        sens, eps = float(release[0]), float(release[1])
        coords = int(release[2]) if len(release) > 2 else 1
        if sens == 0:
            continue
        if not (eps > 0 and math.isfinite(eps)):  # a share of epsilon that underflowed to 0
            raise NoiseScaleError(
                f"epsilon share {eps!r} cannot calibrate noise: epsilon is too small for this "
                "sensitivity"
            )
        check_laplace_scale(sens / eps, sensitivity=sens, coords=coords)


def check_laplace_scale(scale: float, *, sensitivity: float = 1.0, coords: int = 1) -> None:
    """:class:`~veil.errors.NoiseScaleError` unless ``add_laplace(values, scale, rng,
    sensitivity=sensitivity, coords=coords)`` can draw its noise: the grid's range
    (``2^-900 < scale < 2^900``) and the exact sampler's (grid-unit scale up to ``2^52``), as
    :func:`veil.dp._samplers.laplace_fp` checks them while drawing.  For a scale that is not
    ``sensitivity / epsilon`` (see :func:`check_laplace`).

    >>> check_laplace_scale(3.0)
    >>> check_laplace_scale(2.0**60)
    Traceback (most recent call last):
    ...
    veil.errors.NoiseScaleError: noise scale must be in (0, 2^52], ...
    """
    from veil.dp._samplers import _check_scale, fp_laplace_params
    from veil.errors import NoiseScaleError

    try:
        _check_scale(fp_laplace_params(float(scale), float(sensitivity), int(coords))[1])
    except OverflowError:  # the grid-unit scale beyond float64 (math.ceil of inf)
        raise NoiseScaleError(
            f"noise scale {scale!r} is beyond float64: epsilon is too small for this sensitivity"
        ) from None


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
