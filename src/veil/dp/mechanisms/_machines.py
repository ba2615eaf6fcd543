"""Vector-valued machines: ``Vector`` (objective perturbation) and ``Bingham`` (private PCA).

Both output continuous vectors computed in floating point from secure uniforms (Box-Muller
normals, sums of exponentials, a float acceptance test).  Their privacy proofs hold for the
ideal real-valued samplers; unlike Veil's scalar mechanisms they are **not** hardened against
floating-point precision attacks (Mironov 2012): the low-order bits of the output may carry
information beyond the stated guarantee.  Use them for model training (as diffprivlib does),
not to release values an attacker can inspect bit by bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from veil.dp._rng import BitSource
from veil.dp.mechanisms._base import DPMechanism, as_float
from veil.errors import ConfigError, InputError

__all__ = ["Vector", "Bingham", "secure_normal", "secure_gamma"]


def _open_unit(rng: BitSource, n: int) -> np.ndarray:
    """Uniforms on ``(0, 1]`` (53 bits)."""
    return 1.0 - rng.random(n)


def secure_normal(rng: BitSource, n: int) -> np.ndarray:
    """``n`` standard normals from secure uniforms (Box-Muller, float64)."""
    m = (n + 1) // 2
    r = np.sqrt(-2.0 * np.log(_open_unit(rng, m)))
    th = 2.0 * math.pi * rng.random(m)
    return np.concatenate([r * np.cos(th), r * np.sin(th)])[:n]


def secure_gamma(rng: BitSource, shape: int, scale: float) -> float:
    """One ``Gamma(shape, scale)`` draw for an integer ``shape``: a sum of exponentials."""
    return float(-scale * np.log(_open_unit(rng, shape)).sum())


class Vector(DPMechanism):
    """Objective perturbation for ERM (Chaudhuri, Monteleoni & Sarwate 2011), diffprivlib API.

    ``randomise(f)`` takes a loss ``f(w) -> loss`` or ``(loss, grad)`` (the regularised
    empirical risk ``J(w) = (1/n) sum l(w, x_i) + alpha/2 |w|^2``) and returns the perturbed
    objective ``f(w) + b.w / n + Delta/2 |w|^2`` (with its gradient), to be minimised exactly.

    Parameters
    ----------
    epsilon : float, > 0
    function_sensitivity : float, >= 0
        ``c``: bound on the second derivative of the per-example loss (1/4 for logistic).
    data_sensitivity : float, > 0
        ``R``: bound on the L2 norm of each feature vector.
    dimension : int, >= 1
    alpha : float, > 0
        Regularisation strength ``Lambda`` of ``J``.
    n : int, >= 1
        Number of examples.
    random_state : None, int or numpy Generator

    Notes
    -----
    Algorithm 2 of Chaudhuri et al. (2011), with ``c`` replaced by ``c R^2`` for features of
    norm ``R`` and gradients of norm ``<= R`` (per-example loss with ``|l'| <= 1``):
    ``epsilon' = epsilon - 2 ln(1 + c R^2 / (n alpha))``; if ``epsilon' <= 0`` an extra
    regulariser ``Delta = c R^2 / (n (e^(epsilon/4) - 1)) - alpha`` is added and
    ``epsilon' = epsilon / 2``.  The noise ``b`` has density ``~ exp(-epsilon' |b| / (2 R))``:
    uniform direction, norm ``Gamma(dimension, 2 R / epsilon')``.  ``epsilon``-DP with
    ``delta = 0`` when the minimiser is exact.  Not floating-point hardened (module
    docstring).  ``bias``/``variance`` are not defined (the output is a function).

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. D. Sarwate, "Differentially private empirical risk
    minimization", JMLR 12, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.dp.mechanisms import Vector
    >>> mech = Vector(epsilon=1.0, function_sensitivity=0.25, dimension=2, n=100)
    >>> f = mech.randomise(lambda w: (float(w @ w), 2 * w))
    >>> f(np.zeros(2))[1].shape
    (2,)
    """

    _needs_positive_epsilon = True

    def __init__(
        self,
        *,
        epsilon: float,
        function_sensitivity: float,
        data_sensitivity: float = 1.0,
        dimension: int,
        alpha: float = 0.01,
        n: int = 1,
        random_state: Any = None,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.function_sensitivity = self._check_sensitivity(function_sensitivity)
        self.data_sensitivity = as_float("data_sensitivity", data_sensitivity)
        if not (self.data_sensitivity > 0 and math.isfinite(self.data_sensitivity)):
            raise ConfigError("data_sensitivity must be positive and finite")
        for name, v in (("dimension", dimension), ("n", n)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        self.dimension, self.n = int(dimension), int(n)
        self.alpha = as_float("alpha", alpha)
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ConfigError("alpha must be positive and finite")

    def calibration(self) -> tuple[float, float]:
        """``(epsilon', Delta)``: the noise budget and the extra regularisation."""
        c = self.function_sensitivity * self.data_sensitivity**2
        eps_p = self.epsilon - 2 * math.log1p(c / (self.n * self.alpha))
        if eps_p > 0:
            return eps_p, 0.0
        extra = c / (self.n * math.expm1(self.epsilon / 4)) - self.alpha
        return self.epsilon / 2, max(extra, 0.0)

    @property
    def noise_scale(self) -> float:
        """Scale ``2 R / epsilon'`` of the Gamma-distributed noise norm."""
        return 2 * self.data_sensitivity / self.calibration()[0]

    def noise_vector(self) -> np.ndarray:
        """One draw of ``b``: uniform direction, norm ``Gamma(dimension, noise_scale)``."""
        d = self.dimension
        z = secure_normal(self._rng, d)
        nz = float(np.linalg.norm(z))
        while nz == 0.0:  # probability ~0
            z = secure_normal(self._rng, d)
            nz = float(np.linalg.norm(z))
        return z / nz * secure_gamma(self._rng, d, self.noise_scale)

    def randomise(self, value: Callable[..., Any]) -> Callable[..., Any]:  # type: ignore[override]
        """Return the perturbed objective of the loss ``value`` (fresh noise per call)."""
        if not callable(value):
            raise InputError("Vector.randomise needs a function w -> loss or (loss, grad)")
        b = self.noise_vector()
        extra = self.calibration()[1]
        n = self.n

        def output_func(*args: Any) -> Any:
            w = np.asarray(args[0], dtype=np.float64)
            res = value(*args)
            if isinstance(res, tuple):
                loss, grad = res
                loss = loss + float(b @ w) / n + extra / 2 * float(w @ w)
                return loss, np.asarray(grad, dtype=np.float64) + b / n + extra * w
            return res + float(b @ w) / n + extra / 2 * float(w @ w)

        return output_func

    def bias(self, value: Any) -> float:
        raise NotImplementedError("bias is not defined for the vector mechanism")

    def variance(self, value: Any) -> float:
        raise NotImplementedError("variance is not defined for the vector mechanism")


class Bingham(DPMechanism):
    """Private top eigenvector from the Bingham distribution (exponential mechanism).

    ``randomise(A)`` for a symmetric matrix ``A`` (e.g. ``X^T X`` with rows of norm ``<= 1``)
    returns a unit vector ``v`` with density ``~ exp(epsilon v^T A v / (2 sensitivity))`` on
    the sphere: the exponential mechanism with utility ``v^T A v`` (Chaudhuri, Sarwate & Sinha
    2013, PPCA), sampled by the exact-in-reals rejection sampler of Kent, Ganeiber & Mardia
    (2018) with an angular-central-Gaussian envelope.

    Parameters
    ----------
    epsilon : float, > 0
    sensitivity : float, >= 0
        Sensitivity of ``v^T A v`` over unit ``v`` (1 for ``X^T X`` with rows of norm <= 1
        under replace-one neighbours).
    random_state : None, int or numpy Generator

    Notes
    -----
    ``epsilon``-DP, ``delta = 0`` for the real-valued sampler; the eigendecomposition and the
    rejection test run in float64 and the output is a continuous vector: **not**
    floating-point hardened (module docstring).  ``v`` and ``-v`` are equally likely.
    ``bias``/``variance`` are not defined.

    References
    ----------
    K. Chaudhuri, A. D. Sarwate and K. Sinha, "A near-optimal algorithm for differentially
    private principal components", JMLR 14, 2013.  J. T. Kent, A. M. Ganeiber and K. V.
    Mardia, "A new unified approach for the simulation of a wide class of directional
    distributions", J. Comput. Graph. Statist. 27(2), 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.dp.mechanisms import Bingham
    >>> v = Bingham(epsilon=1.0).randomise(np.diag([5.0, 1.0, 0.0]))
    >>> round(float(np.linalg.norm(v)), 6)
    1.0
    """

    _needs_positive_epsilon = True

    def __init__(
        self, *, epsilon: float, sensitivity: float = 1.0, random_state: Any = None
    ) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)

    @staticmethod
    def _matrix(value: Any) -> np.ndarray:
        a = np.asarray(value, dtype=np.float64)
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
            raise InputError("Bingham needs a non-empty square matrix")
        if not np.isfinite(a).all():
            raise InputError("Bingham needs a finite matrix")
        if not np.allclose(a, a.T, rtol=1e-10, atol=1e-12 * (1 + np.abs(a).max())):
            raise InputError("Bingham needs a symmetric matrix")
        return (a + a.T) / 2

    def randomise(self, value: Any) -> np.ndarray:
        """A unit vector drawn with density ``~ exp(epsilon v^T A v / (2 sensitivity))``."""
        a = self._matrix(value)
        d = a.shape[0]
        lam, vecs = np.linalg.eigh(a)
        if d == 1:
            return np.array([1.0 if self._rng.raw(1)[0] >> np.uint64(63) else -1.0])
        if self.sensitivity == 0:
            return vecs[:, int(np.argmax(lam))]
        # target exp(-x^T L x) with L = diag(eps (lam_max - lam) / (2 Delta)) >= 0
        lt = self.epsilon * (lam.max() - lam) / (2 * self.sensitivity)
        b = self._envelope_b(lt)
        omega = 1 + 2 * lt / b
        log_m = (d - b) / 2 + d / 2 * math.log(b / d)  # -log of the envelope bound
        batch = 16
        while True:
            z = secure_normal(self._rng, batch * d).reshape(batch, d) / np.sqrt(omega)
            x = z / np.linalg.norm(z, axis=1, keepdims=True)
            quad = (x * x) @ lt
            log_acc = -quad + log_m + d / 2 * np.log((x * x) @ omega)
            u = _open_unit(self._rng, batch)
            hit = np.flatnonzero(np.log(u) < log_acc)
            if hit.size:
                return vecs @ x[hit[0]]
            batch = min(batch * 2, 4096)

    @staticmethod
    def _envelope_b(lt: np.ndarray) -> float:
        """Kent et al.'s ``b`` in ``[1, d]`` solving ``sum 1 / (b + 2 lambda_i) = 1``."""
        lams = [2.0 * float(v) for v in lt]
        lo, hi = 1.0, float(len(lams))
        for _ in range(64):  # any b in (0, d] is valid; b only sets the acceptance rate
            mid = (lo + hi) / 2
            if sum(1.0 / (mid + v) for v in lams) > 1:
                lo = mid
            else:
                hi = mid
        return hi

    def bias(self, value: Any) -> float:
        raise NotImplementedError("bias is not defined for the Bingham mechanism")

    def variance(self, value: Any) -> float:
        raise NotImplementedError("variance is not defined for the Bingham mechanism")
