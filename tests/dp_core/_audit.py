"""The empirical privacy-loss audit shared by the mechanism and statistics tests."""

from __future__ import annotations

import numpy as np


def audit(a: np.ndarray, b: np.ndarray, bins: np.ndarray, min_count: int = 200) -> float:
    """Largest lower-confidence bound (4.9 sigma) on |log P(bucket | D) / P(bucket | D')|.

    ``a`` and ``b`` are releases on neighbouring inputs; only buckets with at least
    ``min_count`` draws in both are compared.  A value above epsilon means some bucket's
    probability ratio exceeds e^epsilon beyond sampling error.
    """
    ha = np.histogram(a, bins)[0].astype(float)
    hb = np.histogram(b, bins)[0].astype(float)
    ok = (ha >= min_count) & (hb >= min_count)
    lr = np.abs(np.log(ha[ok] / a.size) - np.log(hb[ok] / b.size))
    se = np.sqrt(1 / ha[ok] + 1 / hb[ok])
    return float(np.max(lr - 4.9 * se))
