"""Exact discrete samplers and floating-point-safe continuous noise, vectorized.

All functions take a :class:`~veil.dp._rng.BitSource` (from :func:`~veil.dp._rng.resolve_rng`)
and return numpy arrays.

Exact discrete samplers
-----------------------
:func:`bernoulli`, :func:`geometric`, :func:`discrete_laplace` and :func:`discrete_gaussian`
return *exact* samples of their distributions.  Each draws one uniform per element and
compares it with a threshold in float64 **with a rigorous error bound**; the few elements
whose comparison the float bound cannot decide (about one in a million) are settled in
arbitrary precision (:mod:`veil.dp._exact`), refining the uniform with more random bits.  No
floating-point rounding therefore ever changes the distribution.

* geometric: inversion ``X = floor(-s ln U)`` (``P(X >= x) = exp(-x/s)``);
* discrete Laplace (``P(z) ~ exp(-|z|/s)``): geometric magnitude and a random sign, rejecting
  ``-0`` (Canonne, Kamath & Steinke 2020, Algorithm 2);
* discrete Gaussian (``P(z) ~ exp(-z^2 / 2 sigma^2)``): rejection from a discrete Laplace of
  scale ``t = floor(sigma) + 1`` accepting with probability
  ``exp(-(|y| - sigma^2/t)^2 / (2 sigma^2))`` (Canonne, Kamath & Steinke 2020, Algorithm 3).

Floating-point-safe continuous noise
------------------------------------
Textbook Laplace noise computed in floating point leaks: the set of doubles ``x + noise`` can
reach depends on ``x`` (Mironov 2012, "On significance of the least significant bits for
differential privacy").  :func:`laplace_fp` and :func:`gaussian_fp` instead

1. pick a power-of-two grid ``g = 2^(floor(log2(scale)) - 30)`` (data independent);
2. round the true value to the grid, ``k = rint(x / g)`` (exact in float64);
3. add exact discrete noise ``Z`` on the grid, with its scale inflated so that the rounding
   (which can move a value by ``g / 2``, so neighbours by up to ``g``) is covered:
   ``t = ceil(scale * (1 + coords * g / sensitivity) / g)`` grid units;
4. return ``(k + Z) * g``.  While ``|k + Z| < 2^53`` this is exactly the grid point; beyond it
   the single IEEE addition rounds the exact result correctly, which is post-processing.

The output is therefore a function of the exactly distributed integer ``k + Z`` only: no
floating-point artefact depends on the private value.  The price is a relative noise increase
of at most ``2^-30`` — invisible.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._exact import LazyUniform, u_less_exp, u_less_frac
from veil.dp._rng import BitSource
from veil.errors import ConfigError, InputError, NoiseScaleError

__all__ = [
    "bernoulli",
    "bernoulli_exp",
    "geometric",
    "discrete_laplace",
    "discrete_gaussian",
    "laplace_fp",
    "laplace_fp_scalar",
    "gaussian_fp",
    "grid_for",
    "fp_laplace_params",
    "fp_gaussian_params",
    "discrete_laplace_variance",
    "GRID_BITS",
]

GRID_BITS = 30
_SMALL = 16  # draws up to this many use the pure-Python path
_BLOCK = 1 << 17  # elements per block of the vectorized FP-safe samplers (1 MiB arrays)
_TWO53 = 2.0**-53
_TWO52 = 2.0**-52
_REL = 1e-15  # relative error bound of one numpy log/exp/multiply chain (>= 4.5 ulp)


def _unit(r: np.ndarray) -> np.ndarray:
    """Lower end ``f`` of the 53-bit interval holding ``U = r / 2^64``: ``U in [f, f + 2^-53)``."""
    return (r >> np.uint64(11)).astype(np.float64) * _TWO53


def _as_fraction(x: float | int | Fraction) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


# ----------------------------------------------------------------------------- Bernoulli
def bernoulli(p: float | np.ndarray, size: int, rng: BitSource) -> np.ndarray:
    """Exact Bernoulli draws with probability ``p`` (a float or an array of floats).

    Parameters
    ----------
    p : float or array of float in [0, 1]
    size : int
        Number of draws (``p`` broadcast to it).
    rng : BitSource

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> bernoulli(0.5, 4, SecureRandom()).dtype
    dtype('bool')
    """
    pa = np.broadcast_to(np.asarray(p, dtype=np.float64), (size,))
    if np.any(~(pa >= 0) | (pa > 1)):
        raise ConfigError("bernoulli: p must lie in [0, 1]")
    r = rng.raw(size)
    scaled = np.floor(pa * 2.0**64)  # exact multiple; floor of p * 2^64
    full = pa >= 1.0
    thr = np.where(full, 0.0, scaled).astype(np.uint64)
    out = (r < thr) | full
    tie = (r == thr) & ~full
    for i in np.flatnonzero(tie):  # probability 2^-64 each: settle exactly
        out[i] = u_less_frac(LazyUniform(int(r[i]), 64, rng), Fraction(float(pa[i])))
    return out


def _bern_exp_neg(
    gamma_hat: np.ndarray, err: np.ndarray, exact_gamma: list[Fraction] | None, rng: BitSource
) -> np.ndarray:
    """Exact ``Bernoulli(exp(-gamma))`` given float estimates with absolute error ``<= err``.

    ``exact_gamma`` is a callable index -> Fraction (wrapped in a list for typing brevity).
    """
    n = gamma_hat.size
    r = rng.raw(n)
    f = _unit(r)  # U in [f, f + 2^-53)
    p = np.exp(-gamma_hat)
    if n and float(np.max(err)) <= 1e-6:
        # exp(-gamma) in [p e^-err, p e^err] (one exp pass); e^err - 1 <= 1.01 err here
        d = err * 1.01
        d += _REL
        p_lo = p * (1 - d)
        p_hi = p * (1 + d)
    else:
        p_lo = np.exp(-(gamma_hat + err)) * (1 - _REL)
        p_hi = np.exp(-(gamma_hat - err)) * (1 + _REL)
    p_hi += 1e-300
    out = f + _TWO53 <= p_lo
    amb = ~out & (f < p_hi)
    if amb.any():
        fn = exact_gamma[0]  # type: ignore[index]
        for i in np.flatnonzero(amb):
            out[i] = u_less_exp(LazyUniform(int(r[i]), 64, rng), fn(i))  # type: ignore[operator]
    return out


def bernoulli_exp(gamma: float | np.ndarray, size: int, rng: BitSource) -> np.ndarray:
    """Exact ``Bernoulli(exp(-gamma))`` draws for float ``gamma >= 0`` (scalar or array).

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> bool(bernoulli_exp(0.0, 3, SecureRandom()).all())
    True
    """
    g = np.broadcast_to(np.asarray(gamma, dtype=np.float64), (size,)).copy()
    if np.any(~(g >= 0)):
        raise ConfigError("bernoulli_exp: gamma must be >= 0")
    inf = np.isinf(g)
    g[inf] = 1e6  # exp(-inf) = 0: decided below, whatever the draw

    def exact(i: int) -> Fraction:
        return Fraction(float(g[i]))

    out = _bern_exp_neg(g, np.zeros(size), [exact], rng)  # type: ignore[list-item]
    out[inf] = False
    return out


# ----------------------------------------------------------------------------- geometric
def geometric(scale: float | Fraction, size: int, rng: BitSource) -> np.ndarray:
    """Exact draws of ``X >= 0`` with ``P(X = x) proportional to exp(-x / scale)``.

    Parameters
    ----------
    scale : float or Fraction, > 0
    size : int
    rng : BitSource

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> bool((geometric(3.0, 5, SecureRandom()) >= 0).all())
    True
    """
    s_frac = _check_scale(scale)
    s = float(s_frac)
    if size <= _SMALL:
        words = rng.raw(size).tolist()
        return np.array([_geom_word(w, s, s_frac, rng) for w in words], dtype=np.int64)
    return _geom_words(rng.raw(size), s, s_frac, rng)


def _geom_words(r: np.ndarray, s: float, s_frac: Fraction, rng: BitSource) -> np.ndarray:
    """Geometric draws from the top 52 bits of the words ``r`` (consumed: overwritten).

    ``U in [f, f + 2^-52)`` so ``-s ln U`` lies in ``(-s ln(f + 2^-52), -s ln f]``, an interval
    of width at most ``s 2^-52 / f``; with the float error bound this brackets the exact
    value and only brackets straddling an integer are settled exactly.  Works in place to
    keep allocations (page faults) to a minimum.
    """
    r >>= np.uint64(12)
    r |= np.uint64(0x3FF0000000000000)  # 1.xxx: a double in [1, 2) with 52 random bits
    f = r.view(np.float64)
    f -= 1.0  # exact: f = top52 * 2^-52
    v = f + _TWO52
    np.log(v, out=v)
    v *= -s  # v >= 0 approximates -s ln(f + 2^-52) within relative _REL
    lo = v * (1 - _REL)
    np.floor(lo, out=lo)
    # ambiguous iff the upper end v (1 + REL) + c / f reaches lo + 1, i.e. c >= gap * f
    v *= -(1 + _REL)
    v += lo
    v += 1.0
    v *= f
    amb = np.flatnonzero(v <= s * _TWO52 * 1.01)
    top = (f[amb] * 2.0**52).astype(np.int64).tolist()
    out = r.view(np.int64)
    np.copyto(out, lo, casting="unsafe")
    for i, t52 in zip(amb.tolist(), top):
        out[i] = _settle_geometric(t52, int(lo[i]), s_frac, rng)
    return out


def _settle_geometric(top52: int, x0: int, s_frac: Fraction, rng: BitSource) -> int:
    """Exact geometric value for ``U`` starting with the 52 bits ``top52``, from ``x0`` up."""
    u = LazyUniform(top52, 52, rng)
    x = max(x0, 0)
    while u_less_exp(u, Fraction(x + 1) / s_frac):  # U <= exp(-(x+1)/s): X >= x + 1
        x += 1
    return x


def _geom_word(w: int, s: float, s_frac: Fraction, rng: BitSource) -> int:
    """Pure-Python twin of :func:`_geom_words` for one word (no numpy overhead)."""
    f = (w >> 12) * _TWO52
    v = -s * math.log(f + _TWO52)
    lo = math.floor(v * (1 - _REL))
    hi = v * (1 + _REL) + s * _TWO52 * 1.01 / f if f > 0 else math.inf
    if hi >= lo + 1:
        return _settle_geometric(w >> 12, lo, s_frac, rng)
    return lo


def discrete_laplace(scale: float | Fraction, size: int, rng: BitSource) -> np.ndarray:
    """Exact discrete Laplace draws: ``P(Z = z) proportional to exp(-|z| / scale)``.

    Canonne, Kamath & Steinke (2020), Algorithm 2: a geometric magnitude with a random sign,
    rejecting the negative zero.

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> discrete_laplace(2.0, 3, SecureRandom()).dtype
    dtype('int64')
    """
    if size <= _SMALL:
        return _discrete_laplace_small(scale, size, rng)
    s_frac = _check_scale(scale)
    if size > _BLOCK:
        return _blocked(discrete_laplace, s_frac, size, rng)
    r = rng.raw(size)
    neg = (r & np.uint64(1)).astype(bool)  # bit 0: independent of the 52 bits used for U
    x = _geom_words(r, float(s_frac), s_frac, rng)
    bad = np.flatnonzero(neg & (x == 0))  # rejected "-0": redraw those elements afresh
    np.negative(x, out=x, where=neg)
    if bad.size:
        x[bad] = discrete_laplace(s_frac, bad.size, rng)
    return x


def _blocked(fn: Any, param: Fraction, size: int, rng: BitSource) -> np.ndarray:
    """Fill ``size`` draws of ``fn`` block by block (temporaries stay cache-sized)."""
    out = np.empty(size, dtype=np.int64)
    for start in range(0, size, _BLOCK):
        stop = min(start + _BLOCK, size)
        out[start:stop] = fn(param, stop - start, rng)
    return out


def _check_scale(scale: float | Fraction) -> Fraction:
    s = float(scale)
    s_frac = _as_fraction(scale) if math.isfinite(s) else Fraction(0)
    if not (s > 0 and math.isfinite(s)) or s > 2.0**52:
        raise NoiseScaleError(
            f"noise scale must be in (0, 2^52], got {s}: epsilon is too small for this "
            "sensitivity (or the scale is invalid)"
        )
    return s_frac


def _check_sigma(sigma: float | Fraction) -> Fraction:
    """``sigma`` as a Fraction; :class:`NoiseScaleError` outside the discrete Gaussian
    sampler's range (0, 2^40] (NaN and infinity included), as :func:`_check_scale` for scales."""
    sig = _as_fraction(sigma) if math.isfinite(float(sigma)) else Fraction(0)
    sf = float(sig)
    if not sf > 0 or sf > 2.0**40:
        raise NoiseScaleError(
            f"discrete Gaussian sigma must be in (0, 2^40], got {float(sigma)}: epsilon (or "
            "delta) is too small for this sensitivity (or sigma is invalid)"
        )
    return sig


