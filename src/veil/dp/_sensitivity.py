"""Sensitivity helpers: global sensitivity of bounded queries, and the "parallel databases"
(leave-one-out) empirical sensitivity as a teaching / diagnostic tool.

Global sensitivity is what differential privacy needs: the largest change of a query over
*all* pairs of neighbouring datasets, computable from public bounds alone (Dwork, McSherry,
Nissim & Smith 2006).  The empirical leave-one-out sensitivity looks at *this* dataset only:
it is a local quantity, it depends on the data (so calibrating noise on it leaks — see
Nissim, Raskhodnikova & Smith 2007) and it can be far below the global sensitivity.  It is
offered to *show* how much one person moves a statistic, never to calibrate noise.

Examples
--------
>>> import numpy as np
>>> db = np.array([1, 0, 1, 1, 0])
>>> global_sensitivity("sum", bounds=(0, 1))
1.0
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     empirical_sensitivity(np.sum, db)
1.0
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from veil.errors import ConfigError, InputError, PrivacyLeakWarning

__all__ = ["global_sensitivity", "parallel_databases", "empirical_sensitivity"]

_QUERIES = ("count", "sum", "mean", "var", "std", "median", "quantile", "histogram")


def global_sensitivity(
    query: str,
    *,
    bounds: tuple[float, float] | None = None,
    n: int | None = None,
    neighbouring: str = "replace",
) -> float:
    """Global L1 sensitivity of a bounded query.

    Parameters
    ----------
    query : {"count", "sum", "mean", "var", "std", "median", "quantile", "histogram"}
    bounds : (lower, upper)
        Public bounds of each value (not needed for count / histogram).
    n : int
        Public number of records (mean / var / std under replacement).
    neighbouring : {"replace", "add_remove"}
        Replace one record (bounded DP, ``n`` public) or add/remove one (unbounded DP).

    Returns
    -------
    float

    Examples
    --------
    >>> global_sensitivity("mean", bounds=(0, 100), n=50)
    2.0
    >>> global_sensitivity("sum", bounds=(-5, 10), neighbouring="add_remove")
    10.0
    """
    if query not in _QUERIES:
        raise ConfigError(f"unknown query {query!r}; choose one of {', '.join(_QUERIES)}")
    if neighbouring not in ("replace", "add_remove"):
        raise ConfigError("neighbouring must be 'replace' or 'add_remove'")
    replace = neighbouring == "replace"
    if query == "count":
        return 1.0
    if query == "histogram":
        return 2.0 if replace else 1.0
    if bounds is None:
        raise ConfigError(f"global sensitivity of {query} needs public bounds")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ConfigError("bounds must be finite with lower <= upper")
    if query == "sum":
        return hi - lo if replace else max(abs(lo), abs(hi))
    if query in ("median", "quantile"):
        return hi - lo
    if not replace:
        raise ConfigError(
            f"{query} under add/remove has no useful global sensitivity without a public n; "
            "use a noisy sum and a noisy count"
        )
    if n is None or n < 1:
        raise ConfigError(f"global sensitivity of {query} needs the public record count n")
    if query == "mean":
        return (hi - lo) / n
    if query == "var":
        return (hi - lo) ** 2 * (n - 1) / n**2
    return (hi - lo) / math.sqrt(n)  # std: sqrt is 1/2-Hoelder; loose but valid bound


def parallel_databases(db: Any) -> Iterator[np.ndarray]:
    """The "parallel databases" of ``db``: each copy with one record removed, in order.

    Examples
    --------
    >>> [p.tolist() for p in parallel_databases([1, 0, 1])]
    [[0, 1], [1, 1], [1, 0]]
    """
    arr = np.asarray(db)
    if arr.ndim == 0 or len(arr) == 0:
        raise InputError("parallel_databases needs a non-empty database")
    for i in range(len(arr)):
        yield np.delete(arr, i, axis=0)


def empirical_sensitivity(
    query: Callable[[np.ndarray], Any], db: Any, *, return_all: bool = False
) -> Any:
    """Largest change of ``query`` when one record is removed from ``db`` (leave-one-out).

    **Not a differential-privacy guarantee.**  This is the local sensitivity of *this*
    database towards its parallel databases: it ignores every other possible dataset and
    depends on the data itself, so noise calibrated on it can reveal the data.  Use it to
    teach and to diagnose; calibrate noise with :func:`global_sensitivity`.

    Parameters
    ----------
    query : callable
        Maps a database (numpy array) to a number or array.
    db : array_like
    return_all : bool
        Also return every leave-one-out change.

    Returns
    -------
    float, or (float, ndarray) with ``return_all``.

    Warns
    -----
    PrivacyLeakWarning
        Always: the result is data dependent.

    References
    ----------
    K. Nissim, S. Raskhodnikova, A. Smith, "Smooth sensitivity and sampling in private data
    analysis", STOC, 2007 (why local sensitivity must not calibrate noise).

    Examples
    --------
    One outlier barely moves the median of this table, while the global sensitivity of a
    median over ``[0, 100]`` is 100:

    >>> import warnings
    >>> db = np.array([3.0, 5.0, 4.0, 100.0, 4.0])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     worst, changes = empirical_sensitivity(np.median, db, return_all=True)
    >>> worst, changes.tolist(), caught[0].category.__name__
    (0.5, [0.5, 0.0, 0.5, 0.0, 0.5], 'PrivacyLeakWarning')
    >>> global_sensitivity("median", bounds=(0, 100))
    100.0
    """
    warnings.warn(
        "empirical (leave-one-out) sensitivity is data dependent and NOT a differential-"
        "privacy guarantee; calibrate noise with global_sensitivity()",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    arr = np.asarray(db)
    full = np.asarray(query(arr), dtype=np.float64)
    changes = np.array(
        [
            float(np.sum(np.abs(np.asarray(query(p), dtype=np.float64) - full)))
            for p in parallel_databases(arr)
        ]
    )
    worst = float(changes.max())
    return (worst, changes) if return_all else worst
