"""The sparse vector technique (AboveThreshold), floating-point safe.

Lyu, Su & Li (2017), "Understanding the sparse vector technique for differential privacy",
Algorithm 1: with ``eps1 = eps2 = eps / 2`` the noisy threshold is ``T + Lap(Delta / eps1)``
and each query gets ``Lap(2 c Delta / eps2)`` (``c Delta / eps2`` for monotonic queries); the
mechanism answers ``True``/``False`` and halts after ``c`` positives.  Total cost: ``eps``,
however many queries are asked.

Noise is exact discrete Laplace on one shared power-of-two grid (the shift arguments of the
proof then hold in whole grid steps; rounding is absorbed in the sensitivity, see
:mod:`veil.dp._samplers`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._samplers import discrete_laplace, grid_for
from veil.dp.mechanisms._base import DPMechanism, as_float
from veil.errors import BudgetError, ConfigError

__all__ = ["SparseVector", "AboveThreshold"]


class SparseVector(DPMechanism):
    """Sparse vector: which queries exceed a threshold, up to ``c`` positives.

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        Sensitivity of every query.
    threshold : float
    c : int, default 1
        Number of positive answers before halting.
    monotonic : bool
        Queries all move in the same direction between neighbours.

    Examples
    --------
    >>> from veil.dp.mechanisms import SparseVector
    >>> svt = SparseVector(epsilon=1.0, sensitivity=1.0, threshold=100, c=1)
    >>> answers = svt.randomise([1, 2, 500, 3])
    >>> bool(answers[-1]) and len(answers) <= 4
    True
    """

    _needs_positive_epsilon = True

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        threshold: float,
        c: int = 1,
        monotonic: bool = False,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)
        if self.sensitivity == 0:
            raise ConfigError("the sparse vector technique needs sensitivity > 0")
        self.threshold = as_float("threshold", threshold)
        if not math.isfinite(self.threshold):
            raise ConfigError("threshold must be finite")
        if int(c) != c or c < 1:
            raise ConfigError("c must be a positive integer")
        self.c = int(c)
        self.monotonic = bool(monotonic)
        eps1 = self.epsilon / 2
        eps2 = self.epsilon - eps1
        b1 = self.sensitivity / eps1
        b2 = (1 if monotonic else 2) * self.c * self.sensitivity / eps2
        self._g = grid_for(min(b1, b2))
        d_g = math.floor(self.sensitivity / self._g) + 1  # sensitivity in grid steps
        self._t1 = Fraction(math.ceil(d_g / eps1 * (1 + 1e-12)))
        self._t2 = Fraction(math.ceil((1 if monotonic else 2) * self.c * d_g / eps2 * (1 + 1e-12)))
        self._noisy_t: int | None = None
        self.positives = 0

    @property
    def halted(self) -> bool:
        """True once ``c`` positive answers were given."""
        return self.positives >= self.c

    def _threshold_steps(self) -> int:
        if self._noisy_t is None:
            t = round(self.threshold / self._g)
            self._noisy_t = int(t + discrete_laplace(self._t1, 1, self._rng)[0])
        return self._noisy_t

    def randomise(self, value: Any) -> Any:
        """Answer the queries ``value`` in order, stopping at the ``c``-th positive.

        Returns an array of bool for the answered prefix (a scalar query gives a bool).
        Raises :class:`~veil.errors.BudgetError` once the mechanism has halted.
        """
        if self.halted:
            raise BudgetError("the sparse vector has already given its c positive answers")
        x, scalar = self._values(value)
        x = x.ravel()
        t = self._threshold_steps()
        steps = np.rint(x / self._g) + discrete_laplace(self._t2, x.size, self._rng)
        above = steps >= t
        need = self.c - self.positives
        pos = np.flatnonzero(above)
        if pos.size >= need:
            above = above[: pos[need - 1] + 1]
            self.positives = self.c
        else:
            self.positives += pos.size
        return bool(above[0]) if scalar else above

    def bias(self, value: Any = None) -> float:
        raise NotImplementedError("bias is not defined for the sparse vector technique")

    def variance(self, value: Any = None) -> float:
        raise NotImplementedError("variance is not defined for the sparse vector technique")

    def _noise_halfwidth(self, alpha: float) -> float:
        """Accuracy (Dwork & Roth 2014, Theorem 3.24 style): with prob ``>= 1 - alpha`` over
        ``k = 1`` query, the threshold and query noise together stay below this margin."""
        b1 = float(self._t1) * self._g
        b2 = float(self._t2) * self._g
        return b1 * math.log(2 / alpha) + b2 * math.log(2 / alpha)


class AboveThreshold(SparseVector):
    """AboveThreshold (Dwork & Roth 2014, Algorithm 1): the sparse vector with ``c = 1``.

    ``randomise(queries)`` returns the index of the first query judged above the threshold,
    or ``None`` when none was.

    Examples
    --------
    >>> from veil.dp.mechanisms import AboveThreshold
    >>> AboveThreshold(epsilon=2.0, sensitivity=1.0, threshold=50).randomise([0, 0, 1000])
    2
    """

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        threshold: float,
        monotonic: bool = False,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            sensitivity=sensitivity,
            threshold=threshold,
            c=1,
            monotonic=monotonic,
            random_state=random_state,
        )

    def randomise(self, value: Any) -> Any:  # type: ignore[override]
        answers = np.atleast_1d(super().randomise(np.atleast_1d(value)))
        hit = np.flatnonzero(answers)
        return int(hit[0]) if hit.size else None
