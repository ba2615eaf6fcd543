"""Gaussian mechanisms: classic, analytic and discrete, floating-point safe.

* classic: ``sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon`` for ``epsilon <= 1``
  (Dwork & Roth 2014, Theorem A.1);
* analytic: the smallest ``sigma`` meeting the exact privacy profile of the Gaussian
  (Balle & Wang 2018, "Improving the Gaussian mechanism for differential privacy");
* discrete: exact discrete Gaussian noise with ``sigma`` calibrated on its exact privacy
  profile (Canonne, Kamath & Steinke 2020, Theorem 7).

Continuous outputs use exact discrete Gaussian noise on a power-of-two grid
(:func:`veil.dp._samplers.gaussian_fp`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from veil.dp._samplers import discrete_gaussian, fp_gaussian_params, gaussian_fp
from veil.dp.mechanisms._base import DPMechanism, as_float
from veil.dp.mechanisms._geometric import _int_array, add_int_noise
from veil.errors import ConfigError

__all__ = [
    "Gaussian",
    "GaussianAnalytic",
    "GaussianDiscrete",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_delta",
    "discrete_gaussian_delta",
]


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """``sqrt(2 ln(1.25 / delta)) * sensitivity / epsilon`` (valid for ``epsilon <= 1``).

    References
    ----------
    C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", Foundations and
    Trends in Theoretical Computer Science 9(3-4), 2014 (Theorem A.1).

    Examples
    --------
    >>> round(classic_gaussian_sigma(1.0, 1e-5, 1.0), 3)
    4.845
    >>> round(analytic_gaussian_sigma(1.0, 1e-5, 1.0), 3)  # the exact calibration is tighter
    3.731
    """
    return math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon


def analytic_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """Exact ``delta(epsilon)`` of the Gaussian mechanism (Balle & Wang 2018, Theorem 8)."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b))
    return float(max(first - second, 0.0))


