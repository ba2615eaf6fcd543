"""Shared plumbing for the DP estimators: input checks, bounds, budget and randomness.

Privacy-relevant defaults (see docs/ml.md):

* Bounds (feature ranges, data norms) are *parameters*.  Missing bounds raise
  :class:`~veil.errors.ConfigError`.  Passing ``bounds="data"`` (or entering
  :func:`read_bounds_from_data`) reads them from the training data and emits a
  :class:`~veil.errors.PrivacyLeakWarning`: the release is then no longer differentially
  private with respect to the bounds (diffprivlib's behaviour, made deliberate).
* The budget is spent *before* any private value is computed (after the input is validated:
  bad input spends nothing), and a fit that fails keeps no model (``atomic_fit``); a failure
  after the noise is drawn is not refunded, since the failure itself depends on the noise.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
import warnings
from collections.abc import Collection, Hashable, Iterator
from typing import Any

import numpy as np

from veil._checks import user_stacklevel
from veil.errors import ConfigError, InputError, PrivacyLeakWarning

__all__ = [
    "read_bounds_from_data",
    "check_target",
    "check_n_features",
    "check_privacy_params",
    "check_array_2d",
    "resolve_bounds",
    "check_bounds_span",
    "resolve_norm",
    "resolve_classes",
    "clip_rows_to_bounds",
    "clip_rows_to_norm",
]

_STATE = threading.local()


@contextlib.contextmanager
def read_bounds_from_data() -> Iterator[None]:
    """Opt in, within a ``with`` block, to reading missing bounds from the data.

    Meant for porting diffprivlib code unchanged.  Every estimator that then reads bounds from
    the data emits a :class:`~veil.errors.PrivacyLeakWarning`.

    Examples
    --------
    >>> import numpy as np, warnings
    >>> from veil.ml import GaussianNB
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> with read_bounds_from_data(), warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     _ = GaussianNB(epsilon=1.0, random_state=0).fit(X, y)
    """
    prev = getattr(_STATE, "allow", False)
    _STATE.allow = True
    try:
        yield
    finally:
        _STATE.allow = prev


def _data_bounds_allowed(bounds: Any) -> bool:
    return (isinstance(bounds, str) and bounds == "data") or (
        bounds is None and getattr(_STATE, "allow", False)
    )


def check_privacy_params(epsilon: float, delta: float = 0.0, *, need_delta: bool = False) -> None:
    """Validate epsilon (> 0, finite) and delta (in [0, 1)): real numbers, not text or bools."""
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{name} must be a real number, got {value!r}")
    try:
        eps = float(epsilon)
        dlt = float(delta)
    except (TypeError, ValueError):
        raise ConfigError(
            f"epsilon and delta must be numbers, got {epsilon!r}, {delta!r}"
        ) from None
    if not np.isfinite(eps) or eps <= 0:
        raise ConfigError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not 0 <= dlt < 1:
        raise ConfigError(f"delta must be in [0, 1), got {delta!r}")
    if need_delta and dlt == 0:
        raise ConfigError("this estimator needs delta > 0 (it uses the Gaussian mechanism)")


def check_array_2d(X: Any, name: str = "X", *, min_samples: int = 1) -> np.ndarray:
    """Convert to a 2-D float array (scikit-learn's validation, typed errors).

    NaN/inf is an error: a NaN would either leak (propagating through a sum) or silently bias
    the release.  Sparse input is refused (densify it first), as are complex and object data.
    Error messages name shapes, column positions and counts, never a value of ``X``:
    scikit-learn's own text quotes the offending cell or prints the whole array, and users
    log errors (see "Errors never quote your data" in docs/ml.md).
    """
    from sklearn.utils import check_array

    columns = list(X.columns) if hasattr(X, "columns") and hasattr(X, "to_numpy") else None
    if hasattr(X, "to_numpy") and not hasattr(X, "sparse"):
        X = X.to_numpy()
    if isinstance(X, np.ndarray):
        X = _missing_as_nan(X)  # refused below, not a bare TypeError from float(pd.NA)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            arr = check_array(
                X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=min_samples
            )
    except OverflowError:  # a Python int or Fraction beyond float64: an infinite value
        arr = None
    except ValueError as exc:
        raise InputError(_array_error(X, name, str(exc), columns)) from None
    # a dict, date or complex object cell keeps numpy's TypeError ("float() argument must be
    # a string or a real number, not 'dict'": the type, not the value), as scikit-learn does
    if arr is None or not np.isfinite(arr).all():
        raise InputError(
            f"{name} contains NaN or infinite values; impute them first (DP models refuse them)"
        )
    return arr


def _missing_as_nan(a: np.ndarray) -> np.ndarray:
    """``a`` with pandas' NA and NaT (nullable and pyarrow columns) read as NaN, as None and
    NaN are, when ``a`` holds objects; other arrays as they are."""
    if a.dtype != object:
        return a
    import pandas as pd

    return np.where(pd.isna(a), np.nan, a)


def _array_error(X: Any, name: str, text: str, columns: list[Any] | None) -> str:
    """A one-line, data-free description of why ``X`` is not a 2-D float array.

    ``text`` is scikit-learn's (or numpy's) message; only its kind is used, its words are
    repeated only for the schema-only "Found array with ..." family (counts and shapes).
    """
    if text.startswith("Found array with"):
        return f"{name}: {text.splitlines()[0]}"
    if "Expected 2D array" in text:
        shape = _safe_shape(X)
        got = "a scalar" if shape == () else f"a {len(shape)}-D array of shape {shape}"
        return (
            f"{name} must be a 2D array (n_samples, n_features), got {got}: Reshape your data "
            f"with {name}.reshape(-1, 1) for a single feature or {name}.reshape(1, -1) for a "
            "single sample"
        )
    if "Complex data not supported" in text:
        return f"{name}: Complex data not supported; DP models need real-valued features"
    if "convert" in text:
        j = _first_non_numeric_column(X)
        where = "a value" if j is None else f"column {j}"
        if j is not None and columns is not None and j < len(columns):
            where = f"column {columns[j]!r}"
        return (
            f"{name} must be numeric: {where} holds text that cannot be converted to float; "
            "encode categorical columns (e.g. one-hot) before fitting"
        )
    if "inhomogeneous" in text or "sequence" in text:
        return (
            f"{name} must be a rectangular table of numbers: its rows have different lengths "
            "or hold sequences"
        )
    return (
        f"{name} could not be read as a 2D array of numbers; run "
        f"np.asarray({name}, dtype=float) yourself to see which value is the problem"
    )


def _safe_shape(X: Any) -> tuple[int, ...]:
    try:
        return tuple(int(k) for k in np.shape(X))
    except (TypeError, ValueError):
        return (len(X),) if hasattr(X, "__len__") else ()


def _first_non_numeric_column(X: Any) -> int | None:
    """Position of the first column that does not convert to float (``None`` if unknown)."""
    try:
        arr = np.asarray(X, dtype=object)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2:
        return None
    for j in range(arr.shape[1]):
        try:
            arr[:, j].astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            return j
    return None


def check_real(value: Any, name: str, *, positive: bool) -> float:
    """``value`` as a finite float, > 0 (``positive``) or >= 0; else :class:`ConfigError`.

    For an estimator's parameters, checked before its fit spends the budget.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        kind = "positive" if positive else "non-negative"
        raise ConfigError(f"{name} must be a {kind} finite number, got {value!r}")
    return v


