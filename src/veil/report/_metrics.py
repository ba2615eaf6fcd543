"""Information-loss figures and distribution summaries comparing an input table and its release.

The release's rows are matched to the input's by index label (the pipeline keeps the input's
labels, so suppressed records simply disappear).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.report._factors import Factorized, Factors, factorize

__all__ = ["information_loss", "distribution", "MAX_CATEGORIES"]

MAX_CATEGORIES = 15
HIST_BINS = 20
# up to this many distinct values (input + release) a column's records are compared through a
# dict of their texts, beyond it text by text
_VOCAB_MAX = 4096
# the sort Series.value_counts uses (stable from pandas 3): ties come out in the same order
_VC_SORT_KIND: Any = "stable" if int(pd.__version__.split(".")[0]) >= 3 else "quicksort"


def _is_num(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _str_keys(uniques: Any) -> np.ndarray:
    """The string form (``str(v)``) of each distinct value, as an object array."""
    arr = np.asarray(uniques, dtype=object)
    if len(arr) == 0 or pd.api.types.infer_dtype(arr, skipna=False) == "string":
        return arr  # already text: str(v) == v
    return np.array([str(v) for v in arr], dtype=object)


def _arrow_texts_differ(ua: Any, ca: np.ndarray, ub: Any, cb: np.ndarray) -> int | None:
    """Records whose texts differ (missing == missing), compared inside Arrow without making
    Python strings; None unless both sides' distinct values are Arrow strings."""
    xa, xb = getattr(ua, "array", ua), getattr(ub, "array", ub)
    arrow = pd.arrays.ArrowStringArray
    if not (isinstance(xa, arrow) and isinstance(xb, arrow) and len(xa) and len(xb)):
        return None
    import pyarrow.compute as pc

    na, nb = ca < 0, cb < 0
    ta = xa.__arrow_array__().take(np.where(na, 0, ca))
    tb = xb.__arrow_array__().take(np.where(nb, 0, cb))
    ne = np.asarray(pc.not_equal(ta, tb).to_numpy(), dtype=bool)
    return int(np.where(na | nb, na != nb, ne).sum())