def _bisect_sigma(delta_of: Any, delta: float, start: float) -> float:
    lo, hi = 0.0, start
    while delta_of(hi) > delta:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest ``sigma`` whose exact privacy profile gives ``(epsilon, delta)``-DP.

    Examples
    --------
    >>> round(analytic_gaussian_sigma(1.0, 1e-5, 1.0), 3)
    3.731
    """
    if sensitivity == 0:
        return 0.0
    return _bisect_sigma(
        lambda s: analytic_gaussian_delta(epsilon, s, sensitivity), delta, sensitivity
    )


_EXACT_SIGMA = 2000.0


def _dg_tail(m: np.ndarray | float, sigma: float) -> np.ndarray:
    """``sum_{y >= m} exp(-y^2 / 2 sigma^2)`` for integers ``m`` (Euler-Maclaurin, large sigma)."""
    m = np.asarray(m, dtype=np.float64)
    s2 = sigma * sigma
    f = np.exp(-m * m / (2 * s2))
    integral = sigma * math.sqrt(math.pi / 2) * special.erfc(m / (sigma * math.sqrt(2)))
    d1 = -m / s2 * f
    d3 = (-(m**3) / s2**3 + 3 * m / s2**2) * f
    return integral + f / 2 - d1 / 12 + d3 / 720


def _dg_sf(x: float, sigma: float) -> float:
    """``P[Y > x]`` for a discrete Gaussian ``Y`` with parameter ``sigma``."""
    m = math.floor(x) + 1
    if sigma < _EXACT_SIGMA:
        r = int(math.ceil(45 * sigma)) + abs(m) + 2
        y = np.arange(-r, r + 1, dtype=np.float64)
        w = np.exp(-y * y / (2 * sigma * sigma))
        return float(w[y >= m].sum() / w.sum())
    norm = sigma * math.sqrt(2 * math.pi)
    if m >= 1:
        return float(_dg_tail(m, sigma) / norm)
    return float(1 - _dg_tail(1 - m, sigma) / norm)


def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity: int) -> float:
    """Exact ``delta`` of the discrete Gaussian (Canonne, Kamath & Steinke 2020, Theorem 7)."""
    c = epsilon * sigma * sigma / sensitivity
    d = _dg_sf(c - sensitivity / 2, sigma) - math.exp(epsilon) * _dg_sf(c + sensitivity / 2, sigma)
    return max(d, 0.0)


class _GaussianBase(DPMechanism):
    """Shared randomise/variance/interval for the continuous Gaussians."""

    sigma: float

    def randomise(self, value: Any) -> Any:
        """Return ``value`` plus (FP-safe) Gaussian noise; arrays are noised elementwise."""
        x, scalar = self._values(value)
        out = (
            x.copy()
            if self.sigma == 0
            else gaussian_fp(x, self.sigma, self._rng, sensitivity=self.sensitivity)
        )
        return float(out) if scalar else out

    @property
    def _grid(self) -> tuple[float, float]:
        return fp_gaussian_params(self.sigma, self.sensitivity)

    def variance(self, value: Any = None) -> float:
        """Variance of the noise (``sigma^2`` up to a relative ``2e-6``)."""
        if self.sigma == 0:
            return 0.0
        g, sg = self._grid
        return (sg * g) ** 2

    def _noise_halfwidth(self, alpha: float) -> float:
        if self.sigma == 0:
            return 0.0
        g, sg = self._grid
        return float(special.ndtri(1 - alpha / 2)) * sg * g * (1 + 1e-9) + 1.5 * g

    @property
    def scale(self) -> float:
        """Standard deviation ``sigma`` of the noise (diffprivlib's ``_scale``)."""
        return self.sigma


class Gaussian(_GaussianBase):
    """The classic Gaussian mechanism (``epsilon <= 1``), floating-point safe.

    Examples
    --------
    >>> from veil.dp.mechanisms import Gaussian
    >>> m = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)
    >>> round(m.sigma, 3)
    9.69
    """

    def __init__(
        self, *, epsilon: float, delta: float, sensitivity: float, random_state: Any = None
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        if not 0 < self.epsilon <= 1:
            raise ConfigError("the classic Gaussian mechanism needs 0 < epsilon <= 1")
        if self.delta <= 0:
            raise ConfigError("the Gaussian mechanism needs delta > 0")
        self.sensitivity = self._check_sensitivity(sensitivity)
        self.sigma = classic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)


class GaussianAnalytic(_GaussianBase):
    """The analytic Gaussian mechanism (Balle & Wang 2018), any ``epsilon > 0``.

    Examples
    --------
    >>> from veil.dp.mechanisms import GaussianAnalytic
    >>> m = GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1.0)
    >>> m.sigma < 9.689
    True
    """

    def __init__(
        self, *, epsilon: float, delta: float, sensitivity: float, random_state: Any = None
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        if self.epsilon <= 0 or self.delta <= 0:
            raise ConfigError("the analytic Gaussian mechanism needs epsilon > 0 and delta > 0")
        self.sensitivity = self._check_sensitivity(sensitivity)
        self.sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)


class GaussianDiscrete(DPMechanism):
    """The discrete Gaussian mechanism on integers (Canonne, Kamath & Steinke 2020).

    Exact noise; ``sigma`` is the smallest meeting the exact ``(epsilon, delta)`` profile.

    Examples
    --------
    >>> from veil.dp.mechanisms import GaussianDiscrete
    >>> isinstance(GaussianDiscrete(epsilon=1, delta=1e-5).randomise(3), int)
    True
    """

    def __init__(
        self, *, epsilon: float, delta: float, sensitivity: int = 1, random_state: Any = None
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        if self.epsilon <= 0 or self.delta <= 0:
            raise ConfigError("the discrete Gaussian mechanism needs epsilon > 0 and delta > 0")
        s = as_float("sensitivity", sensitivity)
        if s < 0 or s != int(s):
            raise ConfigError("GaussianDiscrete needs a non-negative integer sensitivity")
        self.sensitivity = int(s)
        self.sigma = self._find_scale()

    def _find_scale(self) -> float:
        if self.sensitivity == 0:
            return 0.0
        return _bisect_sigma(
            lambda s: discrete_gaussian_delta(self.epsilon, s, self.sensitivity),
            self.delta,
            float(self.sensitivity),
        )

    @property
    def scale(self) -> float:
        return self.sigma

    def randomise(self, value: Any) -> Any:
        """Return the integer ``value`` plus exact discrete Gaussian noise."""
        x = _int_array(value, "GaussianDiscrete randomises integers only")  # exact, any size
        if self.sigma == 0:
            out = x.copy()
        else:
            out = add_int_noise(x, discrete_gaussian(self.sigma, x.size, self._rng))
        return int(out) if out.ndim == 0 else out

    def variance(self, value: Any = None) -> float:
        """Exact variance of the discrete Gaussian noise (slightly below ``sigma^2``)."""
        s = self.sigma
        if s == 0:
            return 0.0
        if s >= _EXACT_SIGMA:
            return s * s
        r = int(math.ceil(45 * s)) + 2
        y = np.arange(-r, r + 1, dtype=np.float64)
        w = np.exp(-y * y / (2 * s * s))
        return float((w * y * y).sum() / w.sum())

    def _noise_halfwidth(self, alpha: float) -> float:
        s = self.sigma
        if s == 0:
            return 0.0
        k = max(int(special.ndtri(1 - alpha / 2) * s) - 1, 0)
        while 2 * _dg_sf(k, s) > alpha:  # P(|Y| > k) = 2 P(Y > k)
            k += 1
        return float(k)