def check_target(est: Any, y: Any, n: int, *, classification: bool) -> np.ndarray:
    """Validate the target: 1-D, ``n`` values, finite; class labels for classifiers (the type
    of the estimator's public ``classes`` when given, else of ``y``), float64 for regression.

    Every check runs before the estimator spends its budget: a regression target is read as
    float64 here (missing cells -- None, NaN, pandas' NA -- and numbers beyond float64 are
    refused like NaN/inf float cells).
    """
    if y is None:
        raise InputError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    from sklearn.utils.validation import column_or_1d

    ya = np.asarray(y)
    if ya.ndim == 2 and ya.shape[1] == 1:
        ya = column_or_1d(ya, warn=True)
    if ya.ndim != 1 or len(ya) != n:
        raise InputError(f"y must be 1-D with {n} values, got shape {np.shape(y)}")
    if not classification:
        # read as float here, before any budget is spent: an object column's None, NaN or
        # Decimal('1e999999') only became NaN/inf in the estimator's own conversion, after
        # the finiteness check, so one person's missing target failed the fit after the
        # charge (and an infinite one was clipped where the float cell is refused)
        if ya.dtype.kind == "c":
            raise InputError("y must be real-valued: complex targets are not supported")
        try:
            ya = _missing_as_nan(ya).astype(np.float64)
        except OverflowError:  # a Python int or Fraction beyond float64: an infinite value
            raise InputError("y contains NaN or infinite values") from None
        except (TypeError, ValueError):
            raise InputError("y must be numeric") from None
    if ya.dtype.kind in "fc" and not np.isfinite(ya).all():
        raise InputError("y contains NaN or infinite values")
    if classification:
        from sklearn.utils.multiclass import check_classification_targets

        # with public classes, their type is checked, not y's: y's type (binary, multiclass or
        # "continuous") follows its values, so one person's declared label 0.5 among 0s and 1s
        # made the fit fail on one table and succeed on its neighbour; resolve_classes then
        # refuses any label outside the classes
        given = getattr(est, "classes", None)
        try:
            check_classification_targets(ya if given is None else np.asarray(given))
        except ValueError as exc:
            raise InputError(str(exc)) from None
    return ya


