"""The staircase mechanism (Geng & Viswanath 2014), floating-point safe and exact.

Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy" (IEEE Trans.
Inf. Theory 2016; arXiv 2012/2014): for an ``epsilon``-DP query of sensitivity ``Delta`` the
noise density minimising the expected cost is a staircase: constant on ``[0, gamma Delta)``
and on ``[gamma Delta, Delta)`` (lower by ``exp(-epsilon)``), repeated with factor
``exp(-epsilon)`` every ``Delta``.  ``gamma = 1 / (1 + exp(epsilon / 2))`` (the default, as in
diffprivlib) minimises the expected *absolute* noise (their L1 cost); the variance-optimal
``gamma`` is their cube-root formula (about 0.26 at ``epsilon = 3``, 0.105 at 6) and can be
passed explicitly.

Floating-point safety
---------------------
Veil samples the *discrete* staircase on the power-of-two grid ``g`` of
:func:`veil.dp._samplers.grid_for` (``Delta ~ 2^30 g``): the value is rounded to the grid
(``k = rint(x / g)``, exact) and integer noise ``Z`` with ``P(Z = z) ~ h(|z|)`` is added, where
``h(t) = b^floor(t / D) * (1 if t mod D < s else b)``, ``b = exp(-epsilon)``,
``D = floor(Delta / g) + 1`` grid units (neighbours' rounded values differ by at most ``D``)
and ``s = round(gamma D)``.  ``h`` is non-increasing and ``h(t + D) = b h(t)``, so for any
shift ``d <= D``, ``h(|z|) / h(|z + d|) <= 1 / b = exp(epsilon)``: exactly ``epsilon``-DP.
``Z`` is drawn exactly (geometric number of periods from the exact sampler, position inside
the period by a rejection step with exact coins and acceptance >= 1/4 for any ``epsilon``,
random sign with the negative zero rejected) and the output ``(k + Z) g`` depends on the exact integer only.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._samplers import geometric, grid_for
from veil.dp.mechanisms._base import GridNoiseMechanism, as_float
from veil.dp.mechanisms._coins import qexp_coins, zero_bit_coins
from veil.errors import ConfigError

__all__ = ["Staircase"]


class Staircase(GridNoiseMechanism):
    """The staircase mechanism (Geng & Viswanath 2014), exact and floating-point safe.

    ``epsilon``-DP (``delta = 0``) for a query of L1 ``sensitivity``; unbiased (up to the
    deterministic rounding of the value to a grid ``~ 2^-30 sensitivity``).  Better than the
    Laplace mechanism for large ``epsilon`` (with the variance-optimal ``gamma`` the variance
    decays like ``Delta^2 e^(-2 epsilon / 3)`` instead of ``2 Delta^2 / epsilon^2``).

    Parameters
    ----------
    epsilon : float, > 0
    sensitivity : float, >= 0
    gamma : float in [0, 1], optional
        Fraction of each step at the higher level; default ``1 / (1 + exp(epsilon / 2))``
        (optimal for the expected absolute error; Geng & Viswanath give the variance-optimal
        value, e.g. 0.260 at ``epsilon = 3``).
    random_state : None, int or numpy Generator
        ``None``: the secure generator (seeds are for tests and warn).

    Notes
    -----
    See the module docstring for the discrete, floating-point-safe construction; the
    effective ``gamma`` is ``s / D`` with ``D ~ 2^30`` (relative change ``<= 2^-30``).

    References
    ----------
    Q. Geng and P. Viswanath, "The optimal noise-adding mechanism in differential privacy",
    IEEE Transactions on Information Theory 62(2), 2016 (arXiv:1212.1186, 2014).

    Examples
    --------
    >>> from veil.dp.mechanisms import Staircase
    >>> mech = Staircase(epsilon=2.0, sensitivity=1.0)
    >>> isinstance(mech.randomise(3.0), float)
    True
    >>> mech.bias(3.0)
    0.0
    """

    _needs_positive_epsilon = True

    def __init__(
        self,
        *,
        epsilon: float,
        sensitivity: float,
        gamma: float | None = None,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)
        if gamma is None:
            gam = 1.0 / (1.0 + math.exp(self.epsilon / 2))
        else:
            gam = as_float("gamma", gamma)
            if not 0.0 <= gam <= 1.0:
                raise ConfigError(f"gamma must be in [0, 1], got {gam}")
        self.gamma = gam

    # ------------------------------------------------------------------ grid parameters
    def _grid(self) -> tuple[float, int, int]:
        """Grid ``g``, period ``D`` and high-step length ``s`` (grid units)."""
        g = grid_for(self.sensitivity)
        d = math.floor(self.sensitivity / g) + 1
        s = min(max(round(self.gamma * d), 0), d)
        return g, d, s

    def _grid_step(self) -> float:
        return self._grid()[0]

    def _noise(self, n: int) -> np.ndarray:
        """``n`` exact draws of the integer staircase noise ``Z``."""
        _, d, s = self._grid()
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        scale = Fraction(1) / Fraction(self.epsilon)  # P(K = k) ~ exp(-epsilon k)
        while todo.size:
            m = todo.size
            periods = geometric(scale, m, self._rng)
            pos = self._positions(m, d, s)
            neg = (self._rng.raw(m) >> np.uint64(63)).astype(bool)
            t = periods * d + pos
            ok = ~(neg & (t == 0))  # reject the negative zero: P(Z = z) ~ h(|z|)
            out[todo[ok]] = np.where(neg, -t, t)[ok]
            todo = todo[~ok]
        return out

    def _positions(self, m: int, d: int, s: int) -> np.ndarray:
        """``m`` exact draws of ``R`` on ``[0, D)`` with ``P(R = r) ~ 1`` (``r < s``) or ``b``.

        The part (low ``r < s``, total weight ``s``; high, total ``(D - s) b``) is chosen by
        rejection: a fair coin proposes a part, accepted with probability ``2^-j`` (low) or
        ``z 2^-j`` (high), ``z = (D - s) b / s`` and ``2^j >= z``; every proposal succeeds with
        probability at least 1/4 whatever ``epsilon`` and ``gamma``.  ``R`` is then uniform
        in its part.
        """
        if s in (0, d):  # one part only: uniform over the period
            return self._rng.integers(0, d, size=m)
        c = Fraction(d - s, s)
        z_hat = float(c) * math.exp(-self.epsilon)
        j = max(math.ceil(math.log2(z_hat * (1 + 1e-9))), 0) if z_hat > 0 else 0
        q = c / (1 << j)  # z 2^-j = q exp(-epsilon) <= 1
        low = np.empty(m, dtype=bool)
        todo = np.arange(m)
        while todo.size:
            k = todo.size
            prop_low = (self._rng.raw(k) >> np.uint64(63)).astype(bool)
            ok = np.empty(k, dtype=bool)
            ok[prop_low] = zero_bit_coins(np.full(int(prop_low.sum()), j), self._rng)
            nh = int((~prop_low).sum())
            ok[~prop_low] = qexp_coins(q, self.epsilon, nh, self._rng)
            low[todo[ok]] = prop_low[ok]
            todo = todo[~ok]
        out = np.empty(m, dtype=np.int64)
        nl = int(low.sum())
        out[low] = self._rng.integers(0, s, size=nl)
        out[~low] = self._rng.integers(s, d, size=m - nl)
        return out

    # ------------------------------------------------------------------ accuracy
    def _tail(self) -> tuple[float, float, float]:
        """``(b, W, h0)``: step ratio, weight of one period and ``h(0)``."""
        _, d, s = self._grid()
        b = math.exp(-self.epsilon)
        return b, s + (d - s) * b, 1.0 if s > 0 else b

    def variance(self, value: Any = None) -> float:
        """Exact variance of the discrete staircase noise (closed form, in value units).

        ``E[Z^2] = 2 H E[T^2] / (2 H - h(0))`` with ``T = K D + R`` (``K`` geometric, ``R``
        the position in the period, independent) and ``H = W / (1 - b)`` the total weight of
        ``h`` on ``t >= 0``.  Tends to the continuous staircase variance of Geng & Viswanath.
        """
        if self.sensitivity == 0:
            return 0.0
        g, d, s = self._grid()
        b, w, h0 = self._tail()

        def s1(a: int, c: int) -> float:
            return (c * (c - 1) - a * (a - 1)) / 2

        def s2(a: int, c: int) -> float:
            def f(n: int) -> float:
                return (n - 1) * n * (2 * n - 1) / 6

            return f(c) - f(a)

        er = (s1(0, s) + b * s1(s, d)) / w
        er2 = (s2(0, s) + b * s2(s, d)) / w
        ek = b / (1 - b)
        ek2 = b * (1 + b) / (1 - b) ** 2
        et2 = d * d * ek2 + 2 * d * ek * er + er2
        h = w / (1 - b)
        return float(2 * h * et2 / (2 * h - h0) * g * g)

    def _noise_halfwidth(self, alpha: float) -> float:
        # P(|Z| >= k D) = 2 H b^k / (2 H - h0) <= 2 b^k (whole periods)
        if self.sensitivity == 0:
            return 0.0
        g, d, _ = self._grid()
        k = max(math.ceil(math.log(alpha / 2) / -self.epsilon), 1)
        return float(k * d * g + g / 2)
