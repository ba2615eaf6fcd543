"""Split one privacy budget across the steps of a scikit-learn pipeline."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from sklearn.pipeline import Pipeline
from sklearn.utils.metaestimators import available_if

from veil._checks import user_stacklevel
from veil.errors import ConfigError, PrivacyLeakWarning
from veil.ml._base import DPEstimatorMixin, check_privacy_params
from veil.ml._budget import resolve_accountant

__all__ = ["PrivatePipeline", "make_private_pipeline"]


def _last_has(*attrs: str, passthrough: bool = False) -> Any:
    """``available_if`` predicate: the final step has one of ``attrs`` (as in ``Pipeline``)."""

    def check(self: Pipeline) -> bool:
        last = self._final_estimator
        if passthrough and (last is None or last == "passthrough"):
            return True
        if any(hasattr(last, a) for a in attrs):
            return True
        getattr(last, attrs[0])  # raise the original AttributeError
        return False

    return check


def _public_step(est: Any) -> bool:
    """Whether a non-DP step learns nothing from the rows it is fitted on: stateless
    scikit-learn transformers, and encoders whose categories are listed (public)."""
    from sklearn.preprocessing import (
        Binarizer,
        FunctionTransformer,
        Normalizer,
        OneHotEncoder,
        OrdinalEncoder,
        PolynomialFeatures,
    )

    if est is None or (isinstance(est, str) and est in ("passthrough", "drop")):
        return True
    if isinstance(est, (Binarizer, FunctionTransformer, Normalizer, PolynomialFeatures)):
        return True  # row by row, or the number of features only (the public schema)
    if isinstance(est, (OneHotEncoder, OrdinalEncoder)):
        p = est.get_params(deep=False)
        return (
            not isinstance(p.get("categories"), str)  # a list, not "auto"
            and p.get("min_frequency") is None
            and p.get("max_categories") is None
        )
    return False


def _data_fitted_steps(steps: Sequence[tuple[str, Any]], prefix: str = "") -> list[str]:
    """Names of the steps (nested ones as ``outer__inner``) that are neither DP estimators
    nor :func:`_public_step`: what they learn from the rows -- the categories found (hence the
    next step's ``n_features_in_`` and the model's shape), a mean, a non-private model -- is
    released with the pipeline outside its privacy guarantee.  A ``ColumnTransformer`` part
    whose columns are a callable (``make_column_selector``) is listed too: it chooses the
    columns from the data."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    found: list[str] = []
    for name, est in steps:
        full = f"{prefix}{name}"
        if _is_dp(est) or _public_step(est):
            continue
        if isinstance(est, Pipeline):
            found += _data_fitted_steps(est.steps, f"{full}__")
        elif isinstance(est, FeatureUnion):
            found += _data_fitted_steps(est.transformer_list, f"{full}__")
        elif isinstance(est, ColumnTransformer):
            # a callable column selector (make_column_selector(dtype_include=...)) picks the
            # columns from the data: one person's text cell makes a numeric column "object",
            # which drops it, and the model's number of features tells the tables apart
            found += [
                f"{full}__{n} (columns chosen from the data)"
                for n, _, cols in est.transformers
                if callable(cols)
            ]
            parts = [(n, t) for n, t, _ in est.transformers] + [("remainder", est.remainder)]
            found += _data_fitted_steps(parts, f"{full}__")
        else:
            found.append(full)
    return found


def _is_dp(est: Any) -> bool:
    """A differentially private step (an estimator of :mod:`veil.ml`).  Not "has an
    ``epsilon`` parameter": scikit-learn's HuberRegressor, SVR and SGDRegressor use ``epsilon``
    for their loss, which is neither a budget nor to be overwritten with one."""
    return isinstance(est, DPEstimatorMixin)


