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
from scipy import optimize, special

from veil.dp import _samplers
from veil.dp._rng import BitSource

__all__ = [
    "discrete_laplace",
    "discrete_gaussian",
    "laplace",
    "gaussian",
    "gumbel",
    "analytic_gaussian_sigma",
    "laplace_halfwidth",
    "discrete_laplace_halfwidth",
    "gaussian_halfwidth",
]


def discrete_laplace(rng: BitSource, scale: float, n: int) -> np.ndarray:
    """``n`` exact two-sided geometric samples, P(k) proportional to exp(-|k| / scale)."""
    return np.asarray(_samplers.discrete_laplace(scale, n, rng), dtype=np.int64)


def discrete_gaussian(rng: BitSource, sigma: float, n: int) -> np.ndarray:
    """``n`` exact discrete Gaussian samples (Canonne, Kamath & Steinke 2020)."""
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


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma such that the Gaussian mechanism is (epsilon, delta)-DP.

    Balle & Wang (2018), Theorem 8: the mechanism is (eps, delta)-DP iff
    ``Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta``.
    """
    if sensitivity == 0:
        return 0.0

    def excess(log_sigma: float) -> float:
        s = math.exp(log_sigma)
        a = sensitivity / (2 * s)
        b = epsilon * s / sensitivity
        # e^eps * Phi(-a - b) computed in log space to avoid overflow
        tail = math.exp(epsilon + math.log(max(0.5 * special.erfc((a + b) / math.sqrt(2)), 1e-300)))
        return _phi(a - b) - tail - delta

    lo, hi = math.log(sensitivity) - 20, math.log(sensitivity) + 20
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-12)) * (1 + 1e-9)


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
    # P(|Z| > t) = 2 p^(t+1) / (1 + p)
    t = math.log(alpha * (1 + p) / 2.0) / math.log(p) - 1.0
    return float(max(0, math.ceil(t - 1e-12)))


def gaussian_halfwidth(sigma: float, alpha: float) -> float:
    """Half-width ``t`` with ``P(|N(0, sigma^2)| > t) = alpha``."""
    return sigma * math.sqrt(2.0) * float(special.erfinv(1.0 - alpha))
