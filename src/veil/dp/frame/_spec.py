"""Aggregation specifications of DP group-by queries.

An output column is described by an :class:`Agg`: the function, the input column (``None`` for
``COUNT(*)``), the clamping bounds (required for everything but counts) and, for quantiles, the
level and optionally a public list of candidate answers.  :func:`parse_agg` accepts the short
forms used by :meth:`veil.dp.frame.GroupedFrame.agg`.

Example
-------
>>> parse_agg("n", "count")
Agg(func='count', column=None, bounds=None, q=None, candidates=None)
>>> parse_agg("avg_age", ("age", "mean", (18, 100)))
Agg(func='mean', column='age', bounds=(18.0, 100.0), q=None, candidates=None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from veil.dp.tools._quantile_candidates import listed_candidates
from veil.errors import ConfigError

__all__ = ["Agg", "parse_agg", "FUNCS"]

#: Supported aggregation functions (aliases map to these names).
FUNCS = ("count", "sum", "mean", "var", "std", "median", "quantile")
_ALIASES = {
    "avg": "mean",
    "average": "mean",
    "variance": "var",
    "stddev": "std",
    "size": "count",
    "len": "count",
}


@dataclass(frozen=True)
class Agg:
    """One DP aggregation.

    Parameters
    ----------
    func
        ``count``, ``sum``, ``mean``, ``var``, ``std``, ``median`` or ``quantile``.
    column
        Input column; ``None`` only for ``count`` (= ``COUNT(*)``, rows).  ``count`` of a column
        counts its non-missing cells, as SQL's ``COUNT(col)``: text that is no number
        (``'n/a'``) counts, only missing cells (``None``, NaN, a declared missing marker) do
        not, whatever else the query asks.  A sum, mean, variance or quantile reads each cell
        as a number, and such text is missing for it: a mean divides by the number of values
        it averages (its own noisy count), which is then not ``count``'s.
    bounds
        ``(lower, upper)`` clamping bounds, required for all but counts.  Values outside are
        clamped; they are never read from the data.
    q
        Quantile level in [0, 1] (``median`` is ``q=0.5``).
    candidates
        ``median`` and ``quantile`` only: a *public* list of possible answers (fixed without
        looking at the data), as ``candidates=`` of :func:`veil.dp.tools.quantile`: 1 to 2**20
        distinct finite numbers, in any order, inside the bounds (``ConfigError`` otherwise,
        when the query is planned: before any budget is spent).  The release is one of them,
        chosen in each group by exact permute-and-flip (McKenna & Sheldon, NeurIPS 2020) on the
        midrank score, the sampler of ``veil.dp.tools`` (see
        :mod:`veil.dp.tools._quantile_candidates` and :mod:`veil.dp.frame._quantile`).  Stored
        sorted, as a tuple of floats.  Not for a column of ``integer_columns`` (a list already
        fixes the answers; list only integers to restrict it to them).

    Example
    -------
    >>> Agg("quantile", "income", bounds=(0, 1e6), q=0.9).q
    0.9
    >>> Agg("median", "age", bounds=(0, 120), candidates=[40, 20, 30.5]).candidates
    (20.0, 30.5, 40.0)
    """

    func: str
    column: str | None = None
    bounds: tuple[float, float] | None = None
    q: float | None = None
    candidates: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        func = _ALIASES.get(str(self.func).lower(), str(self.func).lower())
        if func not in FUNCS:
            raise ConfigError(
                f"unknown aggregation {self.func!r}; choose one of {', '.join(FUNCS)}"
            )
        object.__setattr__(self, "func", func)
        if func == "median":
            if self.q not in (None, 0.5):
                raise ConfigError("median takes no q (it is the 0.5 quantile)")
            object.__setattr__(self, "q", 0.5)
        if func == "quantile":
            if self.q is None:
                raise ConfigError("quantile needs a level q in [0, 1]")
            q = float(self.q)
            if not 0.0 <= q <= 1.0 or math.isnan(q):
                raise ConfigError(f"quantile level must lie in [0, 1], got {self.q!r}")
            object.__setattr__(self, "q", q)
        elif func != "median" and self.q is not None:
            raise ConfigError(f"{func} takes no quantile level")
        if self.column is None and func != "count":
            raise ConfigError(f"{func} needs an input column")
        if self.bounds is not None:
            object.__setattr__(self, "bounds", _check_bounds(self.bounds, self.column))
        if self.candidates is not None:
            if func not in ("median", "quantile"):
                raise ConfigError(f"{func} takes no candidates (median and quantile do)")
            object.__setattr__(self, "candidates", _check_candidates(self))

    @property
    def needs_bounds(self) -> bool:
        """True for every aggregation except counts."""
        return self.func != "count"

    def with_bounds(self, bounds: tuple[float, float] | None) -> Agg:
        """Copy with ``bounds`` filled in (when not already given)."""
        if self.bounds is not None or bounds is None or not self.needs_bounds:
            return self
        return replace(self, bounds=_check_bounds(bounds, self.column))  # candidates re-checked


def _check_candidates(agg: Agg) -> tuple[float, ...]:
    """The candidate list validated by :func:`~veil.dp.tools._quantile_candidates.listed_candidates`
    (the checks of ``veil.dp.tools``; inside the bounds once they are known), sorted."""
    lo, hi = agg.bounds if agg.bounds is not None else (-np.inf, np.inf)
    name = f"{agg.func} of column {agg.column!r}"
    cands = listed_candidates(agg.candidates, name, np.array([lo]), np.array([hi]))
    return tuple(float(c) for c in cands)


def _check_bounds(bounds: Any, column: str | None) -> tuple[float, float]:
    # a text is no pair: "05" was read character by character as the bounds (0, 5)
    if isinstance(bounds, (str, bytes)):
        raise ConfigError(
            f"bounds of column {column!r} must be a pair (lower, upper), got {bounds!r}"
        )
    try:
        lo, hi = (float(b) for b in bounds)
    except OverflowError:  # an int beyond float64: not finite
        raise ConfigError(
            f"bounds of column {column!r} must be finite with lower <= upper, got {bounds!r}"
        ) from None
    except (TypeError, ValueError):
        raise ConfigError(
            f"bounds of column {column!r} must be a pair (lower, upper), got {bounds!r}"
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ConfigError(
            f"bounds of column {column!r} must be finite with lower <= upper, got {bounds!r}"
        )
    return (lo, hi)


def parse_agg(name: str, spec: Any) -> Agg:
    """Turn a short aggregation form into an :class:`Agg`.

    Accepted forms: an :class:`Agg`; ``"count"`` (rows); ``(column, func)``;
    ``(column, func, (lo, hi))``; ``(column, "quantile", (lo, hi), q)``; a mapping with the
    keys of :class:`Agg`.

    Parameters
    ----------
    name
        Output column name (used in error messages).
    spec
        The short form.

    Returns
    -------
    Agg
    """
    if isinstance(spec, Agg):
        return spec
    if isinstance(spec, str):
        if _ALIASES.get(spec.lower(), spec.lower()) != "count":
            raise ConfigError(
                f"output {name!r}: only 'count' may be given alone; use "
                f"(column, {spec!r}, (lower, upper))"
            )
        return Agg("count")
    if isinstance(spec, Mapping):
        try:
            return Agg(**dict(spec))
        except TypeError as exc:
            raise ConfigError(f"output {name!r}: {exc}") from None
    if isinstance(spec, (tuple, list)) and 2 <= len(spec) <= 4:
        column, func, *rest = spec
        bounds = rest[0] if rest else None
        q = rest[1] if len(rest) > 1 else None
        if not isinstance(func, str):
            raise ConfigError(f"output {name!r}: the aggregation must be a name, got {func!r}")
        return Agg(func, None if column is None else str(column), bounds, q)
    raise ConfigError(
        f"output {name!r}: cannot read aggregation {spec!r}; use 'count', (column, func), "
        "(column, func, (lower, upper)) or (column, 'quantile', (lower, upper), q)"
    )
