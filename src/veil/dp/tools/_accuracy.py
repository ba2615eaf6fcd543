"""Accuracy before release: noise intervals of the DP statistics, computed from public inputs.

``accuracy(statistic, epsilon, bounds=..., n=..., alpha=0.05)`` returns the half-width ``h``
such that the released value lies within ``h`` of the (clipped) true statistic with probability
at least ``1 - alpha`` — known before any data is touched, to choose epsilon or bounds.  The
intervals are those of the exact noise distributions the tools use (see
:meth:`veil.dp.mechanisms.DPMechanism.confidence_interval`); projection onto the feasible range
can only shrink the error.  Quantiles have no additive-noise interval (their error depends on
the data) and are refused.
"""

from __future__ import annotations

import math
from typing import Any

from veil.dp._sensitivity import global_sensitivity
from veil.dp.mechanisms._geometric import Geometric
from veil.dp.mechanisms._laplace import laplace_halfwidth
from veil.dp.tools._common import check_epsilon
from veil.errors import ConfigError

__all__ = ["accuracy"]

_NEEDS_N = ("mean", "var", "std")


def accuracy(
    statistic: str,
    epsilon: float,
    *,
    bounds: Any = None,
    n: int | None = None,
    alpha: float = 0.05,
) -> float:
    """Half-width of a ``1 - alpha`` interval for the noise of a DP statistic.

    Parameters
    ----------
    statistic : {"count", "count_nonzero", "histogram", "sum", "mean", "var", "std"}
        ``histogram`` is per bin.
    epsilon : float
    bounds : (lower, upper)
        Needed for sum / mean / var / std.
    n : int
        Public number of records; needed for mean / var / std.
    alpha : float in (0, 1)

    Returns
    -------
    float

    Examples
    --------
    >>> round(accuracy("mean", 0.5, bounds=(0, 100), n=1000), 3)
    0.599
    >>> accuracy("count_nonzero", 1.0)
    3.0
    """
    eps = check_epsilon(epsilon)
    if not 0 < alpha < 1:
        raise ConfigError("alpha must be in (0, 1)")
    if statistic in ("count", "count_nonzero", "histogram"):
        return Geometric(epsilon=eps, sensitivity=1)._noise_halfwidth(alpha)
    if statistic not in ("sum", *_NEEDS_N):
        raise ConfigError(
            f"no a-priori interval for {statistic!r}; choose count, count_nonzero, histogram, "
            "sum, mean, var or std (quantile errors depend on the data)"
        )
    # the tools' noise: sum / mean / var at their replace-one sensitivity; std is the sqrt of
    # the noisy variance (validation of bounds and n is global_sensitivity's)
    query = "var" if statistic == "std" else statistic
    sens = global_sensitivity(query, bounds=bounds, n=n)
    if sens == 0:
        return 0.0
    h = laplace_halfwidth(sens / eps, sens, alpha)
    if statistic == "std":
        return math.sqrt(h)  # |sqrt(a) - sqrt(b)| <= sqrt(|a - b|)
    return h
