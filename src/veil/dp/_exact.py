"""Exact (arbitrary-precision) resolution of the rare ambiguous comparisons of the samplers.

The vectorized samplers in :mod:`veil.dp._samplers` compare a uniform ``U`` with a threshold
(``exp(-gamma)`` or a rational) in float64 together with a rigorous error bound.  When the
float comparison cannot decide (probability ~1e-6 or less per draw) the element is resolved
here, exactly: ``U`` is refined with more random bits on demand and the threshold is bounded
with :mod:`decimal` at increasing precision.  The result is therefore an exact sample of the
target distribution, in the spirit of Canonne, Kamath & Steinke (2020), "The Discrete Gaussian
for Differential Privacy", but vectorized.
"""

from __future__ import annotations

import decimal
from fractions import Fraction

from veil.dp._rng import BitSource

__all__ = ["LazyUniform", "u_less_exp", "u_less_frac"]


class LazyUniform:
    """A uniform ``U`` on [0, 1) known to lie in ``[num / 2^k, (num + 1) / 2^k)``."""

    __slots__ = ("num", "k", "rng")

    def __init__(self, num: int, k: int, rng: BitSource) -> None:
        self.num, self.k, self.rng = int(num), int(k), rng

    def refine(self) -> None:
        """Append 64 more random bits."""
        self.num = (self.num << 64) | int(self.rng.raw(1)[0])
        self.k += 64

    def bounds(self) -> tuple[Fraction, Fraction]:
        return Fraction(self.num, 1 << self.k), Fraction(self.num + 1, 1 << self.k)


def _exp_neg_bounds(gamma: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    """Rigorous bounds ``lo <= exp(-gamma) <= hi`` using ``digits`` decimal digits."""
    ctx = decimal.Context(prec=digits, Emin=-999999, Emax=999999)
    g = ctx.divide(decimal.Decimal(gamma.numerator), decimal.Decimal(gamma.denominator))
    e = ctx.exp(-g)
    # g has relative error <= 10^(1-digits); exp result <= 1 ulp; widen generously
    rel = Fraction(10) ** (4 - digits) * (1 + abs(gamma))
    ef = Fraction(e)
    return ef * (1 - rel), ef * (1 + rel)


def u_less_exp(u: LazyUniform, gamma: Fraction, q: Fraction = Fraction(1)) -> bool:
    """Decide exactly whether ``U < q exp(-gamma)`` (``q >= 0``; ``gamma >= 0`` unless ``q``
    is given)."""
    if gamma <= 0 and q >= 1:
        return True
    digits = 40
    while True:
        lo, hi = _exp_neg_bounds(gamma, digits)
        lo, hi = lo * q, hi * q
        ulo, uhi = u.bounds()
        if uhi <= lo:
            return True
        if ulo >= hi:
            return False
        if uhi - ulo > (hi - lo) / 4:
            u.refine()
        else:
            digits += 20


def u_less_frac(u: LazyUniform, p: Fraction) -> bool:
    """Decide exactly whether ``U < p``."""
    while True:
        ulo, uhi = u.bounds()
        if uhi <= p:
            return True
        if ulo >= p:
            return False
        u.refine()