def _discrete_laplace_small(scale: float | Fraction, size: int, rng: BitSource) -> np.ndarray:
    s_frac = _check_scale(scale)
    s = float(s_frac)
    out: list[int] = []
    while len(out) < size:
        for w in rng.raw(size - len(out)).tolist():
            x = _geom_word(w, s, s_frac, rng)
            neg = w & 1
            if not (neg and x == 0):
                out.append(-x if neg else x)
    return np.array(out, dtype=np.int64)


def laplace_fp_scalar(value: float, g: float, t: int, rng: BitSource) -> float:
    """Scalar twin of :func:`laplace_fp` with precomputed ``(g, t) = fp_laplace_params(...)``:
    pure Python, no numpy call overhead (~5x faster for one value)."""
    if not math.isfinite(value):
        raise InputError("cannot add noise to NaN or infinite values")
    t_frac = Fraction(t)
    tf = float(t)
    while True:
        w = int(rng.raw(1)[0])
        x = _geom_word(w, tf, t_frac, rng)
        neg = w & 1
        if not (neg and x == 0):
            z = -x if neg else x
            steps = value / g
            if math.isinf(steps):  # |value| > max float * g: as in :func:`_add_grid_noise`
                return value + z * g
            return (round(steps) + z) * g  # round() is half-even like numpy.rint


