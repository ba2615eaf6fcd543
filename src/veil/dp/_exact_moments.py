"""Exact first and second moments of grid terms: the DP variance without summation rounding.

:mod:`veil.dp._exact_sum` makes each record's term ``T(x)`` a multiple of a public power-of-two
grid ``h`` inside ``[A, B]`` and adds the terms exactly.  A variance also needs the sum of the
squares: with ``|T| <= 2^22 h`` (:data:`VAR_DIGITS`) every ``m = T / h`` is an integer with
``m^2 <= 2^44``, so the int64 sums of ``m`` and ``m^2`` over a block of 2^17 terms stay below
2^61 and are exact; the blocks are added as Python ints.  The population variance of the terms
is then the exact rational ``(n S2 - S1^2) h^2 / n^2``, one record moves it by at most
``(B - A)^2 (n - 1) / n^2`` (every term lies in ``[A, B]``), and :func:`laplace_exact` rounds
it to the noise grid in exact arithmetic before adding exact discrete Laplace noise
(Casacuberta, Shoemate, Vadhan & Wagaman, CCS 2022: the rounding of a floating-point sum of
squares is no longer part of the released value's sensitivity).

The grid is coarser than the sums' (``2^-22`` of the terms' range instead of ``2^-45``): a
term is off by at most ``h / 2``, its square by at most ``R h`` (``R`` the largest term), so
the mean of squares by at most ``2^-22 R^2``, a bias the noise does not cover (accuracy, not
privacy; real data's roundings cancel).

Example
-------
>>> import numpy as np
>>> from veil.dp._exact_sum import SumGrid
>>> grid = SumGrid.make(0.0, 4.0, centred=True, digits=VAR_DIGITS)
>>> s1, s2, n, _, _ = grid_moments(np.array([1.0, 3.0, 9.0]), grid)
>>> s1 * grid.h, s2 * grid.h**2, n
(2.0, 6.0, 3)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from veil._parallel import map_parts
from veil.dp._exact_sum import SumGrid, _bits, _lifted
from veil.dp._rng import BitSource
from veil.dp._samplers import discrete_laplace, fp_laplace_params

__all__ = ["VAR_DIGITS", "grid_moments", "exact_variance", "laplace_exact"]

VAR_DIGITS = 22  #: R / h for :func:`grid_moments` (m^2 <= 2^44; a block of 2^17 sums below 2^61)
_BLOCK = 1 << 17


def _block_moments(x: np.ndarray, grid: SumGrid) -> tuple[int, int, float, float]:
    base = _bits(grid.big)
    buf = np.empty(min(_BLOCK, x.size))
    ibuf = buf.view(np.int64)
    s1 = s2 = 0
    cmin, cmax = math.inf, -math.inf
    c_lo, c_hi = grid.c_lo, grid.c_hi
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(0, x.size, _BLOCK):
            b = x[i : i + _BLOCK]
            m = b.size
            c = _lifted(b, grid, buf[:m])
            mn, mx = float(np.minimum.reduce(c)), float(np.maximum.reduce(c))
            if not (c_lo <= mn and mx <= c_hi):
                if mn != mn or mx != mx:
                    cmin = cmax = math.nan
                np.minimum(c, c_hi, out=c)
                np.maximum(c, c_lo, out=c)
            if mn < cmin:
                cmin = mn
            if mx > cmax:
                cmax = mx
            k = ibuf[:m]
            np.subtract(k, base, out=k)  # T / h: c's bits minus C's (c in [2^52 h, 2^53 h))
            s1 += int(np.add.reduce(k))
            np.multiply(k, k, out=k)  # <= 2^44 each
            s2 += int(np.add.reduce(k))
    return s1, s2, cmin, cmax


def grid_moments(x: np.ndarray, grid: SumGrid) -> tuple[int, int, int, float, float]:
    """``(sum m, sum m^2, n, cmin, cmax)`` of ``m = T(x) / h`` for a 1-d float64 array, exactly.

    ``grid`` must have at most :data:`VAR_DIGITS` digits.  ``cmin``/``cmax`` as in
    :func:`~veil.dp._exact_sum.grid_sum` (NaN when a value is NaN: the sums are then
    meaningless).  Block by block, threaded when large.
    """
    if grid.h * 2.0**VAR_DIGITS < max(abs(grid.lo_term), abs(grid.hi_term)):
        raise ValueError("grid_moments needs a grid with at most VAR_DIGITS digits")
    if x.size == 0:
        return 0, 0, 0, math.inf, -math.inf
    parts = map_parts(lambda p: _block_moments(p, grid), x)
    s1 = sum(p[0] for p in parts)
    s2 = sum(p[1] for p in parts)
    mins, maxs = [p[2] for p in parts], [p[3] for p in parts]
    if any(math.isnan(v) for v in mins + maxs):
        return s1, s2, x.size, math.nan, math.nan
    return s1, s2, x.size, min(mins), max(maxs)


def exact_variance(s1: int, s2: int, n: int, h: float) -> Fraction:
    """The population variance ``(n S2 - S1^2) h^2 / n^2`` of ``n`` terms, exactly."""
    return Fraction(n * s2 - s1 * s1, n * n) * Fraction(h) ** 2


def laplace_exact(
    value: Fraction, sensitivity: float, epsilon: float, rng: BitSource
) -> tuple[int, float]:
    """An exact rational ``value`` plus FP-safe Laplace noise of scale ``sensitivity/epsilon``.

    Returns ``(k, g)``: the noisy value is ``k * g``, ``k = round(value / g) + Z`` (ties to
    even, in exact arithmetic) with ``Z`` exact discrete Laplace on the grid ``g`` of
    :func:`~veil.dp._samplers.fp_laplace_params`, whose calibration absorbs the rounding to
    ``g`` (one more grid step).  ``sensitivity`` must bound how far one record moves ``value``.
    """
    g, t = fp_laplace_params(sensitivity / epsilon, sensitivity)
    k = round(value / Fraction(g))  # Fraction.__round__: half to even, exact
    z = int(discrete_laplace(Fraction(t), 1, rng)[0])
    return k + z, g
