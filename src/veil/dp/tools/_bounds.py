"""Private estimation of clipping bounds (opt-in: ``bounds="estimate"``).

Two AboveThreshold runs (Dwork & Roth 2014, Algorithm 1) over the public ladder of
candidates ``0, +-2^-10, ..., +-2^50``: the upper bound is the first candidate below which
(nearly) every record lies, the lower bound symmetrically.  Each run costs half the budget;
NaN records count as "inside" so their number is never revealed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from veil.dp._accountant import BudgetAccountant
from veil.dp._rng import resolve_rng
from veil.dp.mechanisms._svt import AboveThreshold
from veil.dp.tools._common import as_array, check_epsilon
from veil.errors import InputError

__all__ = ["estimate_bounds", "CANDIDATES"]

_POW = 2.0 ** np.arange(-10, 51)
CANDIDATES = np.concatenate([-_POW[::-1], [0.0], _POW])


def estimate_bounds(
    array: Any,
    epsilon: float,
    *,
    random_state: Any = None,
    accountant: BudgetAccountant | None = None,
    nan: bool = False,
) -> tuple[float, float]:
    """Privately estimate ``(lower, upper)`` bounds of ``array`` with budget ``epsilon``.

    The result is a power of two (or 0) on each side, so it over-covers the data by at most
    a factor of two; values beyond ``+-2^50`` are clipped.  Spends ``epsilon`` on
    ``accountant`` only when one is given (the tools charge their whole budget up front).

    Parameters
    ----------
    array : array_like of float
    epsilon : float
    random_state : None, int or numpy Generator
    accountant : BudgetAccountant, optional
    nan : bool
        Allow NaN values (they never influence the bounds).

    Returns
    -------
    (lower, upper) : tuple of float

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = estimate_bounds(np.linspace(18, 90, 10_000), epsilon=1.0)
    >>> lo <= 18 and 90 <= hi <= 256
    True
    """
    eps = check_epsilon(epsilon)
    x = as_array(array, nan=True, name="estimate_bounds", check=False).ravel()
    if not nan and np.isnan(x).any():
        raise InputError("estimate_bounds: the data contain NaN (pass nan=True to allow)")
    if x.size == 0:
        raise InputError("estimate_bounds: empty input")
    if accountant is not None:
        accountant.spend(eps, 0)
    rng = resolve_rng(random_state)
    n = x.size
    n_nan = int(np.isnan(x).sum())
    vals = np.sort(x[~np.isnan(x)])
    below = np.searchsorted(vals, CANDIDATES, side="right") + n_nan  # count(x <= c)
    above = vals.size - np.searchsorted(vals, CANDIDATES, side="left") + n_nan  # x >= c
    e = eps / 2
    # slack so that the noisy count clears the threshold once (almost) every record is in:
    # query noise Lap(4/e) plus threshold noise Lap(2/e), union bound over the ladder
    tau = (6 / e) * math.log(CANDIDATES.size)
    threshold = max(n - tau, n / 2)
    up = AboveThreshold(epsilon=e, sensitivity=1.0, threshold=threshold, random_state=rng)
    i_up = up.randomise(below.astype(np.float64))
    down = AboveThreshold(epsilon=e, sensitivity=1.0, threshold=threshold, random_state=rng)
    i_lo = down.randomise(above[::-1].astype(np.float64))
    upper = float(CANDIDATES[-1] if i_up is None else CANDIDATES[i_up])
    lower = float(CANDIDATES[0] if i_lo is None else CANDIDATES[::-1][i_lo])
    if lower > upper:
        lower, upper = upper, lower
    return lower, upper