def _changed(
    a: pd.Series,
    fa: Factorized,
    pos: np.ndarray | None,
    b: pd.Series,
    fb: Factorized,
) -> int:
    """Number of records where the original ``a`` (at positions ``pos``; all when None) and the
    release ``b`` differ; missing == missing.

    Numeric columns are compared as numbers; anything else through the string form of the
    factorized distinct values (so 30 and "30" are equal, and only distinct values become text).
    """
    if _is_num(a) and _is_num(b):
        x = a.to_numpy(dtype=float, na_value=np.nan)
        x = x if pos is None else x[pos]
        y = b.to_numpy(dtype=float, na_value=np.nan)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        return int((~same).sum())
    ca, ua = fa
    cb, ub = fb
    ca = ca if pos is None else ca[pos]
    if len(ua) + len(ub) > max(_VOCAB_MAX, len(cb) // 8):
        # many distinct values (e.g. one per record): compare the texts record by record
        differ = _arrow_texts_differ(ua, ca, ub, cb)
        if differ is not None:
            return differ
        # the appended None stands for missing (code -1): None != None is False
        ta, tb = np.append(_str_keys(ua), None), np.append(_str_keys(ub), None)
        return int((ta[ca] != tb[cb]).sum())
    sa, sb = _str_keys(ua), _str_keys(ub)
    vocab = {v: i for i, v in enumerate(dict.fromkeys([*sa, *sb]))}
    ma = np.append(np.fromiter((vocab[v] for v in sa), dtype=np.int64, count=len(sa)), -1)
    mb = np.append(np.fromiter((vocab[v] for v in sb), dtype=np.int64, count=len(sb)), -1)
    # code -1 (missing) indexes the appended -1: missing equals missing only
    return int((ma[ca] != mb[cb]).sum())


def _same_data(a: pd.Series, b: pd.Series) -> bool:
    """Whether ``a`` and ``b`` hold the very same values array (a shallow copy's column)."""
    if a.dtype != b.dtype or len(a) != len(b):
        return False
    if isinstance(a.dtype, np.dtype):  # to_numpy returns the stored array: no copy
        x, y = a.to_numpy(), b.to_numpy()
        return (
            x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.strides == y.strides
        )
    ea, eb = a.array, b.array
    if ea is eb:
        return True
    if isinstance(ea, pd.arrays.ArrowExtensionArray) and isinstance(
        eb, pd.arrays.ArrowExtensionArray
    ):  # immutable Arrow data: the same ChunkedArray object
        return ea.__arrow_array__() is eb.__arrow_array__()
    return False


def _moments(s: pd.Series) -> tuple[float | None, float | None]:
    if not _is_num(s) or s.notna().sum() == 0:
        return None, None
    x = s.to_numpy(dtype=float, na_value=np.nan)
    return float(np.nanmean(x)), float(np.nanstd(x))


def information_loss(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    factors: tuple[Factors, Factors] | None = None,
) -> dict[str, Any]:
    """Per-column loss: changed-cell share, distinct values before/after, mean/std shift.

    ``factors`` (of ``original`` and ``release``) shares the columns' factorizations with the
    other report figures.

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
    identity = len(kept) == len(original) and bool((kept == np.arange(len(kept))).all())
    pos = None if identity else kept
    fo, fr = factors if factors is not None else (Factors(original), Factors(release))
    cols: dict[str, Any] = {}
    for col in original.columns:
        name = str(col)
        s0 = original[col]
        f0 = fo(col)
        d0 = len(f0[1])
        if col not in release.columns:
            cols[name] = {"dropped": True, "changed_share": 1.0, "distinct_before": d0,
                          "distinct_after": 0, "distinct_reduction": 1.0 if d0 else 0.0,
                          "mean_before": None, "std_before": None, "mean_after": None, "std_after": None}  # fmt: skip
            continue
        m0, sd0 = _moments(s0)  # not for a dropped column: its before figures are withheld
        s1 = release[col]
        if pos is None and _same_data(s0, s1):  # a column no operator touched
            fr.put(col, f0)
            f1, (m1, sd1), n_changed = f0, (m0, sd0), 0
        else:
            f1, (m1, sd1), n_changed = fr(col), _moments(s1), None
        if m1 is None:  # hidden or no longer numeric: nothing to compare the before figures with
            m0 = sd0 = None
        d1 = len(f1[1])
        if aligned and len(release):
            if n_changed is None:
                n_changed = _changed(s0, f0, pos, s1, f1)
            changed: float | None = n_changed / len(release)
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


# a number as Python prints it, exponent included (Mondrian cells print 1e+300, repr 1.5e-05)
_LEADING = re.compile(r"^\s*[\[(<>=]*\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def _leading_number(label: str) -> float | None:
    """Sort key of interval-like or numeric labels ("[30, 40)" -> 30); inf for "(other)".

    Examples
    --------
    >>> _leading_number("[30, 40)"), _leading_number("[1e+300, 1e+308]"), _leading_number("2.5e-05")
    (30.0, 1e+300, 2.5e-05)
    """
    if label == "(other)":
        return np.inf
    m = _LEADING.match(label)
    return float(m.group(1)) if m else None


def _text_counts(s: pd.Series, f: Factorized) -> pd.Series:
    """``s.dropna().astype(str).value_counts()``, computed from the factorization of ``s``.

    Only the distinct values become text: their counts come from the codes, are summed over
    values with the same text (30 and "30") and sorted the way ``value_counts`` sorts them
    (keys in order of first appearance, then by count, descending, with the same sort kind).
    """
    codes, uniques = f
    n_u = len(uniques)
    counts = np.bincount(codes[codes >= 0], minlength=n_u).astype(np.int64, copy=False)
    texts = pd.Series(uniques, dtype=s.dtype).astype(str)
    kcodes, keys = pd.factorize(texts)
    if len(keys) < n_u:
        counts = np.bincount(kcodes, weights=counts, minlength=len(keys)).astype(np.int64)
    return pd.Series(counts, index=pd.Index(keys), copy=False).sort_values(
        ascending=False, kind=_VC_SORT_KIND
    )


def _hist_edges(x: np.ndarray) -> np.ndarray:
    """``HIST_BINS`` equal-width edges over the finite ``x``; where numpy refuses them
    interpolated between the ends, repeated edges dropped: the width overflows
    (``-1e308 .. 1e308``), or the range is too narrow for ``HIST_BINS`` distinct edges at
    that magnitude (``1e17 + 16 k``, "Too many bins for data range")."""
    lo, hi = float(x.min()), float(x.max())
    if np.isfinite(hi - lo):
        with contextlib.suppress(ValueError):
            return np.histogram_bin_edges(x, bins=HIST_BINS)
    t = np.linspace(0.0, 1.0, HIST_BINS + 1)
    return np.unique(lo * (1.0 - t) + hi * t)


def _merge_small_bins(
    counts: np.ndarray, edges: np.ndarray, min_count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Merge adjacent histogram bins until every bin holds 0 or at least ``min_count`` records.

    A bin with fewer records is a small cell: it would place those records in a narrow range
    (statistical disclosure control's frequency rule, e.g. Hundepool et al., *Statistical
    Disclosure Control*, Wiley 2012, ch. 5).  Bins are grouped left to right, a group closing
    once it is empty or reaches ``min_count``; a last group below it joins the one before.

    Examples
    --------
    >>> c, e = _merge_small_bins(np.array([6, 1, 0, 2, 5, 7]), np.arange(7.0), 5)
    >>> c.tolist(), e.tolist()
    ([6, 8, 7], [0.0, 1.0, 5.0, 6.0])
    """
    groups: list[list[int]] = []  # [first bin, last bin, count]
    cur: list[int] | None = None
    for i, c in enumerate(counts.tolist()):
        if cur is None:
            cur = [i, i, 0]
        cur[1], cur[2] = i, cur[2] + c
        if cur[2] == 0 or cur[2] >= min_count:
            groups.append(cur)
            cur = None
    if cur is not None:
        if groups:
            groups[-1][1], groups[-1][2] = cur[1], groups[-1][2] + cur[2]
        else:
            groups.append(cur)
    while len(groups) > 1 and 0 < groups[-1][2] < min_count:  # trailing small group
        last = groups.pop()
        groups[-1][1], groups[-1][2] = last[1], groups[-1][2] + last[2]
    new_edges = np.array([edges[g[0]] for g in groups] + [edges[-1]], dtype=float)
    return np.array([g[2] for g in groups], dtype=counts.dtype), new_edges


def distribution(
    s: pd.Series,
    edges: Sequence[float] | None = None,
    *,
    factorized: Factorized | None = None,
    min_count: int = 0,
    clip_to_edges: bool = False,
) -> dict[str, Any]:
    """A small JSON-able summary of a column's distribution for plotting.

    Numeric columns become a histogram (``edges`` + ``counts``); others the counts of the
    ``MAX_CATEGORIES`` most frequent values, the rest pooled as ``(other)``.  ``factorized``:
    the column's :func:`~veil.report._factors.factorize` result when already computed.

    ``min_count`` protects small cells (for the *input* table, whose distribution would
    otherwise publish what the release hides): a value held by fewer than ``min_count``
    records is never named (it is pooled into ``(other)``), and histogram edges are computed
    between the ``(min_count + 1)``-th smallest and largest values, the tails counted in the
    end bins (``tails_pooled``), so neither the minimum nor the maximum is shown; adjacent bins
    are then merged until each holds 0 or at least ``min_count`` records
    (:func:`_merge_small_bins`).  A numeric column whose tails cannot be pooled that way (at
    most ``2 * min_count`` values, or more than ``n - 2 * min_count`` equal to one value) is
    summarized by its values like a categorical one, small cells pooled.
    ``clip_to_edges`` counts values outside the given ``edges`` in the end bins (a release
    drawn on the input's protected edges).

    Examples
    --------
    >>> distribution(pd.Series(["flu", "flu", "cold", "hiv", None]))
    {'kind': 'categorical', 'labels': ['flu', 'cold', 'hiv'], 'counts': [2, 1, 1], 'missing': 1}
    >>> distribution(pd.Series(["flu", "flu", "cold", "hiv"]), min_count=2)  # rare values pooled
    {'kind': 'categorical', 'labels': ['flu', '(other)'], 'counts': [2, 2], 'missing': 0}
    >>> distribution(pd.Series(range(100)), edges=[0, 50, 100])["counts"]
    [50, 50]
    >>> d = distribution(pd.Series(range(100)), min_count=5)  # extremes hidden in the end bins
    >>> d["edges"][0], d["edges"][-1], d["tails_pooled"]
    (5.0, 94.0, True)
    """
    f = factorized if factorized is not None else factorize(s)
    missing = int((f[0] < 0).sum())
    min_count = max(int(min_count), 0)
    x = s.dropna().to_numpy(dtype=float) if _is_num(s) and len(f[1]) > MAX_CATEGORIES else None
    # histogram edges come from the finite values; infinite ones are counted in the end bins
    # (more than k of them failed the report with a ValueError quoting a cell value)
    fin = x if x is None or np.isfinite(x).all() else x[np.isfinite(x)]
    if fin is not None and fin.size == 0:
        x = fin = None
    lo = hi = None
    if x is not None and fin is not None and edges is None and min_count:
        if len(fin) > 2 * min_count:
            part = np.partition(fin, (min_count, len(fin) - 1 - min_count))
            lo, hi = part[min_count], part[len(fin) - 1 - min_count]
        if lo is None or not hi > lo:
            # the tails cannot be pooled (too few records, or more than n - 2k of them share
            # one value): a histogram would show the minimum, the maximum and single records,
            # so the column is summarized by its values instead, small cells pooled below
            x = None
    if x is not None:
        pooled = False
        if edges is None:
            if lo is not None:
                x, pooled = np.clip(x, lo, hi), True
            elif fin is not None and fin is not x:
                x = np.clip(x, fin.min(), fin.max())
            edges = _hist_edges(x) if len(x) else np.array([0.0, 1.0])
        elif clip_to_edges and len(x):
            x, pooled = np.clip(x, float(edges[0]), float(edges[-1])), True
        counts, e = np.histogram(x, bins=np.asarray(edges, dtype=float))
        if pooled and min_count:
            counts, e = _merge_small_bins(counts, e, min_count)
        out: dict[str, Any] = {
            "kind": "numeric",
            "edges": [float(v) for v in e],
            "counts": counts.tolist(),
            "missing": missing,
        }
        if pooled:
            out["tails_pooled"] = True
        return out
    if pd.api.types.is_datetime64_any_dtype(s):
        vc = s.dropna().dt.strftime("%Y").astype(str).value_counts()
    else:
        vc = _text_counts(s, f)
    named = vc[vc >= min_count] if min_count else vc
    top = named.iloc[:MAX_CATEGORIES]
    labels, counts = [str(i) for i in top.index], [int(v) for v in top.to_numpy()]
    rest = int(vc.sum()) - int(sum(counts))
    if rest:
        labels.append("(other)")
        counts.append(rest)
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
