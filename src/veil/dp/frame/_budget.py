"""Noise components of a query, budget split and accuracy (CI half-widths) before release.

Every output column is a post-processing of one to three *components*, each a vector of
per-group noisy statistics: ``count`` (rows, or non-missing cells of a column: ``COUNT(col)``),
``ncount`` (a column's cells that read as numbers: the values a sum, mean or variance takes),
``sum`` (clamped values), ``csum`` (values centred on the middle of their bounds), ``csq``
(squared centred values, re-centred) and ``quantile`` (exponential mechanism).  Components
shared by several outputs (``AVG(age)`` and ``VAR(age)`` use the same ``ncount``) are computed
once.  ``COUNT(age)`` next to ``AVG(age)`` is two components (``count`` and ``ncount``, each
noised: a person changes each by at most ``max_rows`` per group) whatever the column's dtype:
the two are equal on a column of numbers, but the dtype is inferred from every person's cells
(one person's ``'n/a'`` keeps ``read_csv``'s column as text), so a plan that shared them on
numeric dtypes only released, through its noise scales and CI half-widths, whether some person
has a text cell.  The components, their budget and noise depend on the query alone.

Budget.  The query's epsilon is split: ``selection_fraction * epsilon`` for private partition
selection (only when keys are not public), the rest evenly over the components.  With
``mechanism="laplace"`` all of delta goes to partition selection; with ``"gaussian"`` half of it
does and the other half is split evenly over the Gaussian components.  Noise is calibrated to the
*whole* query, i.e. to a person who touches ``max_groups`` groups with ``max_rows`` rows each:
Laplace scale ``max_groups * Delta / eps_c`` (L1 sensitivity), Gaussian sigma for L2
sensitivity ``sqrt(max_groups) * Delta``, exponential mechanism with ``eps_c / max_groups`` per
group.  The accountant is therefore charged exactly the query's (epsilon, delta) once; with
``max_groups = 1`` this *is* parallel composition over disjoint groups, and with more groups the
noise grows instead of the charge silently staying per-group (the under-count of OpenDP issue
#2945).

Example
-------
>>> comps = build_components({"n": Agg("count")}, max_rows=1)
>>> [c.kind for c in comps.values()]
['count']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from veil.dp.frame import _noise
from veil.dp.frame._spec import Agg
from veil.dp.mechanisms._base import as_float
from veil.errors import ConfigError

__all__ = ["Component", "build_components", "allocate", "output_components", "halfwidths"]

#: Component kinds that count cells (``count``: non-missing cells, ``ncount``: cells that read
#: as numbers): integer-valued, sensitivity ``max_rows``, discrete noise.
COUNT_KINDS = frozenset({"count", "ncount"})


@dataclass
class Component:
    """One vector of per-group noisy statistics and its calibration."""

    kind: str
    column: str | None
    bounds: tuple[float, float] | None = None
    q: float | None = None
    #: Public candidate answers of a quantile (sorted; None: the interval mechanism, or the
    #: integers between the bounds for a declared integer column).
    candidates: tuple[float, ...] | None = None
    sensitivity: float = 1.0  # per person and group
    epsilon: float = 0.0
    delta: float = 0.0
    mechanism: str = ""
    scale: float = 0.0  # Laplace scale, Gaussian sigma, or per-group epsilon (exponential)
    noise_sensitivity: float = 0.0  # L1 (Laplace) or L2 (Gaussian) over max_groups groups
    coords: int = 1  # groups one person touches (max_groups)

    @property
    def key(self) -> tuple:
        return (self.kind, self.column, self.bounds, self.q, self.candidates)

    def halfwidth(self, alpha: float) -> float:
        """Half-width ``t`` with ``P(|noise| > t) <= alpha`` (NaN for the exponential mechanism)."""
        if self.mechanism == "discrete_laplace":
            return _noise.discrete_laplace_halfwidth(self.scale, alpha)
        if self.mechanism == "laplace":
            return _noise.laplace_halfwidth(self.scale, alpha)
        if self.mechanism in ("gaussian", "discrete_gaussian"):
            return _noise.gaussian_halfwidth(self.scale, alpha)
        if self.mechanism == "exact":
            return 0.0
        return math.nan


def output_components(agg: Agg, replace: bool = False) -> list[tuple]:
    """Keys of the components an output column is computed from (never from the data).

    Under replacement neighbours (``replace``: the row count is public) a sum is
    ``n * mid + centred sum``, whose sensitivity ``hi - lo`` beats ``max(|lo|, |hi|)``.
    """
    b, c = agg.bounds, agg.column
    if agg.func == "count":
        return [("count", c, None, None, None)]
    if agg.func == "sum":
        if replace:
            return [("ncount", c, None, None, None), ("csum", c, b, None, None)]
        return [("sum", c, b, None, None)]
    if agg.func == "mean":
        return [("ncount", c, None, None, None), ("csum", c, b, None, None)]
    if agg.func in ("var", "std"):
        return [
            ("ncount", c, None, None, None),
            ("csum", c, b, None, None),
            ("csq", c, b, None, None),
        ]
    return [("quantile", c, b, agg.q, agg.candidates)]


def _sensitivity(
    kind: str,
    bounds: tuple[float, float] | None,
    max_rows: int,
    q: float | None = None,
    replace: bool = False,
) -> float:
    if replace:  # one row replaced by another; n is public (diffprivlib's bounded DP)
        if kind in COUNT_KINDS:  # public: no missing cell, no cell that is no number
            return 0.0
        if kind == "quantile":  # a rank moves by at most one, m is fixed
            return 1.0
        assert bounds is not None
        width = bounds[1] - bounds[0]
        return width if kind == "csum" else width * width / 4.0  # csq spans h^2
    if kind in COUNT_KINDS:  # a person adds at most max_rows cells to a group
        return float(max_rows)
    if kind == "quantile":  # rank utility: one added row moves it by at most max(q, 1 - q)
        assert q is not None
        return max_rows * max(q, 1.0 - q)
    assert bounds is not None
    lo, hi = bounds
    half = (hi - lo) / 2.0
    if kind == "sum":
        return max_rows * max(abs(lo), abs(hi))
    if kind == "csum":
        return max_rows * half
    return max_rows * half * half / 2.0  # csq: (x - mid)^2 - half^2 / 2 lies in +-half^2 / 2


#: More rows than any table holds (numpy sizes are below 2^63), with a margin for rounding:
#: sums of at most this many terms bounded by :func:`_term` never overflow float64.
_MAX_ROWS = 2.0**64


def _term(kind: str, bounds: tuple[float, float] | None) -> float:
    """Largest magnitude of one row's term in a component's exact sum (0: no sum of values).

    Refusing bounds whose sum over any possible number of rows could overflow reads the
    public bounds alone; an overflow itself (``inf``, or ``NaN`` from ``inf - inf``) happened
    after the charge, on tables with enough large values only (``sum`` with bounds
    ``(-1e308, 1e308)`` released on one row of ``1e308`` and failed on three).  ``csum`` sums
    ``clip(x) - mid`` or, for bounds near 0 (``max |bound| <= 4 half``, the complement of
    :func:`veil._parallel.far_from_zero`), ``clip(x)``
    (:meth:`~veil.dp.frame._compute.ColumnStats.centred_sum`): ``4 half`` covers both.
    """
    if bounds is None or kind not in ("sum", "csum", "csq"):
        return 0.0
    lo, hi = bounds
    half = (hi - lo) / 2.0
    if kind == "sum":
        return max(abs(lo), abs(hi))
    return 4.0 * half if kind == "csum" else half * half


def build_components(
    aggs: dict[str, Agg], *, max_rows: int, replace: bool = False
) -> dict[tuple, Component]:
    """Unique components needed by the outputs, in first-use order."""
    comps: dict[tuple, Component] = {}
    for agg in aggs.values():
        for key in output_components(agg, replace):
            if key not in comps:
                kind, column, bounds, q, candidates = key
                # a candidate list leaves the quantile's sensitivity unchanged: the midrank score
                # moves as on the integers (see veil.dp.frame._quantile)
                sens = _sensitivity(kind, bounds, max_rows, q, replace)
                if not math.isfinite(sens):  # (hi - lo)^2 of a variance overflows
                    raise ConfigError(
                        f"bounds {bounds} of column {column!r} are too wide: the sensitivity of "
                        "its variance/standard deviation overflows; narrow them"
                    )
                if not math.isfinite(_term(kind, bounds) * _MAX_ROWS):
                    raise ConfigError(
                        f"bounds {bounds} of column {column!r} are too wide: a sum of its "
                        "clipped values could overflow float64; narrow them"
                    )
                comps[key] = Component(kind, column, bounds, q, candidates, sensitivity=sens)
                if sens == 0.0:
                    comps[key].mechanism = "exact"  # public (the row count under replacement)
    return comps


def allocate(
    comps: dict[tuple, Component],
    *,
    epsilon: float,
    delta: float,
    mechanism: str,
    max_groups: int,
    private_selection: bool,
    selection_fraction: float,
) -> tuple[float, float, float, float]:
    """Calibrate every component in place; return (eps_sel, delta_sel, eps_used, delta_used)."""
    epsilon, delta = as_float("epsilon", epsilon), as_float("delta", delta)  # no bool / text
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not 0 <= delta < 1:
        raise ConfigError(f"delta must lie in [0, 1), got {delta!r}")
    if mechanism not in ("laplace", "gaussian"):
        raise ConfigError(f"mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")
    eps_sel = delta_sel = 0.0
    eps_rest = float(epsilon)
    noisy = {k: c for k, c in comps.items() if c.mechanism != "exact"}
    n_gauss = (
        sum(1 for c in noisy.values() if c.kind != "quantile") if mechanism == "gaussian" else 0
    )
    if private_selection:
        if not 0 < selection_fraction < 1:
            raise ConfigError(f"selection_fraction must lie in (0, 1), got {selection_fraction}")
        if delta <= 0:
            raise ConfigError(
                "private partition selection (no public keys) needs delta > 0; give delta "
                "or list the group keys"
            )
        eps_sel = selection_fraction * epsilon
        eps_rest = epsilon - eps_sel
        delta_sel = delta / 2.0 if n_gauss else float(delta)
    delta_gauss = float(delta) - delta_sel
    if n_gauss and delta_gauss <= 0:
        raise ConfigError("the Gaussian mechanism needs delta > 0")
    eps_c = eps_rest / max(len(noisy), 1)
    for comp in noisy.values():
        comp.epsilon = eps_c
        comp.coords = max_groups
        if comp.kind == "quantile":
            comp.mechanism = "exponential"
            comp.scale = eps_c / max_groups
        elif mechanism == "gaussian":
            comp.delta = delta_gauss / n_gauss
            comp.noise_sensitivity = math.sqrt(max_groups) * comp.sensitivity
            if comp.kind in COUNT_KINDS:
                comp.mechanism = "discrete_gaussian"
                comp.scale = _noise.discrete_gaussian_sigma(
                    comp.noise_sensitivity, eps_c, comp.delta, max_groups, int(comp.sensitivity)
                )
            else:
                comp.mechanism = "gaussian"
                comp.scale = _noise.analytic_gaussian_sigma(
                    comp.noise_sensitivity, eps_c, comp.delta
                )
        else:
            comp.mechanism = "discrete_laplace" if comp.kind in COUNT_KINDS else "laplace"
            comp.noise_sensitivity = max_groups * comp.sensitivity
            comp.scale = comp.noise_sensitivity / eps_c
    used_delta = delta_sel + (delta_gauss if n_gauss else 0.0)
    return eps_sel, delta_sel, float(epsilon), used_delta


def halfwidths(
    agg: Agg,
    comps: dict[tuple, Component],
    alpha: float,
    counts: np.ndarray | float | None,
    replace: bool = False,
) -> np.ndarray | float:
    """CI half-width of an output at level ``1 - alpha`` (union bound over its components).

    ``counts`` is the (noisy) number of values per group, needed for means and variances;
    ``None`` gives NaN for them.  Quantiles always give NaN (their error depends on the data).
    """
    keys = output_components(agg, replace)
    k = max(sum(comps[key].mechanism != "exact" for key in keys), 1)
    hw = [comps[key].halfwidth(alpha / k) for key in keys]
    if agg.func in ("count", "sum"):
        return hw[-1]
    if agg.func in ("median", "quantile") or counts is None:
        return math.nan
    lo, hi = agg.bounds  # type: ignore[misc]
    h = (hi - lo) / 2.0
    n = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    mean_hw = np.minimum((hw[1] + h * hw[0]) / n, hi - lo)
    if agg.func == "mean":
        return mean_hw
    var_hw = np.minimum((hw[2] + h * h / 2.0 * hw[0]) / n + 2.0 * h * mean_hw, h * h)
    return var_hw if agg.func == "var" else np.sqrt(var_hw)
