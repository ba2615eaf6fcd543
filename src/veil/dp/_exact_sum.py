"""Exact sums of clipped values: every term rounded to a public power-of-two grid first.

The floating-point sum of ``n`` clipped values is not the real sum: each addition rounds, and
the rounding depends on the order and on every other value, so replacing one record can move
the computed sum by more than the sensitivity the noise was calibrated for (Casacuberta,
Shoemate, Vadhan & Wagaman, "Widespread underestimation of sensitivity in differentially
private libraries and how to fix it", ACM CCS 2022).  Their fix, used here: make each term a
multiple of a public grid ``h`` (a power of two) small enough that every partial sum is an
exact multiple of ``h``; the sum is then the exact real sum of the terms, whatever the order,
and one record moves it by at most the width of the terms' range.

A record's term is::

    T(x) = clip(fl(fl(x - shift) + C) - C, A, B)

* ``fl(x - shift)``: the value shifted by the middle of the bounds (centred sums) or by 0, one
  correctly rounded subtraction (monotone in ``x``);
* ``+ C`` with ``C = 1.5 * 2^52 * h``: the sum lies in ``[2^52 h, 2^53 h)``, where the float64
  spacing is exactly ``h``, so this one addition rounds the shifted value to the nearest
  multiple of ``h`` (ties to even), and ``- C`` is exact (Sterbenz);
* ``clip(., A, B)``: ``[A, B]`` are the multiples of ``h`` inside the terms' public interval
  (``[lo, hi]``, or ``[-w/2, w/2]`` with ``w = fl(hi - lo)`` for centred terms).  So every
  term of every record, whatever its value (beyond the bounds, ``+-inf`` after an overflowing
  shift), lies in ``[A, B]``, and ``B - A <= w`` (``max(|A|, |B|) <= w/2`` when centred): the
  sensitivities the noise is calibrated for hold *exactly* for the computed sum.  Uncentred
  bounds narrower than ``h`` away from 0 may hold no multiple of ``h``: then ``A = B`` is the
  multiple next to them on the side of 0, so ``B - A = 0`` and ``|A| <= max(|lo|, |hi|)``.

``T(x)`` differs from ``clip(x, lo, hi) - shift`` by at most ``h/2`` plus the rounding of the
shift (``h`` for bounds narrower than ``h``, above): a deterministic bias of at most ``n h / 2`` on a sum of ``n`` terms, which the noise
does not cover (it is accuracy, not privacy; with :data:`TOOLS_DIGITS` it is below
``2^-46 n R`` for terms bounded by ``R``).

Two ways of adding the terms exactly:

* :func:`grid_sum` (one array, threaded, block by block): the terms are formed as ``c =
  T(x) + C`` inside ``[2^52 h, 2^53 h)``, where the IEEE bit pattern read as an int64 is
  ``bits(C) + T(x) / h``; the blocks' int64 sums (wrapping modulo ``2^64``, harmless) give
  each block's sum of ``T(x) / h`` exactly, and the blocks are added as Python ints.  Terms
  may use ``R / h`` up to ``2^45`` (:data:`TOOLS_DIGITS`).
* :func:`grid_terms` (for ``bincount`` per group): the terms as float64 multiples of ``h``;
  with ``R / h <= 2^digits`` their float64 sums are exact while they hold at most
  ``2^(53 - digits)`` terms (:data:`FRAME_DIGITS`: 2^29 rows).

Example
-------
>>> import numpy as np
>>> grid = SumGrid.make(0.0, 10.0)
>>> units, cmin, cmax = grid_sum(np.array([1.0, 2.5, 20.0]), grid)
>>> units * grid.h, grid.inside(cmin, cmax)
(13.5, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil._parallel import BLOCK, map_parts, map_spans
from veil.dp._rng import BitSource
from veil.dp._samplers import discrete_laplace, fp_laplace_params
from veil.errors import ConfigError, NoiseScaleError

__all__ = [
    "SumGrid",
    "centre",
    "TOOLS_DIGITS",
    "FRAME_DIGITS",
    "grid_sum",
    "grid_terms",
    "laplace_units",
]

TOOLS_DIGITS = 45  #: R / h for :func:`grid_sum` (a block of 2^17 terms sums below 2^62 in int64)
FRAME_DIGITS = 24  #: R / h for :func:`grid_terms` (float64 sums exact up to 2^29 terms)
_MAX_EXP = 1016  # C = 1.5 * 2^52 * h must stay finite: R up to 2^1016 with 45 digits


@dataclass(frozen=True)
class SumGrid:
    """The public grid and clamps of :func:`grid_sum` / :func:`grid_terms` (module docstring).

    Attributes
    ----------
    shift : float
        Subtracted from each value first (the middle of the bounds for centred terms, else 0).
    h : float
        The terms' grid, a power of two.
    lo_term, hi_term : float
        ``A`` and ``B``: the smallest and largest term (multiples of ``h``).
    big : float
        ``C = 1.5 * 2^52 * h``.
    """

    shift: float
    h: float
    lo_term: float
    hi_term: float
    big: float

    @classmethod
    def make(
        cls,
        lo: float,
        hi: float,
        *,
        centred: bool = False,
        digits: int = TOOLS_DIGITS,
        symmetric: bool = True,
    ) -> SumGrid:
        """The grid for values clipped to ``[lo, hi]`` (public bounds, ``lo < hi`` finite).

        ``centred``: terms ``x - mid`` in ``[-w/2, w/2]`` (``w = fl(hi - lo)``), else ``x`` in
        ``[lo, hi]``.  ``digits``: ``h = 2^(ceil(log2 R) - digits)`` for terms bounded by ``R``.
        ``symmetric=False`` (centred only): terms in ``[lo - mid, hi - mid]`` (exact), for
        sensitivities that need ``B - A <= w`` and ``max(|A|, |B|) <= w`` only (replaced
        records): where ``mid`` is rounded (``(2^53, 2^53 + 2)``: ``mid = 2^53``) the values
        at one bound no longer lose up to ``w / 2`` each to the clamp at ``+-w/2``.
        Raises :class:`~veil.errors.NoiseScaleError` (a :class:`~veil.errors.ConfigError`) for
        bounds beyond ``2^1016``, or where ``C`` overflows (``2^994`` with ``digits = 24``):
        public, so before anything is charged.  A centred width of ``2^-1074`` (its half rounds
        to 0) gives ``A = B = 0``.
        """
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ConfigError(f"sum bounds must be finite with lower < upper, got ({lo}, {hi})")
        if centred:  # any shift inside [lo, hi] will do: the clamp to [A, B] bounds the terms
            half = (hi - lo) / 2.0  # exact halving of the rounded width (inf: refused below)
            shift, a, b = centre(lo, hi), -half, half
            if not symmetric and math.isfinite(half):  # exact: B - A <= hi - lo, B, -A <= w
                a, b = Fraction(lo) - Fraction(shift), Fraction(hi) - Fraction(shift)
        else:
            shift, a, b = 0.0, lo, hi
        r = float(max(abs(a), abs(b)))  # 0 only when centred, width 2^-1074 (half rounds)
        e = math.frexp(r)[1] if math.isfinite(r) else _MAX_EXP + 1  # r < 2^e
        h = math.ldexp(1.0, max(e - digits, -1074))
        big = 1.5 * math.ldexp(1.0, 52) * h
        if e > _MAX_EXP or not math.isfinite(big):  # big: coarser grids (fewer digits) overflow
            raise NoiseScaleError(
                f"sum bounds ({lo}, {hi}) are too wide for exact summation (beyond 2^{_MAX_EXP}"
                f" or {digits} digits below 2^1023)"
            )
        # a / h, b / h: exact (powers of two, no underflow; or fractions); the terms are below
        # 2^digits h, so float() is exact
        lo_term = float(math.ceil(a / h) * Fraction(h))
        hi_term = float(math.floor(b / h) * Fraction(h))
        if lo_term > hi_term:
            # no multiple of h inside [a, b] (bounds narrower than h, away from 0; never when
            # centred: 0 is a multiple): the one next to them on the side of 0, so that
            # B - A = 0 and |A| = |B| <= max(|lo|, |hi|) still hold (bias below h per term)
            lo_term = hi_term = hi_term if a > 0 else lo_term
        return cls(shift, h, lo_term, hi_term, big)

    @property
    def span_units(self) -> int:
        """``(B - A) / h``: the largest move of the sum, in grid units, when one term changes."""
        return int((self.hi_term - self.lo_term) / self.h)

    @property
    def c_lo(self) -> float:
        return self.big + self.lo_term  # exact: inside [2^52 h, 2^53 h), a multiple of h

    @property
    def c_hi(self) -> float:
        return self.big + self.hi_term

    def inside(self, cmin: float, cmax: float) -> bool:
        """Whether :func:`grid_sum`'s ``(cmin, cmax)`` show no term clamped (no NaN either)."""
        return self.c_lo <= cmin and cmax <= self.c_hi


