"""Vectorized per-group statistics and their noisy versions (factorized codes + ``bincount``).

Exact statistics are computed once per column reading (its cells for ``COUNT(col)``, their
numbers for the rest) and shared between components: the non-missing count, the clamped sum,
the centred sum and the centred sum of squares.  Sums of clamped and of centred values are
*exact* sums of terms rounded to a public power-of-two grid (:mod:`veil.dp._exact_sum`), so one
person moves them by at most the sensitivity the noise covers, whatever floating-point
summation would have rounded (Casacuberta et al., CCS 2022): per group by ``bincount`` of the
grid terms (exact for groups of fewer than 2^29 rows), ungrouped by the block-wise exact scan
(threaded when large), which also tells whether a value is missing.  Missing values are
excluded, never turned into zeros that would count as data.

Example
-------
>>> import numpy as np
>>> stats = ColumnStats(np.array([0, 1, 1]), 2, np.array([5.0, np.nan, 7.0]))
>>> stats.count().tolist(), stats.total((0.0, 6.0)).tolist()
([1.0, 1.0], [5.0, 6.0])
"""

from __future__ import annotations

import math

import numpy as np

from veil._parallel import BLOCK, map_parts, scan_moments
from veil.dp._exact_sum import FRAME_DIGITS, SumGrid, centre, grid_sum, grid_terms
from veil.dp._rng import BitSource
from veil.dp.frame import _noise
from veil.dp.frame._budget import COUNT_KINDS, Component
from veil.dp.frame._quantile import dp_quantiles

__all__ = ["ColumnStats", "row_counts", "noisy_component", "finish_output"]


def row_counts(groups: np.ndarray | None, n_rows: int, n_groups: int) -> np.ndarray:
    """Exact number of rows per group (``COUNT(*)``)."""
    if groups is None:
        return np.array([float(n_rows)])
    return np.bincount(groups, minlength=n_groups).astype(np.float64)


