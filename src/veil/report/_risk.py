"""Re-identification risk indicators on the quasi-identifiers (prosecutor model).

Records sharing the same quasi-identifier values form an equivalence class; an attacker who
knows a target's quasi-identifiers and that the target is in the table picks the right record
with probability ``1 / class size`` (the prosecutor risk of El Emam & Dankar, "Protecting
privacy using k-anonymity", JAMIA 15(5), 2008).  Everything is computed on factorized integer
codes in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.report._factors import Factors

__all__ = ["class_codes", "risk_indicators"]


def class_codes(
    df: pd.DataFrame, columns: Sequence[str], factors: Factors | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-record equivalence-class code and the size of each class.

    Missing values are a value of their own.  With no columns, all records form one class.
    Codes number the classes in order of first appearance.  ``factors`` (of ``df``) shares the
    columns' factorizations with the other report figures.

    Examples
    --------
    >>> codes, sizes = class_codes(pd.DataFrame({"a": [1, 1, 2], "b": ["x", "x", "y"]}), ["a", "b"])
    >>> codes.tolist(), sizes.tolist()
    ([0, 0, 1], [2, 1])
    """
    n = len(df)
    get = factors if factors is not None else Factors(df)
    codes = np.zeros(n, dtype=np.int64)
    span = 1  # codes lie in [0, span)
    combined = False
    for col in columns:
        combined = True
        c, u = get(col)
        width = len(u) + 1  # missing (code -1) becomes code len(u)
        if span * width >= 2**62:  # renumber the classes so far densely before combining
            codes = np.asarray(pd.factorize(codes)[0], dtype=np.int64)
            span = int(codes.max()) + 1 if n else 1
        c64 = c.astype(np.int64)
        c64[c64 < 0] = len(u)
        codes *= width
        codes += c64
        span *= width
    if combined:
        codes = np.asarray(pd.factorize(codes)[0], dtype=np.int64)
    sizes = np.bincount(codes) if n else np.zeros(0, dtype=np.int64)
    return codes, sizes


def risk_indicators(
    df: pd.DataFrame,
    columns: Sequence[str],
    k: int | None = None,
    *,
    factors: Factors | None = None,
) -> dict[str, Any]:
    """Risk figures of ``df`` on the quasi-identifiers ``columns``.

    Returns a dict with ``records``, ``classes``, ``unique_records`` and ``unique_share``
    (records alone in their class), ``smallest_class``, ``average_class_size``,
    ``records_below_k`` / ``share_below_k`` (records in classes smaller than ``k``),
    ``average_risk`` (mean prosecutor risk over records = classes / records) and ``highest_risk``
    (1 / smallest class).  ``factors``: as for :func:`class_codes`.

    Examples
    --------
    >>> r = risk_indicators(pd.DataFrame({"age": [30, 30, 41, 52]}), ["age"], k=2)
    >>> r["unique_records"], r["smallest_class"], r["records_below_k"], r["average_risk"]
    (2, 1, 2, 0.75)
    """
    cols = [c for c in columns if c in df.columns]
    n = len(df)
    if n == 0:
        return {"quasi_identifiers": cols, "records": 0, "classes": 0, "unique_records": 0,
                "unique_share": 0.0, "smallest_class": 0, "average_class_size": 0.0,
                "k": k, "records_below_k": 0, "share_below_k": 0.0, "average_risk": 0.0,
                "highest_risk": 0.0}  # fmt: skip
    _, sizes = class_codes(df, cols, factors)
    unique = int((sizes == 1).sum())
    below = int(sizes[sizes < k].sum()) if k else 0  # records in classes smaller than k
    return {
        "quasi_identifiers": cols,
        "records": n,
        "classes": int(len(sizes)),
        "unique_records": unique,
        "unique_share": unique / n,
        "smallest_class": int(sizes.min()),
        "average_class_size": n / len(sizes),
        "k": k,
        "records_below_k": below,
        "share_below_k": below / n,
        "average_risk": float(len(sizes) / n),
        "highest_risk": float(1.0 / sizes.min()),
    }
