"""Exact coins shared by the selection and bounded-noise mechanisms.

Every coin compares a secure uniform ``U`` (64 bits, refined on demand) with its threshold in
float64 with a rigorous error bound; the rare undecided comparisons are settled exactly in
arbitrary precision (:mod:`veil.dp._exact`), so the coins are exact samples.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._exact import LazyUniform, u_less_exp
from veil.dp._rng import BitSource
from veil.dp._samplers import bernoulli, bernoulli_exp

__all__ = [
    "exp_coins_shifted",
    "zero_bit_coins",
    "sample_exact_gamma",
    "sample_measure_gamma",
    "qexp_coins",
    "LN2",
]

LN2 = math.log(2.0)
_TWO53 = 2.0**-53
_REL = 1e-15


def zero_bit_coins(d: np.ndarray, rng: BitSource) -> np.ndarray:
    """Exact ``Bernoulli(2^-d)`` for integers ``d >= 0``: ``d`` fresh random bits all zero."""
    d = np.asarray(d, dtype=np.int64)
    out = d == 0
    pos = np.flatnonzero(d > 0)
    if pos.size:
        r = rng.raw(pos.size)
        first = np.minimum(d[pos], 64)
        ok = (r >> (64 - first).astype(np.uint64)) == 0
        for j in np.flatnonzero(ok & (d[pos] > 64)):  # probability 2^-64 each
            left = int(d[pos[j]]) - 64
            while left > 0 and ok[j]:
                bits = min(left, 64)
                ok[j] = (int(rng.raw(1)[0]) >> (64 - bits)) == 0
                left -= bits
        out[pos] = ok
    return out


def exp_coins_shifted(gamma: np.ndarray, shift: np.ndarray, rng: BitSource) -> np.ndarray:
    """Exact ``Bernoulli(exp(-gamma) * 2^shift)`` (needs ``shift <= gamma / ln 2``).

    ``U < exp(-gamma) 2^k`` is decided as ``U 2^-k < exp(-gamma)``: the float test uses
    ``x = gamma - k ln 2`` with a rigorous error bound, the exact fallback a lazily refined
    uniform whose first ``k`` bits are zero.
    """
    g = np.asarray(gamma, dtype=np.float64)
    k = np.asarray(shift, dtype=np.int64)
    n = g.size
    r = rng.raw(n)
    f = (r >> np.uint64(11)).astype(np.float64) * _TWO53  # U in [f, f + 2^-53)
    x = g - k * LN2
    err = (g + 1.0) * 4e-16
    p_lo = np.exp(-(x + err)) * (1 - _REL)
    p_hi = np.exp(-(x - err)) * (1 + _REL) + 1e-300
    out = f + _TWO53 <= p_lo
    amb = ~out & (f < p_hi)
    for i in np.flatnonzero(amb):
        u = LazyUniform(int(r[i]), 64 + int(k[i]), rng)
        out[i] = u_less_exp(u, Fraction(float(g[i])))
    return out


def sample_exact_gamma(gamma: np.ndarray, rng: BitSource) -> int:
    """Index ``r`` with probability exactly proportional to ``exp(-gamma_r)`` (``min gamma = 0``).

    Uniform proposals accepted with an exact ``Bernoulli(exp(-gamma_r))`` coin; the best
    candidate is accepted with probability 1, so at most ``m`` proposals are expected.
    ``gamma`` may hold ``inf`` (never chosen).
    """
    gam = np.asarray(gamma, dtype=np.float64)
    m = gam.size
    batch = int(min(max(64, 2 * m), 1 << 16))
    while True:
        idx = rng.integers(0, m, size=batch)
        coins = bernoulli_exp(gam[idx], batch, rng)
        hit = np.flatnonzero(coins)
        if hit.size:
            return int(idx[hit[0]])


def sample_measure_gamma(measure: np.ndarray, gamma: np.ndarray, rng: Any) -> int:
    """Index ``r`` with probability exactly proportional to ``measure_r * exp(-gamma_r)``.

    Write ``measure_r = mant_r 2^e_r`` (``mant_r in [1/2, 1)``) and pick an integer
    ``k_r <= gamma_r / ln 2`` (so ``exp(-gamma_r) 2^k_r in (1/2, 1]``).  A uniform proposal
    ``r`` is accepted with three independent exact coins:
    ``Bernoulli(2^-(E - e_r + k_r))`` (zero bits, ``E = max(e - k)``), ``Bernoulli(mant_r)``
    and ``Bernoulli(exp(-gamma_r) 2^k_r)``.  Their product is ``measure_r exp(-gamma_r) 2^-E``:
    proportional to the target, and at least ``1/4`` of the largest target weight, so each
    proposal succeeds with probability at least ``1/(4m)``.  No float rounding enters the
    distribution (the exponents are the float values of ``gamma``).
    """
    meas = np.asarray(measure, dtype=np.float64)
    gam = np.asarray(gamma, dtype=np.float64)
    valid = np.flatnonzero((meas > 0) & np.isfinite(gam))
    if valid.size == 0:
        raise ValueError("no candidate has a positive weight")
    g = gam[valid]
    k = np.floor(np.minimum(g / LN2 * (1 - 1e-12), 2.0**60)).astype(np.int64)
    k = np.maximum(k, 0)
    mant, e = np.frexp(meas[valid])
    big_e = e.astype(np.int64) - k
    d = big_e.max() - big_e
    m = valid.size
    batch = int(min(max(64, 4 * m), 1 << 16))
    while True:
        idx = rng.integers(0, m, size=batch)
        ok = zero_bit_coins(d[idx], rng)
        live = np.flatnonzero(ok)
        if live.size == 0:
            continue
        live = live[bernoulli(mant[idx[live]], live.size, rng)]
        if live.size == 0:
            continue
        c2 = exp_coins_shifted(g[idx[live]], k[idx[live]], rng)
        hit = live[c2]
        if hit.size:
            return int(valid[idx[hit[0]]])


def qexp_coins(q: Fraction, gamma: float, n: int, rng: BitSource) -> np.ndarray:
    """``n`` exact ``Bernoulli(q exp(-gamma))`` draws (rational ``q >= 0``, float ``gamma``,
    ``q exp(-gamma) <= 1``)."""
    p = float(q) * math.exp(-gamma)
    r = rng.raw(n)
    f = (r >> np.uint64(11)).astype(np.float64) * _TWO53
    p_lo, p_hi = p * (1 - 4 * _REL), p * (1 + 4 * _REL) + 1e-300
    out = f + _TWO53 <= p_lo
    g = Fraction(gamma)
    for i in np.flatnonzero(~out & (f < p_hi)):
        out[i] = u_less_exp(LazyUniform(int(r[i]), 64, rng), g, q)
    return out
