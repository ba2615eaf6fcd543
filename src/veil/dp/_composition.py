"""Composition theorems for (epsilon, delta)-DP.

* basic: epsilons and deltas add up;
* advanced (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Theorem 3.20);
* the heterogeneous bounds of Kairouz, Oh & Viswanath (2015, Theorem 3.5) used by diffprivlib;
* the *optimal* homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3): the exact
  privacy profile of ``k`` runs of an ``(epsilon, delta)`` mechanism.

Examples
--------
>>> round(advanced_composition(0.1, 0.0, 100, 1e-5)[0], 3)
5.85
>>> optimal_composition(0.1, 0.0, 100, 1e-5) < 5.85
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import special

__all__ = [
    "advanced_composition",
    "kov_heterogeneous_epsilon",
    "optimal_composition",
    "optimal_composition_delta",
    "compose_deltas",
]


def compose_deltas(deltas: Sequence[float]) -> float:
    """``1 - prod(1 - delta_i)``, computed stably (diffprivlib's total delta)."""
    d = np.asarray(list(deltas), dtype=np.float64)
    if d.size == 0:
        return 0.0
    if np.any(d >= 1):
        return 1.0
    return float(-np.expm1(np.sum(np.log1p(-d)))) + 0.0  # no -0.0


def advanced_composition(
    epsilon: float, delta: float, k: int, delta_prime: float
) -> tuple[float, float]:
    """``k``-fold adaptive composition of ``(epsilon, delta)``-DP mechanisms:
    ``(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta')``.

    Dwork, Rothblum & Vadhan (2010); Dwork & Roth (2014), Theorem 3.20.

    References
    ----------
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS, 2010.
    C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", Foundations and
    Trends in Theoretical Computer Science 9(3-4), 2014.

    Examples
    --------
    100 queries at ``(0.1, 1e-6)`` each: the basic bound is ``(10, 1e-4)``, the advanced one
    trades ``delta' = 1e-5`` for a much smaller epsilon.

    >>> eps, delta = advanced_composition(0.1, 1e-6, k=100, delta_prime=1e-5)
    >>> round(eps, 3), round(delta, 8)
    (5.85, 0.00011)
    >>> advanced_composition(1.0, 0.0, k=10, delta_prime=1e-5)[0] > 10  # no gain for large eps
    True
    """
    eps = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * math.expm1(epsilon)
    return eps, min(1.0, k * delta + delta_prime)


def kov_heterogeneous_epsilon(epsilons: Sequence[float], slack: float) -> float:
    """The better of the two heterogeneous bounds of Kairouz, Oh & Viswanath (2015, Thm 3.5)
    and the naive sum, at extra delta ``slack`` (diffprivlib's ``total``)."""
    e = np.asarray(list(epsilons), dtype=np.float64)
    naive = float(e.sum())
    if slack <= 0 or e.size == 0:
        return naive
    tanh_sum = float(np.sum(e * np.tanh(e / 2)))
    sq = float(np.sum(e * e))
    drv = tanh_sum + math.sqrt(2 * sq * math.log(1 / slack))
    kov = tanh_sum + math.sqrt(2 * sq * math.log(math.e + math.sqrt(sq) / slack))
    return min(naive, drv, kov)


def optimal_composition_delta(epsilon: float, k: int, eps_total: float) -> float:
    """Exact ``delta(eps_total)`` of ``k`` compositions of an ``epsilon``-DP mechanism
    (the randomized-response profile, which is the worst case; KOV 2015 Theorem 3.3)::

        delta = sum_l C(k, l) max(0, e^{(k-l) eps} - e^{eps_total + l eps}) / (1 + e^eps)^k
    """
    if epsilon == 0:
        return 0.0
    log_den = k * np.logaddexp(0.0, epsilon)
    ls = np.arange(k + 1, dtype=np.float64)
    logc = special.gammaln(k + 1) - special.gammaln(ls + 1) - special.gammaln(k - ls + 1)
    a = (k - ls) * epsilon
    b = eps_total + ls * epsilon
    pos = a > b
    if not pos.any():
        return 0.0
    # e^a - e^b = e^a (1 - e^{b - a})
    terms = logc[pos] + a[pos] + np.log(-np.expm1(b[pos] - a[pos])) - log_den
    return float(np.exp(special.logsumexp(terms)))


def optimal_composition(epsilon: float, delta: float, k: int, target_delta: float) -> float:
    """Smallest total epsilon of ``k`` runs of an ``(epsilon, delta)`` mechanism with total
    delta at most ``target_delta`` (KOV 2015, Theorem 3.3; exact for homogeneous runs).

    The total delta is ``1 - (1 - delta)^k (1 - delta_rr)`` where ``delta_rr`` is the exact
    randomized-response profile; returns ``inf`` when ``target_delta`` is too small.

    References
    ----------
    P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential privacy",
    ICML, 2015.

    Examples
    --------
    >>> round(optimal_composition(0.1, 0.0, k=100, target_delta=1e-5), 3)  # advanced: 5.85
    4.307
    >>> round(optimal_composition(0.1, 1e-6, k=100, target_delta=2e-4), 3)
    3.755
    >>> optimal_composition(0.1, 1e-6, k=100, target_delta=1e-5)  # below 1 - (1 - 1e-6)**100
    inf
    """
    if k <= 0:
        return 0.0
    base = 1 - (1 - delta) ** k
    if target_delta < base:
        return math.inf
    if target_delta >= 1:
        return 0.0
    allowed = 1 - (1 - target_delta) / (1 - delta) ** k  # budget left for delta_rr
    if optimal_composition_delta(epsilon, k, 0.0) <= allowed:
        return 0.0
    lo, hi = 0.0, k * epsilon
    for _ in range(100):
        mid = (lo + hi) / 2
        if optimal_composition_delta(epsilon, k, mid) > allowed:
            lo = mid
        else:
            hi = mid
    return hi