class ColumnStats:
    """Exact per-group statistics of one value column, computed lazily and cached.

    Parameters
    ----------
    groups
        Group code per row, or ``None`` for a single group.
    n_groups
        Number of groups.
    values
        float64 values (NaN = missing), one per row.
    squares
        The bounds whose centred sums of squares the query needs (``None``: any); for other
        bounds the centred values alone are summed (their squares read NaN).
    """

    def __init__(
        self,
        groups: np.ndarray | None,
        n_groups: int,
        values: np.ndarray,
        squares: set[tuple[float, float]] | None = None,
    ) -> None:
        self.groups = groups
        self.n_groups = n_groups
        self.values = values
        self._squares = squares
        self._has_nan: bool | None = None if values.size else False
        self._scan: tuple[float, float, float, float] | None = None
        self._valid: np.ndarray | None = None
        self._count: np.ndarray | None = None
        self._sums: dict[tuple[tuple[float, float], bool], np.ndarray] = {}
        self._sqs: dict[tuple[float, float], tuple[np.ndarray, np.ndarray]] = {}

    def _moments(self) -> tuple[float, float, float, float]:
        """``(min, max, sum, 0)`` of the raw values: one (threaded) traversal, cached."""
        if self._scan is None:
            self._scan = scan_moments(self.values)
        return self._scan

    @property
    def has_nan(self) -> bool:
        """Whether any value is missing (read from the scan; a NaN sum is checked exactly)."""
        if self._has_nan is None:
            self._has_nan = bool(np.isnan(self._moments()[2])) and bool(np.isnan(self.values).any())
        return self._has_nan

    @property
    def valid(self) -> np.ndarray:
        if self._valid is None:
            self._valid = ~np.isnan(self.values)
        return self._valid

    def _bincount(self, weights: np.ndarray) -> np.ndarray:
        assert self.groups is not None
        return np.bincount(self.groups, weights=weights, minlength=self.n_groups)

    def count(self) -> np.ndarray:
        """Non-missing values per group."""
        if self._count is None:
            if not self.has_nan:
                self._count = row_counts(self.groups, self.values.size, self.n_groups)
            elif self.groups is None:
                self._count = np.array([float(self.valid.sum())])
            else:
                self._count = self._bincount(self.valid.astype(np.float64))
        return self._count

    def _grid_total(self, bounds: tuple[float, float], centred: bool) -> np.ndarray:
        """Exact sum per group of the grid terms of ``clip(x)`` (or ``clip(x) - mid``), cached.

        The terms are multiples of the grid ``h`` of ``SumGrid.make(..., digits=FRAME_DIGITS)``
        bounded by ``2^24 h``, so every float64 partial sum of fewer than 2^29 of them is exact.
        """
        key = (bounds, centred)
        if key not in self._sums:
            lo, hi = bounds
            if lo == hi:  # every clamped value is lo: the statistic is the count times it
                s = (0.0 if centred else lo) * self.count()
            else:
                grid = SumGrid.make(lo, hi, centred=centred, digits=FRAME_DIGITS)
                if self.groups is None:
                    units = None
                    if self._has_nan is not True:  # not known to miss values: read them all
                        units, cmin, _ = grid_sum(self.values, grid)
                        self._has_nan = math.isnan(cmin)  # NaN only from a missing value
                    if self._has_nan:
                        units = grid_sum(self.values[self.valid], grid)[0]
                    assert units is not None
                    s = np.array([units * grid.h])  # exact: below 2^53 units (2^29 rows)
                else:
                    t = grid_terms(self.values, grid)
                    if self.has_nan:
                        t[~self.valid] = 0.0
                    s = self._bincount(t)
            self._sums[key] = s
        return self._sums[key]

    def total(self, bounds: tuple[float, float]) -> np.ndarray:
        """Sum of the clamped values per group (exact sum of their grid terms)."""
        return self._grid_total(bounds, False)

    def centred_sum(self, bounds: tuple[float, float]) -> np.ndarray:
        """Sum of the centred values ``clip(x) - mid`` per group (exact sum of their grid
        terms, each within ``+-half``; ``mid`` is :func:`~veil.dp._exact_sum.centre`).

        Never ``sum(clip(x)) - mid * count``: with bounds far from 0 (``(2^52, 2^52 + 2)``,
        timestamps in a narrow window) both products round to multiples of ``ulp(n hi)``, and
        their difference was off by thousands where one person moves it by ``half`` (``1``).
        """
        return self._grid_total(bounds, True)

    def centred_squares(self, bounds: tuple[float, float]) -> np.ndarray:
        """Sum of ``y^2 - half^2 / 2`` per group (``y`` as in :meth:`centred_sum`; each term
        lies in ``+-half^2 / 2``)."""
        lo, hi = bounds
        half = (hi - lo) / 2.0
        return self._centred(bounds)[1] - half * half / 2.0 * self.count()

    def _centred(self, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
        """``(sum y, sum y^2)`` per group, ``y`` the centred values (missing: none), cached.

        Plain float64 sums (a variance's squares are not summed exactly: docs/dp.md, known
        limitations); ``sum y`` only tells whether a value is missing."""
        if bounds not in self._sqs:
            lo, hi = bounds
            sq = self._squares is None or bounds in self._squares
            if self.groups is None:
                sums = None
                if self._has_nan is not True:  # not known to miss values: read all of them
                    sums = _centred_total(self.values, lo, hi, sq)
                    # y is finite unless x is NaN (inf is clipped): a NaN sum tells a missing
                    # value, as the scan's would, and saves that scan when nothing else needs it
                    self._has_nan = bool(np.isnan(sums[0]))
                if self._has_nan:
                    sums = _centred_total(self.values[self.valid], lo, hi, sq)
                assert sums is not None
                s1, s2 = np.array([sums[0]]), np.array([sums[1]])
            else:
                y = _centre(self.values, lo, hi, np.empty_like(self.values))
                if self.has_nan:
                    y[~self.valid] = 0.0
                s1 = self._bincount(y)
                s2 = np.full(self.n_groups, math.nan)  # as the ungrouped scan without squares
                if sq:
                    y *= y
                    s2 = self._bincount(y)
            self._sqs[bounds] = (s1, s2)
        return self._sqs[bounds]

    def exact(self, kind: str, bounds: tuple[float, float] | None) -> np.ndarray:
        """Exact statistic of a (non-quantile) component kind."""
        if kind in COUNT_KINDS:  # the values are the cells, or their numbers
            return self.count()
        assert bounds is not None
        if kind == "sum":
            return self.total(bounds)
        if kind == "csum":
            return self.centred_sum(bounds)
        return self.centred_squares(bounds)


def _centre(x: np.ndarray, lo: float, hi: float, out: np.ndarray) -> np.ndarray:
    """``clip(clip(x, lo, hi) - mid, -half, half)`` into ``out`` (NaN stays NaN).

    The second clip only where ``mid`` is rounded: when ``mid - lo`` and ``hi - mid`` round to
    at most ``half``, rounding (monotone) keeps every ``|clip(x) - mid|`` within ``half``.
    """
    mid, half = centre(lo, hi), (hi - lo) / 2.0
    np.minimum(x, hi, out=out)  # minimum/maximum propagate NaN (np.clip is slower)
    np.maximum(out, lo, out=out)
    out -= mid
    if not (mid - lo <= half and hi - mid <= half):
        np.minimum(out, half, out=out)
        np.maximum(out, -half, out=out)
    return out


def _centred_total(x: np.ndarray, lo: float, hi: float, squares: bool) -> tuple[float, float]:
    """:func:`_centred_sums` of ``x``, block-wise on the thread pool when large."""
    parts = map_parts(lambda p: _centred_sums(p, lo, hi, squares), x)
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def _centred_sums(x: np.ndarray, lo: float, hi: float, squares: bool) -> tuple[float, float]:
    """``(sum y, sum y^2)`` of the centred values ``y`` (:func:`_centre`), block-wise (the
    squares NaN unless ``squares``)."""
    s1 = s2 = 0.0
    buf = np.empty(min(BLOCK, x.size))
    for i in range(0, x.size, BLOCK):
        b = x[i : i + BLOCK]
        y = _centre(b, lo, hi, buf[: b.size])
        s1 += float(np.add.reduce(y))
        if squares:
            y *= y  # squared in place and summed: np.dot ran no faster on the pool's threads
            s2 += float(np.add.reduce(y))
    return s1, s2 if squares else math.nan


def noisy_component(
    comp: Component,
    exact: np.ndarray | None,
    stats: ColumnStats | None,
    n_groups: int,
    rng: BitSource,
    integer_valued: bool = False,
) -> np.ndarray:
    """Noisy per-group statistic of one component, calibrated as in ``comp``.

    ``exact`` is the exact statistic (for noise-addition components); quantiles read the
    values from ``stats`` instead.
    """
    if comp.kind == "quantile":
        assert stats is not None and comp.bounds is not None and comp.q is not None
        valid = stats.valid
        groups = stats.groups
        g = np.zeros(int(valid.sum()), dtype=np.int64) if groups is None else groups[valid]
        return dp_quantiles(
            g, stats.values[valid], n_groups, comp.bounds, comp.q, comp.scale,
            comp.sensitivity, rng, integer_valued=integer_valued, candidates=comp.candidates,
        )  # fmt: skip
    assert exact is not None
    if comp.mechanism == "exact":  # public statistic (row count under replacement neighbours)
        return exact
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
    if func in ("median", "quantile") or (func == "sum" and len(parts) == 1):
        return parts[0]
    assert bounds is not None
    lo, hi = bounds
    mid, h = centre(lo, hi), (hi - lo) / 2.0  # the shift of the centred grid terms
    if func == "sum":  # replacement neighbours: exact public count, noisy centred sum
        return mid * parts[0] + parts[1]
    n = np.maximum(parts[0], 1.0)
    m1 = np.clip(parts[1] / n, -h, h)
    if func == "mean":
        return mid + m1
    m2 = np.clip(parts[2] / n + h * h / 2.0, 0.0, h * h)
    var = np.clip(m2 - m1 * m1, 0.0, h * h)
    return var if func == "var" else np.sqrt(var)
