"""Differentially private statistics with numpy-like, diffprivlib-compatible signatures.

``count``, ``count_nonzero``, ``sum``, ``mean``, ``var``, ``std``, ``median``, ``quantile``,
``percentile``, ``histogram``, ``histogram2d``, ``histogramdd`` and the ``nan*`` variants.
Each takes ``epsilon``, ``bounds`` (or ``range`` for histograms), ``axis``, ``keepdims``,
``random_state`` and ``accountant``.  Differences from diffprivlib (all deliberate, see
docs/dp.md): bounds/range are required (``bounds="estimate"`` opts into private estimation);
NaN raises in the plain functions and is handled privately by the ``nan*`` ones; weighted
histograms need ``weight_bound`` and ``weights=`` elsewhere is refused; a misspelt parameter
name is an error; every ``axis`` is calibrated for one *row* and charged as one spend of
epsilon (diffprivlib splits epsilon over the outputs for one *value*, one spend each);
``count`` (not in diffprivlib) releases the number of records under add/remove (sensitivity
1, discrete Laplace).
``accuracy(statistic, epsilon, bounds=, n=, alpha=)`` gives the noise interval before release.

Examples
--------
>>> import veil.dp as dp
>>> acc = dp.BudgetAccountant(epsilon=1.2)
>>> ages = [23, 35, 47, 51, 62, 29, 40]
>>> m = dp.tools.mean(ages, epsilon=0.5, bounds=(0, 100), accountant=acc)
>>> acc.total().epsilon
0.5
"""

from __future__ import annotations

from veil.dp.tools._accuracy import accuracy
from veil.dp.tools._bounds import estimate_bounds
from veil.dp.tools._histograms import histogram, histogram2d, histogramdd
from veil.dp.tools._moments import (
    count,
    count_nonzero,
    mean,
    nanmean,
    nanstd,
    nansum,
    nanvar,
    std,
    sum,
    var,
)
from veil.dp.tools._quantiles import (
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    percentile,
    quantile,
)

__all__ = [
    "count",
    "count_nonzero",
    "sum",
    "mean",
    "var",
    "std",
    "nansum",
    "nanmean",
    "nanvar",
    "nanstd",
    "median",
    "quantile",
    "percentile",
    "nanmedian",
    "nanquantile",
    "nanpercentile",
    "histogram",
    "histogram2d",
    "histogramdd",
    "estimate_bounds",
    "accuracy",
]