def discrete_laplace_variance(scale: float) -> float:
    """Variance ``2q / (1 - q)^2`` (``q = exp(-1/scale)``) of :func:`discrete_laplace`."""
    q = math.exp(-1.0 / scale)
    return 2.0 * q / (-math.expm1(-1.0 / scale)) ** 2


def discrete_gaussian(sigma: float | Fraction, size: int, rng: BitSource) -> np.ndarray:
    """Exact discrete Gaussian draws: ``P(Z = z) proportional to exp(-z^2 / (2 sigma^2))``.

    Canonne, Kamath & Steinke (2020), Algorithm 3 (rejection from a discrete Laplace), with the
    acceptance test vectorized and settled exactly (see the module docstring).

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> discrete_gaussian(1.5, 3, SecureRandom()).dtype
    dtype('int64')
    """
    sig = _check_sigma(sigma)
    if size > _BLOCK:
        return _blocked(discrete_gaussian, sig, size, rng)
    s2 = sig * sig
    t = math.floor(sig) + 1
    s2_over_t = float(s2 / t)
    s2f = float(s2)
    t_frac = Fraction(t)
    chunks: list[np.ndarray] = []
    have = 0
    while have < size:
        # i.i.d. proposals; the accepted ones are i.i.d. discrete Gaussian, take a prefix
        m = min(int((size - have) / 0.7) + 32, 1 << 24)
        y = discrete_laplace(t_frac, m, rng)
        a = np.abs(y).astype(np.float64)
        a -= s2_over_t
        g = a * a
        g /= 2.0 * s2f
        # |gamma_hat - gamma| <= 1e-13 (1 + g + |a| / sigma) <= 2e-13 (1 + g), since
        # |a| / sigma <= 1 + (a / sigma)^2 / 2 = 1 + g
        err = g * 2e-13
        err += 2e-13

        def exact(i: int, _y: np.ndarray = y) -> Fraction:
            return (abs(int(_y[i])) - s2 / t) ** 2 / (2 * s2)

        ok = _bern_exp_neg(g, err, [exact], rng)  # type: ignore[list-item]
        acc = y[ok]
        chunks.append(acc)
        have += acc.size
    out = np.concatenate(chunks)
    return out[:size] if out.size > size else out


