"""Vectorized per-group statistics and their noisy versions (factorized codes + ``bincount``).

Example
-------
>>> import numpy as np
>>> exact_component("count", np.array([0, 1, 1]), None, None, 2).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from veil.dp._rng import BitSource
from veil.dp.frame import _noise
from veil.dp.frame._budget import Component
from veil.dp.frame._quantile import dp_quantiles

__all__ = ["exact_component", "noisy_component", "finish_output"]


def exact_component(
    kind: str,
    groups: np.ndarray,
    values: np.ndarray | None,
    bounds: tuple[float, float] | None,
    n_groups: int,
) -> np.ndarray:
    """Exact per-group statistic of a (non-quantile) component.

    ``values`` holds NaN for missing entries; they are excluded (never turned into 0 values
    that would count as data).
    """
    if values is None:  # COUNT(*)
        return np.bincount(groups, minlength=n_groups).astype(np.float64)
    valid = ~np.isnan(values)
    if kind == "count":
        return np.bincount(groups, weights=valid.astype(np.float64), minlength=n_groups)
    assert bounds is not None
    lo, hi = bounds
    x = np.clip(values, lo, hi)
    if kind == "csum" or kind == "csq":
        mid = (lo + hi) / 2.0
        x = x - mid
        if kind == "csq":
            h = (hi - lo) / 2.0
            x = x * x - h * h / 2.0
    x[~valid] = 0.0
    return np.bincount(groups, weights=x, minlength=n_groups)


def noisy_component(
    comp: Component,
    groups: np.ndarray,
    values: np.ndarray | None,
    n_groups: int,
    rng: BitSource,
) -> np.ndarray:
    """Noisy per-group statistic of one component, calibrated as in ``comp``."""
    if comp.kind == "quantile":
        assert values is not None and comp.bounds is not None and comp.q is not None
        valid = ~np.isnan(values)
        return dp_quantiles(
            groups[valid], values[valid], n_groups, comp.bounds, comp.q, comp.scale,
            comp.sensitivity, rng,
        )  # fmt: skip
    exact = exact_component(comp.kind, groups, values, comp.bounds, n_groups)
    if comp.mechanism == "discrete_laplace":
        return exact + _noise.discrete_laplace(rng, comp.scale, n_groups)
    if comp.mechanism == "discrete_gaussian":
        return exact + _noise.discrete_gaussian(rng, comp.scale, n_groups)
    if comp.mechanism == "laplace":
        return _noise.laplace(rng, exact, comp.scale, comp.noise_sensitivity, comp.coords)
    return _noise.gaussian(rng, exact, comp.scale, comp.noise_sensitivity, comp.coords)


def finish_output(func: str, bounds: tuple[float, float] | None, parts: list[np.ndarray]):
    """Post-process noisy components into the released statistic."""
    if func == "count":
        return parts[0].astype(np.int64)
    if func in ("sum", "median", "quantile"):
        return parts[0]
    assert bounds is not None
    lo, hi = bounds
    mid, h = (lo + hi) / 2.0, (hi - lo) / 2.0
    n = np.maximum(parts[0], 1.0)
    m1 = np.clip(parts[1] / n, -h, h)
    if func == "mean":
        return mid + m1
    m2 = np.clip(parts[2] / n + h * h / 2.0, 0.0, h * h)
    var = np.clip(m2 - m1 * m1, 0.0, h * h)
    return var if func == "var" else np.sqrt(var)