def centre(lo: float, hi: float) -> float:
    """The middle ``(lo + hi) / 2`` of finite bounds, also where ``lo + hi`` overflows.

    >>> centre(1e308, 1.5e308)
    1.25e+308
    """
    mid = (lo + hi) / 2.0
    return mid if math.isfinite(mid) else lo / 2.0 + hi / 2.0


def _bits(x: float) -> int:
    return int(np.array(x, dtype=np.float64).view(np.int64))


def _lifted(b: np.ndarray, grid: SumGrid, out: np.ndarray) -> np.ndarray:
    """``fl(fl(b - shift) + C)`` into ``out`` (NaN stays NaN; +-inf stays +-inf).  Callers
    silence numpy's overflow/invalid warnings (an overflowing shift reads as +-inf)."""
    if grid.shift:
        np.subtract(b, grid.shift, out=out)
        np.add(out, grid.big, out=out)
    else:
        np.add(b, grid.big, out=out)
    return out


_SUM_BLOCK = 1 << 17  # terms per int64 block sum: below 2^17 * 2^45 = 2^62 in magnitude


def _block_sums(x: np.ndarray, grid: SumGrid) -> tuple[int, float, float]:
    base = _bits(grid.big)
    buf = np.empty(min(_SUM_BLOCK, x.size))
    ibuf = buf.view(np.int64)
    units, cmin, cmax = 0, math.inf, -math.inf
    c_lo, c_hi = grid.c_lo, grid.c_hi
    wrap, half = 1 << 64, 1 << 63
    minimum, maximum, add = np.minimum, np.maximum, np.add
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(0, x.size, _SUM_BLOCK):
            b = x[i : i + _SUM_BLOCK]
            m = b.size
            c = _lifted(b, grid, buf[:m])
            mn, mx = float(minimum.reduce(c)), float(maximum.reduce(c))
            if not (c_lo <= mn and mx <= c_hi):  # some term clamped (or NaN: min/max say so)
                if mn != mn or mx != mx:
                    cmin = cmax = math.nan
                minimum(c, c_hi, out=c)
                maximum(c, c_lo, out=c)
            if mn < cmin:
                cmin = mn
            if mx > cmax:
                cmax = mx
            # every c lies in [2^52 h, 2^53 h): its bits are bits(C) + (c - C) / h; the int64
            # sum wraps modulo 2^64, and the true block sum of (c - C) / h is below 2^62
            s = int(add.reduce(ibuf[:m])) - m * base
            units += (s + half) % wrap - half
    return units, cmin, cmax


