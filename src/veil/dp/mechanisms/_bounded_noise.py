"""Bounded-noise mechanisms: ``Uniform`` (delta-only) and ``LaplaceBoundedNoise``.

Geng, Ding, Guo & Kumar, "Tight analysis of privacy and utility tradeoff in approximate
differential privacy" (AISTATS 2020; the truncated Laplacian mechanism; diffprivlib's
``LaplaceBoundedNoise``): Laplace noise of scale
``b = Delta / epsilon`` *conditioned* on ``|noise| <= B`` is ``(epsilon, delta)``-DP when the
mass of the truncated noise within ``Delta`` of either end is at most ``delta``, i.e.
``B = b ln(1 + (exp(epsilon) - 1) / (2 delta))``.  With ``epsilon = 0`` the noise is uniform
on ``[-B, B]`` with ``B = Delta / (2 delta)`` (the ``Uniform`` mechanism): ``(0, delta)``-DP,
since two such uniforms shifted by ``Delta`` differ in total variation by ``Delta / 2B``.

Floating-point safety
---------------------
Both are sampled as *discrete* noise on the power-of-two grid ``g`` of
:func:`veil.dp._samplers.grid_for`: the value is rounded to the grid and integer noise is
added; neighbours' rounded values differ by at most ``D = floor(Delta / g) + 1`` grid units,
and the integer noise is calibrated for a shift of ``D``:

* ``Uniform``: ``Z`` exactly uniform on ``{-M..M}`` with ``2M + 1 >= D / delta``;
* ``LaplaceBoundedNoise``: ``P(Z = z) ~ q^|z|`` on ``{-N..N}`` with ``q = exp(-1/t)``,
  ``t >= D / epsilon`` (so ``q^-D <= exp(epsilon)``), and ``N`` the smallest bound whose ``D``
  outermost points on one side carry mass ``<= delta``.  Drawn exactly: exact discrete
  Laplace rejected outside ``{-N..N}``, or (when that rejects too often) exactly uniform
  proposals accepted with an exact ``Bernoulli(exp(-|z|/t))`` coin.

The output ``(k + Z) g`` depends only on the exact integer ``k + Z``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._samplers import _bern_exp_neg, discrete_laplace, fp_laplace_params, grid_for
from veil.dp.mechanisms._base import GridNoiseMechanism
from veil.errors import ConfigError

__all__ = ["Uniform", "LaplaceBoundedNoise"]


class Uniform(GridNoiseMechanism):
    """The uniform mechanism: ``(0, delta)``-DP bounded uniform noise, floating-point safe.

    Noise uniform on ``[-B, B]``, ``B = sensitivity / (2 delta)`` (the ``epsilon = 0`` case of
    the truncated-noise mechanism of Geng et al. 2020), sampled as exact discrete uniform
    noise on a power-of-two grid (module docstring).

    Parameters
    ----------
    delta : float in (0, 0.5]
    sensitivity : float, >= 0
    random_state : None, int or numpy Generator

    Notes
    -----
    ``epsilon = 0``, ``delta`` as given; variance ``M (M + 1) / 3 g^2 ~ B^2 / 3`` (exact for
    the grid noise).

    References
    ----------
    Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
    approximate differential privacy", AISTATS 2020 (arXiv:1810.00877 is the different
    bounded-*domain* Laplace of Holohan et al., :class:`LaplaceBoundedDomain`).

    Examples
    --------
    >>> from veil.dp.mechanisms import Uniform
    >>> mech = Uniform(delta=0.1, sensitivity=1.0)
    >>> abs(mech.randomise(0.0)) <= 5.0 + 1e-6
    True
    >>> round(mech.variance(0.0), 3)
    8.333
    """

    def __init__(self, *, delta: float, sensitivity: float, random_state: Any = None) -> None:
        super().__init__(epsilon=0.0, delta=delta, random_state=random_state)
        if not 0.0 < self.delta <= 0.5:
            raise ConfigError(f"Uniform needs delta in (0, 0.5], got {self.delta}")
        self.sensitivity = self._check_sensitivity(sensitivity)

    def _grid(self) -> tuple[float, int]:
        """Grid ``g`` and half-width ``M`` (grid units) of the uniform noise."""
        b = self.sensitivity / (2 * self.delta)
        g = grid_for(b)
        d = math.floor(self.sensitivity / g) + 1
        m = math.ceil((Fraction(d) / Fraction(self.delta) - 1) / 2)
        return g, int(m)

    def _grid_step(self) -> float:
        return self._grid()[0]

    def _noise(self, size: int) -> np.ndarray:
        """Exactly uniform integers on ``{-M..M}``."""
        m = self._grid()[1]
        return self._rng.integers(-m, m + 1, size=size)

    def variance(self, value: Any = None) -> float:
        """``M (M + 1) / 3 g^2`` (discrete uniform on ``{-M..M}``; ``~ sensitivity^2 /
        (12 delta^2)``)."""
        if self.sensitivity == 0:
            return 0.0
        g, m = self._grid()
        return float(m * (m + 1) / 3 * g * g)

    def _noise_halfwidth(self, alpha: float) -> float:
        if self.sensitivity == 0:
            return 0.0
        g, m = self._grid()
        k = min(math.ceil(((1 - alpha) * (2 * m + 1) - 1) / 2), m)
        return float(k * g + g / 2)


class LaplaceBoundedNoise(GridNoiseMechanism):
    """Laplace noise conditioned on ``|noise| <= B``: ``(epsilon, delta)``-DP, FP-safe.

    Geng, Ding, Guo & Kumar (2020): scale ``b = sensitivity / epsilon`` and bound
    ``B = b ln(1 + (exp(epsilon) - 1) / (2 delta))``; sampled exactly on a power-of-two grid
    (module docstring).  Unbiased; the noise never exceeds ``B`` (plus ``~2^-30 B``).

    Parameters
    ----------
    epsilon : float, > 0
    delta : float in (0, 0.5)
    sensitivity : float, >= 0
    random_state : None, int or numpy Generator

    References
    ----------
    Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
    approximate differential privacy", AISTATS 2020.

    Examples
    --------
    >>> from veil.dp.mechanisms import LaplaceBoundedNoise
    >>> mech = LaplaceBoundedNoise(epsilon=1.0, delta=0.1, sensitivity=1.0)
    >>> abs(mech.randomise(0.0)) <= mech.noise_bound * (1 + 1e-6)
    True
    """

    _needs_positive_epsilon = True

    def __init__(
        self, *, epsilon: float, delta: float, sensitivity: float, random_state: Any = None
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        if not 0.0 < self.delta < 0.5:
            raise ConfigError(f"LaplaceBoundedNoise needs delta in (0, 0.5), got {self.delta}")
        self.sensitivity = self._check_sensitivity(sensitivity)
        self._params = self._find_params() if self.sensitivity > 0 else (0.0, 1, 0)

    @property
    def scale(self) -> float:
        """Laplace scale ``b = sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    @property
    def noise_bound(self) -> float:
        """Bound ``N g`` on the absolute noise (``~ b ln(1 + (e^eps - 1) / (2 delta))``)."""
        g, _, n = self._params
        return float(n * g)

    def _edge_mass(self, n: int, t: int, d: int) -> float:
        """Mass of the ``d`` outermost points ``{n-d+1..n}`` of ``q^|z|`` on ``{-n..n}``."""
        one_minus_q = -math.expm1(-1.0 / t)
        q = 1.0 - one_minus_q
        num = math.exp(-(n - d + 1) / t) * -math.expm1(-d / t)
        den = one_minus_q + 2 * q * -math.expm1(-n / t)
        return num / den

    def _find_params(self) -> tuple[float, int, int]:
        b = self.scale
        g, t = fp_laplace_params(b, self.sensitivity)
        d = math.floor(self.sensitivity / g) + 1
        bound = b * math.log1p(math.expm1(self.epsilon) / (2 * self.delta))
        n = max(math.ceil(bound / g), d)
        step = max(n >> 24, 1)
        while self._edge_mass(n, t, d) * (1 + 1e-9) > self.delta:  # float margin
            n += step
        while n - step >= d and self._edge_mass(n - step, t, d) * (1 + 1e-9) <= self.delta:
            n -= step
        return g, t, n

    def _grid_step(self) -> float:
        return self._params[0]

    def _noise(self, size: int) -> np.ndarray:
        """Exact draws of ``Z``, ``P(Z = z) ~ exp(-|z| / t)`` on ``{-N..N}``."""
        _, t, n = self._params
        out = np.empty(size, dtype=np.int64)
        todo = np.arange(size)
        # acceptance of Laplace-then-reject vs uniform-then-coin proposals
        rate_lap = -math.expm1(-(n + 1) / t)
        rate_unif = min(1.0, t * -math.expm1(-n / t) / (n + 1))
        while todo.size:
            m = todo.size
            if rate_lap >= rate_unif:
                z = discrete_laplace(Fraction(t), m, self._rng)
                ok = np.abs(z) <= n
            else:
                z = self._rng.integers(-n, n + 1, size=m)
                ok = self._coins(np.abs(z), t)
            out[todo[ok]] = z[ok]
            todo = todo[~ok]
        return out

    def _coins(self, a: np.ndarray, t: int) -> np.ndarray:
        """Exact ``Bernoulli(exp(-a / t))`` for integers ``a >= 0``."""
        x = a / t  # relative error <= 2^-53

        def exact(i: int) -> Fraction:
            return Fraction(int(a[i]), t)

        return _bern_exp_neg(x, x * 2.0**-52, [exact], self._rng)  # type: ignore[list-item]

    def variance(self, value: Any = None) -> float:
        """Variance of Laplace(``t g``) truncated to ``[-N g, N g]`` (the grid noise's, to a
        relative ``~1e-9``): ``(2 b^2 - y (B^2 + 2 b B + 2 b^2)) / (1 - y)``, ``y = e^(-B/b)``."""
        if self.sensitivity == 0:
            return 0.0
        g, t, n = self._params
        bb, big = t * g, n * g
        y = math.exp(-big / bb)
        return float(
            (2 * bb * bb - y * (big * big + 2 * bb * big + 2 * bb * bb)) / -math.expm1(-big / bb)
        )

    def _noise_halfwidth(self, alpha: float) -> float:
        if self.sensitivity == 0:
            return 0.0
        g, t, n = self._params
        # P(|Z| > k) <= 2 q^(k+1) / ((1 - q) Zn) ~ tail of the truncated Laplace
        bb, big = t * g, n * g
        y = math.exp(-big / bb)
        h = -bb * math.log(alpha * (1 - y) + y)  # P(|X| > h) = alpha for the continuous law
        return float(min(h, big) + g)
