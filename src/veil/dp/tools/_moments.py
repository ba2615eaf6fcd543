"""DP count, count_nonzero, sum, mean, variance and standard deviation (numpy-like, diffprivlib signatures).

Privacy unit: one record (a row along axis 0).  For the plain functions the neighbouring
datasets differ by *replacing* one record and the number of records ``n`` is public (as in
diffprivlib and OpenDP's sized data); the ``nan*`` functions treat the number of non-NaN
values as private (a record may change between a value and NaN) and estimate it with part of
the budget, so NaN never leaks.  ``count`` releases the number of records itself, so it
protects their addition or removal (sensitivity 1, discrete Laplace noise).

Estimators (Laplace noise, FP-safe, outputs projected onto their feasible range, which can
only reduce the error):

* ``sum``: clipped sum + Lap((U - L) / eps), projected onto ``[n L, n U]``; with an integer
  ``dtype`` every clipped value is first cast towards zero (numpy's ``sum(dtype=int)``), the
  integer sum gets exact discrete Laplace noise of sensitivity ``trunc(U) - trunc(L)``
  (``nansum``: ``max(trunc(U) - trunc(L), |trunc(L)|, |trunc(U)|)``) and is projected onto
  ``[n trunc(L), n trunc(U)]``.  Rounding the total instead is not private (``round(0.5) = 0``
  but ``round(1.5) = 2``: one record would move it by 2 > U - L);
* ``mean``: clipped mean + Lap((U - L) / (n eps)), projected onto ``[L, U]``;
* ``var``: population variance + Lap((U - L)^2 (n - 1) / (n^2 eps)), projected onto
  ``[0, (U - L)^2 / 4]``; ``std`` is its square root;
* ``nanmean``: noisy centred sum / noisy count with the budget split ``sqrt 2 : 1``
  (minimises the worst-case error); ``nanvar``: noisy count, centred sum and centred sum of
  squares, one third of the budget each.

Sums, means and variances are computed exactly on grid terms (:mod:`veil.dp._exact_sum`,
:mod:`veil.dp._exact_moments`), so the sensitivities hold for the computed values, not only
in real arithmetic (Casacuberta et al., CCS 2022).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil._parallel import far_from_zero, scan_moments
from veil.dp._exact_moments import VAR_DIGITS, exact_variance, grid_moments, laplace_exact
from veil.dp._exact_sum import SumGrid, grid_sum, laplace_units
from veil.dp._rng import resolve_rng
from veil.dp._samplers import discrete_laplace, laplace_fp
from veil.dp.tools._bounds import estimate_bounds
from veil.dp.tools._common import (
    apply_axis,
    as_array,
    cell_epsilon,
    check_epsilon,
    check_finite,
    check_noise,
    check_unused,
    parse_bounds,
    plan_axis,
    spend,
)
from veil.errors import ConfigError, InputError, NoiseScaleError

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
]

_builtin_sum = sum
_EST_SHARE = 0.25  # share of the budget spent estimating bounds with bounds="estimate"


def _lap(value: float, sens: float, eps: float, rng: Any) -> float:
    if sens == 0:
        return float(value)
    return float(laplace_fp(value, sens / eps, rng, sensitivity=sens)[()])


def _geo(value: int, sens: float, eps: float, rng: Any) -> int:
    if sens == 0:
        return int(value)
    # Python ints: exact for any total (numpy int64 arithmetic would wrap silently)
    return int(value) + int(discrete_laplace(Fraction(sens) / Fraction(eps), 1, rng)[0])


def _moment(
    kind: str,
    array: Any,
    epsilon: float,
    bounds: Any,
    axis: Any,
    dtype: Any,
    keepdims: bool,
    random_state: Any,
    accountant: Any,
    nan: bool,
) -> Any:
    name = ("nan" if nan else "") + kind
    eps = check_epsilon(epsilon)
    arr = as_array(array, nan=nan, name=name, check=nan)
    axes, out_shape = plan_axis(arr, axis)
    n_out = int(np.prod(out_shape)) if out_shape else 1
    estimate = isinstance(bounds, str) and bounds == "estimate"
    if not estimate:
        lo_all, hi_all = parse_bounds(bounds, name, n_out)
    integer = dtype is not None and np.issubdtype(np.dtype(dtype), np.integer)
    # sums and means add up exact terms on a public grid (veil.dp._exact_sum): one grid per
    # pair of bounds, made (and a bound beyond 2^1016 refused) before anything is charged
    grids: dict[tuple[float, float], SumGrid] = {}
    if not estimate and not (integer and kind == "sum"):
        for lo, hi in set(zip(lo_all.tolist(), hi_all.tolist())):
            if lo < hi:  # equal bounds: the statistic is public (n lo, lo, or 0)
                grids[lo, hi] = _grid(kind, nan, lo, hi)
    units: int | None = None  # the exact grid sum of a single statistic, from its scan
    moments: tuple[int, int, int] | None = None  # or its exact (sum m, sum m^2, n)
    if not nan and arr.size:
        # validate the data (NaN/inf propagate into min/max).  A single statistic is scanned
        # in cache-sized blocks (min, max and its exact sums in one traversal of memory, on
        # several threads when large); nothing is noised or released before the budget is
        # charged below.
        grid = grids.get((float(lo_all[0]), float(hi_all[0]))) if grids else None
        if n_out == 1 and grid is not None and kind in ("sum", "mean"):
            units, gmin, gmax = grid_sum(arr.reshape(-1), grid)  # on the grid (cmin, cmax)
        elif n_out == 1 and grid is not None:
            s1, s2, n_all, gmin, gmax = grid_moments(arr.reshape(-1), grid)
            moments = (s1, s2, n_all)
        elif n_out == 1:
            gmin, gmax = scan_moments(arr.reshape(-1))[:2]
        else:
            gmin, gmax = float(arr.min()), float(arr.max())
        if not (math.isfinite(gmin) and math.isfinite(gmax)):
            check_finite(arr, nan=False, name=name)  # raises for NaN/inf only (not overflow)
    if arr.size == 0:
        raise InputError(f"{name}: empty input")
    eps_cell = cell_epsilon(eps, arr.shape)
    if not estimate:  # every noise scale is public: refuse an impossible one before charging
        n_cell = arr.size // n_out
        for lo, hi in set(zip(lo_all.tolist(), hi_all.tolist())):
            _check_noise(kind, nan, integer, lo, hi, n_cell, eps_cell)
    spend(accountant, eps)  # before anything is computed
    rng = resolve_rng(random_state)

    def cell(v: np.ndarray, i: int) -> float:
        e = eps_cell
        if estimate:
            lo, hi = estimate_bounds(v, _EST_SHARE * e, random_state=rng, nan=nan)
            e = (1 - _EST_SHARE) * e
        else:
            lo, hi = float(lo_all[i]), float(hi_all[i])
        if nan:
            return _nan_cell(kind, v, lo, hi, e, rng, integer)
        n = v.size
        if integer and kind == "sum":
            return _int_sum(v, lo, hi, e, rng)
        if kind in ("sum", "mean"):
            if lo == hi:  # every clipped value is lo: nothing private
                return float(n * lo if kind == "sum" else lo)
            # the exact sum of the grid terms (veil.dp._exact_sum), noised in integer grid
            # units (sensitivity hi - lo); its float64 sum was rounded relative to the sum
            # itself, so neighbours could differ by more than the noise covers (Casacuberta
            # et al. 2022; bounds (2^52, 2^52 + 2) gave neighbours' sums 1024 apart)
            grid = grids.get((lo, hi)) or _grid(kind, False, lo, hi)  # estimated: <= 2^50
            exact = units if units is not None else grid_sum(v, grid)[0]
            k, g = laplace_units(exact, grid, hi - lo, e, rng)
            if kind == "sum":  # + n shift: public post-processing of the noisy integer k
                return float(np.clip(k * g + n * grid.shift, n * lo, n * hi))
            return float(np.clip(k * g / n + grid.shift, lo, hi))
        if lo == hi:  # every clipped value is lo
            return 0.0
        # the exact variance of the grid terms (veil.dp._exact_moments), noised in exact
        # arithmetic; E[x^2] - E[x]^2 in float64 cancelled catastrophically away from 0
        grid = grids.get((lo, hi)) or _grid(kind, False, lo, hi)
        s1, s2, n_terms = moments if moments is not None else grid_moments(v, grid)[:3]
        sens = _var_sens(lo, hi, n)
        if sens == 0:  # one value: its variance is 0, whatever it is
            return 0.0
        k, g = laplace_exact(exact_variance(s1, s2, n_terms, grid.h), sens, e, rng)
        v_noisy = float(np.clip(k * g, 0.0, (hi - lo) * (hi - lo) / 4))
        return math.sqrt(v_noisy) if kind == "std" else v_noisy

    out = apply_axis(arr, axes, keepdims, cell)
    if integer and kind == "sum":
        rounded = np.asarray(out, dtype=np.float64).round()
        info = np.iinfo(np.dtype(dtype))
        if rounded.size and (rounded.min() < info.min or rounded.max() > info.max):
            raise InputError(
                f"the noisy sum does not fit dtype {np.dtype(dtype).name} (numpy would wrap it "
                "silently); use a wider integer dtype or dtype=float"
            )
        return rounded.astype(dtype) if np.ndim(out) else np.dtype(dtype).type(int(rounded))
    return out


def _grid(kind: str, nan: bool, lo: float, hi: float) -> SumGrid:
    """The exact-sum grid of a statistic with bounds ``[lo, hi]``: terms ``clip(x) - mid``
    for variances (on the coarser :data:`~veil.dp._exact_moments.VAR_DIGITS` grid), means of
    NaN-skipping data and sums/means with bounds far from 0 (then ``n mid``, public, is added
    after the noise), else ``clip(x)`` (one subtraction fewer per value; always for ``nansum``,
    whose number of values is private)."""
    if kind in ("var", "std"):
        return SumGrid.make(lo, hi, centred=True, digits=VAR_DIGITS)
    if nan and kind == "sum":  # the number of values is private: no public n * mid to add
        return SumGrid.make(lo, hi)
    centred = (nan and kind == "mean") or far_from_zero(lo, hi)
    # symmetric=False: terms clamped to the exact [lo - mid, hi - mid] (the sensitivities
    # need B - A <= hi - lo and |A|, |B| <= hi - lo only); where mid is rounded, +-w/2 would
    # bias every value at one bound (bounds (2^53, 2^53 + 2): w / 2 = 1 lost per value)
    return SumGrid.make(lo, hi, centred=centred, symmetric=False)


def _var_sens(lo: float, hi: float, n: int) -> float:
    """Replace-one sensitivity ``(U - L)^2 (n - 1) / n^2`` of the population variance (``inf``
    rather than Python's OverflowError for bounds wider than ~1.3e154)."""
    w = hi - lo
    return w * w * (n - 1) / n / n


def _check_noise(
    kind: str, nan: bool, integer: bool, lo: float, hi: float, n: int, e: float
) -> None:
    """The noise scales :func:`_moment`'s ``cell`` (or :func:`_nan_cell`) will draw for bounds
    ``[lo, hi]``, cell size ``n`` and epsilon ``e``, checked by :func:`check_noise`."""
    w, m = hi - lo, max(abs(lo), abs(hi))
    # the sums the cell adds up (of values, centred values or squares) are bounded by these
    if not math.isfinite(n * m if kind in ("sum", "mean") else 4 * n * m * m):
        raise NoiseScaleError(
            f"{kind}: the bounds times the number of values overflow float64; the clipped "
            "sums cannot be computed (an overflowing total would fail on some data only)"
        )
    if kind == "sum" and integer:
        tlo, thi = math.trunc(lo), math.trunc(hi)
        sens = max(thi - tlo, abs(tlo), abs(thi)) if nan else thi - tlo
        check_noise(e, geometric=[sens])
    elif kind == "sum":
        check_noise(e, laplace=[max(w, abs(lo), abs(hi)) if nan else w])
    elif not nan:
        # mean: the exact sum is noised at (hi - lo) / e (laplace_units), then divided by n
        check_noise(e, laplace=[w if kind == "mean" else _var_sens(lo, hi, n)])
    elif kind == "mean":
        e_s = e * math.sqrt(2) / (1 + math.sqrt(2))
        check_noise(e_s, laplace=[w])
        check_noise(e - e_s, geometric=[1])
    else:
        check_noise(e / 3, laplace=[w, w * w / 4], geometric=[1])


def _truncated(v: np.ndarray, lo: float, hi: float) -> tuple[int, int, int]:
    """Sum of numpy's ``dtype=int`` cast of every clipped value (towards zero), exact, and the
    bounds of each cast value: ``trunc`` is monotone, so each lies in ``[trunc(lo), trunc(hi)]``.

    The sum is an exact Python int: in int64 while ``n * max(|trunc(lo)|, |trunc(hi)|)`` cannot
    overflow, else summed as Python ints (the truncated floats are integers, converted exactly).
    """
    t = np.trunc(np.clip(v, lo, hi))
    tlo, thi = math.trunc(lo), math.trunc(hi)
    if t.size * max(abs(tlo), abs(thi), 1) < 2**62:
        return int(t.astype(np.int64).sum()), tlo, thi
    return _builtin_sum(int(x) for x in t.tolist()), tlo, thi


def _int_sum(v: np.ndarray, lo: float, hi: float, e: float, rng: Any) -> float:
    """Integer ``sum``: every clipped value is cast to an integer *before* adding (as numpy's
    ``sum(dtype=int)``), so replacing one record moves the integer sum by at most
    ``trunc(hi) - trunc(lo)``, the sensitivity of the exact discrete Laplace noise.  (Rounding
    the total instead is not private: ``round(0.5) = 0`` but ``round(1.5) = 2``.)"""
    total, tlo, thi = _truncated(v, lo, hi)
    out = _geo(total, thi - tlo, e, rng)
    return float(np.clip(out, v.size * tlo, v.size * thi))


def _nan_cell(
    kind: str, v: np.ndarray, lo: float, hi: float, e: float, rng: Any, integer: bool = False
) -> float:
    size = v.size
    if kind == "sum" and integer:  # as _int_sum; a record may also switch to or from NaN
        total, tlo, thi = _truncated(v[~np.isnan(v)], lo, hi)
        out = _geo(total, max(thi - tlo, abs(tlo), abs(thi)), e, rng)
        return float(np.clip(out, size * min(tlo, 0), size * max(thi, 0)))
    kept = v[~np.isnan(v)]
    if kind in ("sum", "mean") and lo < hi:
        # exact grid sums (veil.dp._exact_sum); a record may switch to NaN: the plain sum's
        # term leaves (|term| <= max(|lo|, |hi|)), the centred one's by <= hi - lo
        grid = _grid(kind, True, lo, hi)
        exact = grid_sum(kept, grid)[0]
        if kind == "sum":
            k, g = laplace_units(exact, grid, max(hi - lo, abs(lo), abs(hi)), e, rng)
            return float(np.clip(k * g, size * min(lo, 0), size * max(hi, 0)))
        e_s = e * math.sqrt(2) / (1 + math.sqrt(2))
        k, g = laplace_units(exact, grid, hi - lo, e_s, rng)
        cnt = _geo(kept.size, 1, e - e_s, rng)
        return float(np.clip(grid.shift + k * g / max(cnt, 1), lo, hi))
    x = np.clip(kept, lo, hi)
    if kind == "sum":  # equal bounds: the noise covers a record switching to NaN
        sens = max(hi - lo, abs(lo), abs(hi))
        return float(
            np.clip(_lap(float(x.sum()), sens, e, rng), size * min(lo, 0), size * max(hi, 0))
        )
    if kind == "mean" or lo == hi:  # equal bounds: lo, whatever the data (variance 0)
        return float(lo) if kind == "mean" else 0.0
    # exact sums of the centred grid terms and of their squares (veil.dp._exact_moments): a
    # record switching to NaN moves them by at most half and half^2, a replaced one by at most
    # hi - lo and half^2 (every term lies in [-half, half])
    e3 = e / 3
    cnt = max(_geo(kept.size, 1, e3, rng), 1)
    grid = _grid(kind, True, lo, hi)
    u1, u2 = grid_moments(kept, grid)[:2]
    k1, g1 = laplace_exact(Fraction(u1) * Fraction(grid.h), hi - lo, e3, rng)
    k2, g2 = laplace_exact(Fraction(u2) * Fraction(grid.h) ** 2, (hi - lo) * (hi - lo) / 4, e3, rng)
    s1, s2 = k1 * g1, k2 * g2
    var = float(np.clip(s2 / cnt - (s1 / cnt) ** 2, 0.0, (hi - lo) * (hi - lo) / 4))
    return math.sqrt(var) if kind == "std" else var


def count_nonzero(
    array: Any,
    epsilon: float = 1.0,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    **unused_args: Any,
) -> Any:
    """DP count of non-zero values (geometric noise, sensitivity 1), projected onto ``[0, n]``.

    Examples
    --------
    >>> import veil.dp as dp
    >>> c = dp.tools.count_nonzero([0, 1, 1, 0, 1], epsilon=1.0)
    >>> 0 <= c <= 5
    True
    """
    check_unused(unused_args, count_nonzero)
    eps = check_epsilon(epsilon)
    arr = as_array(array, nan=False, name="count_nonzero")
    axes, _ = plan_axis(arr, axis)
    e = cell_epsilon(eps, arr.shape)
    check_noise(e, geometric=[1])
    spend(accountant, eps)
    rng = resolve_rng(random_state)

    def cell(v: np.ndarray, i: int) -> float:
        return float(np.clip(_geo(int(np.count_nonzero(v)), 1, e, rng), 0, v.size))

    out = apply_axis(arr, axes, keepdims, cell)
    return np.asarray(out).astype(np.int64) if np.ndim(out) else int(out)


def count(
    array: Any,
    epsilon: float = 1.0,
    axis: Any = None,
    random_state: Any = None,
    accountant: Any = None,
    **unused_args: Any,
) -> int:
    """DP number of records (rows along axis 0): exact discrete Laplace noise, clamped at 0.

    Unlike the other plain statistics, the number of records is *not* public here: the privacy
    unit is the addition or removal of one record, which changes the count by 1 (sensitivity
    1), so the noise is discrete Laplace with scale ``1 / epsilon`` (exact sampler, secure
    generator).  The accountant is charged ``epsilon`` once, before anything is computed.
    Values are not looked at except for validation, which follows ``count_nonzero``: the data
    must be numeric and NaN or infinite values raise :class:`~veil.errors.InputError` (drop
    them first; nothing is silently counted or skipped).

    Parameters
    ----------
    array : array_like
        The records; a 2-d array counts its rows, a scalar is one record.
    epsilon : float, default 1.0
    axis : None or 0
        Both count the records.  Other axes are refused (their length is part of the schema,
        not of the data, so there is nothing private to count).
    random_state : None (secure), int or numpy Generator (tests only)
    accountant : BudgetAccountant, optional (default accountant if None)

    Returns
    -------
    int

    Examples
    --------
    >>> import veil.dp as dp
    >>> acc = dp.BudgetAccountant(epsilon=1.0)
    >>> c = dp.tools.count([23, 35, 47, 51], epsilon=0.5, accountant=acc)
    >>> isinstance(c, int) and c >= 0, acc.total().epsilon
    (True, 0.5)
    """
    check_unused(unused_args, count)
    eps = check_epsilon(epsilon)
    arr = as_array(array, nan=True, name="count")
    if np.isnan(arr).any():
        raise InputError(
            "count: the data contain NaN; drop the rows first (as for count_nonzero, NaN is "
            "never silently counted or skipped)"
        )
    if axis is not None:
        try:
            ok = int(axis) == 0 or (arr.ndim > 0 and int(axis) == -arr.ndim)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ConfigError(
                f"count: axis must be None or 0 (the number of records), got {axis!r}"
            )
    n = int(arr.shape[0]) if arr.ndim else 1
    check_noise(eps, geometric=[1])
    spend(accountant, eps)  # before anything is computed
    rng = resolve_rng(random_state)
    return max(_geo(n, 1, eps, rng), 0)


def _doc(kind: str, nan: bool) -> str:
    name = ("nan" if nan else "") + kind
    return f"""DP ``{name}`` with numpy's signature plus ``epsilon``, ``bounds``, ``accountant``.

    Parameters
    ----------
    array : array_like
    epsilon : float, default 1.0
    bounds : (lower, upper) or "estimate"
        Required: values are clipped to them and the noise is calibrated on them.  Missing
        bounds raise :class:`~veil.errors.ConfigError` (never read from the data);
        ``"estimate"`` spends 25% of epsilon estimating them privately.
    axis, keepdims : as numpy
    dtype : dtype, optional
        For ``sum``/``nansum``, an integer dtype casts every clipped value towards zero before
        adding (as numpy) and releases the integer sum with exact discrete Laplace noise of
        sensitivity ``trunc(upper) - trunc(lower)`` (one record replaced); the noise is
        calibrated on the cast values, never on a rounded total.
    random_state : None (secure), int or numpy Generator (tests only)
    accountant : BudgetAccountant, optional (default accountant if None)

    Examples
    --------
    >>> import veil.dp as dp
    >>> v = dp.tools.{name}([1.0, 2.0, 3.0, 4.0], epsilon=1.0, bounds=(0, 5))
    >>> isinstance(v, float)
    True
    """


def _make(kind: str, nan: bool) -> Any:
    def func(
        array: Any,
        epsilon: float = 1.0,
        bounds: Any = None,
        axis: Any = None,
        dtype: Any = None,
        keepdims: bool = False,
        random_state: Any = None,
        accountant: Any = None,
        **unused_args: Any,
    ) -> Any:
        check_unused(unused_args, func)
        return _moment(
            kind, array, epsilon, bounds, axis, dtype, keepdims, random_state, accountant, nan
        )

    func.__name__ = func.__qualname__ = ("nan" if nan else "") + kind
    func.__doc__ = _doc(kind, nan)
    return func


sum = _make("sum", False)  # noqa: A001 - numpy-like name
mean = _make("mean", False)
var = _make("var", False)
std = _make("std", False)
nansum = _make("sum", True)
nanmean = _make("mean", True)
nanvar = _make("var", True)
nanstd = _make("std", True)
