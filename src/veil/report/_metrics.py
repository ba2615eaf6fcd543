"""Information-loss figures and distribution summaries comparing an input table and its release.

The release's rows are matched to the input's by index label (the pipeline keeps the input's
labels, so suppressed records simply disappear).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["information_loss", "distribution", "MAX_CATEGORIES"]

MAX_CATEGORIES = 15
HIST_BINS = 20


def _is_num(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _changed(a: pd.Series, b: pd.Series) -> int:
    """Number of positions where ``a`` and ``b`` differ (missing == missing)."""
    na_a, na_b = a.isna().to_numpy(), b.isna().to_numpy()
    if a.dtype == b.dtype or (_is_num(a) and _is_num(b)):
        try:
            eq = np.asarray(a.to_numpy() == b.to_numpy(), dtype=bool)
        except (TypeError, ValueError):
            eq = a.astype(str).to_numpy() == b.astype(str).to_numpy()
    else:
        eq = a.astype(str).to_numpy() == b.astype(str).to_numpy()
    same = (eq & ~na_a & ~na_b) | (na_a & na_b)
    return int((~same).sum())


def _moments(s: pd.Series) -> tuple[float | None, float | None]:
    if not _is_num(s) or s.notna().sum() == 0:
        return None, None
    x = s.to_numpy(dtype=float, na_value=np.nan)
    return float(np.nanmean(x)), float(np.nanstd(x))


def information_loss(original: pd.DataFrame, release: pd.DataFrame) -> dict[str, Any]:
    """Per-column loss: changed-cell share, distinct values before/after, mean/std shift.

    Examples
    --------
    >>> o = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y", "x", "y"]})
    >>> r = o.assign(a=[1, 1, 3, 3]).drop(columns="b").iloc[:3]
    >>> loss = information_loss(o, r)
    >>> loss["columns"]["a"]["changed_share"], loss["columns"]["b"]["dropped"], loss["records_removed"]
    (0.3333333333333333, True, 1)
    """
    kept = original.index.get_indexer(release.index)
    aligned = bool((kept >= 0).all())
    cols: dict[str, Any] = {}
    for col in original.columns:
        name = str(col)
        s0 = original[col]
        d0 = int(s0.nunique(dropna=True))
        m0, sd0 = _moments(s0)
        if col not in release.columns:
            cols[name] = {"dropped": True, "changed_share": 1.0, "distinct_before": d0,
                          "distinct_after": 0, "distinct_reduction": 1.0 if d0 else 0.0,
                          "mean_before": m0, "std_before": sd0, "mean_after": None, "std_after": None}  # fmt: skip
            continue
        s1 = release[col]
        d1 = int(s1.nunique(dropna=True))
        m1, sd1 = _moments(s1)
        if aligned and len(release):
            base = s0.iloc[kept].reset_index(drop=True)
            changed = _changed(base, s1.reset_index(drop=True)) / len(release)
        else:
            changed = None
        cols[name] = {
            "dropped": False,
            "changed_share": changed,
            "distinct_before": d0,
            "distinct_after": d1,
            "distinct_reduction": (1 - d1 / d0) if d0 else 0.0,
            "mean_before": m0,
            "std_before": sd0,
            "mean_after": m1,
            "std_after": sd1,
            "mean_shift": (m1 - m0) if m0 is not None and m1 is not None else None,
            "std_ratio": (sd1 / sd0) if sd0 and sd1 is not None else None,
        }
    added = [str(c) for c in release.columns if c not in original.columns]
    n0, n1 = len(original), len(release)
    return {
        "columns": cols,
        "columns_added": added,
        "records_removed": n0 - n1,
        "records_removed_share": (n0 - n1) / n0 if n0 else 0.0,
    }


_LEADING = re.compile(r"^\s*[\[(<>=]*\s*(-?\d+(?:\.\d+)?)")


def _leading_number(label: str) -> float | None:
    """Sort key of interval-like or numeric labels ("[30, 40)" -> 30); inf for "(other)"."""
    if label == "(other)":
        return np.inf
    m = _LEADING.match(label)
    return float(m.group(1)) if m else None


def distribution(s: pd.Series, edges: Sequence[float] | None = None) -> dict[str, Any]:
    """A small JSON-able summary of a column's distribution for plotting.

    Numeric columns become a histogram (``edges`` + ``counts``); others the counts of the
    ``MAX_CATEGORIES`` most frequent values, the rest pooled as ``(other)``.
    """
    missing = int(s.isna().sum())
    if _is_num(s) and s.nunique() > MAX_CATEGORIES:
        x = s.dropna().to_numpy(dtype=float)
        if edges is None:
            edges = np.histogram_bin_edges(x, bins=HIST_BINS) if len(x) else np.array([0.0, 1.0])
        counts, e = np.histogram(x, bins=np.asarray(edges, dtype=float))
        return {
            "kind": "numeric",
            "edges": [float(v) for v in e],
            "counts": counts.tolist(),
            "missing": missing,
        }
    if pd.api.types.is_datetime64_any_dtype(s):
        s = s.dt.strftime("%Y")
    vc = s.dropna().astype(str).value_counts()
    top = vc.iloc[:MAX_CATEGORIES]
    labels, counts = [str(i) for i in top.index], [int(v) for v in top.to_numpy()]
    if len(vc) > MAX_CATEGORIES:
        labels.append("(other)")
        counts.append(int(vc.iloc[MAX_CATEGORIES:].sum()))
    keys = [_leading_number(v) for v in labels]
    if any(k is None for k in keys if k is not np.inf):
        return {"kind": "categorical", "labels": labels, "counts": counts, "missing": missing}
    order = np.argsort(np.asarray(keys, dtype=float), kind="stable")
    return {
        "kind": "categorical",
        "labels": [labels[i] for i in order],
        "counts": [counts[i] for i in order],
        "missing": missing,
    }
