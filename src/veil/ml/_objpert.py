r"""Objective perturbation for L2-regularised logistic regression: calibration and solver.

The mechanism (Chaudhuri, Monteleoni & Sarwate 2011, *Differentially private empirical risk
minimization*, JMLR 12, Algorithm 2; the general form of Kifer, Smith & Thakurta 2012,
*Private convex empirical risk minimization and high-dimensional regression*, COLT) releases

.. math::

    \hat w = \arg\min_w \; \frac1n \sum_i \ell(y_i w^\top x_i) + \frac{\Lambda}{2}\|w\|^2
             + \frac{b^\top w}{n}, \qquad \nu(b) \propto e^{-\beta \|b\|},

i.e. ``||b|| ~ Gamma(d, 1/beta)`` in a uniformly random direction, with rows
``||x_i|| <= R``, labels ``y_i in {-1, +1}`` and a convex, twice differentiable loss with
``|l'| <= 1`` and ``0 <= l'' <= c`` (logistic loss: ``c = 1/4``).  ``Lambda = lambda + Delta``
is the user's regulariser plus an extra one chosen by the mechanism.

Privacy proof (replace-one neighbours, as in Chaudhuri et al.)
--------------------------------------------------------------
Stationarity gives ``b = B_D(w) := -sum_i y_i l'(y_i w.x_i) x_i - n Lambda w``.  ``B_D`` is the
negated gradient of an ``n Lambda``-strongly convex C^2 function, hence a C^1 bijection of
R^d with Jacobian ``-H_D(w)``, ``H_D(w) = sum_i l''_i x_i x_i^T + n Lambda I`` (positive
definite).  By change of variables the released ``w`` has density
``p_D(w) = nu(B_D(w)) det H_D(w)``.  Let ``D'`` replace the row ``(x, y)`` of ``D`` by
``(x', y')`` and let ``A = sum_{shared rows} l''_i x_i x_i^T + n Lambda I``, the part common to
``H_D(w)`` and ``H_D'(w)`` (same ``w``, same shared rows), so ``A >= n Lambda I``.

* Noise term: ``B_D(w) - B_D'(w) = y' l'(.) x' - y l'(.) x`` has norm at most ``2R``, so
  ``nu(B_D(w)) / nu(B_D'(w)) <= exp(2 R beta)``.
* Jacobian term: by the matrix determinant lemma
  ``det(A + a x x^T) = det(A) (1 + a x^T A^{-1} x)`` with ``0 <= a <= c`` and
  ``x^T A^{-1} x <= R^2 / (n Lambda)``, so both determinants lie in
  ``[det A, det A (1 + c R^2 / (n Lambda))]`` and their ratio is at most
  ``1 + c R^2 / (n Lambda)``.

Hence ``p_D(w) / p_D'(w) <= exp(eps_noise + eps_jacobian)`` for every ``w``, with

.. math::

    \varepsilon_{noise} = 2R\beta, \qquad
    \varepsilon_{jac} = \log\Bigl(1 + \frac{cR^2}{n\Lambda}\Bigr).

(Chaudhuri et al. bound the ratio of the two determinants through the eigenvalues of the rank-2
difference ``a x x^T - a' x' x'^T`` and obtain ``(1 + c/(n Lambda))^2``, twice the log term;
comparing both with the common matrix ``A`` gives the single factor, the
``log(1 + curvature / Delta)`` form of Kifer et al.'s theorem.)  This generic bound holds for
any such loss (:func:`generic_loss_bound`).  The estimator scales rows to ``R = 1`` (see
:mod:`veil.ml._logistic`), so below ``R = 1``.

Tighter bound for the logistic loss
-----------------------------------
The two worst cases above cannot happen together: with ``p = sigmoid(-y w.x)`` the logistic
loss has ``|l'| = p`` and ``l'' = p (1 - p)``, so the row ``x`` of ``D`` (norm ``r <= 1``)
moves ``B`` by ``p r`` and the determinant by a factor ``<= 1 + p (1 - p) r^2 / (n Lambda)``,
while the row ``x'`` of ``D'`` moves ``B`` by ``p' r' <= 1`` and can only *decrease* the log
ratio through its determinant factor (``>= 1``).  Splitting
``||B_D - B_D'|| <= p r + p' r'`` therefore gives, with ``K = n Lambda``,

.. math::

    \log\frac{p_D(w)}{p_{D'}(w)} \le \beta + \max_{0 \le p \le 1}
    \Bigl[\beta p + \log\Bigl(1 + \frac{p(1-p)}{K}\Bigr)\Bigr],

(increasing in ``r``, so ``r = 1``).  The bracket is concave in ``p``; its maximiser is the
root in [0, 1] of ``beta p^2 + (2 - beta) p - (beta K + 1) = 0`` (``p = 1`` when
``beta K >= 1``).  It never exceeds the generic ``2 beta + log(1 + 1/(4K))`` and is about 12 %
smaller when both terms matter, i.e. at small epsilon (:func:`logistic_loss_bound`).

Budget split
------------
Any ``Lambda >= lambda`` and ``beta`` whose bound is ``<= eps`` are private; how ``eps`` is
divided is a free choice that must not depend on the data.  More budget for the Jacobian term
means less extra regularisation (less bias towards ``w = 0``) but more noise.  We set
``Lambda = max(lambda, c / (n expm1(s eps)))`` (the generic Jacobian term takes at most the
share ``s`` of ``eps``; when the user's own ``lambda`` already keeps it below that, no
regularisation is added: Chaudhuri's ``Delta = 0`` branch) and then the largest ``beta`` whose
logistic bound is ``<= eps`` (bisection; the bound is increasing in ``beta``).  Chaudhuri's
Algorithm 2 uses a fixed split (``eps / 2`` for the noise when ``Delta > 0``).

The share is a function of the public product ``n eps`` only (:func:`default_jacobian_share`):

.. math::

    s(n\varepsilon) = \operatorname{clip}\bigl(0.3 + 0.28 \log_{10}(n\varepsilon / 1000),
    \; 0.2, \; 0.65\bigr).

Why ``n eps``: at small ``eps`` the extra regulariser is ``n Lambda ~ c / (s eps)`` while the
data's curvature in any direction grows like ``n``, so the shrinkage a share causes depends on
``s n eps``; ``beta ~ (1 - s) eps / 2`` scales the noise *relative* to the same curvature by
``1 / (n eps)`` too.  In a quadratic (squared-error) model of the perturbed minimiser the
optimal share is a constant (bias ``~ Lambda^2 |w0|^2`` and noise ``~ E b_j^2`` are divided by
the same ``(n h + n Lambda)^2`` in each eigendirection; it depends on the unknown ``|w0|``),
and an upper bound on the excess objective picks shares of 0.06-0.2, which classify worse.
Test accuracy is not squared error: the best share measured on a 70/30 split of Adult's
*training* file rises with ``n eps`` (``benchmarks/ml_lr_share.py``: 200 fits per cell,
shares 0.3-0.7, ``n`` = 10,000 and 22,792; best 0.3 at ``n eps`` ~ 700-1,000, 0.4-0.5 at
2,000-6,000, 0.6 at 10,000-16,000, 0.6-0.7 at 23,000), with the same optimum for the two
``n`` at equal ``n eps``.  The rule is a log-linear fit to those optima; it uses nothing of the
data being released (only ``n``, public under replace-one neighbours, and ``eps``), and any
share in (0, 1) gives an ``eps``-DP release, so the rule affects accuracy only.  (Before this
rule Veil used the constant share 0.6.)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit, log_expit
from sklearn.exceptions import ConvergenceWarning

from veil._checks import user_stacklevel
from veil.ml._noise import gamma_int, std_normal

__all__ = [
    "LOGISTIC_CURVATURE",
    "SHARE_MIN",
    "SHARE_MAX",
    "default_jacobian_share",
    "Calibration",
    "calibrate",
    "privacy_loss_bound",
    "generic_loss_bound",
    "logistic_loss_bound",
    "sample_perturbation",
    "minimise_perturbed_logistic",
]

LOGISTIC_CURVATURE = 0.25  # sup of l''(m) = sigmoid(m) sigmoid(-m)
SHARE_MIN, SHARE_MAX = 0.2, 0.65  # range of the n*eps rule (see default_jacobian_share)
_SHARE_AT_1000, _SHARE_PER_DECADE = 0.3, 0.28  # share at n*eps = 1000, slope per decade
_NEWTON_MAX_DIM = 512  # explicit-Hessian Newton up to this dimension, L-BFGS above


@dataclass(frozen=True)
class Calibration:
    """Parameters of one objective-perturbation release (rows of norm <= 1).

    Attributes
    ----------
    reg : total regulariser ``Lambda`` (mean-loss scale).
    extra_reg : ``Delta = Lambda - lambda`` added for privacy (0 when not needed).
    beta : rate of the noise density ``exp(-beta ||b||)``; ``||b|| ~ Gamma(d, 1/beta)``.
    eps_jacobian, eps_noise : the log-determinant and noise terms of the privacy bound at its
        worst case; ``epsilon = eps_jacobian + eps_noise`` is at most the requested budget.
    epsilon : the privacy bound of the release.
    """

    reg: float
    extra_reg: float
    beta: float
    eps_jacobian: float
    eps_noise: float
    epsilon: float


def generic_loss_bound(reg: float, beta: float, n: int, curvature: float) -> tuple[float, float]:
    """Jacobian and noise terms for any loss with ``|l'| <= 1``, ``0 <= l'' <= curvature``.

    ``(log(1 + c / (n Lambda)), 2 beta)``, rows of norm <= 1 (see the module docstring).
    """
    return math.log1p(curvature / (n * reg)), 2.0 * beta


def _logistic_worst_p(beta: float, k: float) -> float:
    # argmax over p in [0, 1] of beta p + log(1 + p (1 - p) / k) (a concave function): the root
    # of beta p^2 + (2 - beta) p - (beta k + 1) = 0, written without cancellation
    if beta * k >= 1.0:
        return 1.0
    disc = (2.0 - beta) ** 2 + 4.0 * beta * (beta * k + 1.0)
    return min(1.0, 2.0 * (beta * k + 1.0) / ((2.0 - beta) + math.sqrt(disc)))


def logistic_loss_bound(reg: float, beta: float, n: int) -> tuple[float, float]:
    """Jacobian and noise terms for the logistic loss (tighter than the generic bound).

    With ``p = sigmoid(-m)`` the logistic loss has ``|l'(m)| = p`` and ``l''(m) = p (1 - p)``,
    so the replaced row of ``D`` contributes at most ``beta p + log(1 + p (1 - p) / (n Lambda))``
    and the row of ``D'`` at most ``beta``; the first is maximised at the ``p`` returned by
    :func:`_logistic_worst_p`.  Returns ``(log(1 + p(1-p)/(n Lambda)), beta (1 + p))``.
    """
    k = n * reg
    p = _logistic_worst_p(beta, k)
    return math.log1p(p * (1.0 - p) / k), beta * (1.0 + p)


def privacy_loss_bound(reg: float, beta: float, n: int, curvature: float | None = None) -> float:
    """The epsilon of a release with these parameters (logistic loss unless ``curvature``)."""
    if curvature is None:
        jac, noise = logistic_loss_bound(reg, beta, n)
    else:
        jac, noise = generic_loss_bound(reg, beta, n, curvature)
    return jac + noise


def default_jacobian_share(n: int, epsilon: float) -> float:
    """Share of ``epsilon`` offered to the Jacobian term, from the public ``n * epsilon`` only.

    ``clip(0.3 + 0.28 log10(n eps / 1000), 0.2, 0.65)``: non-decreasing in ``n eps``; a
    log-linear fit to the accuracy-optimal shares measured on a split of Adult's training file
    (see the module docstring).  Every share in (0, 1) is private; this one is for accuracy.

    Examples
    --------
    >>> round(default_jacobian_share(32561, 0.1), 3), default_jacobian_share(32561, 5.0)
    (0.444, 0.65)
    """
    ne = float(n) * float(epsilon)
    if not (math.isfinite(ne) and ne > 0):
        raise ValueError(f"need n * epsilon positive and finite, got {ne!r}")
    share = _SHARE_AT_1000 + _SHARE_PER_DECADE * math.log10(ne / 1000.0)
    return min(SHARE_MAX, max(SHARE_MIN, share))


def calibrate(
    epsilon: float,
    n: int,
    lam: float,
    *,
    curvature: float | None = None,
    jacobian_share: float | None = None,
) -> Calibration:
    """Choose ``Lambda`` and ``beta`` for an ``epsilon``-DP release (rows of norm <= 1).

    Parameters
    ----------
    epsilon : privacy budget of this release (> 0).
    n : number of rows (public under replace-one neighbours).
    lam : the user's regulariser on the mean-loss scale (> 0).
    curvature : None for the logistic loss (its tighter bound); otherwise the bound ``c`` on
        the second derivative of a loss with ``|l'| <= 1``, with the generic bound.
    jacobian_share : in (0, 1), or None (default) for :func:`default_jacobian_share` ``(n, epsilon)``;
        the regulariser is ``Lambda = max(lam, c / (n expm1(jacobian_share * epsilon)))``,
        i.e. the generic Jacobian term ``log(1 + c / (n Lambda))`` is at most this share of
        ``epsilon``.

    Returns
    -------
    Calibration
        ``beta`` is the largest noise rate whose bound stays within ``epsilon`` (found by
        bisection for the logistic bound, rounded down so that floating point never
        overspends).

    Examples
    --------
    >>> cal = calibrate(0.5, 30000, 1e-6, curvature=0.25, jacobian_share=0.5)
    >>> round(cal.eps_jacobian, 6), round(cal.eps_noise, 6)
    (0.25, 0.25)
    >>> cal = calibrate(0.5, 30000, 1e-6, jacobian_share=0.5)  # logistic: same Lambda, less noise
    >>> round(cal.beta, 4), round(cal.epsilon, 9)
    (0.1618, 0.5)
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
    if not (lam > 0 and n >= 1):
        raise ValueError("need lam > 0 and n >= 1")
    if jacobian_share is None:
        jacobian_share = default_jacobian_share(n, eps)
    if not (0.0 < jacobian_share < 1.0):
        raise ValueError(f"jacobian_share must lie in (0, 1), got {jacobian_share!r}")
    c = LOGISTIC_CURVATURE if curvature is None else float(curvature)
    reg = max(float(lam), c / (n * math.expm1(jacobian_share * eps)))
    if curvature is None:
        target = eps * (1.0 - 1e-12)
        lo, hi = 0.0, eps  # the bound is increasing in beta and >= beta
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if privacy_loss_bound(reg, mid, n) <= target:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-15 * hi:
                break
        beta = lo
    else:
        beta = (eps - math.log1p(c / (n * reg))) / 2.0
        while beta > 0 and privacy_loss_bound(reg, beta, n, c) > eps:  # rounding guard
            beta = math.nextafter(beta, 0.0)
    if not beta > 0:  # pragma: no cover - reg >= needed leaves budget for the noise
        raise ValueError("no budget left for the noise term")
    jac, noise = (
        logistic_loss_bound(reg, beta, n)
        if curvature is None
        else generic_loss_bound(reg, beta, n, c)
    )
    return Calibration(
        reg=reg,
        extra_reg=reg - float(lam),
        beta=beta,
        eps_jacobian=jac,
        eps_noise=noise,
        epsilon=jac + noise,
    )


