"""Geometric (two-sided, i.e. discrete Laplace) mechanisms on integers.

Ghosh, Roughgarden & Sundararajan (2009), "Universally utility-maximizing privacy
mechanisms".  Noise ``P(z) ~ exp(-epsilon |z| / sensitivity)`` is sampled exactly
(:func:`veil.dp._samplers.discrete_laplace`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._samplers import discrete_laplace, discrete_laplace_variance
from veil.dp.mechanisms._base import DPMechanism, as_float
from veil.errors import ConfigError, InputError

__all__ = ["Geometric", "GeometricTruncated", "GeometricFolded"]


_I64 = np.iinfo(np.int64)
_SAFE = 2**62  # |x|, |z| below it: x + z cannot overflow int64
_SMALL = 2**60  # bounds and noisy values below it: a fold's int64 arithmetic cannot overflow


def _int_array(
    value: Any, refusal: str = "geometric mechanisms randomise integers only"
) -> np.ndarray:
    """The integer ``value`` exactly: an int64 array, or an object array of Python ints when
    some value lies beyond int64.

    Casting to int64 wrapped ``2**63`` (uint64) to ``-2**63``, turned an integral float such as
    ``1e300`` into ``-2**63`` and refused ``2**64`` (object): one unit of sensitivity apart,
    ``2**63 - 1`` and ``2**63`` were clipped to opposite bounds by :class:`GeometricTruncated`,
    and ``2**64 - 1`` released while ``2**64`` raised.  Every integer now keeps its value."""
    arr = np.asarray(value)
    if arr.dtype.kind == "i" or (
        arr.dtype.kind == "u" and (arr.size == 0 or arr.max() <= _I64.max)
    ):
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
            raise InputError(refusal)
        if arr.size == 0 or np.abs(arr).max() < 2.0**63:
            return arr.astype(np.int64)
    elif arr.dtype.kind not in "uO":
        raise InputError(refusal)
    cells = []
    for v in arr.ravel().tolist():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise InputError(refusal)
        if isinstance(v, (float, np.floating)) and not (math.isfinite(v) and float(v).is_integer()):
            raise InputError(refusal)
        cells.append(int(v))
    out = np.empty(len(cells), dtype=object)
    out[:] = cells
    return _narrow(out.reshape(arr.shape))


def _narrow(x: np.ndarray) -> np.ndarray:
    """int64 when every value fits, else the object array of Python ints unchanged."""
    x = np.asarray(x, dtype=x.dtype if isinstance(x, np.ndarray) else object)  # 0-d results
    if x.dtype == object and (x.size == 0 or (min(x.flat) >= _I64.min and max(x.flat) <= _I64.max)):
        return x.astype(np.int64)
    return x


def _within(x: np.ndarray, limit: int) -> bool:
    """Whether every value of the int64 array ``x`` lies strictly inside ``+-limit`` (min and
    max, not ``abs``: ``abs(-2**63)`` wraps to ``-2**63`` and passed any such test)."""
    return x.size == 0 or (-limit < x.min() and x.max() < limit)


def add_int_noise(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``x + z`` exactly (int64 when it fits, else Python ints): int64 arithmetic wrapped
    silently near ``+-2**63``.  The choice of dtype reads the noisy sums only."""
    z = np.asarray(z, dtype=np.int64).reshape(x.shape)
    if x.dtype != object and _within(x, _SAFE) and _within(z, _SAFE):
        return x + z
    return _narrow(x.astype(object) + z.astype(object))


