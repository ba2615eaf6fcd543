"""Validation and axis handling shared by the DP statistics."""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import sys
import warnings
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

import numpy as np

from veil._checks import user_stacklevel
from veil.dp._accountant import BudgetAccountant
from veil.dp._canon import real_float
from veil.dp._samplers import _check_scale as check_scale
from veil.dp._samplers import fp_laplace_params
from veil.dp.mechanisms._base import as_float
from veil.errors import ConfigError, DiffprivlibCompatibilityWarning, InputError, NoiseScaleError

__all__ = [
    "check_epsilon",
    "as_array",
    "check_finite",
    "parse_bounds",
    "plan_axis",
    "cell_epsilon",
    "apply_axis",
    "warn_unused",
    "check_unused",
    "check_noise",
    "spend",
]


def warn_unused(unused: dict[str, Any]) -> None:
    """diffprivlib accepts and ignores extra numpy arguments; so do we, with a warning."""
    for name in unused:
        warnings.warn(
            f"parameter {name!r} is ignored (accepted for diffprivlib compatibility)",
            DiffprivlibCompatibilityWarning,
            stacklevel=user_stacklevel(),
        )


@functools.cache
def _parameters(func: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(
        p.name
        for p in inspect.signature(func).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    )


def check_unused(unused: dict[str, Any], func: Callable[..., Any]) -> None:
    """Vet the extra keyword arguments of the statistic ``func`` before anything is computed.

    * ``weights`` (when not ``None``) is a :class:`~veil.errors.ConfigError`: weights change the
      sensitivity, so ignoring them would release an unweighted statistic the caller did not
      ask for (only the histograms honour them, with ``weight_bound``).
    * A close misspelling of one of ``func``'s own parameters (``acountant=``, ``epsilom=``,
      ``bound=``; :func:`difflib.get_close_matches`, cutoff 0.8) is a ConfigError naming the
      likely intended one: a misspelt ``accountant`` would silently charge the default one.
    * Anything else (numpy's ``out=``, ``where=``, ``overwrite_input=`` ...) is ignored with a
      :class:`~veil.errors.DiffprivlibCompatibilityWarning`, as diffprivlib does.
    """
    name = func.__name__
    params = _parameters(func)
    for key, value in unused.items():
        if key == "weights" and value is not None:
            raise ConfigError(
                f"weights are not supported by {name}: they change the sensitivity, and "
                "ignoring them would release an unweighted statistic; drop them (weighted "
                "counts: histogram(..., weights=, weight_bound=))"
            )
        close = difflib.get_close_matches(key, params, n=1, cutoff=0.8)
        if close:
            raise ConfigError(
                f"{name}: unknown parameter {key!r}; did you mean {close[0]!r}? (a misspelt "
                "parameter is not ignored: e.g. a misspelt accountant would charge the default "
                "accountant)"
            )
    warn_unused(unused)


def check_epsilon(epsilon: Any) -> float:
    eps = as_float("epsilon", epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ConfigError(f"epsilon must be a positive finite number, got {eps}")
    return eps


def as_array(array: Any, *, nan: bool, name: str, check: bool = True) -> np.ndarray:
    """Numeric float array (not copied when already float64); NaN is an error for the
    non-nan functions.  ``check=False`` defers the NaN/inf scan to :func:`check_finite`.

    Text is never parsed as numbers: ``str``/``bytes`` arrays, object arrays holding strings
    and pandas text columns are an :class:`~veil.errors.InputError` (``'10'`` is not 10).
    Lists of numbers and numeric object arrays (with ``None``/NaN) work as in diffprivlib.

    Every number is read by its value alone, as ``float`` reads it: integers and fractions
    beyond float64 (``10**400``, ``Fraction(10**400)``) become ``+-inf`` (as ``float`` turns
    ``Decimal('1e999999')`` or a ``longdouble`` beyond float64 into ``inf``), so that such a
    cell follows the rules of an infinite value (refused by the statistics, outside every
    finite histogram bin) instead of raising an ``OverflowError`` of its own or a numpy
    overflow warning -- either would tell that one record's value from an infinite one."""
    try:
        arr = np.asarray(_pandas_to_numpy(array, name))
        _reject_text(arr, name)
        if arr.dtype == object:
            arr = _object_to_float(arr)
    except InputError:
        raise
    except (TypeError, ValueError, ArithmeticError):
        raise InputError(f"{name}: the data must be numeric") from None
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{name}: the data must be numeric, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # a longdouble beyond float64 is inf, without a warning
        arr = np.asarray(arr, dtype=np.float64)
    if check:
        check_finite(arr, nan=nan, name=name)
    return arr


def _cell_float(value: Any) -> float:
    """One object cell as a float: missing (``None``, ``NA``, ``NaT``) is NaN, an integer or
    fraction beyond float64 is ``+-inf`` (its sign); anything ``float`` refuses raises."""
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return math.nan
    with np.errstate(over="ignore"):  # a longdouble beyond float64: inf, without a warning
        return real_float(value)


def _object_to_float(arr: np.ndarray) -> np.ndarray:
    """``arr.astype(float64)``; cell by cell (:func:`_cell_float`) where numpy's cast fails."""
    try:
        with np.errstate(over="ignore"):
            return arr.astype(np.float64)
    except (TypeError, ValueError, ArithmeticError):
        pass
    cells = [_cell_float(v) for v in arr.ravel().tolist()]
    return np.asarray(cells, dtype=np.float64).reshape(arr.shape)


def _holds_text(values: np.ndarray) -> bool:
    """Whether an object array holds ``str``/``bytes`` (pandas' ``infer_dtype``, a C scan;
    the 'mixed' answers are checked element by element, ``[True, 1]`` is mixed too)."""
    from pandas.api.types import infer_dtype

    flat = values.ravel()
    kind = infer_dtype(flat, skipna=True)
    if kind in ("string", "bytes"):
        return True
    if kind in ("mixed", "mixed-integer"):
        return any(isinstance(v, (str, bytes)) for v in flat)
    return False


def _reject_text(arr: Any, name: str) -> None:
    """InputError when a numpy array holds text (``U``/``S`` dtype, or strings in an object
    array): numeric strings are never silently converted."""
    if not isinstance(arr, np.ndarray):
        return
    if arr.dtype.kind in "US" or (arr.dtype == object and _holds_text(arr)):
        raise InputError(f"{name}: the data must be numeric, not text (got strings)")


def _pandas_text(obj: Any) -> bool:
    """Whether a pandas Series/DataFrame (or Index) holds text: string dtype, object columns
    holding strings, or a categorical with text categories."""
    import pandas as pd
    from pandas.api.types import is_string_dtype

    if isinstance(obj, pd.DataFrame):
        return any(_pandas_text(obj.iloc[:, i]) for i in range(obj.shape[1]))
    dtype = getattr(obj, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        return _pandas_text(pd.Series(dtype.categories))
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return _holds_text(np.asarray(obj, dtype=object))
    return dtype is not None and is_string_dtype(dtype)


def _pandas_to_numpy(obj: Any, name: str = "data") -> Any:
    """pandas Series/DataFrame -> float array; missing values (NA, None, NaT) become NaN so
    that they follow the NaN rules instead of failing as 'not numeric'.  Text columns (even
    of numeric strings) are an InputError.  Anything else is returned unchanged."""
    if not hasattr(obj, "to_numpy") or isinstance(obj, np.ndarray):
        return obj
    if _pandas_text(obj):
        raise InputError(f"{name}: the data must be numeric, not text (got strings)")
    try:
        with np.errstate(over="ignore"):
            return obj.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError, ArithmeticError):  # 10**400, Decimal('sNaN'): cell by cell
        return obj.to_numpy()


def check_finite(arr: np.ndarray, *, nan: bool, name: str) -> None:
    """InputError on infinite values, and on NaN unless ``nan``."""
    if np.isinf(arr).any():
        raise InputError(f"{name}: the data contain infinite values")
    if not nan and np.isnan(arr).any():
        if name == "count_nonzero":  # there is no nancount_nonzero (nor in numpy/diffprivlib)
            raise InputError(
                "count_nonzero: the data contain NaN (numpy would count them as non-zero); "
                "say what they mean: count_nonzero(np.nan_to_num(x)) counts NaN as zero, "
                "count_nonzero(np.isnan(x) | (x != 0)) as non-zero, or drop them first "
                "(NaN is never silently counted or skipped)"
            )
        raise InputError(
            f"{name}: the data contain NaN; drop them first or use nan{name} "
            "(NaN is never silently ignored or turned into 0)"
        )


def parse_bounds(bounds: Any, name: str, n_slices: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays of length ``n_slices``; missing bounds are an error."""
    if bounds is None:
        raise ConfigError(
            f"{name}: bounds=(lower, upper) are required; they are never read from the data "
            "(that would leak). Pass them explicitly, or bounds='estimate' to spend part of the "
            "budget estimating them privately."
        )
    pair = (
        f"{name}: bounds must be a pair (lower, upper) of numbers or of arrays with one "
        f"entry per output ({n_slices})"
    )
    # a text or bytes is no pair: '05' was read character by character as (0, 5) and b'05'
    # as its byte values (48, 53), as veil.dp.frame refuses it (bb80ded)
    if isinstance(bounds, (str, bytes)):
        raise ConfigError(pair)
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_slices,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_slices,)).copy()
    except OverflowError:  # an int beyond float64 (10**400): a bare OverflowError before
        raise ConfigError(f"{name}: bounds must be finite") from None
    except (TypeError, ValueError):
        raise ConfigError(pair) from None
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ConfigError(f"{name}: bounds must be finite")
    if np.any(lo > hi):
        raise ConfigError(f"{name}: lower bound must not exceed upper bound")
    return lo, hi


def check_noise(
    eps: float, *, laplace: Iterable[float] = (), geometric: Iterable[float] = ()
) -> None:
    """NoiseScaleError, *before* the budget is charged, for a noise scale ``sens / eps`` that
    the release would draw outside its sampler's range: FP-safe Laplace
    (:func:`~veil.dp._samplers.grid_for`, ``(2^-900, 2^900)``) for each sensitivity in
    ``laplace``, exact discrete Laplace (``(0, 2^52]``) for each in ``geometric``.

    The scales depend on the public parameters alone (bounds, epsilon, the shape), so checking
    them first never depends on the data; checking them only while drawing charged the budget
    for a release that then failed.  Zero sensitivities draw no noise and pass.
    """
    for sens in laplace:
        if sens != 0:
            # the grid's scale (NoiseScaleError outside (2^-900, 2^900), inf and NaN included),
            # then the discrete Laplace it draws in grid units
            _exact_scale(fp_laplace_params(sens / eps, sens)[1])
    for sens in geometric:
        if sens != 0:
            if not math.isfinite(sens):
                raise NoiseScaleError(f"noise scale must be finite, got sensitivity {sens}")
            _exact_scale(Fraction(sens) / Fraction(eps))


def _exact_scale(scale: int | Fraction) -> None:
    """The exact sampler's check of a discrete Laplace scale; one too large for a float is
    NoiseScaleError too (not OverflowError)."""
    try:
        check_scale(scale)
    except OverflowError:
        raise NoiseScaleError("noise scale beyond float64: epsilon is too small") from None


def spend(accountant: BudgetAccountant | None, epsilon: float, delta: float = 0.0) -> None:
    """Charge the accountant *before* anything is computed (atomic; BudgetError if refused)."""
    BudgetAccountant.load_default(accountant).spend(epsilon, delta)


def plan_axis(arr: np.ndarray, axis: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Normalised reduced axes and output shape (without keepdims); see :func:`cell_epsilon`."""
    nd = arr.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        try:
            axes = tuple(sorted({int(a) % nd if nd else 0 for a in raw}))
        except (TypeError, ValueError):
            raise ConfigError(f"invalid axis {axis!r}") from None
        if any(not -nd <= int(a) < max(nd, 1) for a in raw):
            raise ConfigError(f"axis {axis!r} is out of bounds for a {nd}-d array")
    keep = tuple(i for i in range(nd) if i not in axes)
    out_shape = tuple(arr.shape[i] for i in keep)
    return axes, out_shape


def cell_epsilon(eps: float, shape: tuple[int, ...]) -> float:
    """Epsilon of each output value so that the release is ``eps``-DP for one *row* (axis 0).

    A row holds ``m = prod(shape[1:])`` values, whatever the reduction: over axis 0 they are
    spread over the output cells (one value each for ``axis=0``, all ``m`` in the single cell of
    ``axis=None``), over other axes they all land in the row's own cells.  Either way changing
    a row changes ``m`` values, so each value-level release is calibrated at ``eps / m`` (group
    privacy; cells that hold several values of the row take the product, and the sum over the
    row's cells is ``eps``).  0-d and 1-d input: ``eps``.

    Raises :class:`~veil.errors.NoiseScaleError` when ``eps / m`` underflows (before any budget
    is charged: call it first).

    Examples
    --------
    >>> cell_epsilon(1.0, (100, 10))  # any axis on 10 columns: a row is 10 values
    0.1
    >>> cell_epsilon(1.0, (100,)), cell_epsilon(1.0, ())
    (1.0, 1.0)
    """
    m = max(math.prod(shape[1:]), 1)
    out = eps / m
    if not out >= sys.float_info.min:  # a subnormal or zero epsilon cannot be calibrated
        raise NoiseScaleError(
            f"epsilon {eps!r} over {m} value(s) per row is too small to calibrate"
        )
    return out


def apply_axis(
    arr: np.ndarray,
    axes: tuple[int, ...],
    keepdims: bool,
    func: Callable[[np.ndarray, int], float],
) -> Any:
    """Evaluate ``func(values_1d, slice_index)`` for every output cell and shape the result."""
    nd = arr.ndim
    keep = tuple(i for i in range(nd) if i not in axes)
    moved = np.transpose(arr, keep + axes) if nd else arr.reshape(1)
    out_shape = tuple(arr.shape[i] for i in keep)
    n_out = int(np.prod(out_shape)) if out_shape else 1
    flat = moved.reshape(n_out, -1)
    res = np.array([func(flat[i], i) for i in range(n_out)], dtype=np.float64)
    if not out_shape and not keepdims:
        return float(res[0])
    res = res.reshape(out_shape)
    if keepdims:
        res = np.expand_dims(res, axes) if nd else res
    return res