def sample_perturbation(rng: Any, d: int, beta: float) -> np.ndarray:
    """``b`` with density proportional to ``exp(-beta ||b||)`` on R^d.

    In polar coordinates that density is ``r^(d-1) exp(-beta r)`` times the uniform measure on
    the sphere: the norm is Gamma(d, 1/beta) (a sum of d exponentials) and the direction is a
    normalised standard normal vector, independent of the norm.
    """
    direction = std_normal(rng, d)
    direction /= np.linalg.norm(direction)
    return gamma_int(rng, d, 1.0 / beta) * direction


def _value_and_grad(
    Z: np.ndarray, s: np.ndarray, b: np.ndarray, reg: float, w: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """The perturbed objective ``f(w)``, its gradient, and ``q = sigmoid(-s Z w)``.

    ``f(w) = mean(log(1 + exp(-s_i z_i.w))) + b.w / n + reg ||w||^2 / 2``; ``q`` gives the
    Hessian's row weights ``q (1 - q) / n``.
    """
    n = len(Z)
    m = s * (Z @ w)
    q = expit(-m)
    f = float(-np.mean(log_expit(m)) + (b @ w) / n + 0.5 * reg * (w @ w))
    return f, -(Z.T @ (s * q)) / n + b / n + reg * w, q


def minimise_perturbed_logistic(
    Z: np.ndarray, s: np.ndarray, b: np.ndarray, reg: float, *, max_iter: int, gtol: float
) -> tuple[np.ndarray, int]:
    """Minimiser of the perturbed objective, to ``max|grad| <= gtol`` (the proof needs the exact
    argmin; the float residual left by the solver is not accounted for -- Iyengar et al. 2019,
    "Towards practical differentially private convex optimization", IEEE S&P, cover an
    approximate minimiser with extra noise -- and a :class:`ConvergenceWarning` is raised when
    the tolerance is not reached).

    Damped Newton's method from ``w = 0`` (data independent) with an explicit Hessian for
    ``d <= 512`` (quadratic convergence: a few iterations reach ``max|grad| <= gtol``); above,
    L-BFGS finished by Newton-CG steps with exact Hessian-vector products.  Returns the
    minimiser and the number of iterations.
    """
    n, d = Z.shape
    if d > _NEWTON_MAX_DIM:
        res = minimize(
            lambda w: _value_and_grad(Z, s, b, reg, w)[:2],
            np.zeros(d),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": int(max_iter) * 10, "gtol": gtol, "ftol": 1e-15},
        )
        w = np.asarray(res.x)
        # L-BFGS stalls where f stops resolving progress; finish with a few full Newton-CG
        # steps (exact Hessian-vector products), which converge quadratically from there
        grad, q = np.asarray(res.jac), None
        for _ in range(8):
            if np.max(np.abs(grad)) <= gtol:
                break
            q = _value_and_grad(Z, s, b, reg, w)[2] if q is None else q
            curv = q * (1.0 - q) / n

            def hvp(v: np.ndarray, curv: np.ndarray = curv) -> np.ndarray:
                return Z.T @ (curv * (Z @ v)) + reg * v

            op = LinearOperator((d, d), matvec=hvp, dtype=np.float64)
            step, _ = cg(op, grad, rtol=1e-12, atol=0.0, maxiter=10 * d)
            w = w - step
            _, grad, q = _value_and_grad(Z, s, b, reg, w)
        if np.max(np.abs(grad)) > gtol:
            # the text names no value of the run (the gradient left, the solver's message):
            # they are functions of the data that the noise does not cover
            warnings.warn(
                f"the solver stopped above max|grad| <= {gtol:g}: the privacy proof assumes "
                "the exact minimiser",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
        return w, int(res.nit)
    w = np.zeros(d)
    eye = np.eye(d)
    f, grad, q = _value_and_grad(Z, s, b, reg, w)
    it = 0
    for it in range(1, int(max_iter) + 1):  # noqa: B007 - the count is returned
        if np.max(np.abs(grad)) <= gtol:
            return w, it - 1
        hess = (Z.T * (q * (1.0 - q))) @ Z / n + reg * eye
        step = np.linalg.solve(hess, grad)
        decrement = float(grad @ step)
        if decrement <= 1e-14 * max(1.0, abs(f)):
            # quadratic region: f can no longer resolve the progress; take the full step
            w = w - step
            f, grad, q = _value_and_grad(Z, s, b, reg, w)
            continue
        t = 1.0
        while True:
            w_new = w - t * step
            f_new, grad_new, q_new = _value_and_grad(Z, s, b, reg, w_new)
            if f_new <= f - 0.25 * t * decrement or t < 1e-12:
                break
            t *= 0.5
        if f_new > f:  # no progress possible in floating point: at the minimum
            return w, it
        w, f, grad, q = w_new, f_new, grad_new, q_new
    warnings.warn(
        f"Newton's method did not reach max|grad| <= {gtol:g} in {max_iter} iterations",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )
    return w, it