def check_n_features(est: Any, X: Any) -> np.ndarray:
    """Validate ``X`` at predict/transform time against the fitted width."""
    Xa = check_array_2d(X)
    if Xa.shape[1] != est.n_features_in_:
        raise InputError(
            f"X has {Xa.shape[1]} features, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input"
        )
    return Xa


def resolve_bounds(
    bounds: Any, X: np.ndarray, *, name: str = "bounds"
) -> tuple[np.ndarray, np.ndarray]:
    """Return per-feature ``(lower, upper)`` arrays.

    ``bounds`` is ``(lower, upper)`` with scalars or per-feature sequences, or ``"data"`` to read
    them from ``X`` with a :class:`PrivacyLeakWarning`.  ``None`` is an error unless inside
    :func:`read_bounds_from_data`.
    """
    d = X.shape[1]
    if _data_bounds_allowed(bounds):
        warnings.warn(
            f"{name} were not given and are read from the data: the model leaks information "
            f"beyond its epsilon. Pass {name}=(lower, upper) to avoid this.",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        return X.min(axis=0).astype(float), X.max(axis=0).astype(float)
    if bounds is None:
        raise ConfigError(
            f"{name} are required: pass {name}=(lower, upper) with domain knowledge "
            f"(not from the data), or {name}='data' to read them from the data (leaks privacy)"
        )
    if isinstance(bounds, str) or len(bounds) != 2:
        raise ConfigError(f"{name} must be a (lower, upper) tuple, got {bounds!r}")
    lo = _per_feature(bounds[0], d, name, "lower")
    hi = _per_feature(bounds[1], d, name, "upper")
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ConfigError(f"{name} must be finite")
    if (hi < lo).any():
        raise ConfigError(f"{name}: an upper bound is below its lower bound")
    return lo, hi


def check_bounds_span(lo: np.ndarray, hi: np.ndarray, name: str = "bounds") -> None:
    """:class:`ConfigError` when a mid-point ``lo + hi`` or a squared width ``(hi - lo)^2``
    of the bounds is beyond float64's range (e.g. ``(-1e308, 1e308)``, ``(0, 1e200)``).

    The estimators centre on the mid-points and scale variances and noise by squared widths;
    with such bounds they produced infinite or NaN models (or an overflow warning, an error
    under ``-W error``) *after* the budget was spent.  Public values only: checked before.

    >>> check_bounds_span(np.array([0.0]), np.array([1e200]))
    Traceback (most recent call last):
    ...
    veil.errors.ConfigError: bounds: the mid-point or squared width of a feature's bounds ...
    """
    with np.errstate(over="ignore"):
        ok = np.isfinite(lo + hi).all() and np.isfinite((hi - lo) ** 2).all()
    if not ok:
        raise ConfigError(
            f"{name}: the mid-point or squared width of a feature's bounds is beyond float64's "
            "range; pass narrower bounds"
        )


def _per_feature(value: Any, d: int, name: str, side: str) -> np.ndarray:
    """One bound side as ``d`` floats: a scalar is repeated, a sequence must have length ``d``.

    A length mismatch is an :class:`~veil.errors.InputError` naming both widths (never numpy's
    broadcast message); non-numeric or non-1-D bounds are a :class:`~veil.errors.ConfigError`.
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: the {side} bound must be numeric, got {value!r}") from None
    if arr.size == 1 and arr.ndim <= 1:  # a scalar (or [scalar]) applies to every feature
        return np.full(d, float(arr.reshape(-1)[0]))
    if arr.ndim != 1:
        raise ConfigError(
            f"{name}: the {side} bound must be a scalar or a 1-D sequence (one value per "
            f"feature), got shape {arr.shape}"
        )
    if arr.shape[0] != d:
        what = "the target has" if d == 1 and name.endswith("_y") else f"X has {d} feature(s)"
        raise InputError(
            f"{name} give {arr.shape[0]} feature(s) ({side} bound), but {what}; pass one "
            f"lower and one upper value per feature, or scalars for all"
        )
    return arr.copy()


def resolve_classes(classes: Any, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the sorted label set and the code (index into it) of every label of ``y``.

    The label set is the given ``classes``, or the labels of ``y`` with a warning: it is part
    of the released model (``classes_``, the shapes of the fitted arrays), so reading it from
    ``y`` reveals whether a rare label occurs in the training data (one added record with a new
    label changes the output with certainty).  As diffprivlib does for its trees, this emits a
    :class:`~veil.errors.PrivacyLeakWarning`; pass ``classes`` (the public list of possible
    labels) to avoid it.  A label of ``y`` outside the given ``classes`` is an
    :class:`~veil.errors.InputError`.
    """
    if classes is None:
        warnings.warn(
            "classes were not given and are read from y: the label set is released as it is "
            "in the data (a rare label's presence leaks). Pass classes=[...] to avoid this.",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        labels, codes = np.unique(y, return_inverse=True)
        return labels, codes.reshape(-1)
    labels = np.unique(np.asarray(classes))
    try:
        codes = np.clip(np.searchsorted(labels, y), 0, max(len(labels) - 1, 0))
        outside = labels[codes] != y if len(labels) else np.ones(len(y), dtype=bool)
    except (TypeError, ValueError):  # y mixes types (None, text, a list) with the classes
        index = {v: i for i, v in enumerate(labels.tolist()) if isinstance(v, Hashable)}
        yo = np.asarray(y, dtype=object)
        outside = np.array([not _is_known(v, index) for v in yo])
        if not outside.any():  # every label is a class after all: code them by lookup
            codes = np.array([index[v] for v in yo], dtype=np.intp)
    if np.any(outside):
        n_unseen = len({str(v) for v in np.asarray(y, dtype=object)[outside]})
        raise InputError(
            f"y has {n_unseen} label(s) outside classes ({int(np.sum(outside))} row(s)): add "
            "them to classes=[...] or drop those rows (set(y) - set(classes) lists them)"
        )
    return labels, codes


def _is_known(value: Any, known: Collection[Any]) -> bool:
    """Whether one label of ``y`` is among the classes (``False`` for unhashable cells)."""
    try:
        return value in known
    except TypeError:  # a list or other unhashable cell
        return False


def resolve_norm(data_norm: Any, X: np.ndarray, *, name: str = "data_norm") -> float:
    """Return the L2 norm bound of the rows (or read it from the data with a warning)."""
    if _data_bounds_allowed(data_norm):
        warnings.warn(
            f"{name} was not given and is read from the data: the model leaks information "
            f"beyond its epsilon. Pass {name}=<max row L2 norm> to avoid this.",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )
        with np.errstate(over="ignore"):
            value = float(np.linalg.norm(X, axis=1).max())
        if not np.isfinite(value):
            raise ConfigError(
                f"{name} read from the data is beyond float64's range; pass {name}=<max row "
                "L2 norm>"
            )
        return value
    if data_norm is None:
        raise ConfigError(
            f"{name} is required (a bound on each row's L2 norm, from domain knowledge), or "
            f"{name}='data' to read it from the data (leaks privacy)"
        )
    try:
        value = float(data_norm)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a positive number, got {data_norm!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a positive number, got {data_norm!r}")
    return value


def clip_rows_to_bounds(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Clip every feature to its bounds (what makes the sensitivity hold)."""
    return np.clip(X, lo, hi)


def clip_rows_to_norm(X: np.ndarray, norm: float) -> np.ndarray:
    """Scale down rows whose L2 norm exceeds ``norm`` (finite ``norm``).

    A row whose sum of squares overflows float64 (an entry beyond about ``1e154``; or an
    infinite entry, e.g. a huge value minus a mean) is scaled through its largest entry: the
    plain ``np.linalg.norm`` emitted an "overflow encountered" ``RuntimeWarning`` during the
    private fit (so one person's huge value was visible, and an error under
    ``-W error`` after the budget was spent) and mapped the row to 0 or NaN.  Other rows are
    computed exactly as before.

    >>> clip_rows_to_norm(np.array([[3e200, 4e200], [0.3, 0.4]]), 1.0).round(2).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(X, axis=1)
        factor = np.minimum(1.0, norm / np.maximum(norms, 1e-300))
        out = X * factor[:, None]
    big = ~np.isfinite(norms)  # its norm is above float64's range, so above ``norm``
    if big.any():
        fmax = np.finfo(np.float64).max
        rows = np.clip(X[big], -fmax, fmax)
        unit = rows / np.max(np.abs(rows), axis=1, keepdims=True)  # entries in [-1, 1]
        out[big] = unit * (norm / np.linalg.norm(unit, axis=1))[:, None]
    return out


def group_sums(codes: np.ndarray, Z: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group column sums of ``Z`` (``np.bincount`` per column; much faster than add.at)."""
    out = np.empty((n_groups, Z.shape[1]))
    for j in range(Z.shape[1]):
        out[:, j] = np.bincount(codes, weights=Z[:, j], minlength=n_groups)
    return out


class DPEstimatorMixin:
    """scikit-learn tags for DP estimators: scores are noisy by design (``poor_score``)."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        if getattr(tags, "classifier_tags", None) is not None:
            tags.classifier_tags.poor_score = True
        if getattr(tags, "regressor_tags", None) is not None:
            tags.regressor_tags.poor_score = True
        return tags


class DPClassifierMixin(DPEstimatorMixin):
    """DP classifiers: :meth:`score` refuses labels the model was not fitted for (a typed
    :class:`~veil.errors.InputError` naming them) instead of silently counting them as errors.
    """

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        classes = getattr(self, "classes_", None)
        if classes is not None:
            ya = np.asarray(y).reshape(-1)
            unseen = ~np.isin(ya, classes)
            if unseen.any():
                n_labels = len(np.unique(ya[unseen].astype(str)))
                raise InputError(
                    f"y has {n_labels} label(s) the model was not fitted for "
                    f"({int(unseen.sum())} row(s); fitted classes: "
                    f"{np.asarray(classes).tolist()[:10]}); pass classes=[...] at fit time to "
                    "declare every possible label"
                )
        return super().score(X, y, sample_weight=sample_weight)  # type: ignore[misc]