# ----------------------------------------------------------------------------- FP-safe noise
def grid_for(scale: float) -> float:
    """The power-of-two grid ``2^(floor(log2(scale)) - 30)`` used for noise of this scale.

    Outputs are multiples of the grid, so the floating-point attack on textbook Laplace
    sampling (Mironov 2012) finds no gaps to exploit.

    References
    ----------
    I. Mironov, "On significance of the least significant bits for differential privacy",
    ACM CCS, 2012.

    Examples
    --------
    >>> grid_for(1.0) == 2.0**-30, grid_for(3.0) == 2.0**-29
    (True, True)
    >>> grid_for(0.0)
    Traceback (most recent call last):
    ...
    veil.errors.NoiseScaleError: noise scale must be a positive finite number ... got 0.0: ...
    """
    if not (scale > 0 and math.isfinite(scale)) or not (2.0**-900 < scale < 2.0**900):
        too_large = 0 < scale <= 2.0**-900
        cause = (
            "epsilon is too large for this sensitivity"
            if too_large
            else "epsilon is too small for this sensitivity (or the scale is invalid)"
        )
        raise NoiseScaleError(
            f"noise scale must be a positive finite number in (2^-900, 2^900), got {scale}: "
            + cause,
            too_large=too_large,
        )
    return math.ldexp(1.0, math.frexp(scale)[1] - 1 - GRID_BITS)


