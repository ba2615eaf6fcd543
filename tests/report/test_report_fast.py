"""The report's figures computed on shared factorizations equal the straightforward way.

The ``_slow_*`` functions are the report code before it was made to scale to 1M rows
(value_counts of ``astype(str)``, a Python dict over every distinct value, one factorize per
column and step); the report must not change.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.report import class_codes, distribution, information_loss, risk_indicators
from veil.report._factors import Factors
from veil.report._metrics import MAX_CATEGORIES, _leading_number


def _slow_class_codes(df: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    codes = np.zeros(len(df), dtype=np.int64)
    for col in columns:
        c, u = pd.factorize(df[col], use_na_sentinel=False)
        codes = codes * (len(u) + 1) + np.asarray(c, dtype=np.int64)
        codes = np.asarray(pd.factorize(codes)[0], dtype=np.int64)
    return codes, np.bincount(codes) if len(df) else np.zeros(0, dtype=np.int64)


def _slow_changed_share(a: pd.Series, b: pd.Series) -> float:
    """Share of records (matched by label) whose values differ; missing == missing."""
    a = a.loc[b.index]
    num = all(
        pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) for s in (a, b)
    )
    changed = 0
    for x, y in zip(a.tolist(), b.tolist()):
        if pd.isna(x) or pd.isna(y):
            changed += not (pd.isna(x) and pd.isna(y))
        else:
            changed += (float(x) != float(y)) if num else (str(x) != str(y))
    return changed / len(b)


def _slow_distribution(s: pd.Series, edges: Any = None) -> dict[str, Any]:
    missing = int(s.isna().sum())
    num = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
    if num and s.nunique() > MAX_CATEGORIES:
        x = s.dropna().to_numpy(dtype=float)
        if edges is None:
            edges = np.histogram_bin_edges(x, bins=20) if len(x) else np.array([0.0, 1.0])
        counts, e = np.histogram(x, bins=np.asarray(edges, dtype=float))
        return {"kind": "numeric", "edges": [float(v) for v in e], "counts": counts.tolist(),
                "missing": missing}  # fmt: skip
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
    return {"kind": "categorical", "labels": [labels[i] for i in order],
            "counts": [counts[i] for i in order], "missing": missing}  # fmt: skip


def _check_distribution(s: pd.Series, d: dict[str, Any]) -> None:
    """Checks of ``distribution(s)`` (default edges) independent of the report's code.

    ``_slow_distribution`` shares the report's label ordering; here the missing count, the
    numeric total and every category count are recounted with ``collections.Counter``.
    """
    nonmissing = [v for v in s.tolist() if not pd.isna(v)]
    assert d["missing"] == len(s) - len(nonmissing)
    assert sum(d["counts"]) == len(nonmissing)
    if d["kind"] == "numeric":
        return
    if pd.api.types.is_datetime64_any_dtype(s):
        nonmissing = [f"{v.year:04d}" for v in nonmissing]
    counts = Counter(str(v) for v in nonmissing)
    got = dict(zip(d["labels"], d["counts"]))
    other = got.pop("(other)", 0)
    assert len(got) == min(len(counts), MAX_CATEGORIES)
    assert all(counts[label] == c for label, c in got.items())
    left_out = [c for label, c in counts.items() if label not in got]
    assert other == sum(left_out)
    assert not left_out or max(left_out) <= min(got.values())  # the most frequent are shown


def _frames(seed: int, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    mixed = rng.choice(np.array([30, "30", 31, "x", None, np.nan, 2.5], dtype=object), n)
    # 40 labels with tied counts: value_counts' tie order matters for the top 15
    tied = np.repeat([f"c{i:02d}" for i in rng.permutation(40)], -(-n // 40))[:n]
    o = pd.DataFrame(
        {
            "id": [f"P{i:06d}" for i in range(n)],
            "mixed": mixed,
            "tied": rng.permutation(tied),
            "age": rng.integers(18, 90, n),
            "small": rng.integers(0, 4, n).astype(float),
            "flag": rng.choice([True, False], n),
            "cat": pd.Categorical(rng.choice(["a", "b", "c"], n)),
            "when": pd.to_datetime("2020-01-01")
            + pd.to_timedelta(rng.integers(0, 2000, n), unit="D"),
            "text": pd.array(rng.choice(["u", "v", None], n), dtype="string"),
        }
    )
    o.loc[rng.random(n) < 0.1, "age"] = np.nan
    o.loc[rng.random(n) < 0.05, "id"] = None
    r = o.copy()
    r["id"] = ["Q" + v[1:] if isinstance(v, str) and i % 3 else v for i, v in enumerate(o["id"])]
    r["mixed"] = o["mixed"].map(lambda v: v if isinstance(v, str) else v)  # same values
    r["tied"] = o["tied"].where(rng.random(n) < 0.7, "c00")
    r["age"] = (o["age"] // 10 * 10).astype(str).where(o["age"].notna(), None)
    r["small"] = o["small"] + rng.normal(0, 1, n)
    r = r.drop(columns=["flag"]).drop(index=rng.choice(n, n // 10, replace=False))
    return o, r


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_figures_equal_slow_ones(seed: int) -> None:
    o, r = _frames(seed, 3000)
    loss = information_loss(o, r)
    for col in r.columns:
        assert loss["columns"][col]["changed_share"] == pytest.approx(
            _slow_changed_share(o[col], r[col]), abs=0, rel=1e-12
        ), col
        assert loss["columns"][col]["distinct_after"] == r[col].nunique()
    qis = ["mixed", "tied", "age", "text"]
    for df in (o, r):
        for cols in (qis, qis[:1], []):
            codes, sizes = class_codes(df, cols)
            slow_codes, slow_sizes = _slow_class_codes(df, cols)
            assert codes.tolist() == slow_codes.tolist() and sizes.tolist() == slow_sizes.tolist()
            assert class_codes(df, cols, Factors(df, cols))[0].tolist() == slow_codes.tolist()
        assert risk_indicators(df, qis, 5, factors=Factors(df)) == risk_indicators(df, qis, 5)
    for df in (o, r):
        for col in df.columns:
            d = distribution(df[col])
            assert d == _slow_distribution(df[col]), col
            _check_distribution(df[col], d)
    edges = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert distribution(r["small"], edges) == _slow_distribution(r["small"], edges)


def test_text_comparison_paths_agree() -> None:
    # one distinct value per record takes the record-by-record path, few values the dict path
    n = 6000  # above the dict path's limit of distinct values
    a = pd.Series([f"v{i}" for i in range(n)], dtype=object)
    b = a.where(np.arange(n) % 4 != 0, "other")
    b[::7] = None
    slow = _slow_changed_share(a, b)
    assert information_loss(a.to_frame("c"), b.to_frame("c"))["columns"]["c"][
        "changed_share"
    ] == pytest.approx(slow)
    few_a, few_b = a.str[:2], b.str[:2]
    assert information_loss(few_a.to_frame("c"), few_b.to_frame("c"))["columns"]["c"][
        "changed_share"
    ] == pytest.approx(_slow_changed_share(few_a, few_b))