class Geometric(DPMechanism):
    """The geometric mechanism: integer value plus exact discrete Laplace noise.

    Parameters
    ----------
    epsilon : float
    sensitivity : int, default 1
    random_state : None, int or numpy Generator

    Examples
    --------
    >>> from veil.dp.mechanisms import Geometric
    >>> isinstance(Geometric(epsilon=1.0).randomise(5), int)
    True
    """

    _needs_positive_epsilon = True

    def __init__(self, *, epsilon: float, sensitivity: int = 1, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        s = as_float("sensitivity", sensitivity)
        if s < 0 or s != int(s):
            raise ConfigError("the geometric mechanism needs a non-negative integer sensitivity")
        self.sensitivity = int(s)

    @property
    def scale(self) -> float:
        """Scale ``sensitivity / epsilon`` of the discrete Laplace noise."""
        return self.sensitivity / self.epsilon

    def _noisy(self, x: np.ndarray) -> np.ndarray:
        if self.sensitivity == 0:
            return x.copy()
        exact_scale = Fraction(self.sensitivity) / Fraction(self.epsilon)
        return add_int_noise(x, discrete_laplace(exact_scale, x.size, self._rng))

    def _post(self, y: np.ndarray) -> np.ndarray:
        return y

    def randomise(self, value: Any) -> Any:
        """Return ``value`` (integer) plus exact two-sided geometric noise."""
        x = _int_array(value)
        out = self._post(self._noisy(x))
        return int(out) if out.ndim == 0 else out

    def variance(self, value: Any = None) -> float:
        """``2 q / (1 - q)^2`` with ``q = exp(-epsilon / sensitivity)``."""
        return 0.0 if self.sensitivity == 0 else discrete_laplace_variance(self.scale)

    def _noise_halfwidth(self, alpha: float) -> float:
        if self.sensitivity == 0:
            return 0.0
        q = math.exp(-1.0 / self.scale)
        return float(max(math.ceil(math.log(alpha * (1 + q) / 2) / math.log(q)) - 1, 0))


class _Bounded(Geometric):
    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: int = 1,
        lower: int,
        upper: int,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)
        lo, hi = as_float("lower", lower), as_float("upper", upper)
        if lo != int(lo) or hi != int(hi) or lo > hi:
            raise ConfigError("lower/upper must be integers with lower <= upper")
        self.lower, self.upper = int(lo), int(hi)

    def _pmf_moments(self, value: Any) -> tuple[float, float]:
        v = int(np.clip(int(value), self.lower, self.upper))
        if self.sensitivity == 0:
            return 0.0, 0.0
        r = int(60 * self.scale) + (self.upper - self.lower) + 2
        z = np.arange(-r, r + 1)
        w = np.exp(-np.abs(z) / self.scale)
        w /= w.sum()
        y = self._post(v + z) - v
        m = float((w * y).sum())
        return m, float((w * y * y).sum()) - m * m

    def randomise(self, value: Any) -> Any:
        lo, hi = self.lower, self.upper
        x = _int_array(value)
        small = -_SMALL < lo and hi < _SMALL
        if x.dtype == object or not small:  # clipped exactly: Python ints beyond int64
            x = x.astype(object)
        y = self._noisy(np.asarray(np.clip(x, lo, hi), dtype=x.dtype))  # 0-d: an array
        if small and y.dtype != object and _within(y, _SMALL):
            out = self._post(y)  # int64: the fold's arithmetic stays below 2**62
        else:  # Python ints: int64 could wrap (bounds or noisy values near 2**63)
            z = np.asarray(self._post(y.astype(object).reshape(-1)), dtype=object)  # 1-d: a
            out = _narrow(z.reshape(y.shape))  # 0-d object array's arithmetic gives Python ints
        return int(out) if out.ndim == 0 else out

    def bias(self, value: Any) -> float:
        return self._pmf_moments(value)[0]

    def variance(self, value: Any = None) -> float:
        return self._pmf_moments(self.lower if value is None else value)[1]

    def _noise_halfwidth(self, alpha: float) -> float:
        return min(super()._noise_halfwidth(alpha), float(self.upper - self.lower))


class GeometricTruncated(_Bounded):
    """Geometric mechanism with the output clipped to ``[lower, upper]``.

    Examples
    --------
    >>> from veil.dp.mechanisms import GeometricTruncated
    >>> 0 <= GeometricTruncated(epsilon=1, lower=0, upper=3).randomise(2) <= 3
    True
    """

    def _post(self, y: np.ndarray) -> np.ndarray:
        return np.clip(y, self.lower, self.upper)


class GeometricFolded(_Bounded):
    """Geometric mechanism with the output reflected into ``[lower, upper]``
    (about ``lower - 1/2`` and ``upper + 1/2``).

    Examples
    --------
    >>> from veil.dp.mechanisms import GeometricFolded
    >>> 0 <= GeometricFolded(epsilon=1, lower=0, upper=3).randomise(2) <= 3
    True
    """

    def _post(self, y: np.ndarray) -> np.ndarray:
        lo, width = self.lower, self.upper - self.lower + 1
        r = np.mod(y - lo, 2 * width)
        return lo + np.where(r >= width, 2 * width - 1 - r, r)
