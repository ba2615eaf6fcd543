"""DP histograms (numpy's signatures plus ``epsilon`` / ``accountant``).

Privacy unit: one record, neighbours differ by adding or removing it (each record falls in
at most one bin, so the count vector has L1 sensitivity 1; under replacement it is 2, i.e.
the guarantee is ``2 epsilon``).  Counts get exact geometric noise and are projected onto
``>= 0``.  Weighted histograms need an explicit ``weight_bound``: weights are clipped to
``[-B, B]`` (or a given ``[low, high]``) and the (FP-safe Laplace) noise is calibrated on the
bound's magnitude — diffprivlib ignores the weights in the noise, which is not private.  Weighted
sums are projected onto ``>= 0`` only for a declared ``low >= 0``, never because the data's
weights happen to be non-negative (that released whether some record's weight was
negative).  Bin edges must be public: ``range`` (or explicit edges) is required and never read
from the data.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._rng import resolve_rng
from veil.dp._samplers import discrete_laplace, laplace_fp
from veil.dp.mechanisms._base import as_float
from veil.dp.tools._common import (
    as_array,
    cell_epsilon,
    check_epsilon,
    check_noise,
    check_unused,
    spend,
)
from veil.errors import ConfigError, InputError

__all__ = ["histogram", "histogram2d", "histogramdd"]


def _explicit_edges(bins: Any) -> bool:
    return not isinstance(bins, (int, np.integer, str)) and np.ndim(bins) == 1


def _no_estimator(bins: Any, name: str) -> None:
    if isinstance(bins, str):
        raise ConfigError(
            f"{name}: bins={bins!r} picks the bins from the data, which leaks; give a number "
            "of bins with range=, or explicit edges"
        )


def _no_estimated_range(range_: Any, name: str) -> None:
    """A string range (diffprivlib has none; ``"estimate"`` mirrors ``bounds="estimate"``) is
    a clear ConfigError instead of numpy's unpacking error."""
    if isinstance(range_, str) or (
        isinstance(range_, (list, tuple)) and any(isinstance(r, str) for r in range_)
    ):
        raise ConfigError(
            f"{name}: range={range_!r} is not supported: the bin edges must be public numbers. "
            "To estimate them privately, call dp.tools.estimate_bounds(x, epsilon, "
            "accountant=acc) on part of the budget and pass range=(lower, upper)"
        )


def _nan_edges(edges: np.ndarray) -> None:
    """ValueError (a ConfigError once the caller names itself) for a NaN bin edge, which numpy accepts: its monotonicity check compares
    false, and ``np.histogram`` then counts a value in one bin and *minus* it in the next
    (``np.histogram([5.0], bins=[0, nan, 3])`` is ``[1, -1]``), an L1 sensitivity of 2 where
    the noise is calibrated for 1."""
    if np.isnan(np.asarray(edges, dtype=np.float64)).any():
        raise ValueError("bin edges must not be NaN")


def _check_sample(sample: Any, name: str) -> np.ndarray:
    arr = as_array(sample, nan=True, name=name, check=False)  # infinite values fall outside
    if np.isnan(arr).any():
        raise InputError(f"{name}: the data contain NaN; drop them first (never silently binned)")
    return arr


def _weights(
    weights: Any, weight_bound: Any, n: int, name: str
) -> tuple[np.ndarray | None, float, bool]:
    """Clipped weights, the sensitivity they give, and whether the noisy sums are projected
    onto ``>= 0``.

    The projection is decided by the public ``weight_bound`` alone: ``B`` (weights in
    ``[-B, B]``) never projects, ``(low, high)`` with ``low >= 0`` does.  Projecting whenever
    *this data's* weights were all ``>= 0`` released whether some record had a negative weight:
    without it a bin's release can be negative, with it never, an event of probability 0 on
    one table and about 1/2 on its neighbour (an unbounded privacy loss).
    """
    if weights is None:
        return None, 1.0, True
    if weight_bound is None:
        raise ConfigError(
            f"{name}: weights change the sensitivity; pass weight_bound=B (weights are clipped "
            "to [-B, B] and the noise calibrated on B), or drop the weights"
        )
    if isinstance(weight_bound, (tuple, list)):
        if len(weight_bound) != 2:
            raise ConfigError(f"{name}: weight_bound must be B or (low, high)")
        lo, hi = (as_float("weight_bound", v) for v in weight_bound)
        if not (lo <= hi and max(abs(lo), abs(hi)) > 0):
            raise ConfigError(f"{name}: weight_bound (low, high) needs low <= high, not both 0")
    else:
        hi = as_float("weight_bound", weight_bound)
        if not hi > 0:
            raise ConfigError(f"{name}: weight_bound must be positive")
        lo = -hi
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ConfigError(f"{name}: weight_bound must be finite")
    # read as the sample is: text is refused (never parsed, and never quoted in the error)
    w = as_array(weights, nan=True, name=f"{name}: weights", check=False).ravel()
    if w.size != n or not np.isfinite(w).all():
        raise InputError(f"{name}: weights must be finite, one per record")
    return np.clip(w, lo, hi), max(abs(lo), abs(hi)), lo >= 0