def grid_sum(x: np.ndarray, grid: SumGrid) -> tuple[int, float, float]:
    """``(sum of T(x) / h, cmin, cmax)`` for a 1-d float64 array, exactly (module docstring).

    ``cmin``/``cmax`` are the smallest and largest ``fl(fl(x - shift) + C)`` before the clamp:
    NaN when a value is NaN, infinite when one is infinite (or its shift overflowed), and
    :meth:`SumGrid.inside` tells whether any term was clamped.  The sum is meaningless when a
    value is NaN: callers validate first or drop NaN.  Block by block, threaded when large.

    >>> g = SumGrid.make(2.0**52, 2.0**52 + 2, centred=True)
    >>> units, _, _ = grid_sum(np.full(1000, 2.0**52 + 2), g)
    >>> units * g.h
    1000.0
    """
    if grid.h * 2.0**TOOLS_DIGITS < max(abs(grid.lo_term), abs(grid.hi_term)):
        raise ValueError("grid_sum needs a grid with at most TOOLS_DIGITS digits")
    x = np.asarray(x, dtype=np.float64)  # float32 would be lifted (C added) in float32
    if x.size == 0:
        return 0, math.inf, -math.inf
    parts = map_parts(lambda p: _block_sums(p, grid), x)
    units = sum(p[0] for p in parts)
    mins, maxs = [p[1] for p in parts], [p[2] for p in parts]
    if any(math.isnan(v) for v in mins + maxs):
        return units, math.nan, math.nan
    return units, min(mins), max(maxs)


