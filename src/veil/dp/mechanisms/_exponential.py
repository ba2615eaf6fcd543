"""Selection mechanisms: exponential mechanism, permute-and-flip, report-noisy-max.

* :class:`Exponential` — McSherry & Talwar (2007): ``P(r) ~ measure_r * exp(eps u_r / 2 Delta)``
  (``eps u_r / Delta`` for monotonic utilities); exact rejection sampling with or without a
  base measure (exact coins, see :mod:`veil.dp.mechanisms._coins`).
* :class:`PermuteAndFlip` — McKenna & Sheldon (2020): never worse in expected utility than the
  exponential mechanism; every coin is an *exact* ``Bernoulli(exp(-gamma))``.
* :class:`ReportNoisyMax` — Dwork & Roth (2014, Claim 3.9): argmax of FP-safe Laplace-noised
  scores (ties on the noise grid, probability ~2^-30, broken uniformly at random).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veil.dp._samplers import bernoulli_exp, laplace_fp
from veil.dp.mechanisms._base import DPMechanism
from veil.dp.mechanisms._coins import sample_exact_gamma, sample_measure_gamma
from veil.errors import ConfigError, InputError

__all__ = ["Exponential", "PermuteAndFlip", "ReportNoisyMax", "sample_log_weights"]


def sample_log_weights(logw: np.ndarray, rng: Any) -> int:
    """Index drawn with probability proportional to ``exp(logw)`` (log-space, float64).

    The cumulative distribution is built relative to the largest weight, so relative errors
    per probability stay below ~1e-13 and only weights below ``exp(-700)`` of the largest
    are rounded to zero.

    References
    ----------
    F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS, 2007.

    Examples
    --------
    The exponential mechanism's draw, with log-weights ``epsilon * utility / (2 sensitivity)``:

    >>> from veil.dp.mechanisms import resolve_rng
    >>> rng = resolve_rng(7)  # seeded for the example only; None is the secure default
    >>> utility = np.array([0.0, 3.0, 1.0])
    >>> draws = [sample_log_weights(1.0 * utility / 2, rng) for _ in range(1000)]
    >>> np.bincount(draws).tolist()  # expected about [140, 629, 231]
    [144, 628, 228]
    >>> sample_log_weights(np.array([-np.inf, 0.0, -np.inf]), rng)  # one candidate left
    1
    """
    lw = np.asarray(logw, dtype=np.float64)
    if lw.size == 0 or not np.isfinite(lw).any():
        raise InputError("no candidate has a positive weight")
    w = np.exp(lw - np.max(lw))
    cdf = np.cumsum(w)
    u = rng.random() * cdf[-1]
    return int(min(np.searchsorted(cdf, u, side="right"), lw.size - 1))


class _Selection(DPMechanism):
    _needs_positive_epsilon = True

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        utility: Any,
        monotonic: bool = False,
        candidates: Any = None,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)
        u = np.asarray(utility, dtype=np.float64).ravel()
        if u.size == 0 or not np.isfinite(u).all():
            raise InputError("utility must be a non-empty list of finite numbers")
        self.utility = u
        self.monotonic = bool(monotonic)
        if candidates is not None and len(candidates) != u.size:
            raise ConfigError("candidates and utility must have the same length")
        self.candidates = None if candidates is None else list(candidates)

    @property
    def _factor(self) -> float:
        """Multiplier of the utility in the exponent: ``eps / (2 Delta)`` or ``eps / Delta``."""
        if self.sensitivity == 0:
            return np.inf
        return self.epsilon / (self.sensitivity if self.monotonic else 2 * self.sensitivity)

    def _gamma(self) -> np.ndarray:
        """Exponents ``gamma_r = factor * (u* - u_r)`` (``inf`` for losers at sensitivity 0)."""
        u = self.utility
        if self.sensitivity:
            return (u.max() - u) * self._factor
        return np.where(u == u.max(), 0.0, np.inf)

    def _out(self, idx: int) -> Any:
        return idx if self.candidates is None else self.candidates[idx]

    def bias(self, value: Any = None) -> float:
        raise NotImplementedError("bias is not defined for a selection mechanism")

    def variance(self, value: Any = None) -> float:
        raise NotImplementedError("variance is not defined for a selection mechanism")

    def _noise_halfwidth(self, alpha: float) -> float:
        # utility gap: P(u* - u_out >= 2 Delta / eps * (ln m + ln 1/alpha)) <= alpha
        m = self.utility.size
        return float((np.log(m) + np.log(1 / alpha)) / self._factor)

    def confidence_interval(self, alpha: float = 0.05, value: Any = None) -> tuple[float, float]:
        """Interval for the utility loss ``u* - u(output)``: ``(0, h)`` with prob ``>= 1-alpha``
        (McSherry & Talwar 2007, Theorem 6)."""
        lo, hi = super().confidence_interval(alpha)
        return (0.0, hi)


class Exponential(_Selection):
    """The exponential mechanism (McSherry & Talwar 2007), diffprivlib signature.

    Parameters
    ----------
    epsilon, sensitivity : float
    utility : list of float
        Utility of each candidate (higher is better).
    monotonic : bool
        Utilities move in one direction between neighbours (halves the noise).
    candidates : list, optional
        Returned instead of indices.
    measure : list of float, optional
        Base measure (e.g. interval lengths) multiplying each probability.

    Examples
    --------
    >>> from veil.dp.mechanisms import Exponential
    >>> m = Exponential(epsilon=1.0, sensitivity=1, utility=[0, 5, 1], candidates=["a", "b", "c"])
    >>> m.randomise() in ("a", "b", "c")
    True
    """

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        utility: Any,
        monotonic: bool = False,
        candidates: Any = None,
        measure: Any = None,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            sensitivity=sensitivity,
            utility=utility,
            monotonic=monotonic,
            candidates=candidates,
            random_state=random_state,
        )
        if measure is not None:
            meas = np.asarray(measure, dtype=np.float64).ravel()
            if (
                meas.size != self.utility.size
                or np.any(~(meas >= 0))
                or not np.all(np.isfinite(meas))
                or not meas.any()
            ):
                raise ConfigError(
                    "measure must be finite, non-negative, not all zero, same length as utility"
                )
            self.measure = meas
        else:
            self.measure = None

    def probabilities(self) -> np.ndarray:
        """Output probabilities of each candidate."""
        lw = -self._gamma()
        if self.measure is not None:
            with np.errstate(divide="ignore"):
                lw = lw + np.log(self.measure)
        w = np.exp(lw - lw.max())
        return w / w.sum()

    def randomise(self, value: Any = None) -> Any:
        """Draw one candidate (index when no ``candidates`` were given), exactly.

        Without a ``measure``: uniform proposals accepted with an exact
        ``Bernoulli(exp(-factor * (u* - u)))`` coin (at most ``m`` proposals expected).  With a
        ``measure``: proposals accepted with exact coins whose product is proportional to
        ``measure_r * exp(-gamma_r)`` (:func:`~veil.dp.mechanisms._coins.sample_measure_gamma`;
        at most ``4m`` proposals expected whatever the range of the measure).  In both cases
        no floating-point rounding enters the output distribution beyond the float value of
        each exponent ``gamma_r``.
        """
        if self.measure is not None:
            try:
                return self._out(sample_measure_gamma(self.measure, self._gamma(), self._rng))
            except ValueError as exc:
                raise InputError(str(exc)) from None
        return self._out(sample_exact_gamma(self._gamma(), self._rng))


class PermuteAndFlip(_Selection):
    """Permute-and-flip (McKenna & Sheldon 2020), exact coins.

    Visit candidates in a uniformly random order and stop at ``r`` with probability
    ``exp(factor * (u_r - u*))``; the best candidate always stops.

    Examples
    --------
    >>> from veil.dp.mechanisms import PermuteAndFlip
    >>> PermuteAndFlip(epsilon=1, sensitivity=1, utility=[3, 0]).randomise() in (0, 1)
    True
    """

    def randomise(self, value: Any = None) -> Any:
        gamma = self._gamma()
        order = self._rng.permutation(gamma.size)
        for start in range(0, gamma.size, 256):
            block = order[start : start + 256]
            coins = bernoulli_exp(gamma[block], block.size, self._rng)
            hit = np.flatnonzero(coins)
            if hit.size:
                return self._out(int(block[hit[0]]))
        raise AssertionError("unreachable: the best candidate always stops")  # pragma: no cover


class ReportNoisyMax(DPMechanism):
    """Report-noisy-max with FP-safe Laplace noise (Dwork & Roth 2014, Claim 3.9).

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        Sensitivity of each score.
    monotonic : bool
        Scores move in one direction between neighbours (e.g. counts): noise ``Delta/eps``
        instead of ``2 Delta/eps``.

    Examples
    --------
    >>> from veil.dp.mechanisms import ReportNoisyMax
    >>> ReportNoisyMax(epsilon=1.0, sensitivity=1.0).randomise([10, 50, 20])
    1
    """

    _needs_positive_epsilon = True

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float = 1.0,
        monotonic: bool = False,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)
        self.monotonic = bool(monotonic)

    @property
    def scale(self) -> float:
        return (1 if self.monotonic else 2) * self.sensitivity / self.epsilon

    def randomise(self, value: Any) -> int:
        """Index of the noisy maximum of the scores ``value``."""
        x, _ = self._values(value)
        x = x.ravel()
        if x.size == 0:
            raise InputError("ReportNoisyMax needs at least one score")
        if self.scale == 0:
            y = x
        else:
            y = laplace_fp(x, self.scale, self._rng, sensitivity=self.sensitivity)
        best = np.flatnonzero(y == y.max())
        return int(best[0] if best.size == 1 else self._rng.choice(best))

    def variance(self, value: Any = None) -> float:
        raise NotImplementedError("variance is not defined for a selection mechanism")

    def confidence_interval(
        self, alpha: float = 0.05, value: Any = None, n_candidates: int = 2
    ) -> tuple[float, float]:
        """Interval for the score loss ``max - score(output)``: ``(0, 2 b ln(n / alpha))``
        with probability ``>= 1 - alpha`` (union bound over the ``n`` Laplace noises)."""
        if not 0 < alpha < 1 or n_candidates < 1:
            raise ConfigError("need 0 < alpha < 1 and n_candidates >= 1")
        return (0.0, float(2 * self.scale * np.log(n_candidates / alpha)))
