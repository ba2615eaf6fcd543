"""Numeric binning for ``generalize``: equal-width, quantile and custom bins, binary split."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from veil.errors import ConfigError, InputError

__all__ = ["fmt_number", "bin_edges", "interval_labels", "assign_bins", "split_labels"]


def fmt_number(x: float, precision: int = 6) -> str:
    """Short text of a bin edge: ``30`` rather than ``30.0``."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{precision}g}"


def bin_edges(values: np.ndarray, bins: int | Sequence[float], strategy: str) -> np.ndarray:
    """Edges for ``bins`` (a count with ``strategy`` ``equal_width``/``quantile``, or edges)."""
    if not isinstance(bins, (int, np.integer)):
        edges = np.asarray(bins, dtype=np.float64)
        return edges
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise InputError("cannot compute bins: the column has no numeric values")
    if strategy == "quantile":
        edges = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, int(bins) + 1)))
    else:
        lo, hi = float(finite.min()), float(finite.max())
        if lo == hi:  # one value: a unit bin (wider where 1.0 is below its precision),
            w = max(1.0, abs(lo) * 1e-12)  # ending at the value where float64 ends there
            lo, hi = (lo, lo + w) if math.isfinite(lo + w) else (lo - w, lo)
        if np.isfinite(hi - lo):
            edges = np.linspace(lo, hi, int(bins) + 1)
        else:  # -1e308 .. 1e308: the width overflows, and linspace gave NaN edges
            t = np.linspace(0.0, 1.0, int(bins) + 1)
            edges = lo * (1.0 - t) + hi * t
        # a range narrower than ``bins`` steps of float64 at its magnitude (1e17 .. 1e17 + 32,
        # 16 apart there) repeats edges: the distinct ones, as for quantiles
        edges = np.unique(edges)
    if edges.size < 2:
        edges = np.array([edges[0], edges[0] + 1.0])
    return edges


def check_edges(edges: np.ndarray) -> None:
    """Edges must be finite or infinite numbers, strictly increasing, at least two."""
    if edges.ndim != 1 or edges.size < 2 or np.isnan(edges).any():
        raise ConfigError("operator 'generalize': bins need at least two edges")
    if not (np.diff(edges) > 0).all():
        raise ConfigError("operator 'generalize': bin edges must be strictly increasing")


def _edge_texts(edges: np.ndarray, precision: int) -> list[str]:
    """Edge texts at ``precision`` significant digits, more where two edges would print alike
    (equal-width bins on ``[1e6, 1e6 + 1]`` all read ``1e+06``, so distinct bins got one label);
    at 17 digits distinct doubles always print differently."""
    for p in range(precision, 18):
        t = [fmt_number(e, p) for e in edges]
        if len(set(t)) == len(t):
            return t
    return [repr(float(e)) for e in edges]


def interval_labels(edges: np.ndarray, right: bool, precision: int = 6) -> list[str]:
    """Interval labels like pandas ``Interval`` text: ``[0, 30)`` (or ``(0, 30]`` if ``right``).

    The outermost bin is closed on its open side too, so the data's minimum and maximum fall in.
    """
    t = _edge_texts(edges, precision)
    n = len(edges) - 1
    labels = []
    for i in range(n):
        if right:
            left = "[" if i == 0 else "("
            labels.append(f"{left}{t[i]}, {t[i + 1]}]")
        else:
            close = "]" if i == n - 1 else ")"
            labels.append(f"[{t[i]}, {t[i + 1]}{close}")
    return labels


def assign_bins(values: np.ndarray, edges: np.ndarray, right: bool) -> np.ndarray:
    """Bin index of each value (-1 for missing, -2 for outside the edges)."""
    n = len(edges) - 1
    if right:
        idx = np.searchsorted(edges, values, side="left") - 1
        idx[values == edges[0]] = 0
    else:
        idx = np.searchsorted(edges, values, side="right") - 1
        idx[values == edges[-1]] = n - 1
    idx = idx.astype(np.int64)
    idx[(idx < 0) | (idx >= n)] = -2
    idx[np.isnan(values)] = -1
    return idx


def split_labels(threshold: float, precision: int = 6) -> list[str]:
    """Labels of a binary split: ``< t`` and ``>= t``."""
    t = fmt_number(threshold, precision)
    return [f"< {t}", f">= {t}"]


def out_of_range_message(
    values: np.ndarray, idx: np.ndarray, column: Any, edges: np.ndarray
) -> str:
    """Count the values outside ``[edges[0], edges[-1]]`` (the user's edges), never quote them."""
    out = values[idx == -2]
    below, above = int((out < edges[0]).sum()), int((out > edges[-1]).sum())
    return (
        f"operator 'generalize': {out.size} value(s) of column {column!r} fall outside the bins "
        f"[{fmt_number(edges[0])}, {fmt_number(edges[-1])}] ({below} below, {above} above); "
        "widen the edges or set out_of_range: missing"
    )
