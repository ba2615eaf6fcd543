"""Split one privacy budget across the steps of a scikit-learn pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sklearn.pipeline import Pipeline

from veil.errors import ConfigError
from veil.ml._base import check_privacy_params

__all__ = ["make_private_pipeline"]


def make_private_pipeline(
    *steps: Any,
    epsilon: float,
    weights: Sequence[float] | None = None,
    accountant: Any = None,
) -> Pipeline:
    """Build a :class:`sklearn.pipeline.Pipeline` whose DP steps share ``epsilon``.

    Every step with an ``epsilon`` parameter (the DP estimators of :mod:`veil.ml`) gets
    ``epsilon * w_i / sum(w)``; steps without one (e.g. a plain ``OneHotEncoder`` on public
    categories) are left alone.  Sequential composition: the whole fit costs ``epsilon``.

    Parameters
    ----------
    *steps : estimators, or ``(name, estimator)`` pairs.
    epsilon : float
        Total budget of one ``fit``.
    weights : sequence of float, optional
        Relative share of each DP step (default: equal).
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
    dp_steps = [est for _, est in named if "epsilon" in est.get_params(deep=False)]
    if not dp_steps:
        raise ConfigError("no step of the pipeline has an epsilon parameter")
    w = [1.0] * len(dp_steps) if weights is None else [float(x) for x in weights]
    if len(w) != len(dp_steps) or any(x <= 0 for x in w):
        raise ConfigError(f"weights must be {len(dp_steps)} positive numbers (one per DP step)")
    total = sum(w)
    for est, wi in zip(dp_steps, w):
        params: dict[str, Any] = {"epsilon": epsilon * wi / total}
        if accountant is not None and "accountant" in est.get_params(deep=False):
            params["accountant"] = accountant
        est.set_params(**params)
    return Pipeline(named)
