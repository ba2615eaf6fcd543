"""Zero-concentrated differential privacy (Bun & Steinke 2016) accounting.

A ``rho``-zCDP mechanism has Renyi divergence at most ``alpha * rho`` at every order
``alpha > 1``; zCDP composes by adding ``rho``.  Useful facts:

* the Gaussian mechanism with L2 sensitivity ``Delta`` and std ``sigma`` is
  ``Delta^2 / (2 sigma^2)``-zCDP (also for the discrete Gaussian, Canonne et al. 2020);
* an ``epsilon``-DP mechanism is ``epsilon^2 / 2``-zCDP (Bun & Steinke 2016, Prop. 1.4);
* ``rho``-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP (Prop. 1.3), and the
  tighter ``inf_alpha [alpha rho + (ln(1/delta) + (alpha-1) ln(1-1/alpha) - ln alpha)/(alpha-1)]``
  (Canonne, Kamath & Steinke 2020, Proposition 12 / Asoodeh et al. 2020).

Examples
--------
>>> acc = ZCDPAccountant(epsilon=2.0, delta=1e-6)
>>> _ = acc.spend_gaussian(sigma=10.0, sensitivity=1.0)
>>> round(acc.rho, 6)
0.005
>>> acc.epsilon_spent() < 0.6
True
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any

import numpy as np
from scipy import optimize

from veil.dp.mechanisms._base import as_float
from veil.errors import BudgetError, ConfigError, InputError

__all__ = ["ZCDPAccountant", "zcdp_to_dp", "zcdp_to_dp_simple", "dp_to_zcdp", "gaussian_rho"]


def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """``rho = sensitivity^2 / (2 sigma^2)`` of the (discrete) Gaussian mechanism."""
    if sigma <= 0:
        raise ConfigError("sigma must be positive")
    return sensitivity**2 / (2 * sigma**2)


def dp_to_zcdp(epsilon: float) -> float:
    """``epsilon``-DP implies ``epsilon^2 / 2``-zCDP."""
    return epsilon * epsilon / 2


def zcdp_to_dp_simple(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016, Proposition 1.3)."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def zcdp_to_dp(rho: float, delta: float) -> float:
    """Tight conversion of ``rho``-zCDP to ``(epsilon, delta)``-DP (CKS 2020, Prop. 12).

    Never larger than :func:`zcdp_to_dp_simple`.
    """
    if not rho >= 0 or not 0 < delta < 1:  # ``not >=``: a NaN rho is refused, never 0
        raise ConfigError("need rho >= 0 and 0 < delta < 1")
    if rho == 0:
        return 0.0

    def eps(alpha: float) -> float:
        return alpha * rho + (
            math.log(1 / delta) + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)
        ) / (alpha - 1)

    upper = max(2.0, 1 + 4 * math.sqrt(math.log(1 / delta) / rho))
    best = optimize.minimize_scalar(eps, bounds=(1 + 1e-9, upper * 4), method="bounded")
    grid = np.geomspace(1 + 1e-6, upper * 4, 400) if not best.success else [best.x]
    value = min(eps(float(a)) for a in grid)
    return max(0.0, min(value, zcdp_to_dp_simple(rho, delta)))


class ZCDPAccountant:
    """Accountant in zCDP: spends add ``rho``; the budget may be a ``rho`` or an
    ``(epsilon, delta)`` target checked through :func:`zcdp_to_dp`.

    Parameters
    ----------
    rho : float, optional
        Total zCDP budget.
    epsilon, delta : float, optional
        Alternatively, an ``(epsilon, delta)``-DP target.

    Examples
    --------
    >>> acc = ZCDPAccountant(rho=0.5)
    >>> _ = acc.spend_pure(0.5)
    >>> acc.remaining_rho()
    0.375
    """

    def __init__(
        self,
        rho: float | None = None,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
    ) -> None:
        if rho is not None and (epsilon is not None or delta is not None):
            raise ConfigError("give either rho or (epsilon, delta), not both")
        self.rho_budget = math.inf if rho is None else as_float("rho", rho)
        if self.rho_budget < 0:
            raise ConfigError("rho must be non-negative")
        self.epsilon_budget = None if epsilon is None else as_float("epsilon", epsilon)
        self.delta = None if delta is None else as_float("delta", delta)
        if (self.epsilon_budget is None) != (self.delta is None):
            raise ConfigError("an (epsilon, delta) target needs both epsilon and delta")
        if self.delta is not None and not 0 < self.delta < 1:
            raise ConfigError("delta must be in (0, 1)")
        self._spent: list[float] = []
        self._lock = threading.Lock()

    @property
    def rho(self) -> float:
        """Total ``rho`` spent."""
        return float(sum(self._spent))

    def __len__(self) -> int:
        return len(self._spent)

    def _fits(self, total: float) -> bool:
        if total > self.rho_budget * (1 + 1e-12):
            return False
        if self.epsilon_budget is not None and self.delta is not None:
            return zcdp_to_dp(total, self.delta) <= self.epsilon_budget * (1 + 1e-12)
        return True

    def check(self, rho: float) -> bool:
        """True if ``rho`` more fits; :class:`BudgetError` otherwise."""
        r = as_float("rho", rho)
        if r < 0:
            raise ConfigError("rho must be non-negative")
        if not self._fits(self.rho + r):
            raise BudgetError(f"spending rho={r} would exceed the zCDP budget")
        return True

    def spend(self, rho: float) -> ZCDPAccountant:
        """Atomically check and record a spend of ``rho``."""
        with self._lock:
            self.check(rho)
            self._spent.append(float(rho))
        return self

    def spend_gaussian(self, sigma: float, sensitivity: float = 1.0) -> ZCDPAccountant:
        """Record a Gaussian mechanism release."""
        return self.spend(gaussian_rho(sigma, sensitivity))

    def spend_pure(self, epsilon: float) -> ZCDPAccountant:
        """Record an ``epsilon``-DP release (as ``epsilon^2 / 2``-zCDP)."""
        return self.spend(dp_to_zcdp(epsilon))

    def remaining_rho(self) -> float:
        """Largest ``rho`` that still fits."""
        spent = self.rho
        hi = self.rho_budget - spent
        if self.epsilon_budget is None:
            return max(hi, 0.0)
        if not self._fits(spent):
            return 0.0
        lo, hi = 0.0, min(hi, self.epsilon_budget)  # zcdp_to_dp(rho) >= rho
        for _ in range(100):
            mid = (lo + hi) / 2
            if self._fits(spent + mid):
                lo = mid
            else:
                hi = mid
        return lo

    def epsilon_spent(self, delta: float | None = None) -> float:
        """``epsilon`` at ``delta`` (default: the target delta) of the spends so far."""
        d = self.delta if delta is None else delta
        if d is None:
            raise ConfigError("epsilon_spent needs a delta")
        return zcdp_to_dp(self.rho, d)

    def to_json(self) -> str:
        """State as JSON."""
        return json.dumps(
            {
                "type": "ZCDPAccountant",
                "rho": None if math.isinf(self.rho_budget) else self.rho_budget,
                "epsilon": self.epsilon_budget,
                "delta": self.delta,
                "spent": self._spent,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ZCDPAccountant:
        """Rebuild an accountant from :meth:`to_json` output.

        Every saved spend must be a finite non-negative number (:class:`ConfigError`
        otherwise) and together they must fit the saved budget (:class:`BudgetError`): a
        tampered state must never unlock more budget than was granted.
        """
        try:
            s: dict[str, Any] = json.loads(text)
            if not isinstance(s, dict):
                raise TypeError(f"expected a JSON object, got {type(s).__name__}")
            acc = (
                cls(s["rho"])
                if s.get("epsilon") is None
                else cls(epsilon=s["epsilon"], delta=s["delta"])
            )
            raw = s["spent"]
            if not isinstance(raw, list):
                raise TypeError(f"'spent' must be a list, got {type(raw).__name__}")
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise InputError(f"invalid zCDP accountant state: {exc}") from None
        spent = []
        for r in raw:
            value = as_float("spent rho", r)  # numbers only: no strings such as "nan", no bools
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"a saved spend must be finite and non-negative, got {value}")
            spent.append(value)
        if not acc._fits(float(sum(spent))):  # summed as :attr:`rho` sums them
            raise BudgetError("the saved spends exceed the saved budget")
        acc._spent = spent
        return acc
