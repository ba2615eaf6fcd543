"""Noise used by DP queries: thin adapter over :mod:`veil.dp._samplers` plus calibration.

Samplers come from the DP core (secure AES-CTR bits, exact discrete samplers, floating-point-safe
continuous samplers).  This module adds what group-by queries need on top: the analytic Gaussian
calibration (Balle & Wang, "Improving the Gaussian mechanism for differential privacy", ICML
2018), Gumbel noise for the vectorized exponential mechanism and confidence-interval half-widths.

Example
-------
>>> round(laplace_halfwidth(1.0, 0.05), 3)
2.996
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from veil.dp import _samplers
from veil.dp._rng import BitSource

__all__ = [
    "discrete_laplace",
    "discrete_gaussian",
    "laplace",
    "gaussian",
    "gumbel",
    "analytic_gaussian_sigma",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "laplace_halfwidth",
    "discrete_laplace_halfwidth",
    "gaussian_halfwidth",
]


def discrete_laplace(rng: BitSource, scale: float, n: int) -> np.ndarray:
    """``n`` exact two-sided geometric samples, P(k) proportional to exp(-|k| / scale)."""
    return np.asarray(_samplers.discrete_laplace(scale, n, rng), dtype=np.int64)


def discrete_gaussian(rng: BitSource, sigma: float, n: int) -> np.ndarray:
    """``n`` exact discrete Gaussian samples (Canonne, Kamath & Steinke 2020).

    ``n = 0`` (private selection kept no group) is an empty draw: the sampler raised
    ``ValueError`` there, after the charge, only when the selection happened to keep nothing.
    """
    if n == 0:
        _samplers._check_sigma(sigma)  # the same refusal of a bad sigma as any draw
        return np.zeros(0, dtype=np.int64)
    return np.asarray(_samplers.discrete_gaussian(sigma, n, rng), dtype=np.int64)


def laplace(
    rng: BitSource, values: np.ndarray, scale: float, sensitivity: float, coords: int
) -> np.ndarray:
    """``values`` plus floating-point-safe Laplace noise (grid + exact discrete Laplace)."""
    return _samplers.laplace_fp(values, scale, rng, sensitivity=sensitivity, coords=coords)


def gaussian(
    rng: BitSource, values: np.ndarray, sigma: float, sensitivity: float, coords: int
) -> np.ndarray:
    """``values`` plus floating-point-safe Gaussian noise (grid + exact discrete Gaussian)."""
    return _samplers.gaussian_fp(values, sigma, rng, sensitivity=sensitivity, coords=coords)


def gumbel(rng: BitSource, n: int) -> np.ndarray:
    """``n`` standard Gumbel samples (for the Gumbel-max form of the exponential mechanism)."""
    u = ((rng.raw(n) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53  # in (0, 1)
    return -np.log(-np.log(u))


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma such that the Gaussian mechanism is (epsilon, delta)-DP.

    Balle & Wang (2018), Theorem 8: the mechanism is (eps, delta)-DP iff
    ``Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta``.  Solved by the DP core
    (:func:`veil.dp.mechanisms.analytic_gaussian_sigma`: a bracket that grows until it holds
    the root, the profile in log space), which returns the side of the root that meets delta.
    This module's own search was bracketed to ``D e^(+-20)`` and overflowed ``e^eps``: it
    failed for ``(eps, delta) = (1e-20, 1e-15)``, ``(1000, 1e-6)`` and ``eps > 709``.
    """
    from veil.dp.mechanisms._gaussian import analytic_gaussian_sigma as core_sigma

    if sensitivity == 0:
        return 0.0
    return core_sigma(epsilon, delta, sensitivity)


def discrete_gaussian_delta(sigma: float, sensitivity: int, epsilon: float) -> float:
    """Exact delta of the 1-D discrete Gaussian for an integer ``sensitivity``.

    ``delta = P[Y > eps s^2/D - D/2] - e^eps P[Y > eps s^2/D + D/2]`` with ``Y`` discrete
    Gaussian (Canonne, Kamath & Steinke, "The discrete Gaussian for differential privacy",
    NeurIPS 2020, Theorem 7), summed exactly over the integers.
    """
    half = int(math.ceil(40.0 * sigma)) + 2 * int(sensitivity) + 2
    k = np.arange(-half, half + 1, dtype=np.float64)
    logw = -(k * k) / (2.0 * sigma * sigma)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    t = epsilon * sigma * sigma / sensitivity
    upper = w[k > t - sensitivity / 2.0].sum()
    tail = w[k > t + sensitivity / 2.0].sum()
    # e^eps capped below overflow: a smaller subtrahend overstates delta (conservative)
    return float(upper - math.exp(min(epsilon, 700.0)) * tail)


def discrete_gaussian_sigma(
    l2: float, epsilon: float, delta: float, coords: int, linf: int
) -> float:
    """Noise for integer counts with the discrete Gaussian, (epsilon, delta)-DP.

    One coordinate per person (``coords == 1``): start from the analytic continuous sigma and
    enlarge it until the exact discrete delta (:func:`discrete_gaussian_delta`) fits.  Several
    coordinates: zero-concentrated DP, ``rho = l2^2 / (2 sigma^2)`` (CKS 2020, Theorem 14) and
    ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke, TCC 2016) -- conservative.
    """
    if coords > 1:
        log_inv = math.log(1.0 / delta)
        # sqrt(L + eps) - sqrt(L), written without the cancellation that made it 0 (and the
        # sigma a ZeroDivisionError) for tiny eps
        rho = (epsilon / (math.sqrt(log_inv + epsilon) + math.sqrt(log_inv))) ** 2
        return l2 / math.sqrt(2.0 * rho)
    sigma = analytic_gaussian_sigma(l2, epsilon, delta)
    if sigma > 1e4:  # the exact sum would be large; the curves coincide there
        return sigma * (1 + 1e-6)
    while discrete_gaussian_delta(sigma, linf, epsilon) > delta:
        sigma *= 1.001
    return sigma


def laplace_halfwidth(scale: float, alpha: float) -> float:
    """Half-width ``t`` with ``P(|Laplace(scale)| > t) = alpha``."""
    return scale * math.log(1.0 / alpha)


def discrete_laplace_halfwidth(scale: float, alpha: float) -> float:
    """Smallest integer ``t`` with ``P(|Z| > t) <= alpha`` for the two-sided geometric."""
    if scale <= 0:
        return 0.0
    p = math.exp(-1.0 / scale)
    if p <= 0.0:
        return 0.0
    # P(|Z| > t) = 2 p^(t+1) / (1 + p); log p = -1/scale exactly (p rounds to 1.0 for
    # scales beyond ~1e16, where math.log(p) would be 0)
    t = -scale * math.log(alpha * (1 + p) / 2.0) - 1.0
    return float(max(0, math.ceil(t - 1e-12)))


def gaussian_halfwidth(sigma: float, alpha: float) -> float:
    """Half-width ``t`` with ``P(|N(0, sigma^2)| > t) = alpha``."""
    return sigma * math.sqrt(2.0) * float(special.erfinv(1.0 - alpha))
