"""Laplace mechanisms, floating-point safe (Dwork, McSherry, Nissim & Smith 2006).

Noise is exact discrete Laplace on a power-of-two grid (see :mod:`veil.dp._samplers`), which
removes the precision attack of Mironov (2012) on textbook floating-point Laplace noise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from veil.dp._samplers import (
    discrete_laplace_variance,
    fp_laplace_params,
    laplace_fp,
    laplace_fp_scalar,
)
from veil.dp.mechanisms._base import DPMechanism, TruncationAndFoldingMixin
from veil.errors import ConfigError, InputError

__all__ = [
    "Laplace",
    "LaplaceTruncated",
    "LaplaceFolded",
    "LaplaceBoundedDomain",
    "Snapping",
    "laplace_halfwidth",
]


def laplace_halfwidth(scale: float, sensitivity: float, alpha: float) -> float:
    """Half-width ``h`` with ``P(|output - value| <= h) >= 1 - alpha`` for :func:`laplace_fp`.

    Uses the exact tail ``P(|Z| >= k) = 2 q^k / (1 + q)`` of the discrete Laplace on the grid
    plus half a grid step for the rounding of the value.
    """
    if scale == 0:
        return 0.0
    g, t = fp_laplace_params(scale, sensitivity)
    q = math.exp(-1.0 / t)
    k = max(math.ceil(math.log(alpha * (1 + q) / 2) / math.log(q)) - 1, 0)
    return k * g + g / 2


class Laplace(DPMechanism):
    """The Laplace mechanism, floating-point safe.

    Adds noise of scale ``b = sensitivity / (epsilon - log(1 - delta))`` (diffprivlib's
    calibration: with ``delta > 0`` the pure mechanism at ``epsilon - log(1 - delta)`` is
    ``(epsilon, delta)``-DP since the Laplace privacy profile is ``1 - exp((eps - eps0)/2)``).

    Parameters
    ----------
    epsilon : float
    delta : float, default 0
    sensitivity : float
        L1 sensitivity of the query.
    random_state : None, int or numpy Generator
        ``None``: cryptographically secure (the default; seeds are for tests only).

    Examples
    --------
    >>> from veil.dp.mechanisms import Laplace
    >>> mech = Laplace(epsilon=1.0, sensitivity=1.0)
    >>> isinstance(mech.randomise(10.0), float)
    True
    >>> round(mech.variance(0), 3)
    2.0
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        sensitivity: float,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)

    @property
    def scale(self) -> float:
        """The Laplace scale ``b``."""
        if self.sensitivity == 0:
            return 0.0
        denom = self.epsilon - math.log1p(-self.delta) if self.delta < 1 else math.inf
        return self.sensitivity / denom if denom > 0 else math.inf

    def _noisy(self, x: np.ndarray) -> np.ndarray:
        b = self.scale
        if b == 0:
            return x.copy()
        return laplace_fp(x, b, self._rng, sensitivity=self.sensitivity)

    def randomise(self, value: Any) -> Any:
        """Return ``value`` plus Laplace noise (scalar in, scalar out; array in, array out)."""
        if type(value) in (float, int) and type(self)._post is Laplace._post:
            return self._randomise_scalar(float(value))
        x, scalar = self._values(value)
        out = self._post(self._noisy(x))
        return float(out) if scalar else out

    def _randomise_scalar(self, value: float) -> float:
        """Fast path for one Python number (same distribution as the array path)."""
        b = self.scale
        if b == 0:
            if not math.isfinite(value):
                raise InputError("value must be finite (NaN/inf cannot be randomised privately)")
            return value
        key = (b, self.sensitivity)
        if getattr(self, "_fp_key", None) != key:
            self._fp_key, self._fp = key, fp_laplace_params(b, self.sensitivity)
        g, t = self._fp
        return laplace_fp_scalar(value, g, t, self._rng)

    def _post(self, y: np.ndarray) -> np.ndarray:
        return y

    def variance(self, value: Any = None) -> float:
        """Exact variance of the noise (``~2 b^2``)."""
        b = self.scale
        if b == 0:
            return 0.0
        g, t = fp_laplace_params(b, self.sensitivity)
        return discrete_laplace_variance(t) * g * g

    def _noise_halfwidth(self, alpha: float) -> float:
        return laplace_halfwidth(self.scale, self.sensitivity, alpha)


def _clipped_moments(b: float, d1: float, d2: float) -> tuple[float, float]:
    """Mean and second moment of Laplace(b) noise clipped to ``[-d1, d2]`` (d1, d2 >= 0)."""
    if b == 0:
        return 0.0, 0.0
    mean = b / 2 * (math.exp(-d1 / b) - math.exp(-d2 / b))
    second = sum(b * b - math.exp(-d / b) * (b * b + b * d) for d in (d1, d2))
    return mean, second