def grid_terms(x: np.ndarray, grid: SumGrid) -> np.ndarray:
    """The terms ``T(x)`` (float64 multiples of ``h``; NaN stays NaN), a new array.

    With ``grid`` made with ``digits`` their float64 sums (``bincount`` per group) are exact
    for at most ``2^(53 - digits)`` terms: each partial sum is a multiple of ``h`` below
    ``2^53 h``.

    >>> g = SumGrid.make(0.0, 4.0, centred=True, digits=FRAME_DIGITS)
    >>> grid_terms(np.array([-1.0, 1.0, 3.5, 9.0]), g).tolist()
    [-2.0, -1.0, 1.5, 2.0]
    """
    x = np.asarray(x, dtype=np.float64)  # float32 would be lifted (C added) in float32
    out = np.empty(x.shape, dtype=np.float64)
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)

    def run(a: int, b: int) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(a, b, BLOCK):
                j = min(i + BLOCK, b)
                c = _lifted(flat_in[i:j], grid, flat_out[i:j])
                np.minimum(c, grid.c_hi, out=c)  # NaN propagates
                np.maximum(c, grid.c_lo, out=c)
                c -= grid.big  # exact (Sterbenz)

    map_spans(run, flat_in.size)
    return out


def laplace_units(
    units: int, grid: SumGrid, sensitivity: float, epsilon: float, rng: BitSource
) -> tuple[int, float]:
    """Exact sum ``units * h`` plus FP-safe Laplace noise of scale ``sensitivity / epsilon``.

    Returns ``(k, g)``: the noisy sum is ``k * g`` (``k`` an int, ``g`` the noise grid), a
    function of the integer ``rint(units * h / g) + Z`` only, with ``Z`` exact discrete
    Laplace on the grid ``g`` of :func:`~veil.dp._samplers.fp_laplace_params` for
    ``sensitivity``, which must bound how far one record moves the exact sum (at most
    ``B - A`` when a record is replaced, ``max(|A|, |B|)`` when it is dropped: both are at
    most the widths computed from the bounds; the rounding to ``g`` moves it by one more grid
    step, which that calibration absorbs).  The rounding
    ``rint`` (ties to even) is done in integer arithmetic, so sums beyond ``2^53`` units are
    never rounded in floating point.
    """
    g, t = fp_laplace_params(sensitivity / epsilon, sensitivity)
    ratio = Fraction(grid.h) / Fraction(g)  # a power of two
    if ratio.denominator == 1:
        k = units * ratio.numerator
    else:
        d = ratio.denominator
        q, r = divmod(units, d)
        k = q + (1 if 2 * r > d or (2 * r == d and q % 2) else 0)
    z = int(discrete_laplace(Fraction(t), 1, rng)[0])
    return k + z, g
