"""Privacy-loss-distribution (PLD) accounting for the Poisson-subsampled Gaussian mechanism.

A tighter alternative to RDP for DP-SGD (Koskela, Jalko & Honkela 2020, "Computing Tight
Differential Privacy Guarantees Using FFT"; Koskela, Jalko, Prediger & Honkela 2021).  The
privacy loss ``L = log p(X)/q(X)`` of one step is discretised on a grid of width ``h``,
**rounding every value up** (a pessimistic PLD: the result dominates the true one, so the
epsilon is a valid upper bound), the ``k``-fold composition is the ``k``-fold convolution of
the discrete distribution (FFT, by repeated squaring), and

``delta(eps) = sum_{l > eps} P[L = l] (1 - e^{eps - l}) + P[L = inf]``.

Both neighbouring relations are analysed (removal: ``(1-q) N(0,s^2) + q N(1,s^2)`` vs
``N(0,s^2)``; addition: the reverse) and the larger delta is used.  Tails of mass below
``1e-15`` are cut pessimistically (upper tail -> ``+inf`` loss, lower tail -> the lowest kept
value).  Rounding up adds at most ``h`` per step, so the reported epsilon exceeds the exact
one by at most about ``k h`` (in practice ``k h / 2``); the default ``h = 0.05 / k`` keeps
that slack below 0.05, floored at ``1e-5`` for speed (MNIST DP-SGD, 14,062 steps: about 10 s,
epsilon 2.45 against 2.39 for Opacus's PRV estimate and 2.60 for RDP).  Pass a smaller
``value_discretization`` for a tighter bound.  This accountant is for reporting; the DP-SGD
optimizer enforces budgets with the (fast, cached) RDP accountant.

Example
-------
>>> from veil.dp._pld import PLDAccountant
>>> acc = PLDAccountant()
>>> acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
>>> 1.0 < acc.get_epsilon(1e-5) < 2.11   # the RDP bound is 2.10
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import ndtr

from veil.errors import ConfigError

__all__ = ["PLDAccountant", "pld_epsilon"]

_TAIL = 1e-15
_MAX_BINS = 1 << 21


class _PMF:
    """Discrete loss distribution on ``(offset + arange(n)) * h`` plus mass at ``+inf``."""

    def __init__(self, probs: np.ndarray, offset: int, h: float, inf_mass: float) -> None:
        self.probs, self.offset, self.h, self.inf_mass = probs, offset, h, inf_mass

    def truncate(self) -> _PMF:
        p = np.clip(self.probs, 0.0, None)
        c = np.cumsum(p)
        lo = int(np.searchsorted(c, _TAIL))  # first bin whose cumulative mass exceeds the tail
        top = np.cumsum(p[::-1])
        hi = len(p) - int(np.searchsorted(top, _TAIL))
        lo = min(lo, max(hi - 1, 0))
        moved_down = c[lo - 1] if lo > 0 else 0.0
        moved_up = float(p[hi:].sum())
        kept = p[lo:hi].copy()
        kept[0] += moved_down
        return _PMF(kept, self.offset + lo, self.h, self.inf_mass + moved_up)

    def compose(self, other: _PMF) -> _PMF:
        probs = fftconvolve(self.probs, other.probs)
        finite = 1.0 - (1.0 - self.inf_mass) * (1.0 - other.inf_mass)
        return _PMF(probs, self.offset + other.offset, self.h, finite).truncate()

    def power(self, k: int) -> _PMF:
        result: _PMF | None = None
        base = self
        while k:
            if k & 1:
                result = base if result is None else result.compose(base)
            k >>= 1
            if k:
                base = base.compose(base)
        assert result is not None
        return result

    def delta(self, eps: float) -> float:
        losses = (self.offset + np.arange(len(self.probs))) * self.h
        mask = losses > eps
        tail = self.probs[mask] * -np.expm1(eps - losses[mask])
        return float(tail.sum() + self.inf_mass)

    def epsilon(self, delta: float) -> float:
        if self.inf_mass > delta:
            return math.inf
        losses = (self.offset + np.arange(len(self.probs))) * self.h
        p = self.probs
        # suffix sums over j >= i of p_j, and log of those of p_j e^{shift - l_j} (in log
        # space: over a wide loss range, e.g. q = 1 and many steps, e^{shift - l} overflows)
        shift = losses[-1]
        s1 = np.cumsum(p[::-1])[::-1]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_s2 = np.logaddexp.accumulate((np.log(p) + shift - losses)[::-1])[::-1]
            # delta at eps = l_{i-1} uses the bins j >= i
            d_at = s1[1:] - np.exp(losses[:-1] - shift + log_s2[1:]) + self.inf_mass
        ok = np.flatnonzero(d_at <= delta)
        k = int(ok[0]) if len(ok) else len(p) - 1  # eps in (l_{k-1}, l_k]; bins j >= k count
        num = s1[k] + self.inf_mass - delta
        finite = num > 0 and np.isfinite(log_s2[k])
        eps = shift + math.log(num) - float(log_s2[k]) if finite else float(losses[k])
        low = float(losses[k - 1]) if k > 0 else -math.inf
        return float(max(min(max(eps, low), float(losses[k])), 0.0))


def _step_pmf(q: float, sigma: float, h: float, remove: bool) -> _PMF:
    """Pessimistic PLD of one sampled-Gaussian step (removal or addition neighbour)."""
    log1q = math.log1p(-q)

    def x_of(loss: np.ndarray) -> np.ndarray:  # inverse of l(x) = log(1-q + q e^{(2x-1)/2s^2})
        with np.errstate(divide="ignore", invalid="ignore"):
            return sigma**2 * np.log(np.expm1(loss) + q) - sigma**2 * math.log(q) + 0.5

    def sf(loss: np.ndarray) -> np.ndarray:  # P[L > loss]
        if remove:
            x = x_of(loss)
            out = (1 - q) * ndtr(-x / sigma) + q * ndtr((1 - x) / sigma)
            return np.where(loss <= log1q, 1.0, out)
        # addition: L = -l(X), X ~ N(0, s^2): P[L > l] = P[l(X) < -l] = Phi(x(-l)/s)
        x = x_of(-loss)
        return np.where(-loss <= log1q, 0.0, ndtr(x / sigma))

    # support: [lower, upper] with negligible mass outside
    if remove:
        lower = log1q
        z = sigma * 9.0 + 1.0
        upper = float(np.log1p(-q + q * math.exp(min((2 * z - 1) / (2 * sigma**2), 700.0))))
    else:
        upper = -log1q
        z = sigma * 9.0
        lower = -float(np.log1p(-q + q * math.exp(min((2 * z - 1) / (2 * sigma**2), 700.0))))
    j0, j1 = math.floor(lower / h) - 1, math.ceil(upper / h) + 1
    if j1 - j0 > _MAX_BINS:
        raise ConfigError("PLD grid too large: increase value_discretization")
    grid = np.arange(j0, j1 + 1) * h
    s = sf(grid)
    probs = np.empty(len(grid))
    probs[0] = 1.0 - s[0]
    probs[1:] = s[:-1] - s[1:]  # mass in (l_{j-1}, l_j] assigned to l_j (rounded up)
    return _PMF(np.clip(probs, 0, None), j0, h, float(max(s[-1], 0.0))).truncate()


def pld_epsilon(
    history: list[tuple[float, float, int]],
    delta: float,
    *,
    value_discretization: float | None = None,
) -> float:
    """Epsilon (upper bound) of a composition of sampled-Gaussian steps at ``delta``.

    Parameters
    ----------
    history : list of (noise_multiplier, sample_rate, steps)
    delta : float
    value_discretization : float, optional
        Grid width ``h`` of the privacy loss; default ``min(1e-3, 0.05 / total_steps)`` but
        at least ``1e-5``.

    Examples
    --------
    >>> round(pld_epsilon([(1.0, 1.0, 1)], 1e-5), 2)   # Gaussian mechanism, exact: 4.377
    4.38
    """
    if not 0.0 < float(delta) < 1.0:
        raise ConfigError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    total = sum(int(n) for _, _, n in history)
    if total == 0:
        return 0.0
    h = value_discretization or max(min(1e-3, 0.05 / total), 1e-5)
    if not h > 0:
        raise ConfigError(f"value_discretization must be > 0, got {value_discretization!r}")
    result = 0.0
    for remove in (True, False):
        pmf: _PMF | None = None
        for sigma, q, n in history:
            if n == 0 or q == 0:
                continue
            if sigma <= 0:
                return math.inf
            step = _step_pmf(min(float(q), 1 - 1e-12), float(sigma), h, remove).power(int(n))
            pmf = step if pmf is None else pmf.compose(step)
        if pmf is not None:
            result = max(result, pmf.epsilon(float(delta)))
    return float(result)


class PLDAccountant:
    """PLD accountant with the :class:`~veil.dp._rdp.RDPAccountant` interface.

    Examples
    --------
    >>> acc = PLDAccountant()
    >>> acc.step(noise_multiplier=2.0, sample_rate=0.05, steps=100)
    >>> acc.get_epsilon(1e-5) > 0
    True
    """

    def __init__(self, value_discretization: float | None = None) -> None:
        if value_discretization is not None and not float(value_discretization) > 0:
            raise ConfigError("value_discretization must be > 0")
        self.value_discretization = value_discretization
        self.history: list[tuple[float, float, int]] = []

    def __repr__(self) -> str:
        return f"PLDAccountant(steps={sum(h[2] for h in self.history)})"

    def step(self, *, noise_multiplier: float, sample_rate: float, steps: int = 1) -> None:
        """Record ``steps`` sampled-Gaussian steps."""
        s, q = float(noise_multiplier), float(sample_rate)
        if not (0.0 <= q <= 1.0) or not s >= 0 or math.isinf(s):
            raise ConfigError("noise_multiplier must be >= 0 and sample_rate in [0, 1]")
        if int(steps) != steps or steps < 0:
            raise ConfigError(f"steps must be a non-negative integer, got {steps!r}")
        if self.history and self.history[-1][:2] == (s, q):
            self.history[-1] = (s, q, self.history[-1][2] + int(steps))
        elif steps:
            self.history.append((s, q, int(steps)))

    def get_epsilon(self, delta: float) -> float:
        """Epsilon (upper bound) spent so far at ``delta``."""
        return pld_epsilon(self.history, delta, value_discretization=self.value_discretization)