def _dp_estimators(steps: Sequence[tuple[str, Any]]) -> list[Any]:
    """Every DP estimator of the pipeline, including those nested in a step.

    A private scaler inside a ``ColumnTransformer``, a ``FeatureUnion`` or an inner ``Pipeline``
    is fitted with the pipeline and spends its own epsilon, so it needs a share of the budget
    like a top-level step.  Found through ``get_params(deep=True)``, in step order.  The same
    estimator object in two places is refused: it would be fitted twice with one share.
    """
    found: list[Any] = []
    for _, est in steps:
        if _is_dp(est):
            found.append(est)
        elif hasattr(est, "get_params"):
            found.extend(v for v in est.get_params(deep=True).values() if _is_dp(v))
    ids = [id(e) for e in found]
    if len(set(ids)) != len(ids):
        raise ConfigError(
            "the same DP estimator object appears twice in the pipeline; use separate "
            "instances (each one is fitted and spends its own share)"
        )
    return found


class PrivatePipeline(Pipeline):
    """A :class:`~sklearn.pipeline.Pipeline` that checks the whole budget before fitting.

    Each DP step checks and spends its own share when it is fitted, so a plain ``Pipeline``
    whose accountant can pay for the first steps but not the last would spend the first
    shares, fit those steps and only then raise :class:`~veil.errors.BudgetError`.  Here
    ``fit``, ``fit_transform`` and ``fit_predict`` first ask every accountant involved whether
    it can pay for the sum of the shares of the steps it is charged for (the sequential
    composition of the steps); if not, the error is raised before any step runs: nothing is
    spent and no step is fitted.

    The check is conservative: an accountant with ``slack > 0`` (advanced composition) may
    be able to pay for the steps one by one while refusing their sum.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.dp import BudgetAccountant
    >>> from veil.ml import LogisticRegression, StandardScaler
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(200, 2))
    >>> y = (X[:, 0] > 5).astype(int)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pipe = PrivatePipeline([
    ...     ("scale", StandardScaler(epsilon=0.5, bounds=(0, 10), accountant=acc)),
    ...     ("clf", LogisticRegression(epsilon=1.0, data_norm=15.0, accountant=acc)),
    ... ])
    >>> pipe.fit(X, y)  # 0.5 + 1.0 > 1.0: refused before the scaler spends anything
    Traceback (most recent call last):
    ...
    veil.errors.BudgetError: Privacy spend of (1.5,0.0) not permissible; ...
    >>> acc.total()
    (epsilon=0.0, delta=0.0)
    >>> pipe = pipe.set_params(clf__epsilon=0.5).fit(X, y)
    >>> acc.total(), pipe.predict(X[:3]).shape
    ((epsilon=1.0, delta=0.0), (3,))
    """

    def _warn_data_fitted(self) -> None:
        """:class:`~veil.errors.PrivacyLeakWarning` naming the non-DP steps fitted on the data
        (:func:`_data_fitted_steps`); a function of the pipeline's configuration only."""
        names = _data_fitted_steps(self.steps)
        if names:
            warnings.warn(
                f"pipeline step(s) {names} are not differentially private and are fitted on "
                "the data: what they learn (categories found or columns selected, and so the "
                "model's number of features; a mean; a whole non-private model) is released "
                "outside the privacy guarantee. Give them public parameters (e.g. "
                "OneHotEncoder(categories=[...]), columns listed by name) or use veil.ml steps",
                PrivacyLeakWarning,
                stacklevel=user_stacklevel(),
            )

    def _check_budget(self) -> None:
        """Raise :class:`BudgetError` unless every accountant can pay for its DP steps;
        then warn about non-DP steps fitted on the data (:meth:`_warn_data_fitted`)."""
        totals: dict[int, list[Any]] = {}
        # DP steps only (also nested ones): passthrough and scikit-learn's own ``epsilon``
        # (SVR's loss parameter) are no budget
        for est in _dp_estimators(self.steps):
            params = est.get_params(deep=False)
            try:
                eps = float(params["epsilon"])
                delta = float(params.get("delta", 0.0) or 0.0)
            except (TypeError, ValueError):
                continue  # the step itself reports its invalid parameter
            acc = resolve_accountant(params.get("accountant"))
            entry = totals.setdefault(id(acc), [acc, 0.0, 0.0])
            entry[1] += eps
            entry[2] += delta
        for acc, eps, delta in totals.values():
            acc.check(eps, delta)
        self._warn_data_fitted()

    def fit(self, X: Any, y: Any = None, **params: Any) -> PrivatePipeline:
        """Check the whole budget, then fit the steps (see :meth:`Pipeline.fit`)."""
        self._check_budget()
        return super().fit(X, y, **params)

    @available_if(_last_has("transform", "fit_transform", passthrough=True))
    def fit_transform(self, X: Any, y: Any = None, **params: Any) -> Any:
        """Check the whole budget, then fit and transform (see :meth:`Pipeline.fit_transform`)."""
        self._check_budget()
        return super().fit_transform(X, y, **params)

    @available_if(_last_has("fit_predict"))
    def fit_predict(self, X: Any, y: Any = None, **params: Any) -> Any:
        """Check the whole budget, then fit and predict (see :meth:`Pipeline.fit_predict`)."""
        self._check_budget()
        return super().fit_predict(X, y, **params)


