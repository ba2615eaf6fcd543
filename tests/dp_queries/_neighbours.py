"""Neighbouring tables and release loops shared by the DataFrame privacy audits.

Every pair ``(D, D')`` differs in ONE person (all rows of one ``pid``) under the frame's
default add/remove relation.  The added person always has more rows per group than
``max_rows`` and more groups than ``max_groups``, so an audit that passes exercises the
contribution bounding; :func:`unbounded` switches the bounding off (a deliberately broken
query) so that each audit can show it has the power to catch a missing bound.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from veil.dp.frame import PrivateFrame
from veil.dp.frame import _plan as plan_module

from ..dp_core._audit import audit

PERSON = 999  # the privacy unit that tells D' from D


def with_person(df: pd.DataFrame, groups: dict[str, int], value: float) -> pd.DataFrame:
    """``df`` plus person :data:`PERSON` with ``groups[g]`` rows of ``value`` in group ``g``."""
    rows = [g for g, k in groups.items() for _ in range(k)]
    extra = pd.DataFrame({"pid": PERSON, "g": rows, "x": value})
    return pd.concat([df, extra.astype(df.dtypes.to_dict())], ignore_index=True)


def releases(
    df: pd.DataFrame,
    seed: int,
    runs: int,
    *,
    keys: Any,
    max_groups: int,
    max_rows: int,
    epsilon: float,
    delta: float = 0.0,
    integer_columns: Any = None,
    **agg: Any,
) -> list[pd.DataFrame]:
    """``runs`` independent releases of one planned query (seeded, accountant off)."""
    pf = PrivateFrame(
        df, privacy_unit="pid", accountant=False, random_state=seed,
        max_groups=max_groups, max_rows=max_rows, integer_columns=integer_columns,
    )  # fmt: skip
    plan = pf.groupby("g", keys=keys).plan(epsilon=epsilon, delta=delta, **agg)
    return [plan.execute() for _ in range(runs)]


@contextlib.contextmanager
def unbounded(
    monkeypatch: pytest.MonkeyPatch, *, max_rows: int | None = None, max_groups: int | None = None
) -> Iterator[None]:
    """Broken variant: the bounding step ignores the query's caps.

    Without arguments every row of every person is kept; otherwise the given cap replaces the
    query's one *in the bounding only* (the noise is still calibrated to the query's caps).
    """
    real = plan_module.bound_contributions

    def broken(persons: np.ndarray, groups: np.ndarray, n_groups: int, **kw: Any) -> np.ndarray:
        if max_rows is None and max_groups is None:
            return np.ones(len(persons), dtype=bool)
        kw["max_rows"] = max_rows or kw["max_rows"]
        kw["max_groups"] = max_groups or kw["max_groups"]
        return real(persons, groups, n_groups, **kw)

    with monkeypatch.context() as m:
        m.setattr(plan_module, "bound_contributions", broken)
        yield


def certified_excess(xs: list, ys: list, epsilon: float, alpha: float = 1e-6) -> float:
    """Largest lower confidence bound of ``P_x(S) - e^eps P_y(S)`` over single outcomes ``S``.

    Clopper-Pearson bounds at a Bonferroni-corrected ``alpha``; an (epsilon, delta)-DP release
    has this below ``delta`` with probability ``1 - alpha``.
    """
    n, m = len(xs), len(ys)
    cx, cy = pd.Series(xs).value_counts(), pd.Series(ys).value_counts()
    buckets = set(cx.index) | set(cy.index)
    a = alpha / (2 * len(buckets))
    worst = -1.0
    for b in buckets:
        kx, ky = int(cx.get(b, 0)), int(cy.get(b, 0))
        lo_x = stats.beta.ppf(a, kx, n - kx + 1) if kx > 0 else 0.0
        hi_y = stats.beta.ppf(1 - a, ky + 1, m - ky) if ky < m else 1.0
        worst = max(worst, lo_x - np.exp(epsilon) * hi_y)
    return float(worst)


def worst_over_cuts(a: np.ndarray, b: np.ndarray, edges: Any, min_count: int = 200) -> float:
    """Largest audited loss (:func:`tests.dp_core._audit.audit`) over the buckets ``edges``
    and over the two halves cut at each inner edge, both directions (-inf: none audited)."""
    edges = np.asarray(edges, dtype=float)
    families = [edges] + [np.array([edges[0], t, edges[-1]]) for t in edges[1:-1]]
    found = [-np.inf]
    for bins in families:
        for x, y in ((a, b), (b, a)):
            with contextlib.suppress(ValueError):  # no bucket with min_count draws in both
                found.append(audit(x, y, bins, min_count))
    return max(found)