def _grid_moments(z: np.ndarray, y: np.ndarray, b: float) -> tuple[float, float]:
    """Mean and variance of the error ``y`` over a noise grid ``z`` of density ``e^{-|z|/b}``."""
    w = np.exp(-np.abs(z) / b)
    w /= w.sum()
    m = float((w * y).sum())
    return m, float((w * y * y).sum()) - m * m


class _LaplaceOnInterval(Laplace, TruncationAndFoldingMixin):
    """Laplace noise on an input clipped to ``[lower, upper]``, output mapped back into it.

    Shared constructor (diffprivlib's keyword signature), ``randomise`` and half-width of
    :class:`LaplaceTruncated` and :class:`LaplaceFolded`; subclasses choose the output map
    :meth:`_into_bounds` (clipping or folding, both post-processing of the Laplace mechanism of
    Dwork, McSherry, Nissim & Smith 2006).
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        sensitivity: float,
        lower: float,
        upper: float,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=random_state
        )
        self._set_bounds(lower, upper)

    def _into_bounds(self, y: np.ndarray) -> np.ndarray:
        """Map noisy values into ``[lower, upper]``.

        Parameters
        ----------
        y : numpy.ndarray
            Noisy values.

        Returns
        -------
        numpy.ndarray
            The values inside ``[lower, upper]``.
        """
        raise NotImplementedError  # pragma: no cover

    def _moments(self, value: Any) -> tuple[float, float]:
        """Mean and variance of ``randomise(value) - value`` (the subclass's output map)."""
        raise NotImplementedError  # pragma: no cover

    def bias(self, value: Any) -> float:
        return self._moments(value)[0]

    def variance(self, value: Any) -> float:
        return self._moments(value)[1]

    def randomise(self, value: Any) -> Any:
        x, scalar = self._values(value)
        out = self._into_bounds(self._noisy(self._truncate(x)))
        return float(out) if scalar else out

    def _noise_halfwidth(self, alpha: float) -> float:
        return min(super()._noise_halfwidth(alpha), self.upper - self.lower)


class LaplaceTruncated(_LaplaceOnInterval):
    """Laplace mechanism whose output is clipped to ``[lower, upper]`` (post-processing).

    Examples
    --------
    >>> from veil.dp.mechanisms import LaplaceTruncated
    >>> m = LaplaceTruncated(epsilon=0.5, sensitivity=1, lower=0, upper=10)
    >>> 0 <= m.randomise(3) <= 10
    True
    """

    def _into_bounds(self, y: np.ndarray) -> np.ndarray:
        return self._truncate(y)

    def _moments(self, value: Any) -> tuple[float, float]:
        v = float(np.clip(value, self.lower, self.upper))
        mean, second = _clipped_moments(self.scale, v - self.lower, self.upper - v)
        return mean, second - mean * mean


class LaplaceFolded(_LaplaceOnInterval):
    """Laplace mechanism whose output is folded (reflected) into ``[lower, upper]``.

    Examples
    --------
    >>> from veil.dp.mechanisms import LaplaceFolded
    >>> 0 <= LaplaceFolded(epsilon=1, sensitivity=1, lower=0, upper=1).randomise(0.5) <= 1
    True
    """

    def _into_bounds(self, y: np.ndarray) -> np.ndarray:
        return self._fold(y)

    def _moments(self, value: Any) -> tuple[float, float]:
        v = float(np.clip(value, self.lower, self.upper))
        b = self.scale
        if b == 0:
            return 0.0, 0.0
        z = np.linspace(-40 * b, 40 * b, 400_001)
        return _grid_moments(z, self._fold(v + z) - v, b)


#: Least acceptance rate of LaplaceBoundedDomain's resampling (at most a million proposals per
#: value on average); narrower domains for their scale are refused rather than left to hang.
_MIN_ACCEPT = 1e-6


class LaplaceBoundedDomain(LaplaceTruncated):
    """Bounded Laplace: resample until the output lies in ``[lower, upper]``.

    The scale is enlarged so that the renormalisation does not break ``epsilon``-DP
    (Holohan, Antonatos, Braghin & Mac Aonghusa 2018, "The bounded Laplace mechanism in
    differential privacy"): the smallest ``b`` with
    ``sensitivity / b + log max C(q') / C(q) <= epsilon - log(1 - delta)`` where
    ``C(q) = 1 - (exp(-(q - lower)/b) + exp(-(upper - q)/b)) / 2`` is the mass inside the
    domain.  Unbiased near the centre, no mass piled on the bounds (unlike truncation).

    Examples
    --------
    >>> from veil.dp.mechanisms import LaplaceBoundedDomain
    >>> m = LaplaceBoundedDomain(epsilon=1, sensitivity=1, lower=0, upper=10)
    >>> m.scale > 1.0
    True
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._scale = self._find_scale()
        b = self._scale
        if b:  # the least acceptance rate of randomise's resampling (a value on a bound)
            accept = -math.expm1(-(self.upper - self.lower) / b) / 2 if math.isfinite(b) else 0
            if not accept >= _MIN_ACCEPT:
                raise ConfigError(
                    f"LaplaceBoundedDomain: the domain [{self.lower:g}, {self.upper:g}] is too "
                    f"narrow for the noise scale {b:.3g} (a release would draw about "
                    f"{1 / accept if accept else math.inf:.2g} proposals); widen the domain or "
                    "raise epsilon"
                )

    @property
    def scale(self) -> float:  # type: ignore[override]
        return getattr(self, "_scale", None) or super().scale

    def _log_ratio(self, b: float) -> float:
        lo, hi, d = self.lower, self.upper, self.sensitivity
        q = np.linspace(lo, hi, 2001)
        c = (lo + hi) / 2  # C is unimodal with its maximum at the centre
        q2 = np.where(q < c, np.minimum(q + d, c), q)
        mass = 1 - 0.5 * (np.exp(-(q - lo) / b) + np.exp(-(hi - q) / b))
        mass2 = 1 - 0.5 * (np.exp(-(q2 - lo) / b) + np.exp(-(hi - q2) / b))
        return float(np.max(np.log(mass2) - np.log(mass)))

    def _find_scale(self) -> float:
        if self.sensitivity == 0:
            return 0.0
        if self.upper == self.lower:
            raise ConfigError("LaplaceBoundedDomain needs lower < upper")
        target = self.epsilon - math.log1p(-self.delta)
        lo = self.sensitivity / target  # plain Laplace scale: always too small here
        hi = lo * 2
        while self.sensitivity / hi + self._log_ratio(hi) > target:
            hi *= 2
        for _ in range(60):  # relative precision 2^-60 of the bracket: far below the margin
            mid = (lo + hi) / 2
            if self.sensitivity / mid + self._log_ratio(mid) > target:
                lo = mid
            else:
                hi = mid
        return hi * (1 + 2.0**-20)  # margin for the grid discretisation

    def effective_epsilon(self) -> float:
        """The epsilon a plain Laplace mechanism of the same scale would have."""
        return self.sensitivity / self.scale if self.scale else math.inf

    def randomise(self, value: Any) -> Any:
        x, scalar = self._values(value)
        x = self._truncate(x).ravel()
        b = self.scale
        if b == 0:
            out = x
        else:
            out = np.empty_like(x)
            todo = np.arange(x.size)
            while todo.size:
                y = laplace_fp(x[todo], b, self._rng, sensitivity=self.sensitivity)
                ok = (y >= self.lower) & (y <= self.upper)
                out[todo[ok]] = y[ok]
                todo = todo[~ok]
        out = out.reshape(np.shape(value))
        return float(out) if scalar else out

    def _moments(self, value: Any) -> tuple[float, float]:
        v = float(np.clip(value, self.lower, self.upper))
        b = self.scale
        if b == 0:  # sensitivity 0: no noise (the density below would divide by 0)
            return 0.0, 0.0
        z = np.linspace(self.lower - v, self.upper - v, 200_001)
        return _grid_moments(z, z, b)


class Snapping(LaplaceTruncated):
    """diffprivlib's ``Snapping`` name: here simply the FP-safe truncated Laplace.

    Mironov's snapping mechanism exists to make floating-point Laplace safe; every Veil Laplace
    mechanism already is (exact noise on a power-of-two grid), so ``Snapping`` is the
    truncated mechanism with diffprivlib's signature.

    Examples
    --------
    >>> from veil.dp.mechanisms import Snapping
    >>> 0 <= Snapping(epsilon=1, sensitivity=1, lower=0, upper=5).randomise(2) <= 5
    True
    """

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        lower: float,
        upper: float,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=0.0,
            sensitivity=sensitivity,
            lower=lower,
            upper=upper,
            random_state=random_state,
        )

    def effective_epsilon(self) -> float:
        """The epsilon actually guaranteed (equal to ``epsilon``: no snapping slack)."""
        return self.epsilon
