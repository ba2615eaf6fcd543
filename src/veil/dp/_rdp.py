"""Renyi-DP accounting for the (Poisson-subsampled) Gaussian mechanism, as used by DP-SGD.

Pure numpy/scipy (no torch).  Each step of DP-SGD is one run of the *sampled Gaussian
mechanism* (SGM): every record enters the batch independently with probability ``q`` and the
sum of clipped gradients receives Gaussian noise of standard deviation ``sigma * C``.

* RDP of the SGM at order ``alpha`` (Mironov, Talwar & Zhang 2019, "Renyi Differential
  Privacy of the Sampled Gaussian Mechanism", Sec. 3.3): for integer ``alpha`` the exact
  binomial expansion ``A = sum_k C(alpha, k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 sigma^2))``;
  for fractional ``alpha`` the two convergent series of that paper, summed in log space with
  ``log_ndtr`` for the Gaussian tail factors.  ``RDP(alpha) = log(A) / (alpha - 1)``.
* Composition: RDP adds up over steps (Mironov 2017, Prop. 1).
* Conversion to ``(epsilon, delta)``: the improved bound of Balle, Barthe, Gaboardi, Hsu &
  Sato (2020, Thm. 21) / Canonne, Kamath & Steinke (2020, Prop. 12),
  ``eps = rdp + log((alpha-1)/alpha) - (log(delta) + log(alpha)) / (alpha - 1)``,
  minimised over the orders.  ``method="classic"`` gives Mironov's (2017, Prop. 3)
  ``eps = rdp + log(1/delta) / (alpha - 1)`` used by older TF-Privacy releases.

Example
-------
>>> from veil.dp._rdp import RDPAccountant
>>> acc = RDPAccountant()
>>> acc.step(noise_multiplier=1.1, sample_rate=256 / 60000, steps=14062)
>>> round(acc.get_epsilon(1e-5), 1)
2.6
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp

from veil.errors import BudgetError, ConfigError

__all__ = [
    "DEFAULT_ORDERS",
    "RDPAccountant",
    "compute_rdp",
    "rdp_to_epsilon",
    "noise_multiplier_for",
]

#: Renyi orders used by default: a fine grid near 1 (small epsilons), integers up to 63, and a
#: few large ones (very small noise / few steps).
DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)] + [128.0, 256.0]
)

_TAIL_LOG = -30.0  # stop the fractional series once every new term is below e^-30
_MAX_TERMS = 200_000


def _check_q_sigma(q: float, sigma: float) -> tuple[float, float]:
    q = float(q)
    sigma = float(sigma)
    if not (0.0 <= q <= 1.0) or math.isnan(q):
        raise ConfigError(f"sample_rate must lie in [0, 1], got {q!r}")
    if not sigma >= 0.0 or math.isinf(sigma):
        raise ConfigError(f"noise_multiplier must be a finite number >= 0, got {sigma!r}")
    return q, sigma


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    """``log A_alpha`` for an integer order (exact binomial expansion, MTZ 2019 Sec. 3.3)."""
    k = np.arange(alpha + 1, dtype=np.float64)
    log_binom = gammaln(alpha + 1.0) - gammaln(k + 1.0) - gammaln(alpha - k + 1.0)
    log_terms = (
        log_binom
        + k * math.log(q)
        + (alpha - k) * math.log1p(-q)
        + (k * k - k) / (2.0 * sigma * sigma)
    )
    return float(logsumexp(log_terms))


def _log_binom_signed(alpha: float, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log|C(alpha, i)| and its sign for a real ``alpha`` and integer ``i >= 0``."""
    # C(alpha, i) = Gamma(alpha+1) / (Gamma(i+1) Gamma(alpha-i+1)); Gamma changes sign at
    # non-positive arguments, which happens for i > alpha (alternating tail).
    from scipy.special import gammasgn

    arg = alpha - i + 1.0
    log_abs = gammaln(alpha + 1.0) - gammaln(i + 1.0) - gammaln(arg)
    sign = gammasgn(arg)
    return log_abs, sign


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    """``log A_alpha`` for a fractional order: the two series of MTZ 2019 (Sec. 3.3)."""
    z0 = sigma * sigma * math.log(1.0 / q - 1.0) + 0.5
    log_q, log_1q = math.log(q), math.log1p(-q)
    inv2s2 = 1.0 / (2.0 * sigma * sigma)
    logs: list[np.ndarray] = []
    signs: list[np.ndarray] = []
    start, chunk = 0, 64
    while start < _MAX_TERMS:
        i = np.arange(start, start + chunk, dtype=np.float64)
        j = alpha - i
        log_c, sign = _log_binom_signed(alpha, i)
        # first series: E[(1-q + q e^{..})] split at z0, lower tail of N(i, sigma^2)
        s0 = log_c + i * log_q + j * log_1q + (i * i - i) * inv2s2 + log_ndtr((z0 - i) / sigma)
        # second series: upper tail of N(j, sigma^2)
        s1 = log_c + j * log_q + i * log_1q + (j * j - j) * inv2s2 + log_ndtr((j - z0) / sigma)
        logs.extend([s0, s1])
        signs.extend([sign, sign])
        last = np.maximum(s0, s1)
        # the terms eventually decrease monotonically; stop once the tail is negligible
        if last[-1] < _TAIL_LOG and np.all(np.diff(last[last.size // 2 :]) <= 0):
            break
        start += chunk
        chunk = min(chunk * 2, 8192)
    all_logs = np.concatenate(logs)
    all_signs = np.concatenate(signs)
    keep = all_signs != 0
    value, sgn = logsumexp(all_logs[keep], b=all_signs[keep], return_sign=True)
    if sgn <= 0:  # numerical breakdown: fall back to a safe upper bound via ceil(alpha)
        return _log_a_int(q, sigma, int(math.ceil(alpha)))
    return float(value)


def _rdp_single(q: float, sigma: float, alpha: float) -> float:
    """RDP of one SGM step at order ``alpha``."""
    if q == 0.0:
        return 0.0
    if sigma == 0.0:
        return math.inf
    if q == 1.0:
        return alpha / (2.0 * sigma * sigma)
    if float(alpha).is_integer():
        log_a = _log_a_int(q, sigma, int(alpha))
    else:
        log_a = _log_a_frac(q, sigma, alpha)
    return max(log_a, 0.0) / (alpha - 1.0)


def _as_orders(orders: Sequence[float] | np.ndarray | float | None) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(DEFAULT_ORDERS if orders is None else orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ConfigError("Renyi orders must be a non-empty list of finite numbers > 1")
    return arr


def compute_rdp(
    q: float,
    noise_multiplier: float,
    steps: int,
    orders: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """RDP of ``steps`` compositions of the Poisson-sampled Gaussian mechanism.

    Parameters
    ----------
    q : float
        Sampling rate in ``[0, 1]`` (expected batch size / dataset size).
    noise_multiplier : float
        Noise standard deviation divided by the L2 sensitivity (clipping norm).
    steps : int
        Number of steps (compositions), ``>= 0``.
    orders : sequence of float, optional
        Renyi orders ``> 1``; :data:`DEFAULT_ORDERS` when omitted.

    Returns
    -------
    numpy.ndarray
        RDP epsilon at each order (``inf`` where unbounded, e.g. without noise).

    References
    ----------
    Mironov, Talwar & Zhang (2019), *Renyi Differential Privacy of the Sampled Gaussian
    Mechanism*, arXiv:1908.10530.

    Examples
    --------
    >>> rdp = compute_rdp(1.0, 1.0, 1, orders=[2.0])
    >>> float(rdp[0])  # full-batch Gaussian: alpha / (2 sigma^2)
    1.0
    """
    q, sigma = _check_q_sigma(q, noise_multiplier)
    if int(steps) != steps or steps < 0:
        raise ConfigError(f"steps must be a non-negative integer, got {steps!r}")
    arr = _as_orders(orders)
    per_step = np.array([_rdp_single(q, sigma, float(a)) for a in arr])
    return per_step * int(steps)


def _epsilons(orders: np.ndarray, rdp: np.ndarray, delta: float, method: str) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        if method == "improved":
            eps = rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)
        elif method == "classic":
            eps = rdp + math.log(1.0 / delta) / (orders - 1.0)
        else:
            raise ConfigError(f"method must be 'improved' or 'classic', got {method!r}")
    eps = np.where(np.isnan(eps), np.inf, eps)
    return eps


def _check_delta(delta: float) -> float:
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    return delta


def privacy_spent(
    orders: Sequence[float] | np.ndarray,
    rdp: Sequence[float] | np.ndarray,
    delta: float,
    *,
    method: str = "improved",
) -> tuple[float, float]:
    """Best ``(epsilon, order)`` over the orders for a given ``delta``.

    Examples
    --------
    >>> eps, order = privacy_spent([2.0, 4.0], [0.1, 0.3], 1e-5)
    >>> order
    4.0
    """
    arr = _as_orders(orders)
    rdp_arr = np.asarray(rdp, dtype=float)
    if rdp_arr.shape != arr.shape:
        raise ConfigError("orders and rdp must have the same length")
    eps = _epsilons(arr, rdp_arr, _check_delta(delta), method)
    best = int(np.argmin(eps))
    return max(float(eps[best]), 0.0), float(arr[best])


def rdp_to_epsilon(
    orders: Sequence[float] | np.ndarray,
    rdp: Sequence[float] | np.ndarray,
    delta: float,
    *,
    method: str = "improved",
) -> float:
    """Convert an RDP curve to the smallest ``epsilon`` such that the mechanism is
    ``(epsilon, delta)``-DP.

    Parameters
    ----------
    orders, rdp : array-like
        Renyi orders and the RDP epsilon at each.
    delta : float
        Target delta in ``(0, 1)``.
    method : {"improved", "classic"}
        ``"improved"``: Balle et al. (2020, Thm. 21) / Canonne, Kamath & Steinke (2020);
        ``"classic"``: Mironov (2017, Prop. 3).

    Examples
    --------
    >>> rdp = compute_rdp(256 / 60000, 1.1, 14062)
    >>> round(rdp_to_epsilon(DEFAULT_ORDERS, rdp, 1e-5), 1)
    2.6
    >>> round(rdp_to_epsilon(DEFAULT_ORDERS, rdp, 1e-5, method="classic"), 1)
    3.0
    """
    return privacy_spent(orders, rdp, delta, method=method)[0]


def noise_multiplier_for(
    target_epsilon: float,
    delta: float,
    sample_rate: float,
    steps: int,
    *,
    orders: Sequence[float] | np.ndarray | None = None,
    rtol: float = 1e-4,
) -> float:
    """Smallest noise multiplier (to ``rtol``) whose ``steps`` SGM steps stay within
    ``(target_epsilon, delta)``; found by bisection on ``log(sigma)``.

    The returned value always satisfies ``epsilon <= target_epsilon``.

    Examples
    --------
    >>> sigma = noise_multiplier_for(3.0, 1e-5, 256 / 60000, 14062)
    >>> 1.0 < sigma < 1.2
    True
    """
    target_epsilon = float(target_epsilon)
    if not target_epsilon > 0 or math.isinf(target_epsilon):
        raise ConfigError(f"target_epsilon must be a finite number > 0, got {target_epsilon!r}")
    delta = _check_delta(delta)
    arr = _as_orders(orders)

    def eps_of(sigma: float) -> float:
        return rdp_to_epsilon(arr, compute_rdp(sample_rate, sigma, steps, arr), delta)

    _check_q_sigma(sample_rate, 1.0)
    if steps <= 0 or sample_rate == 0.0:
        return 0.0
    hi = 1.0
    while eps_of(hi) > target_epsilon:
        hi *= 2.0
        if hi > 1e6:
            raise ConfigError(
                f"no noise multiplier <= 1e6 reaches epsilon={target_epsilon} at delta={delta}"
            )
    lo = hi / 2.0
    while eps_of(lo) <= target_epsilon:
        hi, lo = lo, lo / 2.0
        if lo < 1e-3:
            return hi
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(hi * lo)
        if eps_of(mid) <= target_epsilon:
            hi = mid
        else:
            lo = mid
    return hi


class RDPAccountant:
    """Renyi-DP accountant for (Poisson-subsampled) Gaussian steps.

    Parameters
    ----------
    orders : sequence of float, optional
        Renyi orders; :data:`DEFAULT_ORDERS` when omitted.
    method : {"improved", "classic"}
        RDP -> (epsilon, delta) conversion (see :func:`rdp_to_epsilon`).

    Attributes
    ----------
    history : list of tuple
        ``(noise_multiplier, sample_rate, steps)`` per call to :meth:`step` (consecutive
        calls with the same parameters are merged).

    Examples
    --------
    >>> acc = RDPAccountant()
    >>> acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=1000)
    >>> eps, order = acc.get_privacy_spent(1e-5)
    >>> 1.0 < eps < 3.0
    True
    """

    def __init__(
        self, orders: Sequence[float] | np.ndarray | None = None, *, method: str = "improved"
    ) -> None:
        self.orders = _as_orders(orders)
        if method not in ("improved", "classic"):
            raise ConfigError(f"method must be 'improved' or 'classic', got {method!r}")
        self.method = method
        self.history: list[tuple[float, float, int]] = []
        self._cache: dict[tuple[float, float], np.ndarray] = {}

    def __repr__(self) -> str:
        steps = sum(h[2] for h in self.history)
        return f"RDPAccountant(steps={steps}, entries={len(self.history)}, method={self.method!r})"

    def __len__(self) -> int:
        return sum(h[2] for h in self.history)

    def _per_step(self, sigma: float, q: float) -> np.ndarray:
        key = (sigma, q)
        if key not in self._cache:
            self._cache[key] = compute_rdp(q, sigma, 1, self.orders)
        return self._cache[key]

    def step(self, *, noise_multiplier: float, sample_rate: float, steps: int = 1) -> None:
        """Record ``steps`` SGM steps with the given noise multiplier and sampling rate."""
        q, sigma = _check_q_sigma(sample_rate, noise_multiplier)
        if int(steps) != steps or steps < 0:
            raise ConfigError(f"steps must be a non-negative integer, got {steps!r}")
        if steps == 0:
            return
        if self.history and self.history[-1][:2] == (sigma, q):
            self.history[-1] = (sigma, q, self.history[-1][2] + int(steps))
        else:
            self.history.append((sigma, q, int(steps)))

    def rdp(self, extra: Sequence[tuple[float, float, int]] = ()) -> np.ndarray:
        """Total RDP curve over :attr:`orders` (plus hypothetical ``extra`` steps)."""
        total = np.zeros_like(self.orders)
        for sigma, q, n in [*self.history, *extra]:
            total = total + self._per_step(float(sigma), float(q)) * n
        return total

    def get_privacy_spent(self, delta: float) -> tuple[float, float]:
        """Return ``(epsilon, best_order)`` spent so far at ``delta``."""
        return privacy_spent(self.orders, self.rdp(), delta, method=self.method)

    def get_epsilon(self, delta: float) -> float:
        """Epsilon spent so far at ``delta``."""
        return self.get_privacy_spent(delta)[0]

    def epsilon_after(
        self, delta: float, *, noise_multiplier: float, sample_rate: float, steps: int = 1
    ) -> float:
        """Epsilon that *would* be spent after ``steps`` more steps (nothing is recorded)."""
        q, sigma = _check_q_sigma(sample_rate, noise_multiplier)
        extra = [(sigma, q, int(steps))]
        return privacy_spent(self.orders, self.rdp(extra), delta, method=self.method)[0]

    def check(self, epsilon: float, delta: float, **step: Any) -> None:
        """Raise :class:`~veil.errors.BudgetError` if the next step would exceed ``epsilon``."""
        after = self.epsilon_after(delta, **step)
        if after > epsilon:
            raise BudgetError(
                f"privacy budget exhausted: the next step would bring epsilon to {after:.4g} "
                f"> {epsilon:.4g} (delta={delta:g}); {len(self)} steps were taken"
            )

    # -- state ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state."""
        return {
            "type": "rdp",
            "method": self.method,
            "orders": [float(a) for a in self.orders],
            "history": [[float(s), float(q), int(n)] for s, q, n in self.history],
        }

    def to_json(self) -> str:
        """Serialise to a JSON string (see :meth:`from_json`)."""
        return json.dumps(self.state_dict())

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> RDPAccountant:
        """Rebuild an accountant from :meth:`state_dict` output."""
        if not isinstance(state, dict) or state.get("type") != "rdp":
            raise ConfigError("not an RDPAccountant state")
        try:
            acc = cls(state.get("orders"), method=state.get("method", "improved"))
            for s, q, n in state.get("history", []):
                acc.step(noise_multiplier=s, sample_rate=q, steps=n)
        except (TypeError, ValueError, OverflowError) as exc:  # e.g. steps NaN, short rows
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"invalid RDPAccountant state: {exc}") from None
        return acc

    @classmethod
    def from_json(cls, text: str) -> RDPAccountant:
        """Rebuild an accountant from :meth:`to_json` output."""
        try:
            state = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"invalid accountant JSON: {exc}") from None
        return cls.from_state(state)