def _noisy(
    hist: np.ndarray, eps: float, w: np.ndarray | None, b: float, nonneg: bool, rng: Any
) -> np.ndarray:
    if w is None:
        noisy = hist.astype(np.int64) + discrete_laplace(
            Fraction(1) / Fraction(eps), hist.size, rng
        ).reshape(hist.shape)
        return np.maximum(noisy, 0)
    out = laplace_fp(hist, b / eps, rng, sensitivity=b)
    return np.maximum(out, 0.0) if nonneg else out


def _density(hist: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    total = hist.sum()
    if total <= 0:
        return np.zeros(hist.shape)
    widths = np.ones(hist.shape)
    for d, e in enumerate(edges):
        shape = [1] * hist.ndim
        shape[d] = -1
        widths = widths * np.diff(e).reshape(shape)
    return hist / total / widths


def histogram(
    sample: Any,
    epsilon: float = 1.0,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 - numpy's name
    weights: Any = None,
    density: Any = None,
    random_state: Any = None,
    accountant: Any = None,
    weight_bound: Any = None,
    **unused_args: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """DP histogram (numpy's :func:`numpy.histogram` plus privacy arguments).

    Parameters
    ----------
    sample : array_like
    epsilon : float, default 1.0
    bins : int or sequence of edges
    range : (float, float)
        Required unless ``bins`` lists the edges.
    weights : array_like, optional
        Needs ``weight_bound``.
    density : bool, optional
    random_state, accountant : see :mod:`veil.dp.tools`
    weight_bound : float or (float, float), optional
        Public bound on the weights: ``B`` clips them to ``[-B, B]``, ``(low, high)`` to
        ``[low, high]``; the noise is calibrated on the larger magnitude.  The noisy sums are
        projected onto ``>= 0`` only when ``low >= 0`` (a public choice, never one read from
        the weights).

    Returns
    -------
    hist, bin_edges

    Examples
    --------
    >>> import veil.dp as dp
    >>> hist, edges = dp.tools.histogram([20, 35, 47, 61], epsilon=0.1, range=[10, 100])
    >>> hist.shape, edges.shape
    ((10,), (11,))
    """
    check_unused(unused_args, histogram)
    eps = check_epsilon(epsilon)
    arr = _check_sample(sample, "histogram")
    eps_value = cell_epsilon(eps, arr.shape)  # a 2-d sample is flattened: a row is many values
    arr = arr.ravel()
    _no_estimator(bins, "histogram")
    _no_estimated_range(range, "histogram")
    if range is None and not _explicit_edges(bins):
        raise ConfigError(
            "histogram: range=(low, high) (or explicit bin edges) is required; it is never "
            "read from the data"
        )
    w, b, nonneg = _weights(weights, weight_bound, arr.size, "histogram")
    try:  # validate the public binning on no data before charging the budget
        _nan_edges(np.histogram_bin_edges(np.empty(0), bins=bins, range=range))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"histogram: {exc}") from None
    check_noise(
        eps_value, laplace=[b] if w is not None else [], geometric=[] if w is not None else [1]
    )
    spend(accountant, eps)
    hist, edges = np.histogram(arr, bins=bins, range=range, weights=w)
    noisy = _noisy(hist, eps_value, w, b, nonneg, resolve_rng(random_state))  # group privacy: a row
    if density:
        return _density(noisy, [edges]), edges
    return noisy, edges


def histogramdd(
    sample: Any,
    epsilon: float = 1.0,
    bins: Any = 10,
    range: Any = None,  # noqa: A002
    weights: Any = None,
    density: Any = None,
    random_state: Any = None,
    accountant: Any = None,
    weight_bound: Any = None,
    **unused_args: Any,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """DP multi-dimensional histogram (:func:`numpy.histogramdd` plus privacy arguments).

    ``range`` (one ``(low, high)`` per dimension) is required unless every ``bins`` entry
    lists edges.

    Examples
    --------
    >>> import veil.dp as dp
    >>> h, e = dp.tools.histogramdd([[1, 2], [3, 4]], epsilon=1, bins=2, range=[(0, 5), (0, 5)])
    >>> h.shape
    (2, 2)
    """
    check_unused(unused_args, histogramdd)
    eps = check_epsilon(epsilon)
    arr = _check_sample(sample, "histogramdd")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:  # checked before the budget is charged
        raise InputError("histogramdd: the sample must be (N, D): one point per record")
    dims = arr.shape[1]
    for b_ in bins if isinstance(bins, (list, tuple)) else [bins]:
        _no_estimator(b_, "histogramdd")
    _no_estimated_range(range, "histogramdd")
    explicit = isinstance(bins, (list, tuple)) and all(_explicit_edges(b_) for b_ in bins)
    if range is None and not explicit:
        raise ConfigError(
            "histogramdd: range=[(low, high), ...] (or explicit edges for every dimension) is "
            "required; it is never read from the data"
        )
    if range is not None and (len(range) != dims or any(r is None for r in range)):
        raise ConfigError(f"histogramdd: range needs one (low, high) per dimension ({dims})")
    w, b, nonneg = _weights(weights, weight_bound, arr.shape[0], "histogramdd")
    try:  # validate the public binning on no data before charging the budget
        for e in np.histogramdd(np.empty((0, dims)), bins=bins, range=range)[1]:
            _nan_edges(e)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"histogramdd: {exc}") from None
    check_noise(eps, laplace=[b] if w is not None else [], geometric=[] if w is not None else [1])
    spend(accountant, eps)
    hist, edges = np.histogramdd(arr, bins=bins, range=range, weights=w)
    noisy = _noisy(hist, eps, w, b, nonneg, resolve_rng(random_state))
    if density:
        return _density(noisy, list(edges)), list(edges)
    return noisy, list(edges)


def histogram2d(
    array_x: Any,
    array_y: Any,
    epsilon: float = 1.0,
    bins: Any = 10,
    range: Any = None,  # noqa: A002
    weights: Any = None,
    density: Any = None,
    random_state: Any = None,
    accountant: Any = None,
    weight_bound: Any = None,
    **unused_args: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DP 2-d histogram (:func:`numpy.histogram2d` plus privacy arguments).

    Examples
    --------
    >>> import veil.dp as dp
    >>> h, xe, ye = dp.tools.histogram2d([1, 2], [3, 4], epsilon=1, bins=3, range=[(0, 5), (0, 5)])
    >>> h.shape
    (3, 3)
    """
    check_unused(unused_args, histogram2d)
    _no_estimated_range(range, "histogram2d")
    x = _check_sample(array_x, "histogram2d")
    y = _check_sample(array_y, "histogram2d")
    if x.ndim > 1 or y.ndim > 1:  # as numpy: one (x, y) point per record
        raise InputError("histogram2d: x and y must be 1-d (one point per record)")
    x, y = x.ravel(), y.ravel()
    if x.size != y.size:
        raise InputError("histogram2d: x and y must have the same length")
    if not isinstance(bins, (int, np.integer, str)) and np.ndim(bins) == 1 and len(bins) != 2:
        bins = [bins, bins]
    hist, edges = histogramdd(
        np.column_stack([x, y]),
        epsilon=epsilon,
        bins=bins,
        range=range,
        weights=weights,
        density=density,
        random_state=random_state,
        accountant=accountant,
        weight_bound=weight_bound,
    )
    return hist, edges[0], edges[1]