def fp_laplace_params(scale: float, sensitivity: float, coords: int = 1) -> tuple[float, int]:
    """Grid ``g`` and integer grid scale ``t`` for :func:`laplace_fp` (see module docstring)."""
    g = grid_for(scale)
    infl = 1.0 + coords * g / sensitivity if sensitivity > 0 else 1.0
    t = math.ceil(scale * infl / g * (1 + 1e-15)) + 1
    return g, t


def fp_gaussian_params(sigma: float, sensitivity: float, coords: int = 1) -> tuple[float, float]:
    """Grid ``g`` and grid-unit sigma for :func:`gaussian_fp`.

    Rounding adds ``sqrt(coords) * g`` to the L2 sensitivity (absorbed by inflating sigma), and
    a further relative ``1e-6`` covers the difference between the discrete Gaussian's exact
    privacy profile (Canonne, Kamath & Steinke 2020, Thm 7) and the continuous one on a grid
    this fine (relative ~1e-8 in delta; a 1e-6 larger sigma lowers delta far more).
    """
    g = grid_for(sigma)
    infl = 1.0 + math.sqrt(coords) * g / sensitivity if sensitivity > 0 else 1.0
    return g, sigma * infl / g * (1 + 1e-6)


def all_finite(x: np.ndarray) -> bool:
    """Whether every value of the float array ``x`` is finite, in one fast pass: a finite sum
    proves it (NaN/inf propagate); an overflowing sum falls back to the elementwise check."""
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: no warning of theirs
        total = float(np.sum(x))
    return math.isfinite(total) or bool(np.isfinite(x).all())


