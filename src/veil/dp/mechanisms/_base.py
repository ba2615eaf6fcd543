"""Base class and parameter checks shared by the mechanisms (diffprivlib-compatible)."""

from __future__ import annotations

import copy as _copy
import math
from numbers import Real
from typing import Any

import numpy as np

from veil.dp._rng import BitSource, resolve_rng
from veil.dp._samplers import _add_grid_noise, all_finite
from veil.errors import ConfigError, InputError

__all__ = [
    "DPMachine",
    "DPMechanism",
    "GridNoiseMechanism",
    "TruncationAndFoldingMixin",
    "check_epsilon_delta",
    "as_float",
]


def as_float(name: str, value: Any) -> float:
    """``value`` as a finite float, or :class:`ConfigError` naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        raise ConfigError(f"{name} must be a real number, got {type(value).__name__}")
    out = float(value)
    if math.isnan(out):
        raise ConfigError(f"{name} must not be NaN")
    return out


def check_epsilon_delta(epsilon: Any, delta: Any) -> tuple[float, float]:
    """Validate a privacy budget: ``epsilon >= 0``, ``0 <= delta <= 1``, not both zero."""
    eps = as_float("epsilon", epsilon)
    dlt = as_float("delta", delta)
    if eps < 0 or math.isinf(eps):
        raise ConfigError(f"epsilon must be a non-negative finite number, got {eps}")
    if not 0.0 <= dlt <= 1.0:
        raise ConfigError(f"delta must be in [0, 1], got {dlt}")
    if eps + dlt == 0:
        raise ConfigError("epsilon and delta cannot both be zero")
    return eps, dlt


class DPMachine:
    """Root of every randomising object (diffprivlib's ``DPMachine``): ``randomise`` and ``copy``.

    :class:`DPMechanism` adds privacy parameters and accuracy helpers; machines whose
    ``randomise`` takes a function or a matrix (``Vector``, ``Bingham``) derive from it too.

    Examples
    --------
    Code that accepts any randomiser checks for ``DPMachine``:

    >>> from veil.dp.mechanisms import Bingham, Laplace
    >>> machines = [Laplace(epsilon=1.0, sensitivity=1.0), Bingham(epsilon=1.0)]
    >>> all(isinstance(m, DPMachine) for m in machines)
    True
    >>> twin = machines[0].copy()  # same parameters, same (secure) generator
    >>> twin is not machines[0], twin.epsilon
    (True, 1.0)
    """

    def randomise(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def copy(self) -> DPMachine:
        """A shallow copy (sharing the random generator)."""
        return _copy.copy(self)


class DPMechanism(DPMachine):
    """Base of every mechanism: privacy parameters, randomness and accuracy helpers.

    Parameters
    ----------
    epsilon : float
    delta : float
    random_state : None, int or numpy Generator
        ``None`` (default) uses the cryptographically secure generator; a seed is for tests
        only and emits :class:`~veil.errors.InsecureRandomWarning`.

    Notes
    -----
    Sub-classes implement :meth:`_noise` / :meth:`randomise`, :meth:`variance` and
    :meth:`_noise_halfwidth`.  ``randomise`` accepts a scalar (returns a scalar) or an
    array-like (returns an array, each element randomised independently with the same
    parameters, i.e. each element costs the mechanism's full budget).

    Examples
    --------
    Plan the accuracy of a Laplace release before making it, then release:

    >>> from veil.dp.mechanisms import Laplace
    >>> mech = Laplace(epsilon=0.5, sensitivity=1.0)  # scale b = 2
    >>> round(mech.variance(0.0), 3)  # 2 b^2
    8.0
    >>> low, high = mech.confidence_interval(alpha=0.05)  # b ln(1 / alpha)
    >>> round(high, 3)
    5.991
    >>> noisy = mech.randomise(120.0)  # secure noise: not reproducible, not printed
    >>> isinstance(noisy, float), mech.randomise([1.0, 2.0, 3.0]).shape
    (True, (3,))
    >>> mech.confidence_interval(0.05, value=noisy) == (noisy + low, noisy + high)
    True
    """

    sensitivity: float = 0.0
    #: set by mechanisms that are only defined for ``epsilon > 0`` (checked before any work)
    _needs_positive_epsilon: bool = False

    def __init__(self, *, epsilon: float, delta: float, random_state: Any = None) -> None:
        if self._needs_positive_epsilon and not as_float("epsilon", epsilon) > 0:
            raise ConfigError(f"{type(self).__name__} needs epsilon > 0")
        self.epsilon, self.delta = self._check_epsilon_delta(epsilon, delta)
        self._rng: BitSource = resolve_rng(random_state)
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    @classmethod
    def _check_epsilon_delta(cls, epsilon: Any, delta: Any) -> tuple[float, float]:
        return check_epsilon_delta(epsilon, delta)

    @staticmethod
    def _check_sensitivity(sensitivity: Any) -> float:
        s = as_float("sensitivity", sensitivity)
        if s < 0 or math.isinf(s):
            raise ConfigError(f"sensitivity must be a non-negative finite number, got {s}")
        return s

    @staticmethod
    def _values(value: Any) -> tuple[np.ndarray, bool]:
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise InputError(f"value must be numeric, got dtype {arr.dtype}")
        arr = np.asarray(arr, dtype=np.float64)  # no copy when already float64
        if not all_finite(arr):
            raise InputError("value must be finite (NaN/inf cannot be randomised privately)")
        return arr, arr.ndim == 0

    # ------------------------------------------------------------------ API
    def randomise(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def bias(self, value: Any) -> float:
        """Expected ``randomise(value) - value`` (0 for unbiased mechanisms)."""
        return 0.0

    def variance(self, value: Any) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def mse(self, value: Any) -> float:
        """Mean squared error ``variance + bias^2``."""
        return self.variance(value) + self.bias(value) ** 2

    def _noise_halfwidth(self, alpha: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def confidence_interval(self, alpha: float = 0.05, value: Any = None) -> tuple[float, float]:
        """Interval holding the noise with probability at least ``1 - alpha``.

        Known before anything is released (accuracy planning).  With ``value`` (a released
        output) the interval is centred on it: a ``1 - alpha`` confidence interval for the
        true value.

        Parameters
        ----------
        alpha : float in (0, 1)
        value : float, optional

        Returns
        -------
        (low, high) : tuple of float
        """
        a = as_float("alpha", alpha)
        if not 0.0 < a < 1.0:
            raise ConfigError(f"alpha must be in (0, 1), got {a}")
        h = float(self._noise_halfwidth(a))
        c = 0.0 if value is None else float(value)
        return (c - h, c + h)

    def copy(self) -> DPMechanism:
        """A copy sharing the random generator."""
        return _copy.copy(self)

    def __repr__(self) -> str:
        params = ", ".join(
            f"{k}={v!r}"
            for k, v in vars(self).items()
            if not k.startswith("_") and k != "random_state"
        )
        return f"{type(self).__name__}({params})"


class GridNoiseMechanism(DPMechanism):
    """Exact integer noise on a power-of-two grid: output ``(rint(value / g) + Z) g``.

    The value is rounded to the grid ``g`` (exact in float64) and symmetric integer noise
    ``Z`` is added, so the output depends only on the exact integer ``rint(value / g) + Z``
    (the floating-point-safe construction of :mod:`veil.dp._samplers`).  Sub-classes give
    :meth:`_grid_step` and :meth:`_noise`; ``randomise`` and ``bias`` are shared.
    """

    def _grid_step(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _noise(self, size: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def randomise(self, value: Any) -> Any:
        """Return ``value`` rounded to the grid plus exact integer grid noise (elementwise)."""
        x, scalar = self._values(value)
        if self.sensitivity == 0:
            out = x.copy()
        else:
            g = self._grid_step()
            z = self._noise(x.size).reshape(-1)  # in one draw, as always
            taken = 0

            def draw(k: int) -> np.ndarray:  # the next k draws, as _add_grid_noise asks
                nonlocal taken
                taken += k
                return z[taken - k : taken]

            # the samplers' rounding to the grid, values beyond max float * g included
            out = _add_grid_noise(x, g, draw)
        return float(out) if scalar else out

    def bias(self, value: Any) -> float:
        """The deterministic rounding offset ``rint(value / g) g - value`` (``|.| <= g / 2``;
        the noise is symmetric)."""
        if self.sensitivity == 0:
            return 0.0
        g = self._grid_step()
        v = float(value)
        return float(np.rint(v / g) * g - v)


class TruncationAndFoldingMixin:
    """Output bounds ``[lower, upper]`` for truncated / folded mechanisms (post-processing).

    Truncation clips a noisy value into the bounds, folding reflects it at them; both are
    post-processing and cost no privacy.

    Examples
    --------
    >>> from veil.dp.mechanisms import LaplaceFolded, LaplaceTruncated
    >>> trunc = LaplaceTruncated(epsilon=0.5, sensitivity=1.0, lower=0, upper=10)
    >>> isinstance(trunc, TruncationAndFoldingMixin), (trunc.lower, trunc.upper)
    (True, (0.0, 10.0))
    >>> out = trunc.randomise([-5.0, 3.0, 50.0])
    >>> bool(((0 <= out) & (out <= 10)).all())
    True
    >>> out = LaplaceFolded(epsilon=0.5, sensitivity=1.0, lower=0, upper=10).randomise(50.0)
    >>> 0 <= out <= 10
    True
    """

    lower: float
    upper: float

    def _set_bounds(self, lower: Any, upper: Any) -> None:
        lo, hi = as_float("lower", lower), as_float("upper", upper)
        if lo > hi:
            raise ConfigError(f"lower ({lo}) must not exceed upper ({hi})")
        self.lower, self.upper = lo, hi

    def _truncate(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, self.lower, self.upper)

    def _fold(self, x: np.ndarray) -> np.ndarray:
        lo, hi = self.lower, self.upper
        if hi == lo:
            return np.full_like(x, lo)
        # bounds whose doubled width overflows float64 (e.g. +-1e308) made ``x - lo`` or
        # ``2 width`` infinite and the fold NaN: fold a quarter of everything and scale back
        # (exact for normal floats; the result stays in [lo, hi]).  A noisy value that
        # overflowed to +-inf folds as the largest float of its sign (post-processing).
        s = 1.0 if math.isfinite(2 * (hi - lo)) else 0.25
        big = np.finfo(np.float64).max
        x = np.clip(np.asarray(x, dtype=np.float64), -big, big)
        lo_s, width = lo * s, hi * s - lo * s
        y = np.mod(x * s - lo_s, 2 * width)
        folded = np.clip((lo_s + np.where(y > width, 2 * width - y, y)) / s, lo, hi)
        # a value already inside is its own fold (``lo + (x - lo)`` loses its low bits when
        # the bounds are far larger than it)
        return np.where((x >= lo) & (x <= hi), x, folded)