def make_private_pipeline(
    *steps: Any,
    epsilon: float,
    weights: Sequence[float] | None = None,
    accountant: Any = None,
) -> PrivatePipeline:
    """Build a :class:`sklearn.pipeline.Pipeline` whose DP steps share ``epsilon``.

    Every DP estimator of :mod:`veil.ml` among the steps, including one nested inside a step
    (a private ``StandardScaler`` in a ``ColumnTransformer`` or an inner ``Pipeline``), gets
    ``epsilon * w_i / sum(w)``, in step order; other steps (e.g. a plain ``OneHotEncoder`` on
    public categories, or scikit-learn's ``SVR``, whose ``epsilon`` is a loss parameter) are
    left alone -- and ``fit`` warns (:class:`~veil.errors.PrivacyLeakWarning`) about those
    that learn from the rows (``OneHotEncoder()`` finding the categories, which sets the next
    step's number of features; a scikit-learn scaler or model).  Sequential composition: the
    whole fit costs ``epsilon``.  (A meta-estimator that fits clones of a DP estimator, such as
    ``BaggingClassifier``, spends its share once per clone; its accountant sees every spend.)
    The result is a :class:`PrivatePipeline`: ``fit`` checks the whole budget with the
    accountant(s) before any step runs, so a budget that cannot pay for every step spends
    nothing and fits nothing.

    Parameters
    ----------
    *steps : estimators, or ``(name, estimator)`` pairs.
    epsilon : float
        Total budget of one ``fit``.
    weights : sequence of float, optional
        Relative share of each DP step (default: equal), in the order of :func:`_dp_estimators`.
    accountant : BudgetAccountant, optional
        Set on every DP step, so one accountant sees the whole pipeline.

    Examples
    --------
    >>> from veil.ml import StandardScaler, LogisticRegression
    >>> pipe = make_private_pipeline(
    ...     StandardScaler(bounds=(0, 100)), LogisticRegression(data_norm=5.0),
    ...     epsilon=1.0, weights=[1, 3])
    >>> [round(s.epsilon, 2) for _, s in pipe.steps]
    [0.25, 0.75]
    """
    check_privacy_params(epsilon)
    named = [
        s if isinstance(s, tuple) else (type(s).__name__.lower() + f"_{i}", s)
        for i, s in enumerate(steps)
    ]
    dp_steps = _dp_estimators(named)
    if not dp_steps:
        raise ConfigError("no step of the pipeline is a differentially private estimator")
    w = [1.0] * len(dp_steps) if weights is None else [float(x) for x in weights]
    if len(w) != len(dp_steps) or any(x <= 0 for x in w):
        raise ConfigError(f"weights must be {len(dp_steps)} positive numbers (one per DP step)")
    total = sum(w)
    for est, wi in zip(dp_steps, w):
        params: dict[str, Any] = {"epsilon": epsilon * wi / total}
        if accountant is not None and "accountant" in est.get_params(deep=False):
            params["accountant"] = accountant
        est.set_params(**params)
    return PrivatePipeline(named)