def _check_values(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if not all_finite(x):
        raise InputError("cannot add noise to NaN or infinite values")
    return x


def _add_grid_noise(x: np.ndarray, g: float, draw: Callable[[int], np.ndarray]) -> np.ndarray:
    """Round ``x`` to the grid ``g`` and add integer noise in grid units, block by block.

    Shared by :func:`laplace_fp` and :func:`gaussian_fp` (Mironov 2012's precision attack is
    avoided because every output is a multiple of ``g``, a power of two).

    Parameters
    ----------
    x : numpy.ndarray
        Finite float64 values.
    g : float
        The grid, a power of two (so ``/ g`` and ``* g`` are exact).
    draw : callable
        ``draw(k)`` returns ``k`` integer-valued noise draws (called once per block, in order).

    Returns
    -------
    numpy.ndarray
        ``(rint(x / g) + noise) * g``, of the shape of ``x``.
    """
    out = np.empty_like(x)
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, x.size, _BLOCK):  # cache-sized blocks: temporaries stay in L2/L3
        stop = min(start + _BLOCK, x.size)
        o = flat_out[start:stop]
        with np.errstate(over="ignore"):
            np.divide(flat_in[start:stop], g, out=o)  # exact: g is a power of two
        wide = np.isinf(o)  # |x| > max float * g: x / g overflows (x itself is finite)
        np.rint(o, out=o)
        z = draw(stop - start)
        o += z  # exact below 2^53, else one correctly rounded addition
        o *= g  # (post-processing); * g is exact
        if wide.any():
            # such an x is a multiple of g (|x| >= 2^53 g), so x + z g rounds exactly as
            # (x / g + z) g does without the overflow: the same value, not +-inf
            xs = flat_in[start:stop][wide]
            with np.errstate(over="ignore"):
                o[wide] = xs + z[wide] * g
    return out


def laplace_fp(
    values: float | np.ndarray,
    scale: float,
    rng: BitSource,
    *,
    sensitivity: float,
    coords: int = 1,
) -> np.ndarray:
    """Floating-point-safe Laplace noise: ``values`` + discrete Laplace on a power-of-two grid.

    Parameters
    ----------
    values : float or array
        True values (finite).
    scale : float
        The Laplace scale ``b`` calibrated for ``sensitivity`` (``b = sensitivity / epsilon``).
    rng : BitSource
    sensitivity : float
        L1 sensitivity ``b`` was calibrated for; used to absorb the grid rounding.
    coords : int
        Coordinates of one query sharing the L1 sensitivity (1 for independent scalar queries).

    Returns
    -------
    numpy.ndarray of float64 on the grid ``grid_for(scale)``.

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> out = laplace_fp([1.0, 2.0], 1.0, SecureRandom(), sensitivity=1.0)
    >>> bool(((out / grid_for(1.0)) % 1 == 0).all())
    True
    """
    x = _check_values(values)
    g, t = fp_laplace_params(scale, sensitivity, coords)
    t_frac = Fraction(t)
    return _add_grid_noise(x, g, lambda k: discrete_laplace(t_frac, k, rng))


def gaussian_fp(
    values: float | np.ndarray,
    sigma: float,
    rng: BitSource,
    *,
    sensitivity: float,
    coords: int = 1,
) -> np.ndarray:
    """Floating-point-safe Gaussian noise: ``values`` + discrete Gaussian on a power-of-two grid.

    ``sigma`` is calibrated for L2 ``sensitivity``; ``coords`` coordinates share it (rounding
    each adds at most ``g`` so the L2 sensitivity grows by ``sqrt(coords) * g``, absorbed here).

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> gaussian_fp([0.0], 2.0, SecureRandom(), sensitivity=1.0).shape
    (1,)
    """
    x = _check_values(values)
    g, sg = fp_gaussian_params(sigma, sensitivity, coords)
    sg_frac = Fraction(sg)
    return _add_grid_noise(x, g, lambda k: discrete_gaussian(sg_frac, k, rng))
